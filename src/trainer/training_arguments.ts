import { checkArity, checkOptions } from "../util/options.js";

export type IntervalStrategy = "no" | "steps" | "epoch";
export type SchedulerType = "linear" | "cosine" | "constant" | "constant_with_warmup";
export type ReportTo = "jsonl" | "tensorboard" | "none";
export type FsdpOption = "full_shard" | "shard_grad_op" | "no_shard" | "hybrid_shard";

/** Hugging Face's fsdp_config, in camelCase. */
export interface FsdpConfig {
  /** Make a unit of each submodule of these classes (or class names): a Transformer block. HF's transformer_layer_cls_to_wrap. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transformerLayerClsToWrap?: (string | (abstract new (...args: any[]) => unknown))[];
  /** Make a unit of each submodule once its unwrapped parameters reach this many elements. HF's min_num_params. */
  minNumParams?: number;
  /** Copy rank 0's parameters to every rank before sharding (default true). */
  syncModuleStates?: boolean;
}

/** Hugging Face's TrainingArguments, in camelCase, with its defaults. */
export interface TrainingArgumentsOptions {
  /** Where checkpoints (step_<n>/ directories) and the tracking run go. Required. */
  outputDir: string;
  perDeviceTrainBatchSize?: number;
  perDeviceEvalBatchSize?: number;
  gradientAccumulationSteps?: number;
  learningRate?: number;
  /** AdamW's decoupled weight decay, applied to every parameter except biases and LayerNorm weights (as HF). */
  weightDecay?: number;
  adamBeta1?: number;
  adamBeta2?: number;
  adamEpsilon?: number;
  numTrainEpochs?: number;
  /** A positive number overrides numTrainEpochs: train exactly this many optimizer steps. */
  maxSteps?: number;
  lrSchedulerType?: SchedulerType;
  warmupSteps?: number;
  /** Warmup as a fraction of the training steps, used when warmupSteps is 0. */
  warmupRatio?: number;
  /** Clip the gradients' global 2-norm to this (0 disables clipping). */
  maxGradNorm?: number;
  loggingSteps?: number;
  loggingStrategy?: IntervalStrategy;
  evalStrategy?: IntervalStrategy;
  /** Default: loggingSteps. */
  evalSteps?: number;
  saveStrategy?: IntervalStrategy;
  saveSteps?: number;
  /** Keep only this many checkpoints (the best one is kept besides, as HF does). */
  saveTotalLimit?: number;
  /** A key of evaluate()'s metrics, with or without its "eval_" prefix. Default "loss" with loadBestModelAtEnd. */
  metricForBestModel?: string;
  /** Default: false for a metric named loss, else true. */
  greaterIsBetter?: boolean;
  loadBestModelAtEnd?: boolean;
  seed?: number;
  /** Seed of the training-data shuffle (default: seed). */
  dataSeed?: number;
  reportTo?: ReportTo | ReportTo[];
  runName?: string;
  disableTqdm?: boolean;
  /** Options for the DDP wrapper under ringrun (bucketCapMb, findUnusedParameters, …). */
  ddpBucketCapMb?: number;
  ddpFindUnusedParameters?: boolean;
  /**
   * Train under autocast("bfloat16"): the products of forward and loss (and of their backward)
   * take bfloat16 operands with float32 sums. bfloat16 parameters get float32 master weights in
   * the optimizer.
   */
  bf16?: boolean;
  /** Under ringrun, shard the model with FSDP instead of DDP (ZeRO-3, ZeRO-2, none, ZeRO-3 within a host). */
  fsdp?: FsdpOption | "";
  fsdpConfig?: FsdpConfig;
}

const KEYS = [
  "outputDir", "perDeviceTrainBatchSize", "perDeviceEvalBatchSize", "gradientAccumulationSteps", "learningRate",
  "weightDecay", "adamBeta1", "adamBeta2", "adamEpsilon", "numTrainEpochs", "maxSteps", "lrSchedulerType",
  "warmupSteps", "warmupRatio", "maxGradNorm", "loggingSteps", "loggingStrategy", "evalStrategy", "evalSteps",
  "saveStrategy", "saveSteps", "saveTotalLimit", "metricForBestModel", "greaterIsBetter", "loadBestModelAtEnd",
  "seed", "dataSeed", "reportTo", "runName", "disableTqdm", "ddpBucketCapMb", "ddpFindUnusedParameters",
  "bf16", "fsdp", "fsdpConfig",
];
const FSDP_OPTIONS: readonly FsdpOption[] = ["full_shard", "shard_grad_op", "no_shard", "hybrid_shard"];
const FSDP_CONFIG_KEYS = ["transformerLayerClsToWrap", "minNumParams", "syncModuleStates"];

const STRATEGIES: readonly IntervalStrategy[] = ["no", "steps", "epoch"];
const SCHEDULERS: readonly SchedulerType[] = ["linear", "cosine", "constant", "constant_with_warmup"];
const REPORTS: readonly ReportTo[] = ["jsonl", "tensorboard", "none"];

