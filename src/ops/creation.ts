import { getBackend } from "../backend/index.js";
import { record } from "../autograd/record.js";
import type { DType, TypedArray } from "../tensor/dtype.js";
import { assertDType } from "../tensor/dtype.js";
import { defaultGenerator, type Generator } from "../tensor/random.js";
import { checkShape, formatShape, type Shape } from "../tensor/shape.js";
import { allocate, storageFrom } from "../tensor/storage.js";
import { offloadHomeOf } from "../tensor/mapped.js";
import { Tensor, denseData, type NestedArray } from "../tensor/tensor.js";
import { contiguousData, emptyTensor, viewOf } from "./util.js";
import { checkDevice, dtypeOfTo, type Device, type ToTarget } from "../tensor/device.js";
import { checkOptions } from "../util/options.js";

export interface TensorOptions {
  dtype?: DType;
  requiresGrad?: boolean;
  /** "cpu" (the only device; accepted for ported code, anything else is an error). */
  device?: Device;
}

export interface RandomOptions extends TensorOptions {
  generator?: Generator;
}

export type ShapeArg = number | readonly number[];

function shapeOf(shape: ShapeArg, op: string): number[] {
  return checkShape(typeof shape === "number" ? [shape] : shape, op);
}

const TENSOR_KEYS = ["dtype", "requiresGrad", "device"];
const RANDOM_KEYS = [...TENSOR_KEYS, "generator"];

/** Checks a creation function's options before anything is allocated (a ported `{ requires_grad: true }` must not be dropped). */
function checkCreation(op: string, opts: unknown, known = TENSOR_KEYS): void {
  checkOptions(op, opts, op === "tensor" ? [...known, "shape"] : known);
  const device = (opts as { device?: unknown } | undefined)?.device;
  if (device !== undefined) checkDevice(op, device);
}

function finish(t: Tensor, opts: TensorOptions | undefined): Tensor {
  if (opts?.requiresGrad) t.requiresGrad = true;
  return t;
}

function filled(shape: ShapeArg, value: number, opts: TensorOptions | undefined, op: string): Tensor {
  checkCreation(op, opts);
  const dtype = opts?.dtype ? assertDType(opts.dtype, op) : "float32";
  const s = shapeOf(shape, op);
  const t = new Tensor(allocate(dtype, s.reduce((a, b) => a * b, 1), value === 0), s);
  if (value !== 0) getBackend().fill(t.storage.data, 0, t.numel, value);
  return finish(t, opts);
}

const TYPED_DTYPES: [new (...a: never[]) => TypedArray, DType][] = [
  [Float32Array, "float32"],
  [Float64Array, "float64"],
  [Int32Array, "int32"],
];

/**
 * A tensor from nested arrays or a typed array (torch.tensor). JavaScript cannot tell 1.0 from 1,
 * so numbers become float32 unless `dtype` says otherwise (use "int32" for labels and indices);
 * booleans become bool; a Float64Array/Int32Array keeps its own dtype.
 */
export function tensor(values: NestedArray | boolean | readonly boolean[] | TypedArray, opts: TensorOptions & { shape?: readonly number[] } = {}): Tensor {
  checkCreation("tensor", opts);
  if (ArrayBuffer.isView(values)) {
    const typed = values as TypedArray;
    const inferred = TYPED_DTYPES.find(([C]) => typed instanceof C)?.[1] ?? "float32";
    const dtype = opts.dtype ? assertDType(opts.dtype, "tensor") : inferred;
    const shape = checkShape(opts.shape ?? [typed.length], "tensor");
    if (shape.reduce((a, b) => a * b, 1) !== typed.length) {
      throw new RangeError(`tensor: shape ${formatShape(shape)} does not hold ${typed.length} values`);
    }
    const storage = dtype === inferred ? storageFrom(dtype, typed) : allocate(dtype, typed.length, false);
    if (dtype !== inferred) getBackend().copy({ data: typed, offset: 0, strides: [1] }, [typed.length], storage.data, 0);
    return finish(new Tensor(storage, shape), opts);
  }
  const shape: number[] = [];
  const flat: (number | boolean)[] = [];
  flatten(values as NestedArray, 0, shape, flat);
  const dtype = opts.dtype ? assertDType(opts.dtype, "tensor") : typeof flat[0] === "boolean" ? "bool" : "float32";
  const t = emptyTensor(dtype, opts.shape ? checkShape(opts.shape, "tensor") : shape);
  if (t.numel !== flat.length) throw new RangeError(`tensor: shape ${formatShape(t.shape)} does not hold ${flat.length} values`);
  const staging = new Float64Array(flat.length);
  for (let i = 0; i < flat.length; i++) staging[i] = Number(flat[i]);
  getBackend().copy({ data: staging, offset: 0, strides: [1] }, [flat.length], t.storage.data, 0);
  return finish(t, opts);
}

