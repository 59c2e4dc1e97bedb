// Tokenizers written by Hugging Face `tokenizers` (tools/text/make_fixtures.py) give Hugging
// Face's ids, tokens, type ids, masks and decodes on held-out text, single, paired and batched.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expected, fixtureJson, heldout, loadFixture, pairs } from "./fixtures.js";

const NAMES = ["wordlevel", "bpe", "bpe_suffix", "bytelevel_bpe", "wordpiece", "bert-base-uncased", "gpt2"];
const PAD: Record<string, string> = { bpe_suffix: "<pad>", bytelevel_bpe: "<|endoftext|>", gpt2: "<|endoftext|>" };

for (const name of NAMES) {
  describe(`${name} tokenizer.json from Hugging Face`, () => {
    const tok = loadFixture(name);
    const exp = expected(name);
    const texts = heldout();

    it("encodes each held-out text to Hugging Face's ids, tokens and masks", () => {
      texts.forEach((t, i) => {
        const e = tok.encode(t);
        const x = exp.single[i];
        assert.deepEqual(e.tokens, x.tokens, `text ${i}: ${JSON.stringify(t)}`);
        assert.deepEqual(e.ids, x.ids, `text ${i}`);
        assert.deepEqual(e.typeIds, x.typeIds, `text ${i}`);
        assert.deepEqual(e.attentionMask, x.attentionMask, `text ${i}`);
        assert.deepEqual(e.specialTokensMask, x.specialTokensMask, `text ${i}`);
      });
    });

    it("encodes pairs with Hugging Face's type ids", () => {
      pairs(texts).forEach(([a, b], i) => {
        const e = tok.encode(a, b);
        assert.deepEqual(e.ids, exp.pairs[i].ids, `pair ${i}`);
        assert.deepEqual(e.typeIds, exp.pairs[i].typeIds, `pair ${i}`);
        assert.deepEqual(e.specialTokensMask, exp.pairs[i].specialTokensMask, `pair ${i}`);
      });
    });

    it("decodes as Hugging Face does", () => {
      texts.forEach((t, i) => assert.equal(tok.decode(exp.single[i].ids), exp.decoded[i], `text ${i}: ${JSON.stringify(t)}`));
    });

    it("truncates and pads batches as Hugging Face does (longest, then fixed length on the left for pairs)", () => {
      const padToken = PAD[name] ?? "[PAD]";
      tok.enableTruncation(12);
      tok.enablePadding({ padToken });
      const longest = tok.encodeBatch(texts.slice(0, 6));
      assert.deepEqual(longest.map((e) => ({ ids: e.ids, attentionMask: e.attentionMask, typeIds: e.typeIds })), exp.batchLongest);
      tok.enablePadding({ padToken, length: 16, direction: "left" });
      const fixed = tok.encodeBatch(pairs(texts).slice(0, 4));
      assert.deepEqual(fixed.map((e) => ({ ids: e.ids, attentionMask: e.attentionMask, typeIds: e.typeIds })), exp.batchFixedLeftPairs);
      tok.noPadding();
      tok.noTruncation();
      // The same batch through per-call options (transformers' padding/truncation/max_length).
      const perCall = tok.encodeBatch(texts.slice(0, 6), { truncation: true, maxLength: 12, padding: "longest" });
      if (PAD[name] === undefined) assert.deepEqual(perCall.map((e) => ({ ids: e.ids, attentionMask: e.attentionMask, typeIds: e.typeIds })), exp.batchLongest);
    });

    it("saves the file it loaded: the same JSON Hugging Face wrote", () => {
      assert.deepEqual(JSON.parse(loadFixture(name).toString()), JSON.parse(fixtureJson(name)));
      assert.equal(tok.getVocabSize(), exp.vocabSize);
    });
  });
}
