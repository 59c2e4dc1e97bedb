import type { Module } from "../nn/module.js";
import { LayerNorm } from "../nn/layer_norm.js";
import { AdamW } from "../optim/adam.js";
import type { AnyOptimizer as Optimizer } from "../optim/lr_scheduler.js";
import type { LRScheduler } from "../optim/lr_scheduler.js";
import { LambdaLR } from "../optim/schedulers.js";
import { getCosineScheduleWithWarmup, getLinearScheduleWithWarmup } from "../optim/warmup.js";
import type { Tensor } from "../tensor/tensor.js";
import type { TrainingArguments } from "./training_arguments.js";

/**
 * The names of the parameters that get weight decay: all but biases and LayerNorm weights, as
 * Hugging Face's get_decay_parameter_names (decaying a normalisation's scale or a bias only
 * pulls it towards a value nothing prefers).
 */
export function decayParameterNames(model: Module): Set<string> {
  const noDecay = new Set<string>();
  for (const [prefix, m] of model.namedModules()) {
    if (!(m instanceof LayerNorm)) continue;
    for (const [name] of m.namedParameters()) noDecay.add(prefix ? `${prefix}.${name}` : name);
  }
  const out = new Set<string>();
  for (const [name] of model.namedParameters()) if (!noDecay.has(name) && !name.endsWith("bias")) out.add(name);
  return out;
}

/** AdamW over two groups (with and without weight decay), with the arguments' lr, betas and eps. */
export function createOptimizer(model: Module, args: TrainingArguments): Optimizer {
  const decay = decayParameterNames(model);
  const withDecay: Tensor[] = [];
  const without: Tensor[] = [];
  for (const [name, p] of model.namedParameters()) {
    if (!p.requiresGrad) continue;
    (decay.has(name) ? withDecay : without).push(p);
  }
  const groups = [
    { params: withDecay, weightDecay: args.weightDecay },
    { params: without, weightDecay: 0 },
  ].filter((g) => g.params.length > 0);
  return new AdamW(groups, { lr: args.learningRate, betas: [args.adamBeta1, args.adamBeta2], eps: args.adamEpsilon, weightDecay: args.weightDecay });
}

/** The lrSchedulerType's schedule over `trainingSteps` optimizer steps, stepped once per optimizer step. */
export function createScheduler(optimizer: Optimizer, args: TrainingArguments, trainingSteps: number): LRScheduler {
  const warmup = args.getWarmupSteps(trainingSteps);
  switch (args.lrSchedulerType) {
    case "linear":
      return getLinearScheduleWithWarmup(optimizer, warmup, trainingSteps);
    case "cosine":
      return getCosineScheduleWithWarmup(optimizer, warmup, trainingSteps);
    case "constant":
      return new LambdaLR(optimizer, () => 1);
    case "constant_with_warmup":
      return new LambdaLR(optimizer, (step) => (step < warmup ? step / Math.max(1, warmup) : 1));
  }
}
