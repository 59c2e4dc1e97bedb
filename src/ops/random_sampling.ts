import { defaultGenerator, Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import type { DType } from "../tensor/dtype.js";
import { checkOptions } from "../util/options.js";
import { installMethods } from "./install.js";
import { assertTensor, contiguousData, emptyTensor } from "./util.js";

declare module "../tensor/tensor.js" {
  interface Tensor {
    multinomial(numSamples: number, replacement?: boolean, options?: SamplingOptions): Tensor;
    bernoulli(p?: number | SamplingOptions, options?: SamplingOptions): Tensor;
  }
}

export interface SamplingOptions {
  /** The generator to draw from (the seeded default generator when absent). */
  generator?: Generator;
}

export interface RandpermOptions extends SamplingOptions {
  dtype?: DType;
}

function generatorOf(options: SamplingOptions, op: string): Generator {
  const g = options.generator ?? defaultGenerator;
  if (!(g instanceof Generator)) throw new TypeError(`${op}: generator must be a Generator, got ${typeof g}`);
  return g;
}

/** The values of a float tensor as a plain float64 copy (probabilities, weights). */
function valuesOf(x: Tensor): Float64Array {
  const c = contiguousData(x.detach());
  return Float64Array.from(c.storage.data.subarray(c.offset, c.offset + x.numel) as ArrayLike<number>);
}

/** torch.randperm: a random permutation of 0 … n−1 (int32 unless dtype says otherwise), Fisher–Yates. */
export function randperm(n: number, options: RandpermOptions = {}): Tensor {
  checkOptions("randperm", options, ["generator", "dtype"]);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`randperm: n must be a non-negative integer, got ${n}`);
  const g = generatorOf(options, "randperm");
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = g.randint(0, i + 1);
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  const dtype = options.dtype ?? "int32";
  if (dtype !== "int32" && dtype !== "float32" && dtype !== "float64") throw new TypeError(`randperm: dtype must be int32, float32 or float64, got ${dtype}`);
  const out = emptyTensor(dtype, [n]);
  out.storage.data.set(perm);
  return out;
}

/**
 * torch.multinomial: draws numSamples category indices per row of non-negative weights ([C] or
 * [N, C]; they need not sum to 1), with or without replacement. Without replacement a row must
 * have at least numSamples non-zero weights. Returns int32 of shape [numSamples] or [N, numSamples].
 */
export function multinomial(input: Tensor, numSamples: number, replacement = false, options: SamplingOptions = {}): Tensor {
  const op = "multinomial";
  assertTensor(input, op);
  checkOptions(op, options, ["generator"]);
  if (typeof replacement !== "boolean") throw new TypeError(`${op}: replacement must be a boolean, got ${JSON.stringify(replacement)}; pass the generator in the options`);
  if (input.dtype !== "float32" && input.dtype !== "float64") throw new TypeError(`${op}: expected float32 or float64 weights, got ${input.dtype}`);
  if (input.ndim !== 1 && input.ndim !== 2) throw new RangeError(`${op}: weights must be 1-D or 2-D, got shape ${formatShape(input.shape)}`);
  if (!Number.isInteger(numSamples) || numSamples <= 0) throw new RangeError(`${op}: numSamples must be a positive integer, got ${numSamples}`);
  const rows = input.ndim === 1 ? 1 : input.shape[0];
  const classes = input.shape[input.ndim - 1];
  if (classes === 0) throw new RangeError(`${op}: the weights have no categories (shape ${formatShape(input.shape)})`);
  const w = valuesOf(input);
  const g = generatorOf(options, op);
  const out = emptyTensor("int32", input.ndim === 1 ? [numSamples] : [rows, numSamples]);
  const data = out.storage.data;
  for (let r = 0; r < rows; r++) {
    const row = w.subarray(r * classes, (r + 1) * classes);
    let total = 0;
    let nonZero = 0;
    for (let c = 0; c < classes; c++) {
      const v = row[c];
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`${op}: weights must be finite and non-negative, got ${v} in row ${r}`);
      total += v;
      if (v > 0) nonZero++;
    }
    if (total <= 0) throw new RangeError(`${op}: row ${r} of the weights sums to 0; at least one weight must be positive`);
    if (!replacement && numSamples > nonZero) {
      throw new RangeError(`${op}: cannot draw ${numSamples} samples without replacement from row ${r}, which has only ${nonZero} non-zero weights`);
    }
    const remaining = Float64Array.from(row);
    let mass = total;
    for (let s = 0; s < numSamples; s++) {
      const c = draw(remaining, mass, g);
      data[r * numSamples + s] = c;
      // Without replacement a drawn category leaves the urn.
      if (!replacement) {
        mass -= remaining[c];
        remaining[c] = 0;
      }
    }
  }
  return out;
}

/** One category drawn with probability weight/mass (linear scan; the last positive one on rounding). */
function draw(weights: Float64Array, mass: number, g: Generator): number {
  const u = g.random() * mass;
  let acc = 0;
  let last = -1;
  for (let c = 0; c < weights.length; c++) {
    if (weights[c] <= 0) continue;
    acc += weights[c];
    last = c;
    if (u < acc) return c;
  }
  return last;
}

/**
 * torch.bernoulli: 1 with probability p and 0 otherwise, elementwise, in the input's (float)
 * dtype. p is the input's own values (each in [0, 1]), or a number given as the second argument.
 */
export function bernoulli(input: Tensor, p?: number | SamplingOptions | null, options: SamplingOptions = {}): Tensor {
  const op = "bernoulli";
  assertTensor(input, op);
  if (p !== null && typeof p === "object") [p, options] = [undefined, p];
  checkOptions(op, options, ["generator"]);
  if (input.dtype !== "float32" && input.dtype !== "float64") throw new TypeError(`${op}: expected a float32 or float64 tensor, got ${input.dtype}`);
  if (p !== undefined && p !== null && (typeof p !== "number" || !(p >= 0 && p <= 1))) {
    throw new RangeError(`${op}: p must be a probability in [0, 1], got ${JSON.stringify(p)}`);
  }
  const probs = typeof p === "number" ? null : valuesOf(input);
  if (probs) {
    for (let i = 0; i < probs.length; i++) {
      if (!(probs[i] >= 0 && probs[i] <= 1)) throw new RangeError(`${op}: every probability must be in [0, 1], got ${probs[i]} at flat position ${i}`);
    }
  }
  const g = generatorOf(options, op);
  const out = emptyTensor(input.dtype, input.shape);
  const data = out.storage.data;
  for (let i = 0; i < out.numel; i++) data[i] = g.random() < (probs ? probs[i] : (p as number)) ? 1 : 0;
  return out;
}

installMethods({
  multinomial,
  bernoulli: (self: Tensor, p?: number | SamplingOptions, options?: SamplingOptions) => bernoulli(self, p, options),
});
