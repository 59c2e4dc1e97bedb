import { record } from "../autograd/record.js";
import { getBackend } from "../backend/index.js";
import { formatShape, inferShape, normalizeDim, shapesEqual, viewStrides, type Shape } from "../tensor/shape.js";
import { Tensor } from "../tensor/tensor.js";
import { assertTensor, emptyTensor, viewOf } from "./util.js";
import { zeros } from "./creation.js";
import { indexAddInto } from "./indexing.js";
import { sumToShape } from "./reduction.js";

function makeView(t: Tensor, shape: Shape, strides: Shape, offset: number): Tensor {
  for (const d of shape) if (!Number.isInteger(d) || d < 0) throw new RangeError(`view of ${t.describe()}: computed an invalid shape ${formatShape(shape)}`);
  return new Tensor(t.storage, shape, strides, offset);
}

function sizesOf(args: readonly (number | readonly number[])[]): number[] {
  return args.length === 1 && Array.isArray(args[0]) ? [...(args[0] as number[])] : (args as number[]);
}

/** A view with a new shape; fails when the strides do not allow it (use reshape). */
export function view(t: Tensor, ...shapeArgs: (number | readonly number[])[]): Tensor {
  assertTensor(t, "view");
  const shape = inferShape(sizesOf(shapeArgs), t.numel, "view");
  const strides = viewStrides(t.shape, t.strides, shape);
  if (!strides) {
    throw new Error(
      `view: a tensor of shape ${formatShape(t.shape)} with strides ${formatShape(t.strides)} cannot be viewed as ${formatShape(shape)} ` +
        "without a copy; use reshape() instead (or contiguous() first)",
    );
  }
  const from = t.shape;
  return record(makeView(t, shape, strides, t.offset), "ViewBackward", [t], (g) => [reshape(g, from)]);
}

/** A view when the layout allows, else a contiguous copy. */
export function reshape(t: Tensor, ...shapeArgs: (number | readonly number[])[]): Tensor {
  assertTensor(t, "reshape");
  const shape = inferShape(sizesOf(shapeArgs), t.numel, "reshape");
  if (shapesEqual(shape, t.shape)) return t;
  return viewStrides(t.shape, t.strides, shape) ? view(t, shape) : view(contiguous(t), shape);
}

export function contiguous(t: Tensor): Tensor {
  if (t.isContiguous()) return t;
  const out = emptyTensor(t.dtype, t.shape);
  getBackend().copy(viewOf(t), t.shape, out.storage.data, 0);
  return record(out, "ContiguousBackward", [t], (g) => [g]);
}

export function flatten(t: Tensor, startDim = 0, endDim = -1): Tensor {
  assertTensor(t, "flatten");
  if (t.ndim === 0) {
    normalizeDim(startDim, 0, "flatten");
    normalizeDim(endDim, 0, "flatten");
    return reshape(t, [1]);
  }
  const s = normalizeDim(startDim, t.ndim, "flatten");
  const e = normalizeDim(endDim, t.ndim, "flatten");
  if (s > e) throw new RangeError(`flatten: startDim ${startDim} comes after endDim ${endDim}`);
  const merged = t.shape.slice(s, e + 1).reduce((a, b) => a * b, 1);
  return reshape(t, [...t.shape.slice(0, s), merged, ...t.shape.slice(e + 1)]);
}

export function permute(t: Tensor, ...dimArgs: (number | readonly number[])[]): Tensor {
  assertTensor(t, "permute");
  const dims = sizesOf(dimArgs).map((d) => normalizeDim(d, t.ndim, "permute"));
  if (dims.length !== t.ndim || new Set(dims).size !== dims.length) {
    throw new RangeError(`permute: expected a permutation of ${t.ndim} dims for shape ${formatShape(t.shape)}, got ${formatShape(dims)}`);
  }
  const inverse = new Array<number>(dims.length);
  dims.forEach((d, i) => (inverse[d] = i));
  const out = makeView(t, dims.map((d) => t.shape[d]), dims.map((d) => t.strides[d]), t.offset);
  return record(out, "PermuteBackward", [t], (g) => [permute(g, inverse)]);
}

export function transpose(t: Tensor, dim0: number, dim1: number): Tensor {
  assertTensor(t, "transpose");
  if (t.ndim === 0) {
    normalizeDim(dim0, 0, "transpose");
    normalizeDim(dim1, 0, "transpose");
    return t;
  }
  const a = normalizeDim(dim0, t.ndim, "transpose");
  const b = normalizeDim(dim1, t.ndim, "transpose");
  const order = t.shape.map((_, i) => i);
  [order[a], order[b]] = [order[b], order[a]];
  return permute(t, order);
}

/** The transpose of a tensor of at most 2 dims (torch.t). */
export function t(x: Tensor): Tensor {
  if (x.ndim > 2) throw new RangeError(`t: expects a tensor of at most 2 dims, got shape ${formatShape(x.shape)}; use transpose(dim0, dim1)`);
  return x.ndim < 2 ? x : transpose(x, 0, 1);
}

