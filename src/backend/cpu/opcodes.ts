import type { BinaryOp, ReduceOp, UnaryGradOp, UnaryOp } from "../backend.js";

// The op codes of native/kernels/kernel_table.h: the same names in the same order.

export const UNARY: Record<UnaryOp, number> = {
  neg: 0, abs: 1, sqrt: 2, rsqrt: 3, exp: 4, log: 5, tanh: 6, sigmoid: 7, relu: 8, gelu: 9, gelu_tanh: 10,
  silu: 11, sign: 12, reciprocal: 13, square: 14, pow_scalar: 15, clamp: 16, add_scalar: 17, mul_scalar: 18,
  rsub_scalar: 19, rdiv_scalar: 20,
};

export const UNARY_GRAD: Record<UnaryGradOp, number> = {
  relu: 0, gelu: 1, gelu_tanh: 2, silu: 3, abs: 4, pow_scalar: 5, clamp: 6, tanh: 7, sigmoid: 8, exp: 9,
  sqrt: 10, rsqrt: 11, reciprocal: 12,
};

export const BINARY: Record<BinaryOp, number> = {
  add: 0, sub: 1, mul: 2, div: 3, pow: 4, maximum: 5, minimum: 6, eq: 7, ne: 8, lt: 9, le: 10, gt: 11, ge: 12,
  logical_and: 13, logical_or: 14,
};

export const REDUCE: Record<ReduceOp, number> = { sum: 0, max: 1, min: 2, prod: 3 };
