/**
 * Hugging Face's Trainer over ringtorch: TrainingArguments, the training loop with DDP under
 * ringrun, unpadded distributed evaluation, checkpoints with rotation and the best model, and
 * callbacks.
 */
export { Trainer, type TrainerOptions, type TrainOutput } from "./trainer.js";
export { TrainingArguments, type TrainingArgumentsOptions, type IntervalStrategy, type SchedulerType, type ReportTo, type FsdpOption, type FsdpConfig } from "./training_arguments.js";
export { EarlyStoppingCallback, type EarlyStoppingOptions, type TrainerCallback, type TrainerState, type TrainerControl, type CallbackExtras } from "./callbacks.js";
export type { EvalPrediction, ComputeLossFunc } from "./model_io.js";
export { decayParameterNames } from "./create_optimizer.js";
