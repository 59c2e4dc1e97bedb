import { checkArity, checkOptions } from "../util/options.js";
import type { TrainingArguments } from "./training_arguments.js";

/** Where training stands (transformers.TrainerState); saved in every checkpoint. */
export interface TrainerState {
  /** Fractional epoch: 1.5 is halfway through the second epoch. */
  epoch: number;
  globalStep: number;
  maxSteps: number;
  numTrainEpochs: number;
  bestMetric: number | null;
  bestModelCheckpoint: string | null;
  /** Every record logged (losses, learning rates, evaluation metrics), with its step. */
  logHistory: Record<string, number>[];
  isWorldProcessZero: boolean;
}

/** Flags a callback sets to steer the loop (transformers.TrainerControl); reset after they are acted on. */
export interface TrainerControl {
  shouldTrainingStop: boolean;
  shouldEpochStop: boolean;
  shouldSave: boolean;
  shouldEvaluate: boolean;
  shouldLog: boolean;
}

export interface CallbackExtras {
  metrics?: Record<string, number>;
  logs?: Record<string, number>;
  checkpoint?: string;
}

type Hook = (args: TrainingArguments, state: TrainerState, control: TrainerControl, extras: CallbackExtras) => void;

/**
 * A Trainer callback (transformers.TrainerCallback): any subset of these events. Callbacks run on
 * every rank, in the order given; they may read the state and set control flags, and should not
 * change the model (that is what the loop is for).
 */
export interface TrainerCallback {
  onInitEnd?: Hook;
  onTrainBegin?: Hook;
  onTrainEnd?: Hook;
  onEpochBegin?: Hook;
  onEpochEnd?: Hook;
  onStepBegin?: Hook;
  onStepEnd?: Hook;
  onEvaluate?: Hook;
  onPredict?: Hook;
  onSave?: Hook;
  onLog?: Hook;
}

export type CallbackEvent = keyof TrainerCallback;

export interface EarlyStoppingOptions {
  /** Evaluations without improvement before training stops (default 1). */
  earlyStoppingPatience?: number;
  /** How much better than the best a metric must be to count as an improvement (default 0). */
  earlyStoppingThreshold?: number;
}

/**
 * Stops training after `earlyStoppingPatience` evaluations in a row that did not improve
 * `metricForBestModel` by more than the threshold (transformers.EarlyStoppingCallback). Every
 * rank sees the same (all-reduced) metrics, so every rank stops at the same step.
 */
export class EarlyStoppingCallback implements TrainerCallback {
  readonly earlyStoppingPatience: number;
  readonly earlyStoppingThreshold: number;
  private best: number | null = null;
  private patienceCounter = 0;

  constructor(options: EarlyStoppingOptions = {}) {
    checkArity("EarlyStoppingCallback", arguments, 1, "new EarlyStoppingCallback({ earlyStoppingPatience, earlyStoppingThreshold })");
    checkOptions("EarlyStoppingCallback", options, ["earlyStoppingPatience", "earlyStoppingThreshold"]);
    this.earlyStoppingPatience = options.earlyStoppingPatience ?? 1;
    this.earlyStoppingThreshold = options.earlyStoppingThreshold ?? 0;
    if (!Number.isInteger(this.earlyStoppingPatience) || this.earlyStoppingPatience < 1) {
      throw new RangeError(`EarlyStoppingCallback: earlyStoppingPatience must be a positive integer, got ${this.earlyStoppingPatience}`);
    }
  }

  onTrainBegin(args: TrainingArguments): void {
    if (!args.metricForBestModel) throw new Error("EarlyStoppingCallback: set TrainingArguments' metricForBestModel (the metric whose improvement it watches)");
    if (args.evalStrategy === "no") throw new Error("EarlyStoppingCallback: needs an evalStrategy other than \"no\" (it acts on evaluations)");
  }

  onEvaluate(args: TrainingArguments, _state: TrainerState, control: TrainerControl, extras: CallbackExtras): void {
    const value = metricValue(extras.metrics ?? {}, args.metricForBestModel!);
    const greater = args.greaterIsBetter ?? true;
    const improved = this.best === null || (greater ? value - this.best > this.earlyStoppingThreshold : this.best - value > this.earlyStoppingThreshold);
    if (improved) {
      this.best = value;
      this.patienceCounter = 0;
    } else if (++this.patienceCounter >= this.earlyStoppingPatience) control.shouldTrainingStop = true;
  }
}

/** A metric of evaluate()'s result by its name with or without the "eval_" prefix. */
export function metricValue(metrics: Record<string, number>, name: string): number {
  const key = name.startsWith("eval_") ? name : `eval_${name}`;
  const v = metrics[key];
  if (typeof v !== "number") throw new Error(`Trainer: metricForBestModel "${name}" is not among the evaluation metrics (${Object.keys(metrics).join(", ")})`);
  return v;
}
