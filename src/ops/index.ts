/** Every op, and the Tensor methods they install (importing this module installs them). */
import "../autograd/tensor_methods.js";
import "./methods.js";

export * from "./creation.js";
export * from "./elementwise.js";
export * from "./indexing.js";
export * from "./linear.js";
export * from "./matmul.js";
export * from "./readback.js";
export * from "./reduction.js";
export * from "./view.js";
