import type { DType, TypedArray } from "../tensor/dtype.js";
import type { NestedArray } from "../tensor/tensor.js";
import type { Tensor } from "../tensor/tensor.js";
import { clone, to } from "./creation.js";
import * as ew from "./elementwise.js";
import type { Operand } from "./elementwise.js";
import { indexSelect } from "./indexing.js";
import { installMethods } from "./install.js";
import { linear } from "./linear.js";
import { matmul } from "./matmul.js";
import { data, item, toArray, toString } from "./readback.js";
import { mean, sum, type Dims } from "./reduction.js";
import * as v from "./view.js";
import type { ToTarget } from "../tensor/device.js";

type Sizes = (number | readonly number[])[];

declare module "../tensor/tensor.js" {
  interface Tensor {
    add(other: Operand): Tensor;
    sub(other: Operand): Tensor;
    mul(other: Operand): Tensor;
    div(other: Operand): Tensor;
    pow(exponent: Operand): Tensor;
    neg(): Tensor;
    exp(): Tensor;
    log(): Tensor;
    sqrt(): Tensor;
    rsqrt(): Tensor;
    abs(): Tensor;
    sign(): Tensor;
    tanh(): Tensor;
    sigmoid(): Tensor;
    relu(): Tensor;
    gelu(approximate?: "none" | "tanh"): Tensor;
    silu(): Tensor;
    reciprocal(): Tensor;
    square(): Tensor;
    clamp(min?: number | null, max?: number | null): Tensor;
    maximum(other: Tensor): Tensor;
    minimum(other: Tensor): Tensor;
    eq(other: Operand): Tensor;
    ne(other: Operand): Tensor;
    lt(other: Operand): Tensor;
    le(other: Operand): Tensor;
    gt(other: Operand): Tensor;
    ge(other: Operand): Tensor;
    logicalAnd(other: Operand): Tensor;
    logicalOr(other: Operand): Tensor;
    where(condition: Tensor, other: Operand): Tensor;
    maskedFill(mask: Tensor, value: number): Tensor;
    add_(other: Operand): Tensor;
    sub_(other: Operand): Tensor;
    mul_(other: Operand): Tensor;
    div_(other: Operand): Tensor;
    fill_(value: number): Tensor;
    zero_(): Tensor;
    copy_(src: Tensor): Tensor;
    sum(dim?: Dims, keepdim?: boolean): Tensor;
    mean(dim?: Dims, keepdim?: boolean): Tensor;
    matmul(other: Tensor): Tensor;
    linear(weight: Tensor, bias?: Tensor | null): Tensor;
    view(...shape: Sizes): Tensor;
    reshape(...shape: Sizes): Tensor;
    contiguous(): Tensor;
    flatten(startDim?: number, endDim?: number): Tensor;
    permute(...dims: Sizes): Tensor;
    transpose(dim0: number, dim1: number): Tensor;
    t(): Tensor;
    expand(...shape: Sizes): Tensor;
    expandAs(other: Tensor): Tensor;
    unsqueeze(dim: number): Tensor;
    squeeze(dim?: number | readonly number[]): Tensor;
    narrow(dim: number, start: number, length: number): Tensor;
    slice(dim: number, start?: number, end?: number, step?: number): Tensor;
    select(dim: number, index: number): Tensor;
    indexSelect(dim: number, index: Tensor | Int32Array | readonly number[]): Tensor;
    clone(): Tensor;
    to(target: ToTarget, dtype?: DType): Tensor;
    float(): Tensor;
    double(): Tensor;
    int(): Tensor;
    toArray(): NestedArray;
    item(): number;
    data(): TypedArray;
    toString(): string;
  }
}

installMethods({
  add: ew.add,
  sub: ew.sub,
  mul: ew.mul,
  div: ew.div,
  pow: ew.pow,
  neg: ew.neg,
  exp: ew.exp,
  log: ew.log,
  sqrt: ew.sqrt,
  rsqrt: ew.rsqrt,
  abs: ew.abs,
  sign: ew.sign,
  tanh: ew.tanh,
  sigmoid: ew.sigmoid,
  relu: ew.relu,
  gelu: ew.gelu,
  silu: ew.silu,
  reciprocal: ew.reciprocal,
  square: ew.square,
  clamp: ew.clamp,
  maximum: ew.maximum,
  minimum: ew.minimum,
  eq: ew.eq,
  ne: ew.ne,
  lt: ew.lt,
  le: ew.le,
  gt: ew.gt,
  ge: ew.ge,
  logicalAnd: ew.logicalAnd,
  logicalOr: ew.logicalOr,
  where: (self: Tensor, condition: Tensor, other: Operand) => ew.where(condition, self, other),
  maskedFill: ew.maskedFill,
  add_: (self: Tensor, o: Operand) => ew.binaryInPlace("add", self, o, "add_"),
  sub_: (self: Tensor, o: Operand) => ew.binaryInPlace("sub", self, o, "sub_"),
  mul_: (self: Tensor, o: Operand) => ew.binaryInPlace("mul", self, o, "mul_"),
  div_: (self: Tensor, o: Operand) => ew.binaryInPlace("div", self, o, "div_"),
  fill_: ew.fillInPlace,
  zero_: (self: Tensor) => ew.fillInPlace(self, 0),
  copy_: ew.copyInPlace,
  sum,
  mean,
  matmul,
  linear,
  view: v.view,
  reshape: v.reshape,
  contiguous: v.contiguous,
  flatten: v.flatten,
  permute: v.permute,
  transpose: v.transpose,
  t: v.t,
  expand: v.expand,
  expandAs: (self: Tensor, other: Tensor) => v.expand(self, other.shape),
  unsqueeze: v.unsqueeze,
  squeeze: v.squeeze,
  narrow: v.narrow,
  slice: v.slice,
  select: v.select,
  indexSelect,
  clone,
  to,
  float: (self: Tensor) => to(self, "float32"),
  double: (self: Tensor) => to(self, "float64"),
  int: (self: Tensor) => to(self, "int32"),
  toArray,
  item,
  data,
  toString,
});
