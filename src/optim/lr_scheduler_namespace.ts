/** The schedulers under torch's module path, for `optim.lrScheduler.StepLR`. */
export { LRScheduler } from "./lr_scheduler.js";
export { StepLR, LambdaLR, CosineAnnealingLR } from "./schedulers.js";
export { OneCycleLR } from "./one_cycle_lr.js";
export { getCosineScheduleWithWarmup, getLinearScheduleWithWarmup } from "./warmup.js";
export { MultiStepLR, ExponentialLR, LinearLR } from "./decay_schedulers.js";
export { SequentialLR } from "./sequential_lr.js";
export { ReduceLROnPlateau } from "./reduce_lr_on_plateau.js";