/**
 * The hyperparameters of a Trainer (transformers.TrainingArguments). A misspelt or snake_case
 * name is an error naming the closest known one, since a silently ignored argument trains with
 * the default. Checkpoints are `outputDir/step_<n>/` (ringtorch's checkpoint layout), not HF's
 * `checkpoint-<n>/`.
 */
export class TrainingArguments {
  readonly outputDir: string;
  readonly perDeviceTrainBatchSize: number;
  readonly perDeviceEvalBatchSize: number;
  readonly gradientAccumulationSteps: number;
  readonly learningRate: number;
  readonly weightDecay: number;
  readonly adamBeta1: number;
  readonly adamBeta2: number;
  readonly adamEpsilon: number;
  readonly numTrainEpochs: number;
  readonly maxSteps: number;
  readonly lrSchedulerType: SchedulerType;
  readonly warmupSteps: number;
  readonly warmupRatio: number;
  readonly maxGradNorm: number;
  readonly loggingSteps: number;
  readonly loggingStrategy: IntervalStrategy;
  readonly evalStrategy: IntervalStrategy;
  readonly evalSteps: number;
  readonly saveStrategy: IntervalStrategy;
  readonly saveSteps: number;
  readonly saveTotalLimit: number | null;
  readonly metricForBestModel: string | null;
  readonly greaterIsBetter: boolean | null;
  readonly loadBestModelAtEnd: boolean;
  readonly seed: number;
  readonly dataSeed: number | null;
  readonly reportTo: ReportTo[];
  readonly runName: string | null;
  readonly disableTqdm: boolean;
  readonly ddpBucketCapMb: number | null;
  readonly ddpFindUnusedParameters: boolean;
  readonly bf16: boolean;
  /** The FSDP sharding strategy, or null for DDP. */
  readonly fsdp: FsdpOption | null;
  readonly fsdpConfig: FsdpConfig;

