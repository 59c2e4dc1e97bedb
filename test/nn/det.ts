// Deterministic values shared with tools/nn/common.py: the same 32-bit hash, the same float64
// formula, then float32 rounding, so PyTorch and ringtorch start from bit-identical weights and
// inputs without storing them in the fixtures.
import { noGrad } from "../../src/autograd/grad_mode.js";
import { tensor } from "../../src/ops/creation.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import type { Module } from "../../src/nn/module.js";

export function hashUniform(n: number, k: number): Float64Array {
  const out = new Float64Array(n);
  const salt = Math.imul(k, 0x85ebca77);
  for (let i = 0; i < n; i++) {
    let x = (Math.imul(i, 0x9e3779b1) + salt + 0x165667b1) >>> 0;
    x ^= x >>> 15;
    x = Math.imul(x, 0x2c1b3c6d) >>> 0;
    x ^= x >>> 12;
    x = Math.imul(x, 0x297a2d39) >>> 0;
    x ^= x >>> 15;
    out[i] = (x >>> 0) / 4294967296;
  }
  return out;
}

/** base + scale·U(−1, 1) from the hash, as float32 (or float64). */
export function hashTensor(shape: readonly number[], k: number, scale = 1, base = 0, dtype: "float32" | "float64" = "float32"): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const u = hashUniform(n, k);
  const values = dtype === "float32" ? new Float32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = base + scale * (2 * u[i] - 1);
  return tensor(values, { shape: [...shape] });
}

export function hashLabels(shape: readonly number[], k: number, classes: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const u = hashUniform(n, k);
  return tensor(Int32Array.from(u, (v) => Math.floor(v * classes)), { shape: [...shape] });
}

export function detParam(name: string, shape: readonly number[], k: number): Tensor {
  if (shape.length >= 2) return hashTensor(shape, k, 1 / Math.sqrt(shape[shape.length - 1]));
  return hashTensor(shape, k, 0.1, name.endsWith("weight") ? 1 : 0);
}

/** Overwrites every parameter (namedParameters order) with its deterministic value. */
export function detInit(module: Module, salt = 0): Module {
  noGrad(() => {
    let k = 0;
    for (const [name, p] of module.namedParameters()) p.copy_(detParam(name, p.shape, salt + k++));
  });
  return module;
}