function flatten(v: unknown, depth: number, shape: number[], out: (number | boolean)[]): void {
  if (Array.isArray(v)) {
    if (shape.length === depth) shape.push(v.length);
    else if (shape[depth] !== v.length) {
      throw new RangeError(`tensor: ragged nested array: expected length ${shape[depth]} at depth ${depth}, got ${v.length}`);
    }
    for (const x of v) flatten(x, depth + 1, shape, out);
    return;
  }
  if (typeof v !== "number" && typeof v !== "boolean") throw new TypeError(`tensor: expected numbers or booleans, got ${typeof v}`);
  if (depth !== shape.length) throw new RangeError(`tensor: ragged nested array: a number appears where an array of length ${shape[depth]} was expected`);
  out.push(v);
}

export const zeros = (shape: ShapeArg, opts?: TensorOptions) => filled(shape, 0, opts, "zeros");
export const ones = (shape: ShapeArg, opts?: TensorOptions) => filled(shape, 1, opts, "ones");
export const full = (shape: ShapeArg, value: number, opts?: TensorOptions) => filled(shape, value, opts, "full");

/** Uninitialised memory (torch.empty): the contents are whatever the pool held. */
export function empty(shape: ShapeArg, opts?: TensorOptions): Tensor {
  checkCreation("empty", opts);
  const dtype = opts?.dtype ? assertDType(opts.dtype, "empty") : "float32";
  return finish(emptyTensor(dtype, shapeOf(shape, "empty")), opts);
}

/** torch.arange: int32 when start, end and step are all integers, else float32. */
export function arange(start: number, end?: number, step = 1, opts: TensorOptions = {}): Tensor {
  checkCreation("arange", opts);
  if (end === undefined) [start, end] = [0, start];
  if (step === 0 || !Number.isFinite(step)) throw new RangeError(`arange: step must be a finite non-zero number, got ${step}`);
  if (!Number.isFinite(start) || !Number.isFinite(end)) throw new RangeError(`arange: start and end must be finite, got ${start} and ${end}`);
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    throw new RangeError(`arange: the bounds ${start} to ${end} are inconsistent with the sign of step ${step}`);
  }
  const n = Math.max(0, Math.ceil((end - start) / step));
  const ints = Number.isInteger(start) && Number.isInteger(end) && Number.isInteger(step);
  const dtype = opts.dtype ?? (ints ? "int32" : "float32");
  const t = emptyTensor(dtype, [n]);
  const d = t.storage.data;
  for (let i = 0; i < n; i++) d[i] = start + i * step;
  return finish(t, opts);
}

export function randn(shape: ShapeArg, opts: RandomOptions = {}): Tensor {
  checkCreation("randn", opts, RANDOM_KEYS);
  const g = opts.generator ?? defaultGenerator;
  const t = emptyTensor(floatDType(opts, "randn"), shapeOf(shape, "randn"));
  const d = t.storage.data;
  for (let i = 0; i < d.length; i++) d[i] = g.normal();
  return finish(t, opts);
}