  constructor(options: TrainingArgumentsOptions) {
    checkArity("TrainingArguments", arguments, 1, "new TrainingArguments({ outputDir, learningRate, … })");
    if (!options || typeof options !== "object") throw new TypeError("TrainingArguments: expected an options object such as { outputDir: \"out\" }");
    checkOptions("TrainingArguments", options, KEYS);
    const o = options;
    if (typeof o.outputDir !== "string" || o.outputDir === "") throw new TypeError(`TrainingArguments: outputDir must be a non-empty string (where checkpoints go), got ${JSON.stringify(o.outputDir)}`);
    this.outputDir = o.outputDir;
    this.perDeviceTrainBatchSize = posInt("perDeviceTrainBatchSize", o.perDeviceTrainBatchSize ?? 8);
    this.perDeviceEvalBatchSize = posInt("perDeviceEvalBatchSize", o.perDeviceEvalBatchSize ?? 8);
    this.gradientAccumulationSteps = posInt("gradientAccumulationSteps", o.gradientAccumulationSteps ?? 1);
    this.learningRate = nonNeg("learningRate", o.learningRate ?? 5e-5);
    this.weightDecay = nonNeg("weightDecay", o.weightDecay ?? 0);
    this.adamBeta1 = nonNeg("adamBeta1", o.adamBeta1 ?? 0.9);
    this.adamBeta2 = nonNeg("adamBeta2", o.adamBeta2 ?? 0.999);
    this.adamEpsilon = nonNeg("adamEpsilon", o.adamEpsilon ?? 1e-8);
    this.numTrainEpochs = nonNeg("numTrainEpochs", o.numTrainEpochs ?? 3);
    this.maxSteps = o.maxSteps ?? -1;
    if (!Number.isInteger(this.maxSteps)) throw new TypeError(`TrainingArguments: maxSteps must be an integer (-1 to train numTrainEpochs), got ${this.maxSteps}`);
    this.lrSchedulerType = oneOf("lrSchedulerType", o.lrSchedulerType ?? "linear", SCHEDULERS);
    this.warmupSteps = nonNegInt("warmupSteps", o.warmupSteps ?? 0);
    this.warmupRatio = nonNeg("warmupRatio", o.warmupRatio ?? 0);
    if (this.warmupRatio > 1) throw new RangeError(`TrainingArguments: warmupRatio must be in [0, 1], got ${this.warmupRatio}`);
    this.maxGradNorm = nonNeg("maxGradNorm", o.maxGradNorm ?? 1);
    this.loggingSteps = posInt("loggingSteps", o.loggingSteps ?? 500);
    this.loggingStrategy = oneOf("loggingStrategy", o.loggingStrategy ?? "steps", STRATEGIES);
    this.evalStrategy = oneOf("evalStrategy", o.evalStrategy ?? "no", STRATEGIES);
    this.evalSteps = posInt("evalSteps", o.evalSteps ?? this.loggingSteps);
    this.saveStrategy = oneOf("saveStrategy", o.saveStrategy ?? "steps", STRATEGIES);
    this.saveSteps = posInt("saveSteps", o.saveSteps ?? 500);
    this.saveTotalLimit = o.saveTotalLimit === undefined ? null : posInt("saveTotalLimit", o.saveTotalLimit);
    this.loadBestModelAtEnd = o.loadBestModelAtEnd ?? false;
    this.metricForBestModel = o.metricForBestModel ?? (this.loadBestModelAtEnd ? "loss" : null);
    const bare = this.metricForBestModel?.replace(/^eval_/, "");
    this.greaterIsBetter = o.greaterIsBetter ?? (bare === undefined ? null : bare !== "loss");
    this.seed = nonNegInt("seed", o.seed ?? 42);
    this.dataSeed = o.dataSeed === undefined ? null : nonNegInt("dataSeed", o.dataSeed);
    const reports = Array.isArray(o.reportTo) ? o.reportTo : [o.reportTo ?? "none"];
    this.reportTo = reports.map((r) => oneOf("reportTo", r, REPORTS)).filter((r) => r !== "none");
    this.runName = o.runName ?? null;
    this.disableTqdm = o.disableTqdm ?? false;
    this.ddpBucketCapMb = o.ddpBucketCapMb ?? null;
    this.ddpFindUnusedParameters = o.ddpFindUnusedParameters ?? false;
    this.bf16 = o.bf16 ?? false;
    if (typeof this.bf16 !== "boolean") throw new TypeError(`TrainingArguments: bf16 must be a boolean, got ${JSON.stringify(o.bf16)}`);
    this.fsdp = o.fsdp === undefined || o.fsdp === "" ? null : oneOf("fsdp", o.fsdp, FSDP_OPTIONS);
    this.fsdpConfig = { ...(o.fsdpConfig ?? {}) };
    checkOptions("TrainingArguments.fsdpConfig", this.fsdpConfig, FSDP_CONFIG_KEYS);
    if (o.fsdpConfig && this.fsdp === null) throw new Error("TrainingArguments: fsdpConfig is given but fsdp is not; set fsdp to \"full_shard\", \"shard_grad_op\", \"no_shard\" or \"hybrid_shard\"");
    const { minNumParams, transformerLayerClsToWrap: classes } = this.fsdpConfig;
    if (minNumParams !== undefined) posInt("fsdpConfig.minNumParams", minNumParams);
    if (classes !== undefined && (!Array.isArray(classes) || classes.length === 0 || classes.some((c) => typeof c !== "string" && typeof c !== "function"))) {
      throw new TypeError("TrainingArguments: fsdpConfig.transformerLayerClsToWrap must be a non-empty list of Module classes or class names, e.g. [BertLayer] or [\"BertLayer\"]");
    }
    if (minNumParams !== undefined && classes !== undefined) throw new Error("TrainingArguments: fsdpConfig takes minNumParams or transformerLayerClsToWrap, not both (one wrap policy)");
    if (this.loadBestModelAtEnd) {
      // The best model is a saved checkpoint, so a save must follow every evaluation (HF's rule).
      if (this.evalStrategy === "no") throw new Error("TrainingArguments: loadBestModelAtEnd needs an evalStrategy other than \"no\"");
      if (this.saveStrategy !== this.evalStrategy) {
        throw new Error(`TrainingArguments: loadBestModelAtEnd needs saveStrategy to match evalStrategy, got saveStrategy "${this.saveStrategy}" and evalStrategy "${this.evalStrategy}"`);
      }
      if (this.evalStrategy === "steps" && this.saveSteps % this.evalSteps !== 0) {
        throw new Error(`TrainingArguments: loadBestModelAtEnd needs saveSteps (${this.saveSteps}) to be a multiple of evalSteps (${this.evalSteps})`);
      }
    }
  }

  /** The warmup steps for a run of `trainingSteps` optimizer steps. */
  getWarmupSteps(trainingSteps: number): number {
    return this.warmupSteps > 0 ? this.warmupSteps : Math.ceil(trainingSteps * this.warmupRatio);
  }

  /** The arguments as a plain object (saved as the run's config). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = Object.fromEntries(KEYS.map((k) => [k, (this as unknown as Record<string, unknown>)[k]]));
    const classes = this.fsdpConfig.transformerLayerClsToWrap;
    if (classes) out.fsdpConfig = { ...this.fsdpConfig, transformerLayerClsToWrap: classes.map((c) => (typeof c === "string" ? c : c.name)) };
    return out;
  }
}

function posInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`TrainingArguments: ${name} must be a positive integer, got ${v}`);
  return v;
}

function nonNegInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`TrainingArguments: ${name} must be a non-negative integer, got ${v}`);
  return v;
}

function nonNeg(name: string, v: number): number {
  if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) throw new RangeError(`TrainingArguments: ${name} must be a non-negative number, got ${v}`);
  return v;
}

function oneOf<T extends string>(name: string, v: T, allowed: readonly T[]): T {
  if (!allowed.includes(v)) throw new RangeError(`TrainingArguments: ${name} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}, got ${JSON.stringify(v)}`);
  return v;
}
