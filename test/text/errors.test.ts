// Corrupt tokenizer.json files and bad calls: errors that name the field and say what was expected.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { BpeTrainer, Tokenizer, TokenizerFormatError } from "../../src/text/index.js";
import { fixtureJson } from "./fixtures.js";

const base = () => JSON.parse(fixtureJson("wordpiece"));
const load = (o: unknown) => () => Tokenizer.fromJSON(o);

describe("corrupt tokenizer.json", () => {
  it("names the field that is wrong and what it holds", () => {
    const noVocab = base();
    delete noVocab.model.vocab;
    assert.throws(load(noVocab), (e: Error) => e instanceof TokenizerFormatError && /model\.vocab must be an object, got nothing/.test(e.message));
    const badId = base();
    badId.model.vocab["hello"] = "7";
    assert.throws(load(badId), /model\.vocab\["hello"\] must be a non-negative integer id, got the string "7"/);
    const badType = base();
    badType.normalizer.type = "Precompiled";
    assert.throws(load(badType), /normalizer\.type is "Precompiled", which ringtorch does not implement; known: BertNormalizer/);
    const badPiece = base();
    badPiece.post_processor.single[1] = { Sequenc: { id: "A", type_id: 0 } };
    assert.throws(load(badPiece), /post_processor\.single\[1\] must be \{"SpecialToken": \.\.\.\} or \{"Sequence": \.\.\.\}/);
    const badMerge = JSON.parse(fixtureJson("bpe"));
    badMerge.model.merges[3] = ["no-such-token", "x"];
    assert.throws(load(badMerge), /model\.merges\[3\] merges "no-such-token" and "x", but "no-such-token" is not in model\.vocab/);
    const badRegex = base();
    badRegex.pre_tokenizer = { type: "Split", pattern: { Regex: "(?i:'s|'t)|\\p{L}+" }, behavior: "Isolated", invert: false };
    assert.throws(load(badRegex), /pre_tokenizer\.pattern\.Regex is a pattern JavaScript cannot compile/);
    const badAdded = base();
    badAdded.added_tokens[0].id = -1;
    assert.throws(load(badAdded), /added_tokens\[0\]\.id must be a non-negative integer/);
  });

  it("names the file when it is not JSON", () => {
    const dir = mkdtempSync(join(tmpdir(), "ringtorch-tok-"));
    try {
      const path = join(dir, "broken.json");
      writeFileSync(path, '{"model": {');
      assert.throws(() => Tokenizer.fromFile(path), (e: Error) => e.message.startsWith(path) && /is not valid JSON/.test(e.message));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects unknown options with the camelCase key meant", () => {
    const tok = Tokenizer.fromString(fixtureJson("wordpiece"));
    assert.throws(() => tok.encodeBatch(["a"], { max_length: 4 } as never), /unknown option "max_length"; did you mean maxLength\?/);
    assert.throws(() => new BpeTrainer({ vocab_size: 10 } as never), /did you mean vocabSize\?/);
    assert.throws(() => tok.encodeBatch(["a"], { padding: "maxLength" }), /padding: "maxLength" needs maxLength/);
  });
});
