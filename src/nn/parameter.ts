import { Tensor } from "../tensor/tensor.js";

/**
 * A tensor that a Module registers as one of its parameters (torch.nn.Parameter). It shares the
 * memory of the tensor it wraps and is always a leaf: whatever graph produced `data` is cut off.
 */
export class Parameter extends Tensor {
  constructor(data: Tensor, requiresGrad = true) {
    if (!(data instanceof Tensor)) throw new TypeError(`Parameter: expected a Tensor, got ${data === null ? "null" : typeof data}`);
    super(data.storage, data.shape, data.strides, data.offset);
    if (requiresGrad) this.requiresGrad = true;
  }

  override describe(): string {
    return `Parameter(shape=[${this.shape.join(", ")}], dtype=${this.dtype})`;
  }
}

type Layout = { storage: Tensor["storage"]; shape: Tensor["shape"]; strides: Tensor["strides"]; offset: number; dtype: Tensor["dtype"]; numel: number; denseFlag: number };

/**
 * Points an existing tensor at new memory, keeping its identity (torch's `param.data = value`).
 * Module.to() uses it so that optimizers and hooks holding the parameter object stay valid.
 */
export function replaceData(target: Tensor, value: Tensor): void {
  const t = target as unknown as Layout;
  t.storage = value.storage;
  t.shape = value.shape;
  t.strides = value.strides;
  t.offset = value.offset;
  t.dtype = value.dtype;
  t.numel = value.numel;
  t.denseFlag = -1; // Tensor's cached layout test, to be redone for the new layout
}
