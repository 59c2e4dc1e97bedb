// Files trained and saved by ringtorch, loaded by Hugging Face (tools/text/check_trained.py):
// Hugging Face's encodings and decodes of held-out text equal ringtorch's.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { FIXTURES, heldout } from "./fixtures.js";
import { trainedTokenizers } from "./trained.js";

describe("tokenizers trained by ringtorch encode as Hugging Face encodes them", () => {
  const hf = JSON.parse(readFileSync(`${FIXTURES}trained_by_ringtorch.expected.json`, "utf8"));
  const texts = heldout();
  for (const [name, tok] of Object.entries(trainedTokenizers())) {
    it(name, () => {
      const exp = hf[name];
      texts.forEach((t, i) => assert.deepEqual(tok.encode(t).ids, exp.single[i], `text ${i}: ${JSON.stringify(t)}`));
      for (let i = 0; i < 20; i += 2) {
        const e = tok.encode(texts[i], texts[i + 1]);
        assert.deepEqual(e.ids, exp.pairs[i / 2]);
        assert.deepEqual(e.typeIds, exp.typeIds[i / 2]);
      }
      texts.forEach((t, i) => assert.equal(tok.decode(exp.single[i]), exp.decoded[i], `text ${i}`));
      assert.equal(tok.getVocabSize(), exp.vocabSize);
    });
  }
});
