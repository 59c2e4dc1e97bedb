/** Shape arithmetic shared by views, broadcasting and op validation. */

export type Shape = readonly number[];

export function numelOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= Math.max(shape[i], 1);
  }
  return strides;
}

export function formatShape(shape: Shape): string {
  return `[${shape.join(", ")}]`;
}

export function shapesEqual(a: Shape, b: Shape): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function checkShape(shape: Shape, where: string): number[] {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new RangeError(`${where}: a shape needs non-negative integer sizes, got ${formatShape(shape)}`);
    }
  }
  return [...shape];
}

/** Wraps a possibly negative dim into [0, ndim) or throws naming the op. */
export function normalizeDim(dim: number, ndim: number, where: string): number {
  const n = Math.max(ndim, 1);
  if (!Number.isInteger(dim) || dim < -n || dim >= n) {
    throw new RangeError(`${where}: dim ${dim} is out of range for a tensor of ${ndim} dimension(s) (expected ${-n}..${n - 1})`);
  }
  return dim < 0 ? dim + n : dim;
}

/** PyTorch broadcasting: align from the right; sizes must match or be 1. */
export function broadcastShapes(a: Shape, b: Shape, where: string): number[] {
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i] ?? 1;
    const db = b[b.length - n + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new RangeError(`${where}: shapes ${formatShape(a)} and ${formatShape(b)} cannot be broadcast together (size ${da} vs ${db} at dim ${i - n})`);
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/** Strides that read a tensor of `shape`/`strides` as if it had the (broadcast) shape `target`. */
export function broadcastStrides(shape: Shape, strides: Shape, target: Shape): number[] {
  const out = new Array<number>(target.length).fill(0);
  const lead = target.length - shape.length;
  for (let i = 0; i < shape.length; i++) out[lead + i] = shape[i] === 1 && target[lead + i] !== 1 ? 0 : strides[i];
  return out;
}

/** Resolves a single -1 in a requested view shape. */
export function inferShape(requested: Shape, numel: number, where: string): number[] {
  let unknown = -1;
  let known = 1;
  for (let i = 0; i < requested.length; i++) {
    const d = requested[i];
    if (d === -1) {
      if (unknown >= 0) throw new RangeError(`${where}: only one dimension can be -1, got ${formatShape(requested)}`);
      unknown = i;
    } else if (!Number.isInteger(d) || d < 0) {
      throw new RangeError(`${where}: invalid size ${d} in ${formatShape(requested)}`);
    } else known *= d;
  }
  const out = [...requested];
  if (unknown >= 0) {
    if (known === 0 || numel % known !== 0) {
      throw new RangeError(`${where}: shape ${formatShape(requested)} is invalid for input of size ${numel}`);
    }
    out[unknown] = numel / known;
  } else if (known !== numel) {
    throw new RangeError(`${where}: shape ${formatShape(requested)} is invalid for input of size ${numel}`);
  }
  return out;
}

/**
 * Strides for viewing (shape, strides) as newShape without a copy, or null when the memory
 * layout does not allow it (PyTorch's computeStride: dims may merge only where contiguous).
 */
export function viewStrides(shape: Shape, strides: Shape, newShape: Shape): number[] | null {
  const numel = numelOf(shape);
  if (numel === 0 || shape.length === 0) return contiguousStrides(newShape);
  const newStrides = new Array<number>(newShape.length);
  let viewD = newShape.length - 1;
  let chunkBase = strides[strides.length - 1] ?? 1;
  let tensorNumel = 1;
  let viewNumel = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    tensorNumel *= shape[d];
    if (d === 0 || (shape[d - 1] !== 1 && strides[d - 1] !== tensorNumel * chunkBase)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] === 1)) {
        newStrides[viewD] = viewNumel * chunkBase;
        viewNumel *= newShape[viewD];
        viewD--;
      }
      if (viewNumel !== tensorNumel) return null;
      if (d > 0) {
        chunkBase = strides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD !== -1) return null;
  return newStrides;
}
