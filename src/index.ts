/**
 * ringtorch: PyTorch's training stack for Node.js.
 *
 *   import { tensor, nn, optim, data, dist, checkpoint } from "ringtorch";
 */
export * from "./ops/index.js";
export { Tensor } from "./tensor/tensor.js";
export type { DType, TypedArray } from "./tensor/dtype.js";
export { Generator, manualSeed, defaultGenerator, getRngState, setRngState } from "./tensor/random.js";
export { memoryPool } from "./tensor/storage.js";
export { getBackend, setBackend, backendName, withBackend } from "./backend/index.js";
export { noGrad, enableGrad, isGradEnabled, setGradEnabled } from "./autograd/grad_mode.js";
export * as autograd from "./autograd/index.js";
