import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Tokenizer } from "../../src/text/index.js";

export const FIXTURES = new URL("../fixtures/text/", import.meta.url).pathname;

export interface Expected {
  single: { ids: number[]; tokens: string[]; typeIds: number[]; attentionMask: number[]; specialTokensMask: number[] }[];
  pairs: { ids: number[]; tokens: string[]; typeIds: number[]; specialTokensMask: number[] }[];
  decoded: string[];
  batchLongest: { ids: number[]; attentionMask: number[]; typeIds: number[] }[];
  batchFixedLeftPairs: { ids: number[]; attentionMask: number[]; typeIds: number[] }[];
  vocabSize: number;
}

/** The tokenizer.json text Hugging Face wrote (gzip'd for the large pretrained vocabularies). */
export function fixtureJson(name: string): string {
  try {
    return readFileSync(`${FIXTURES}${name}.tokenizer.json`, "utf8");
  } catch {
    return gunzipSync(readFileSync(`${FIXTURES}${name}.tokenizer.json.gz`)).toString("utf8");
  }
}
export const loadFixture = (name: string) => Tokenizer.fromString(fixtureJson(name));
export const expected = (name: string): Expected => JSON.parse(readFileSync(`${FIXTURES}${name}.expected.json`, "utf8"));
export const heldout = (): string[] => JSON.parse(readFileSync(`${FIXTURES}heldout.txt`, "utf8"));
export const corpus = (): string[] => readFileSync(`${FIXTURES}corpus.txt`, "utf8").split("\n");
/** The same pairs the fixture script encodes. */
export function pairs(texts: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < 40; i += 2) out.push([texts[i], texts[i + 1]]);
  const extra = texts.slice(texts.length - 12);
  out.push([extra[0], extra[1]], [extra[9], extra[2]]);
  return out;
}
