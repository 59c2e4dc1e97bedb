/** Every op, and the Tensor methods they install (importing this module installs them). */
import "../autograd/tensor_methods.js";
import "./methods.js";

export * from "./creation.js";
export * from "./dropout.js";
export * from "./elementwise.js";
export * from "./embedding.js";
export * from "./extrema.js";
export * from "./gather.js";
export * from "./indexing.js";
export * from "./join.js";
export * from "./linear.js";
export * from "./loss.js";
export * from "./matmul.js";
export * from "./norm.js";
export * from "./readback.js";
export * from "./reduction.js";
export * from "./softmax.js";
export * from "./statistics.js";
export * from "./triangle.js";
export * from "./view.js";