/** Broadcasts size-1 dims to `shape` without copying (-1 keeps a size). */
export function expand(t: Tensor, ...shapeArgs: (number | readonly number[])[]): Tensor {
  assertTensor(t, "expand");
  const target = sizesOf(shapeArgs);
  if (target.length < t.ndim) {
    throw new RangeError(`expand: the target shape ${formatShape(target)} has fewer dims than the tensor's ${formatShape(t.shape)}`);
  }
  const lead = target.length - t.ndim;
  const shape: number[] = [];
  const strides: number[] = [];
  target.forEach((size, i) => {
    const src = i - lead;
    const have = src >= 0 ? t.shape[src] : 1;
    const want = size === -1 ? have : size;
    if (src < 0 && size === -1) throw new RangeError(`expand: -1 is not allowed for the new leading dim ${i} in ${formatShape(target)}`);
    if (have !== want && have !== 1) {
      throw new RangeError(`expand: the size ${have} at dim ${src} of ${formatShape(t.shape)} cannot be expanded to ${want} (target ${formatShape(target)})`);
    }
    shape.push(want);
    strides.push(src >= 0 && have === want ? t.strides[src] : 0);
  });
  if (shapesEqual(shape, t.shape)) return t;
  const from = t.shape;
  return record(makeView(t, shape, strides, t.offset), "ExpandBackward", [t], (g) => [sumToShape(g, from)]);
}

export function unsqueeze(t: Tensor, dim: number): Tensor {
  const d = normalizeDim(dim, t.ndim + 1, "unsqueeze");
  const shape = [...t.shape];
  shape.splice(d, 0, 1);
  return view(t, shape);
}

export function squeeze(t: Tensor, dim?: number | readonly number[]): Tensor {
  const dims =
    dim === undefined ? t.shape.map((_, i) => i) : (typeof dim === "number" ? [dim] : [...dim]).map((d) => normalizeDim(d, t.ndim, "squeeze"));
  const shape = t.shape.filter((s, i) => !(s === 1 && dims.includes(i)));
  return shapesEqual(shape, t.shape) ? t : view(t, shape);
}

/** The slice [start, start+length) of one dim, sharing memory (torch.narrow). */
export function narrow(t: Tensor, dim: number, start: number, length: number): Tensor {
  assertTensor(t, "narrow");
  notScalar(t, "narrow");
  const d = normalizeDim(dim, t.ndim, "narrow");
  const size = t.shape[d];
  const s = start < 0 ? start + size : start;
  if (!Number.isInteger(s) || !Number.isInteger(length) || s < 0 || length < 0 || s + length > size) {
    throw new RangeError(`narrow: start ${start} and length ${length} do not fit dim ${d} of size ${size} (shape ${formatShape(t.shape)})`);
  }
  return slice(t, d, s, s + length, 1);
}

/** Python-style t[..., start:end:step, ...] on one dim, sharing memory. */
export function slice(t: Tensor, dim: number, start = 0, end?: number, step = 1): Tensor {
  assertTensor(t, "slice");
  notScalar(t, "slice");
  const d = normalizeDim(dim, t.ndim, "slice");
  for (const [v, what] of [[start, "start"], [end, "end"]] as const) {
    if (v !== undefined && v !== null && !Number.isInteger(v)) throw new TypeError(`slice: ${what} must be an integer, got ${v}`);
  }
  if (!Number.isInteger(step) || step <= 0) throw new RangeError(`slice: step must be a positive integer, got ${step}`);
  const size = t.shape[d];
  const clampIndex = (i: number) => Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  const s = clampIndex(start);
  const e = Math.max(clampIndex(end ?? size), s);
  const length = Math.ceil((e - s) / step);
  const shape = [...t.shape];
  shape[d] = length;
  const strides = [...t.strides];
  strides[d] = t.strides[d] * step;
  const out = makeView(t, shape, strides, t.offset + s * t.strides[d]);
  const from = t.shape;
  return record(out, "SliceBackward", [t], (g) => [sliceBackward(g, from, d, s, step)]);
}

/** One index of a dim, dropping it (t.select / t[i]). */
export function select(t: Tensor, dim: number, index: number): Tensor {
  assertTensor(t, "select");
  notScalar(t, "select");
  const d = normalizeDim(dim, t.ndim, "select");
  const size = t.shape[d];
  const i = index < 0 ? index + size : index;
  if (!Number.isInteger(i) || i < 0 || i >= size) {
    throw new RangeError(`select: index ${index} is out of range for dim ${d} of size ${size} (shape ${formatShape(t.shape)})`);
  }
  return squeeze(slice(t, d, i, i + 1), d);
}

/** PyTorch refuses to index into a 0-d tensor along a dim (there is none). */
export function notScalar(t: Tensor, op: string): void {
  if (t.ndim === 0) throw new RangeError(`${op}: cannot be applied to a 0-d tensor (${t.describe()}); it has no dim to index`);
}

/** Scatters the gradient of a slice into zeros of the source shape, through indexAdd. */
function sliceBackward(g: Tensor, shape: Shape, dim: number, start: number, step: number): Tensor {
  const out = zeros(shape, { dtype: g.dtype });
  const index = new Int32Array(g.shape[dim]);
  for (let j = 0; j < index.length; j++) index[j] = start + j * step;
  return indexAddInto(out, dim, index, g);
}
