// Datasets, padding, collators and packing for tokenized text, against values worked out by
// hand from the definitions (torch's pad_sequence, transformers' DataCollatorWithPadding and
// group_texts), and against Hugging Face's BERT encodings.
import "../../src/index.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DataCollatorForLanguageModeling, DataCollatorWithPadding, DataLoader, ListDataset, filterAsync, mapAsync, packSequences, packSequencesAsync, padSequence } from "../../src/data/index.js";
import { tensor } from "../../src/ops/creation.js";
import { batchTensors } from "../../src/text/index.js";
import { expected, heldout, loadFixture } from "../text/fixtures.js";

const rows = (t: { data(): ArrayLike<number>; shape: readonly number[] }) => {
  const d = Array.from(t.data());
  const [b, n] = t.shape;
  return Array.from({ length: b }, (_, i) => d.slice(i * n, (i + 1) * n));
};

describe("ListDataset", () => {
  const ds = new ListDataset(Array.from({ length: 10 }, (_, i) => ({ i, even: i % 2 === 0 })));
  it("maps, filters and selects", () => {
    assert.deepEqual([...ds.filter((r) => r.even).map((r) => r.i * 10)], [0, 20, 40, 60, 80]);
    assert.deepEqual([...ds.select([3, 1])].map((r) => r.i), [3, 1]);
    assert.throws(() => ds.getItem(10), /index 10 is out of range for 10 records/);
  });
  it("shuffles reproducibly by seed, as a permutation", () => {
    const a = [...ds.shuffle({ seed: 3 })].map((r) => r.i);
    assert.deepEqual(a, [...ds.shuffle({ seed: 3 })].map((r) => r.i));
    assert.notDeepEqual(a, [...ds.shuffle({ seed: 4 })].map((r) => r.i));
    assert.deepEqual([...a].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
  it("splits into disjoint train and test parts (ceil of the fraction for test)", () => {
    const { train, test } = ds.trainTestSplit({ testSize: 0.25, seed: 1 });
    assert.equal(test.length, 3);
    assert.equal(train.length, 7);
    assert.deepEqual([...train, ...test].map((r) => r.i).sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const ordered = ds.trainTestSplit({ testSize: 2, shuffle: false });
    assert.deepEqual([...ordered.test].map((r) => r.i), [8, 9]);
    assert.throws(() => ds.trainTestSplit({ testSize: 11 }), /testSize must be a fraction in \(0, 1\) or a count up to 10, got 11/);
  });
  it("maps and filters async streams lazily", async () => {
    async function* src() {
      for (let i = 0; i < 5; i++) yield i;
    }
    const got = await ListDataset.fromAsync(mapAsync(filterAsync(src(), (x) => x !== 2), (x) => x * x));
    assert.deepEqual([...got], [0, 1, 9, 16]);
  });
});

describe("padSequence", () => {
  it("pads right or left to the longest or a fixed length, batch first or not", () => {
    const seqs = [[1, 2, 3], [4], [5, 6]];
    assert.deepEqual(rows(padSequence(seqs)), [[1, 2, 3], [4, 0, 0], [5, 6, 0]]);
    assert.deepEqual(rows(padSequence(seqs, { paddingValue: -1, paddingSide: "left", length: 4 })), [[-1, 1, 2, 3], [-1, -1, -1, 4], [-1, -1, 5, 6]]);
    const t = padSequence(seqs, { batchFirst: false });
    assert.deepEqual(t.shape, [3, 3]);
    assert.deepEqual(rows(t), [[1, 4, 5], [2, 0, 6], [3, 0, 0]]);
    assert.equal(padSequence([tensor([1.5, 2])]).dtype, "float32");
    assert.throws(() => padSequence(seqs, { length: 2 }), /length 2 is shorter than the longest sequence \(3\)/);
  });
});

describe("collators", () => {
  it("DataCollatorWithPadding pads ids with padId, masks with 0, token labels with -100", () => {
    const c = new DataCollatorWithPadding({ padId: 9 });
    const b = c.call([{ inputIds: [1, 2, 3], tokenTypeIds: [0, 0, 1], label: 1 }, { inputIds: [4], tokenTypeIds: [0], label: 0 }]);
    assert.deepEqual(rows(b.inputIds), [[1, 2, 3], [4, 9, 9]]);
    assert.deepEqual(rows(b.attentionMask), [[1, 1, 1], [1, 0, 0]]);
    assert.deepEqual(rows(b.tokenTypeIds!), [[0, 0, 1], [0, 0, 0]]);
    assert.deepEqual(Array.from(b.labels!.data()), [1, 0]);
    const m = new DataCollatorWithPadding({ padId: 0, padding: "maxLength", maxLength: 5, padToMultipleOf: 4 }).call([{ inputIds: [1, 2], labels: [7, 8] }]);
    assert.deepEqual(rows(m.inputIds), [[1, 2, 0, 0, 0, 0, 0, 0]]);
    assert.deepEqual(rows(m.labels!), [[7, 8, -100, -100, -100, -100, -100, -100]]);
    assert.throws(() => new DataCollatorWithPadding({ pad_id: 0 } as never), /did you mean padId\?/);
    assert.throws(() => new DataCollatorWithPadding({}), /give padId \(the pad token's id\) or a tokenizer/);
  });
  it("the causal-LM collator labels every real token and masks padding with -100", () => {
    const b = new DataCollatorForLanguageModeling({ padId: 50256 }).call([{ inputIds: [5, 6, 7] }, { inputIds: [8] }]);
    assert.deepEqual(rows(b.labels!), [[5, 6, 7], [8, -100, -100]]);
    assert.deepEqual(rows(b.inputIds), [[5, 6, 7], [8, 50256, 50256]]);
  });
  it("collates BERT encodings in a DataLoader to Hugging Face's padded batch", async () => {
    const tok = loadFixture("bert-base-uncased");
    const exp = expected("bert-base-uncased");
    const texts = heldout().slice(0, 6);
    tok.enableTruncation(12);
    const features = tok.encodeBatch(texts).map((e) => ({ inputIds: e.ids, attentionMask: e.attentionMask, tokenTypeIds: e.typeIds }));
    const loader = new DataLoader(new ListDataset(features), { batchSize: 6, collateFn: new DataCollatorWithPadding({ tokenizer: tok }).collate });
    for await (const batch of loader) {
      assert.deepEqual(rows(batch.inputIds), exp.batchLongest.map((e) => e.ids));
      assert.deepEqual(rows(batch.attentionMask), exp.batchLongest.map((e) => e.attentionMask));
    }
    const viaTokenizer = batchTensors(tok.encodeBatch(texts, { padding: "longest" }));
    assert.deepEqual(rows(viaTokenizer.inputIds), exp.batchLongest.map((e) => e.ids));
  });
});

describe("packing for causal LM", () => {
  it("joins sequences with an end-of-text id and cuts full blocks, dropping the rest (group_texts)", async () => {
    const seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10, 11, 12]];
    const want = [[1, 2, 3, 0], [4, 5, 0, 6], [7, 8, 9, 10]];
    assert.deepEqual([...packSequences(seqs, { blockSize: 4, eosId: 0 })], want);
    assert.deepEqual([...packSequences(seqs, { blockSize: 5 })], [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]);
    async function* stream() {
      yield* seqs;
    }
    const got: number[][] = [];
    for await (const b of packSequencesAsync(stream(), { blockSize: 4, eosId: 0 })) got.push(b);
    assert.deepEqual(got, want);
    assert.throws(() => [...packSequences(seqs, { blockSize: 0 })], /blockSize must be a positive integer, got 0/);
  });
});
