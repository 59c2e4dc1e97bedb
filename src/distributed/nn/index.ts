/** torch.distributed.nn: communication that autograd differentiates through. */
export * as functional from "./functional.js";
export type { AutogradRecvOptions } from "./functional.js";
