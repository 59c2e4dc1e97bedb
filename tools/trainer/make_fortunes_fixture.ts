// node --import tsx tools/trainer/make_fortunes_fixture.ts
//
// Writes test/trainer/fixtures/fortunes_small.jsonl: the first 40 short quotes (at most 160
// characters) of each of the fortune files computers (label 0) and politics (label 1), the real
// data of examples/bert_classifier.ts, small enough for a test and committed so that the test does
// not need the fortunes package installed.
import { readFileSync, writeFileSync } from "node:fs";

const PER_FILE = 40;
const rows = ["computers", "politics"].flatMap((file, label) =>
  readFileSync(`/usr/share/games/fortunes/${file}`, "utf8")
    .split(/^%$/m)
    .map((t) => t.trim().replace(/\s+/g, " "))
    .filter((t) => t.length > 0 && t.length <= 160)
    .slice(0, PER_FILE)
    .map((text) => JSON.stringify({ text, label })),
);
writeFileSync(new URL("../../test/trainer/fixtures/fortunes_small.jsonl", import.meta.url), rows.join("\n") + "\n");
console.log(`wrote ${rows.length} records`);
