import type { DType, TypedArray } from "./dtype.js";
import { inferenceState, type Storage } from "./storage.js";
import { contiguousStrides, numelOf, normalizeDim, type Shape } from "./shape.js";

/**
 * The part of an autograd graph node that a tensor needs to know about. The engine and the
 * node classes live in `autograd/`; this layer only stores the reference.
 */
export interface GradFn {
  readonly name: string;
}

export type NestedArray = number | NestedArray[];

/**
 * Passed as the constructor's last argument by code that hands over shape and strides arrays that
 * are already frozen (another tensor's): they are shared instead of copied. Layouts never change
 * after construction, so sharing them is safe; it spares two arrays per op on the hot path.
 */
export const SHARED_LAYOUT: unique symbol = Symbol("shared layout");

/**
 * A view of a Storage: shape, strides and offset (the layout) are kept apart from the memory,
 * so views (`view`, `transpose`, slicing, `expand`, …) only make a new layout.
 *
 * Ops install their methods on this class (`ops/methods.ts`, `autograd/tensor_methods.ts`), so
 * that this file stays free of arithmetic and the layers stay one-directional.
 */
export class Tensor {
  readonly storage: Storage;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly dtype: DType;
  /** The number of elements (the product of the shape). */
  readonly numel: number;

  /** The accumulated gradient of a leaf (or of a non-leaf after retainGrad()). */
  grad: Tensor | null = null;
  /** The graph node that produced this tensor, or null for a leaf. */
  gradFn: GradFn | null = null;
  private requiresGradFlag = false;
  /** Autograd bookkeeping (accumulator node of a leaf, hooks); owned by `autograd/`. */
  autogradMeta: unknown = null;

  /** 1: the strides are the dense row-major ones of the shape; 0: they are not; -1: not yet known. */
  private denseFlag = -1;

  constructor(storage: Storage, shape: Shape, strides?: Shape, offset = 0, layout?: typeof SHARED_LAYOUT) {
    this.storage = storage;
    this.dtype = storage.dtype;
    if (layout === SHARED_LAYOUT && strides) {
      this.shape = shape;
      this.strides = strides;
    } else {
      this.shape = Object.freeze([...shape]);
      this.strides = Object.freeze(strides ? [...strides] : contiguousStrides(shape));
      if (!strides) this.denseFlag = 1;
    }
    this.offset = offset;
    this.numel = numelOf(this.shape);
  }

  /**
   * True when the strides are exactly the row-major ones of the shape (contiguous, and size-1 dims
   * carry their canonical stride too), so that a fresh tensor of this shape may share them.
   * Cached: a tensor's layout never changes.
   */
  hasDenseStrides(): boolean {
    if (this.denseFlag < 0) {
      let expected = 1;
      let dense = 1;
      for (let i = this.shape.length - 1; i >= 0; i--) {
        if (this.strides[i] !== expected) {
          dense = 0;
          break;
        }
        expected *= Math.max(this.shape[i], 1);
      }
      this.denseFlag = dense;
    }
    return this.denseFlag === 1;
  }

  get ndim(): number {
    return this.shape.length;
  }

  dim(): number {
    return this.shape.length;
  }

  size(dim?: number): number | readonly number[] {
    if (dim === undefined) return this.shape;
    return this.shape[normalizeDim(dim, this.ndim, "size")];
  }

  stride(dim?: number): number | readonly number[] {
    if (dim === undefined) return this.strides;
    return this.strides[normalizeDim(dim, this.ndim, "stride")];
  }

  get requiresGrad(): boolean {
    return this.requiresGradFlag || this.gradFn !== null;
  }

  set requiresGrad(value: boolean) {
    if (this.gradFn !== null && !value) {
      throw new Error("requiresGrad: you can only change requiresGrad of leaf tensors; use detach() to take a tensor out of the graph");
    }
    if (value && this.dtype !== "float32" && this.dtype !== "float64" && this.dtype !== "bfloat16") {
      throw new TypeError(`requiresGrad: only floating point tensors can require gradients, got dtype ${this.dtype}`);
    }
    if (value && this.storage.inference && !inferenceState.active) {
      throw new Error("requiresGrad: setting requiresGrad on an inference tensor (made under inferenceMode) outside inferenceMode is not allowed, as in PyTorch; clone() it first");
    }
    this.requiresGradFlag = value;
  }

  /** True for a tensor whose memory was allocated under inferenceMode (torch's is_inference). */
  isInference(): boolean {
    return this.storage.inference;
  }

  /** Sets requiresGrad in place and returns this (torch's requires_grad_). */
  requiresGrad_(value = true): this {
    this.requiresGrad = value;
    return this;
  }

  get isLeaf(): boolean {
    return this.gradFn === null;
  }

  isContiguous(): boolean {
    // An empty tensor has no elements to be out of order, as in PyTorch.
    if (this.shape.includes(0)) return true;
    let expected = 1;
    for (let i = this.shape.length - 1; i >= 0; i--) {
      if (this.shape[i] !== 1 && this.strides[i] !== expected) return false;
      expected *= this.shape[i];
    }
    return true;
  }

  /** A tensor sharing this one's memory, outside of any autograd graph. */
  detach(): Tensor {
    return new Tensor(this.storage, this.shape, this.strides, this.offset);
  }

  /** A readable form of the element type for messages. */
  describe(): string {
    return `Tensor(shape=[${this.shape.join(", ")}], dtype=${this.dtype})`;
  }
}

/** Typed view of the live memory for a contiguous tensor (offset applied). */
export function denseData(t: Tensor): TypedArray {
  return t.storage.data.subarray(t.offset, t.offset + t.numel) as TypedArray;
}
