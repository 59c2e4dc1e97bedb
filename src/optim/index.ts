/**
 * torch.optim for ringtorch: optimizers with fused native updates, and learning-rate schedulers.
 *
 *   const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
 *   const sched = optim.getCosineScheduleWithWarmup(opt, 100, 10_000);
 */
export { Optimizer, type ParamGroup, type ParamGroupInput, type Params, type ParamState, type OptimizerStateDict } from "./optimizer.js";
export { SGD, type SGDOptions } from "./sgd.js";
export { Adam, AdamW, type AdamOptions } from "./adam.js";
export { RMSprop, type RMSpropOptions } from "./rmsprop.js";
export { Adagrad, type AdagradOptions } from "./adagrad.js";
export { LRScheduler } from "./lr_scheduler.js";
export { StepLR, LambdaLR, CosineAnnealingLR, type LrLambda } from "./schedulers.js";
export { OneCycleLR, type OneCycleLROptions } from "./one_cycle_lr.js";
export { MultiStepLR, ExponentialLR, LinearLR, type LinearLROptions } from "./decay_schedulers.js";
export { SequentialLR } from "./sequential_lr.js";
export { ReduceLROnPlateau, type ReduceLROnPlateauOptions } from "./reduce_lr_on_plateau.js";
export { getCosineScheduleWithWarmup, getLinearScheduleWithWarmup } from "./warmup.js";
export * as lrScheduler from "./lr_scheduler_namespace.js";
