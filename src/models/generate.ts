import { noGrad } from "../autograd/grad_mode.js";
import { tensor } from "../ops/creation.js";
import { cat } from "../ops/join.js";
import { narrow, select } from "../ops/view.js";
import { defaultGenerator, type Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { checkArity, checkOptions } from "../util/options.js";
import type { GPT2LMHeadModel, LayerCache } from "./gpt2.js";

export interface GenerateOptions {
  /** How many tokens to add at most (default 20). */
  maxNewTokens?: number;
  /** Sample from the (filtered) distribution; off (the default) picks the most likely token. */
  doSample?: boolean;
  /** Divides the logits before sampling (default 1). */
  temperature?: number;
  /** Sample only among the k most likely tokens. */
  topK?: number | null;
  /** Sample only from the smallest set of most likely tokens whose probability reaches p. */
  topP?: number | null;
  /** A sequence that produces it is finished (it keeps the token); none by default. */
  eosTokenId?: number | null;
  /** Fills finished sequences while others go on (default eosTokenId, else 0). */
  padTokenId?: number;
  /** [N, L]: 1 for real prompt tokens, 0 for (left) padding. */
  attentionMask?: Tensor | null;
  /** Reuse keys and values between steps (default true); off recomputes the whole prefix each step. */
  useCache?: boolean;
  generator?: Generator;
}

const GENERATE_OPTIONS = ["maxNewTokens", "doSample", "temperature", "topK", "topP", "eosTokenId", "padTokenId", "attentionMask", "useCache", "generator"];

/**
 * Picks the next token from one row of logits: greedy argmax (first maximum, as torch.argmax), or a
 * draw after temperature, top-k and top-p filtering (HF's order: temperature, then top-k, then top-p).
 */
export function pickToken(logits: ArrayLike<number>, o: { doSample: boolean; temperature: number; topK: number | null; topP: number | null; generator: Generator }): number {
  const v = logits.length;
  if (!o.doSample) {
    let best = 0;
    for (let i = 1; i < v; i++) if (logits[i] > logits[best]) best = i;
    return best;
  }
  const order = Array.from({ length: v }, (_, i) => i).sort((a, b) => logits[b] - logits[a] || a - b);
  let keep = o.topK ? Math.min(o.topK, v) : v;
  const top = Number(logits[order[0]]) / o.temperature;
  const weights = order.slice(0, keep).map((i) => Math.exp(Number(logits[i]) / o.temperature - top));
  let total = weights.reduce((a, b) => a + b, 0);
  if (o.topP !== null && o.topP < 1) {
    // Keep tokens while the mass before them is below p: the smallest prefix reaching p, at least one.
    let mass = 0;
    let n = 0;
    while (n < keep && mass / total < o.topP) mass += weights[n++];
    keep = Math.max(1, n);
    total = weights.slice(0, keep).reduce((a, b) => a + b, 0);
  }
  let u = o.generator.random() * total;
  for (let i = 0; i < keep; i++) {
    u -= weights[i];
    if (u < 0) return order[i];
  }
  return order[keep - 1];
}

/**
 * Continues each prompt of inputIds [N, L] (int32) with GPT-2: greedy or sampled, with a KV cache,
 * until maxNewTokens or until every sequence has produced eosTokenId. Returns [N, L + T] with the
 * prompt, as HF's generate; finished sequences are filled with padTokenId. Runs without autograd.
 */
export function generate(model: GPT2LMHeadModel, inputIds: Tensor, options: GenerateOptions = {}): Tensor {
  checkArity("generate", arguments, 3, "models.generate(model, inputIds, { maxNewTokens, doSample, temperature, topK, topP, eosTokenId })");
  checkOptions("generate", options, GENERATE_OPTIONS);
  if (inputIds.ndim !== 2 || inputIds.dtype !== "int32" || inputIds.shape[1] < 1) {
    throw new RangeError(`generate: inputIds must be an int32 tensor [batch, seq] with seq ≥ 1, got ${inputIds.dtype} ${formatShape(inputIds.shape)}`);
  }
  const maxNew = options.maxNewTokens ?? 20;
  if (!Number.isInteger(maxNew) || maxNew < 0) throw new RangeError(`generate: maxNewTokens must be a non-negative integer, got ${maxNew}`);
  const temperature = options.temperature ?? 1;
  if (!(temperature > 0)) throw new RangeError(`generate: temperature must be > 0, got ${temperature}`);
  const topK = options.topK ?? null;
  if (topK !== null && !(Number.isInteger(topK) && topK >= 1)) throw new RangeError(`generate: topK must be a positive integer, got ${topK}`);
  const topP = options.topP ?? null;
  if (topP !== null && !(topP > 0 && topP <= 1)) throw new RangeError(`generate: topP must be in (0, 1], got ${topP}`);
  const eos = options.eosTokenId ?? null;
  const vocab = model.settings.vocabSize;
  if (eos !== null && !(Number.isInteger(eos) && eos >= 0 && eos < vocab)) throw new RangeError(`generate: eosTokenId must be a token id in [0, ${vocab}), got ${eos}`);
  const pad = options.padTokenId ?? eos ?? 0;
  const [n, l] = inputIds.shape;
  if (l + maxNew > model.settings.nPositions) throw new RangeError(`generate: ${l} prompt + ${maxNew} new tokens exceed config.n_positions = ${model.settings.nPositions}`);
  const pick = { doSample: options.doSample ?? false, temperature, topK, topP, generator: options.generator ?? defaultGenerator };
  const useCache = options.useCache ?? true;

  return noGrad(() => {
    let ids = inputIds;
    let mask = options.attentionMask ?? null;
    if (mask && (mask.ndim !== 2 || mask.shape[0] !== n || mask.shape[1] !== l)) throw new RangeError(`generate: attentionMask must have inputIds' shape ${formatShape(inputIds.shape)}, got ${formatShape(mask.shape)}`);
    // Left padding shifts positions so that each prompt's first real token is at 0, as HF does.
    const maskRows = mask ? (mask.toArray() as number[][]).map((r) => r.map((x) => (Number(x) !== 0 ? 1 : 0))) : null;
    const positionsFor = (from: number, count: number): Tensor | null => {
      if (!maskRows) return null;
      const out: number[] = [];
      for (const row of maskRows) {
        let seen = 0;
        for (let j = 0; j < from; j++) seen += row[j];
        for (let j = from; j < from + count; j++) {
          seen += row[j];
          out.push(Math.max(seen - 1, 0));
        }
      }
      return tensor(out, { dtype: "int32", shape: [n, count] });
    };
    let cache: LayerCache[] | null = null;
    const finished = new Array<boolean>(n).fill(false);
    for (let step = 0; step < maxNew; step++) {
      const total = ids.shape[1];
      const fresh: Tensor = cache ? narrow(ids, 1, total - 1, 1) : ids;
      const from = cache ? total - 1 : 0;
      const r: { logits: Tensor; pastKeyValues: LayerCache[] | null } = model.call(fresh, { pastKeyValues: cache, useCache, attentionMask: mask, positionIds: positionsFor(from, fresh.shape[1]), logitsToKeep: 1, cacheCapacity: useCache ? l + maxNew : null });
      if (useCache) cache = r.pastKeyValues;
      const last = select(r.logits, 1, 0);
      const rows = last.contiguous();
      const data = (rows.storage.data as Float32Array | Float64Array).subarray(rows.offset, rows.offset + n * vocab);
      const next: number[] = [];
      for (let b = 0; b < n; b++) {
        const row = data.subarray(b * vocab, (b + 1) * vocab);
        const token = finished[b] ? pad : pickToken(row, pick);
        if (eos !== null && token === eos) finished[b] = true;
        next.push(token);
      }
      ids = cat([ids, tensor(next, { dtype: "int32", shape: [n, 1] })], 1);
      if (maskRows) {
        for (const row of maskRows) row.push(1);
        mask = tensor(maskRows.flat(), { dtype: "int32", shape: [n, total + 1] });
      }
      if (finished.every(Boolean)) break;
    }
    return ids;
  });
}
