export { backward, grad } from "./functional.js";
export { noGrad, enableGrad, isGradEnabled } from "./grad_mode.js";
export { gradcheck } from "./gradcheck.js";
export { queueCallback } from "./engine.js";
export type { BackwardOptions } from "./engine.js";
