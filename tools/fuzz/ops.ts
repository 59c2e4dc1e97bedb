/**
 * The replayer's op table: the ringtorch call for each op name of tools/fuzz/ops.py. Arguments arrive
 * decoded (tensors built with their views, numbers with NaN/inf restored); `k` holds the options.
 * Adding an op is one entry here and one `op(...)` line in ops.py.
 */
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";

type Args = any[];
type Kw = Record<string, any>;
export type OpCall = (a: Args, k: Kw) => unknown;

const dims = (d: any) => (d === null ? undefined : d);

function reduceCall(f: (x: Tensor, dim?: any, keepdim?: boolean) => Tensor): OpCall {
  return (a) => (a.length === 1 ? f(a[0]) : f(a[0], dims(a[1]), a[2] ?? false));
}

function extremeCall(name: "max" | "min" | "argmax" | "argmin"): OpCall {
  return (a) => {
    const f = rt[name] as (x: Tensor, dim?: number, keepdim?: boolean) => unknown;
    if (a.length === 1) return f(a[0]);
    const r = f(a[0], a[1], a[2]);
    return name === "max" || name === "min" ? [(r as rt.ValuesIndices).values, (r as rt.ValuesIndices).indices] : r;
  };
}

export const OPS: Record<string, OpCall> = {
  add: (a) => rt.add(a[0], a[1]),
  sub: (a) => rt.sub(a[0], a[1]),
  mul: (a) => rt.mul(a[0], a[1]),
  div: (a) => rt.div(a[0], a[1]),
  pow: (a) => rt.pow(a[0], a[1]),
  eq: (a) => rt.eq(a[0], a[1]),
  ne: (a) => rt.ne(a[0], a[1]),
  lt: (a) => rt.lt(a[0], a[1]),
  le: (a) => rt.le(a[0], a[1]),
  gt: (a) => rt.gt(a[0], a[1]),
  ge: (a) => rt.ge(a[0], a[1]),
  logicalAnd: (a) => rt.logicalAnd(a[0], a[1]),
  logicalOr: (a) => rt.logicalOr(a[0], a[1]),
  maximum: (a) => rt.maximum(a[0], a[1]),
  minimum: (a) => rt.minimum(a[0], a[1]),
  neg: (a) => rt.neg(a[0]),
  exp: (a) => rt.exp(a[0]),
  log: (a) => rt.log(a[0]),
  sqrt: (a) => rt.sqrt(a[0]),
  rsqrt: (a) => rt.rsqrt(a[0]),
  abs: (a) => rt.abs(a[0]),
  sign: (a) => rt.sign(a[0]),
  tanh: (a) => rt.tanh(a[0]),
  sigmoid: (a) => rt.sigmoid(a[0]),
  relu: (a) => rt.relu(a[0]),
  silu: (a) => rt.silu(a[0]),
  reciprocal: (a) => rt.reciprocal(a[0]),
  square: (a) => rt.square(a[0]),
  gelu: (a) => rt.gelu(a[0], a[1]),
  clamp: (a) => rt.clamp(a[0], a[1], a[2]),
  where: (a) => rt.where(a[0], a[1], a[2]),
  maskedFill: (a) => rt.maskedFill(a[0], a[1], a[2]),
  add_: (a) => a[0].add_(a[1]),
  sub_: (a) => a[0].sub_(a[1]),
  mul_: (a) => a[0].mul_(a[1]),
  div_: (a) => a[0].div_(a[1]),
  fill_: (a) => a[0].fill_(a[1]),
  zero_: (a) => a[0].zero_(),
  copy_: (a) => a[0].copy_(a[1]),
  sum: reduceCall(rt.sum),
  mean: reduceCall(rt.mean),
  var: (a, k) => rt.variance(a[0], dims(a[1]), k),
  std: (a, k) => rt.std(a[0], dims(a[1]), k),
  max: extremeCall("max"),
  min: extremeCall("min"),
  argmax: extremeCall("argmax"),
  argmin: extremeCall("argmin"),
  matmul: (a) => rt.matmul(a[0], a[1]),
  linear: (a) => rt.linear(a[0], a[1], a[2]),
  reshape: (a) => rt.reshape(a[0], a[1]),
  view: (a) => rt.view(a[0], a[1]),
  contiguous: (a) => rt.contiguous(a[0]),
  clone: (a) => rt.clone(a[0]),
  flatten: (a) => rt.flatten(a[0], a[1], a[2]),
  transpose: (a) => rt.transpose(a[0], a[1], a[2]),
  permute: (a) => rt.permute(a[0], a[1]),
  t: (a) => rt.t(a[0]),
  expand: (a) => rt.expand(a[0], a[1]),
  unsqueeze: (a) => rt.unsqueeze(a[0], a[1]),
  squeeze: (a) => (a.length === 1 ? rt.squeeze(a[0]) : rt.squeeze(a[0], a[1])),
  narrow: (a) => rt.narrow(a[0], a[1], a[2], a[3]),
  slice: (a) => rt.slice(a[0], a[1], a[2] ?? undefined, a[3] ?? undefined, a[4]),
  select: (a) => rt.select(a[0], a[1], a[2]),
  indexSelect: (a) => rt.indexSelect(a[0], a[1], a[2]),
  cat: (a) => rt.cat(a[0], a[1]),
  stack: (a) => rt.stack(a[0], a[1]),
  split: (a) => rt.split(a[0], a[1], a[2]),
  chunk: (a) => rt.chunk(a[0], a[1], a[2]),
  gather: (a) => rt.gather(a[0], a[1], a[2]),
  scatterAdd: (a) => rt.scatterAdd(a[0], a[1], a[2], a[3]),
  embedding: (a, k) => rt.embedding(a[0], a[1], k),
  tril: (a) => rt.tril(a[0], a[1]),
  triu: (a) => rt.triu(a[0], a[1]),
  softmax: (a) => rt.softmax(a[0], a[1]),
  logSoftmax: (a) => rt.logSoftmax(a[0], a[1]),
  layerNorm: (a) => rt.layerNorm(a[0], a[1], a[2], a[3]),
  crossEntropy: (a, k) => rt.crossEntropy(a[0], a[1], k),
  mseLoss: (a, k) => rt.mseLoss(a[0], a[1], k),
  to: (a) => rt.to(a[0], a[1]),
  mm: (a) => rt.mm(a[0], a[1]),
  bmm: (a) => rt.bmm(a[0], a[1]),
  arange: (a) => rt.arange(a[0], a[1], a[2]),
  full: (a, k) => rt.full(a[0], a[1], k),
  zeros: (a, k) => rt.zeros(a[0], k),
  ones: (a, k) => rt.ones(a[0], k),
  dropout: (a, k) => rt.dropout(a[0], a[1], k),
  expandAs: (a) => a[0].expandAs(a[1]),
  squeezeDims: (a) => rt.squeeze(a[0], a[1]),
  powSpecial: (a) => rt.pow(a[0], a[1]),
  rbinary: (a) => (rt[a[2] as "add" | "sub" | "mul" | "div" | "pow"] as (x: number, y: Tensor) => Tensor)(a[0], a[1]),
  sin: (a) => rt.sin(a[0]),
  cos: (a) => rt.cos(a[0]),
  tan: (a) => rt.tan(a[0]),
  asin: (a) => rt.asin(a[0]),
  acos: (a) => rt.acos(a[0]),
  atan: (a) => rt.atan(a[0]),
  sinh: (a) => rt.sinh(a[0]),
  cosh: (a) => rt.cosh(a[0]),
  asinh: (a) => rt.asinh(a[0]),
  acosh: (a) => rt.acosh(a[0]),
  atanh: (a) => rt.atanh(a[0]),
  log1p: (a) => rt.log1p(a[0]),
  expm1: (a) => rt.expm1(a[0]),
  atan2: (a) => rt.atan2(a[0], a[1]),
  logsumexp: reduceCall(rt.logsumexp),
  amax: reduceCall(rt.amax),
  amin: reduceCall(rt.amin),
  any: reduceCall(rt.any),
  all: reduceCall(rt.all),
  vectorNorm: (a) => rt.linalg.vectorNorm(a[0], a[1], a[2], a[3]),
  norm: (a) => rt.norm(a[0], a[1], a[2], a[3]),
  isnan: (a) => rt.isnan(a[0]),
  isinf: (a) => rt.isinf(a[0]),
  isfinite: (a) => rt.isfinite(a[0]),
  nanToNum: (a) => rt.nanToNum(a[0], ...a.slice(1)),
  nllLoss: (a, k) => rt.nllLoss(a[0], a[1], k),
  binaryCrossEntropy: (a, k) => rt.binaryCrossEntropy(a[0], a[1], k),
  binaryCrossEntropyWithLogits: (a, k) => rt.binaryCrossEntropyWithLogits(a[0], a[1], k),
  scatter: (a) => rt.scatter(a[0], a[1], a[2], a[3]),
  scatterValue: (a) => rt.scatter(a[0], a[1], a[2], a[3]),
  scatterReduce: (a, k) => rt.scatterReduce(a[0], a[1], a[2], a[3], a[4], k),
  oneHot: (a) => rt.oneHot(a[0], a[1]),
  pad: (a) => rt.pad(a[0], a[1], a[2], a[3]),
  sort: (a) => {
    const r = rt.sort(a[0], a[1], a[2]);
    return [r.values, r.indices];
  },
  argsort: (a) => rt.argsort(a[0], a[1], a[2]),
  topk: (a) => {
    const r = rt.topk(a[0], a[1], a[2], a[3]);
    return [r.values, r.indices];
  },
  cumsum: (a, k) => rt.cumsum(a[0], a[1], k),
  cumprod: (a, k) => rt.cumprod(a[0], a[1], k),
  flip: (a) => rt.flip(a[0], a[1]),
  roll: (a) => rt.roll(a[0], a[1], a[2]),
  repeat: (a) => rt.repeat(a[0], a[1]),
  einsum: (a) => rt.einsum(a[0], a[1]),
  logSigmoid: (a) => rt.logSigmoid(a[0]),
  zerosLike: (a, k) => rt.zerosLike(a[0], k),
  onesLike: (a, k) => rt.onesLike(a[0], k),
  fullLike: (a, k) => rt.fullLike(a[0], a[1], k),
  scatter_: (a) => a[0].scatter_(a[1], a[2], a[3]),
  scatterValue_: (a) => a[0].scatter_(a[1], a[2], a[3]),
  scatterReduce_: (a, k) => a[0].scatterReduce_(a[1], a[2], a[3], a[4], k),
  // The generator's `bias` is PyTorch's additive float attn_mask.
  scaledDotProductAttention: (a, k) => rt.nn.functional.scaledDotProductAttention(a[0], a[1], a[2], k.bias === undefined ? {} : { attnMask: k.bias }),
  toAny: (a) => rt.to(a[0], a[1]),
  fullAny: (a, k) => rt.full(a[0], a[1], k),
  inplaceBf16: (a) => a[0][a[2]](a[1]),
};
