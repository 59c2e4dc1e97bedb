import type { MatmulArgs, StridedView, TypedArray } from "../backend.js";

// Cheap guards run before every native call, so that whatever the caller passes, the kernels never
// read or write outside the arrays they are given. They are O(ndim), never O(n): the ops layer has
// already validated shapes, so these only catch bugs, and their messages say where.

const MAX_DIMS = 32;

function fail(op: string, what: string): never {
  throw new RangeError(`cpu backend ${op}: ${what}`);
}

/** [offset, offset + n) lies inside array. */
export function checkRun(op: string, name: string, array: TypedArray, offset: number, n: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(n) || offset < 0 || n < 0 || offset + n > array.length) {
    fail(op, `${name} needs elements [${offset}, ${offset}+${n}) but has ${array.length}.`);
  }
}

export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Every element a strided view of `shape` addresses lies inside its array. */
export function checkView(op: string, name: string, view: StridedView, shape: readonly number[]): void {
  const { offset, strides, data } = view;
  if (shape.length > MAX_DIMS) fail(op, `at most ${MAX_DIMS} dimensions are supported, got ${shape.length}.`);
  if (strides.length !== shape.length) fail(op, `${name} has ${strides.length} strides for a shape of ${shape.length} dimensions.`);
  let lo = offset;
  let hi = offset;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (!Number.isSafeInteger(d) || d < 0) fail(op, `shape [${shape.join(", ")}] has a bad dimension.`);
    if (d === 0) return;
    const s = strides[i];
    if (!Number.isSafeInteger(s)) fail(op, `${name} has a non-integer stride ${s}.`);
    if (s > 0) hi += (d - 1) * s;
    else lo += (d - 1) * s;
  }
  if (!Number.isSafeInteger(offset) || lo < 0 || hi >= data.length) {
    fail(op, `${name} (offset ${offset}, strides [${strides.join(", ")}]) reaches elements [${lo}, ${hi}] of an array of ${data.length} for shape [${shape.join(", ")}].`);
  }
}

/** A size, offset or stride the kernels can take. (Tested one by one, not over an array literal: matmul checks eight per call.) */
function isIndex(v: number): boolean {
  return Number.isSafeInteger(v) && v >= 0;
}

/** A matrix operand of matmul: offset + batch, row and column strides stay inside. */
function checkMatrix(name: string, data: TypedArray, offset: number, rows: number, cols: number, rs: number, cs: number, batch: number, bs: number): void {
  if (!isIndex(offset) || !isIndex(rs) || !isIndex(cs) || !isIndex(bs)) {
    fail("matmul", `${name}'s offset and strides must be non-negative integers, got ${offset}, [${rs}, ${cs}], batch ${bs}.`);
  }
  const last = offset + (batch - 1) * bs + (rows - 1) * rs + (cols - 1) * cs;
  if (last >= data.length) fail("matmul", `${name} (${rows}x${cols}, strides [${rs}, ${cs}], batch ${batch}x${bs}, offset ${offset}) reaches element ${last} of ${data.length}.`);
}

export function checkMatmul(args: MatmulArgs): void {
  const { batch, m, n, k } = args;
  if (!isIndex(batch) || !isIndex(m) || !isIndex(n) || !isIndex(k)) {
    fail("matmul", `sizes must be non-negative integers, got batch ${batch}, m ${m}, n ${n}, k ${k}.`);
  }
  checkRun("matmul", "out", args.out, args.outOffset, batch * m * n);
  if (batch === 0 || m === 0 || n === 0 || k === 0) return;
  checkMatrix("a", args.a, args.aOffset, m, k, args.aRowStride, args.aColStride, batch, args.aBatchStride);
  checkMatrix("b", args.b, args.bOffset, k, n, args.bRowStride, args.bColStride, batch, args.bBatchStride);
}

export function isFloatArray(a: TypedArray): a is Float32Array | Float64Array {
  return a instanceof Float32Array || a instanceof Float64Array;
}

export function sameType(op: string, ...arrays: (TypedArray | null)[]): void {
  const first = arrays[0];
  for (const a of arrays) {
    if (a !== null && first !== null && a.constructor !== first.constructor) {
      fail(op, `arrays must share one dtype, got ${arrays.map((x) => x?.constructor.name ?? "null").join(", ")}.`);
    }
  }
}