export function rand(shape: ShapeArg, opts: RandomOptions = {}): Tensor {
  checkCreation("rand", opts, RANDOM_KEYS);
  const g = opts.generator ?? defaultGenerator;
  const t = emptyTensor(floatDType(opts, "rand"), shapeOf(shape, "rand"));
  const d = t.storage.data;
  for (let i = 0; i < d.length; i++) d[i] = g.random();
  return finish(t, opts);
}

/** Integers uniform in [low, high), int32 unless dtype says otherwise. */
export function randint(low: number, high: number, shape: ShapeArg, opts: RandomOptions = {}): Tensor {
  checkCreation("randint", opts, RANDOM_KEYS);
  if (!Number.isInteger(low) || !Number.isInteger(high) || high <= low) {
    throw new RangeError(`randint: expected integers low < high, got low=${low}, high=${high}`);
  }
  const g = opts.generator ?? defaultGenerator;
  const t = emptyTensor(opts.dtype ?? "int32", shapeOf(shape, "randint"));
  const d = t.storage.data;
  for (let i = 0; i < d.length; i++) d[i] = g.randint(low, high);
  return finish(t, opts);
}

function floatDType(opts: TensorOptions, op: string): DType {
  const dtype = opts.dtype ?? "float32";
  if (dtype !== "float32" && dtype !== "float64") throw new TypeError(`${op}: expected a floating dtype (float32 or float64), got ${dtype}`);
  return dtype;
}

const likeOpts = (t: Tensor, opts?: TensorOptions): TensorOptions => ({ dtype: t.dtype, ...opts });
/** zeros in t's shape and dtype; for an offloaded parameter (its optimizer state), in its offload file. */
export function zerosLike(t: Tensor, opts?: TensorOptions): Tensor {
  const home = opts === undefined ? offloadHomeOf(t) : null;
  if (home?.state && home.file.isOpen) return home.file.zeros(t.shape, t.dtype);
  return zeros(t.shape, likeOpts(t, opts));
}
export const onesLike = (t: Tensor, opts?: TensorOptions) => ones(t.shape, likeOpts(t, opts));
export const fullLike = (t: Tensor, value: number, opts?: TensorOptions) => full(t.shape, value, likeOpts(t, opts));
export const emptyLike = (t: Tensor, opts?: TensorOptions) => empty(t.shape, likeOpts(t, opts));
export const randnLike = (t: Tensor, opts?: RandomOptions) => randn(t.shape, { dtype: t.dtype, ...opts });
export const randLike = (t: Tensor, opts?: RandomOptions) => rand(t.shape, { dtype: t.dtype, ...opts });

/** A contiguous copy that gradients flow through (torch.clone). */
export function clone(t: Tensor): Tensor {
  const out = emptyTensor(t.dtype, t.shape);
  // A dense run is one memcpy (TypedArray.set); only strided views need the backend's gather.
  if (t.isContiguous()) (out.storage.data as Float32Array).set(denseData(t) as Float32Array);
  else getBackend().copy(viewOf(t), t.shape, out.storage.data, 0);
  return record(out, "CloneBackward", [t], (g) => [g]);
}

/**
 * Converts to another dtype (a copy; the same tensor when the dtype already matches). Takes
 * PyTorch's forms too: `to("cpu")`, `to("cpu", "float64")`, `to({ device, dtype })`; a device
 * other than the CPU is an error (see tensor/device.ts).
 */
export function to(t: Tensor, target: ToTarget, dtypeArg?: DType): Tensor {
  const dtype = dtypeOfTo("Tensor.to", target, dtypeArg);
  if (dtype === undefined || dtype === t.dtype) return t;
  const out = contiguousData(t, dtype);
  const floats = (d: DType) => d === "float32" || d === "float64" || d === "bfloat16";
  if (!floats(dtype) || !floats(t.dtype)) return out;
  const from = t.dtype;
  return record(out, "ToCopyBackward", [t], (g) => [to(g, from)]);
}
