// GPT-2 generation against Hugging Face's generate on the tiny fixture model, and the KV cache
// against recomputing the whole prefix.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { models, serialization } from "../../src/index.js";
import { assertClose } from "../helpers.js";

const dir = new URL("../fixtures/models/gpt2/", import.meta.url).pathname;
const expected = serialization.load(join(dir, "expected.safetensors"));
const model = models.GPT2LMHeadModel.fromPretrained(dir);
const rows = (t: rt.Tensor) => t.toArray() as number[][];

describe("GPT-2 generation", () => {
  it("greedy equals HF's generate, with and without the KV cache", () => {
    for (const useCache of [true, false]) {
      const out = models.generate(model, expected.prompt, { maxNewTokens: 20, useCache });
      assert.deepEqual(rows(out), rows(expected.greedy), `useCache ${useCache}`);
    }
  });

  it("stops at eos as HF does (the eos token kept)", () => {
    const eos = Number(expected.eos.toArray()[0 as never]);
    const out = models.generate(model, expected.prompt, { maxNewTokens: 20, eosTokenId: eos });
    assert.deepEqual(rows(out), rows(expected.greedy_eos));
  });

  it("a batch with one left-padded prompt gives each row its unpadded greedy continuation", () => {
    const prompt = rows(expected.prompt)[0];
    const short = prompt.slice(2);
    const batch = rt.tensor([prompt, [0, 0, ...short]], { dtype: "int32" });
    const mask = rt.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]], { dtype: "int32" });
    const out = rows(models.generate(model, batch, { maxNewTokens: 8, attentionMask: mask }));
    const alone = rows(models.generate(model, rt.tensor([short], { dtype: "int32" }), { maxNewTokens: 8 }))[0];
    assert.deepEqual(out[0], rows(expected.greedy)[0].slice(0, 13));
    assert.deepEqual(out[1].slice(2), alone);
  });

  it("sampling with the cache draws the same tokens as recomputing (temperature, top-k, top-p)", () => {
    for (const opts of [{ temperature: 0.7 }, { topK: 5 }, { topP: 0.8, temperature: 1.3 }]) {
      const run = (useCache: boolean) => rows(models.generate(model, expected.input_ids, { maxNewTokens: 12, doSample: true, useCache, generator: new rt.Generator(7), ...opts }));
      assert.deepEqual(run(true), run(false), JSON.stringify(opts));
    }
  });

  it("top-k 1 and a tiny top-p are greedy; top-k draws stay among the k most likely", () => {
    const greedy = rows(models.generate(model, expected.prompt, { maxNewTokens: 10 }));
    assert.deepEqual(rows(models.generate(model, expected.prompt, { maxNewTokens: 10, doSample: true, topK: 1 })), greedy);
    assert.deepEqual(rows(models.generate(model, expected.prompt, { maxNewTokens: 10, doSample: true, topP: 1e-9 })), greedy);
    const logits = [0.1, 3, -1, 2.5, 0, 2.9];
    const gen = new rt.Generator(1);
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) seen.add(models.pickToken(logits, { doSample: true, temperature: 1, topK: 3, topP: null, generator: gen }));
    assert.deepEqual([...seen].sort(), [1, 3, 5]);
    // top-p 0.5 over probabilities ∝ e^3, e^2.9, e^2.5, …: the first two tokens hold > 0.5 together, the first alone < 0.5.
    seen.clear();
    for (let i = 0; i < 300; i++) seen.add(models.pickToken(logits, { doSample: true, temperature: 1, topK: null, topP: 0.5, generator: gen }));
    assert.deepEqual([...seen].sort(), [1, 5]);
  });

  it("a cache with reserved room appends in place with HF's logits; continuing one cache twice stays right", () => {
    rt.noGrad(() => {
      const ids = expected.input_ids;
      const l = ids.shape[1];
      const pre = model.call(ids.narrow(1, 0, 3), { useCache: true, cacheCapacity: l + 1 });
      const room = pre.pastKeyValues![0].room!;
      assert.equal(room.used, 3);
      // A side branch takes the room's next slot first; the main branch must then not write over it.
      const zero = rt.zeros([ids.shape[0], 1], { dtype: "int32" });
      const side = model.call(zero, { pastKeyValues: pre.pastKeyValues, useCache: true });
      assert.equal(side.pastKeyValues![0].room, room, "the side branch appended in place");
      let cache = pre.pastKeyValues;
      for (let t = 3; t < l; t++) {
        const r = model.call(ids.narrow(1, t, 1), { pastKeyValues: cache, useCache: true });
        assertClose(r.logits, expected.logits.narrow(1, t, 1), 1e-5, 0, `main branch, position ${t}`);
        cache = r.pastKeyValues;
      }
      const sideNext = model.call(zero, { pastKeyValues: side.pastKeyValues, useCache: true });
      const recomputed = model.call(rt.cat([ids.narrow(1, 0, 3), zero, zero], 1)).logits;
      assertClose(side.logits, recomputed.narrow(1, 3, 1), 1e-5, 0, "side branch");
      assertClose(sideNext.logits, recomputed.narrow(1, 4, 1), 1e-5, 0, "side branch, next step");
    });
    assert.throws(() => model.call(expected.prompt, { useCache: true, cacheCapacity: -1 }), /cacheCapacity must be a non-negative integer, got -1/);
  });

  it("rejects bad options", () => {
    assert.throws(() => models.generate(model, expected.prompt, { maxNewTokens: 100 }), /5 prompt \+ 100 new tokens exceed config\.n_positions = 48/);
    assert.throws(() => models.generate(model, expected.prompt, { temperature: 0 }), /temperature must be > 0, got 0/);
    assert.throws(() => models.generate(model, expected.prompt, { eosTokenId: 97 }), /eosTokenId must be a token id in \[0, 97\), got 97/);
    assert.throws(() => models.generate(model, expected.prompt, { topk: 3 } as never), /topk/);
  });
});
