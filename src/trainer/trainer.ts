import { join } from "node:path";
import { DataLoader } from "../data/dataloader.js";
import type { Dataset } from "../data/dataset.js";
import { DistributedSampler } from "../data/distributed_sampler.js";
import { getRank, getWorldSize, initProcessGroup, isInitialized } from "../distributed/init.js";
import type { Module } from "../nn/module.js";
import type { LRScheduler } from "../optim/lr_scheduler.js";
import type { AnyOptimizer as Optimizer } from "../optim/lr_scheduler.js";
import { autocast } from "../ops/autocast.js";
import { allReduceMean } from "../parallel/metrics.js";
import { manualSeed } from "../tensor/random.js";
import { save as saveCheckpoint } from "../checkpoint/save.js";
import { resume as resumeCheckpoint } from "../checkpoint/resume.js";
import { stepDirName } from "../checkpoint/directory.js";
import { checkArity, checkOptions } from "../util/options.js";
import { type CallbackEvent, type CallbackExtras, type TrainerCallback, type TrainerControl, type TrainerState } from "./callbacks.js";
import { createOptimizer, createScheduler } from "./create_optimizer.js";
import { evaluationLoop } from "./evaluation_loop.js";
import { callStyleOf, forwardBatch, type CallStyle, type ComputeLossFunc, type EvalPrediction } from "./model_io.js";
import { ParallelModel } from "./parallel_model.js";
import { everyRanksTotals, freshTotals, restoredTotals, type LossTotals } from "./loss_totals.js";
import { TrainerReporter } from "./reporter.js";
import { rotateCheckpoints, updateBest } from "./best_checkpoint.js";
import { TrainingArguments } from "./training_arguments.js";

export interface TrainerOptions {
  model: Module;
  args: TrainingArguments;
  trainDataset?: Dataset<unknown>;
  evalDataset?: Dataset<unknown>;
  /** Turns a list of samples into the model's batch object (default: the DataLoader's defaultCollate). */
  dataCollator?: (samples: never[]) => unknown;
  computeMetrics?: (p: EvalPrediction) => Record<string, number>;
  /** For models that do not return a loss: the loss from their outputs and the batch's labels. */
  computeLossFunc?: ComputeLossFunc;
  /** [optimizer, scheduler]; either may be null to get the default (AdamW; the lrSchedulerType's schedule). */
  optimizers?: [Optimizer | null, LRScheduler | null];
  callbacks?: TrainerCallback[];
}

export interface TrainOutput {
  globalStep: number;
  trainingLoss: number;
  metrics: Record<string, number>;
}

const OPTIONS = ["model", "args", "trainDataset", "evalDataset", "dataCollator", "computeMetrics", "computeLossFunc", "optimizers", "callbacks"];

/**
 * Hugging Face's Trainer: the training loop, evaluation, checkpoints and logging of a model that
 * takes a batch object (or, as ringtorch's Hugging Face models, `inputIds` and the batch's other
 * keys as options) and returns { loss, logits } when the batch has labels. The same script
 * runs on one process or under `ringrun`: with RANK/WORLD_SIZE set (or a process group already
 * initialised) it joins the process group, wraps the model in DDP (or FSDP), shards the data with a
 * DistributedSampler, accumulates micro-batches under noSync, and evaluates each sample exactly
 * once across ranks.
 *
 * The loss of a micro-batch is divided by gradientAccumulationSteps before backward, so k
 * micro-batches of a mean loss take the step of one batch k times larger.
 */
export class Trainer {
  readonly model: Module;
  readonly args: TrainingArguments;
  readonly trainDataset: Dataset<unknown> | null;
  readonly evalDataset: Dataset<unknown> | null;
  readonly callbacks: TrainerCallback[];
  optimizer: Optimizer | null;
  lrScheduler: LRScheduler | null;
  state: TrainerState;
  readonly control: TrainerControl = { shouldTrainingStop: false, shouldEpochStop: false, shouldSave: false, shouldEvaluate: false, shouldLog: false };
  private readonly collate: ((samples: unknown[]) => unknown) | undefined;
  private readonly computeMetrics: ((p: EvalPrediction) => Record<string, number>) | null;
  private readonly computeLossFunc: ComputeLossFunc | null;
  private readonly callStyle: CallStyle;
  private parallel: ParallelModel | null = null;
  private reporter: TrainerReporter | null = null;
  private lastEvalMetrics: Record<string, number> | null = null;
  private lossTotals: LossTotals = freshTotals();

  constructor(options: TrainerOptions) {
    checkArity("Trainer", arguments, 1, "new Trainer({ model, args, trainDataset, evalDataset, … })");
    checkOptions("Trainer", options, OPTIONS);
    if (!options?.model || typeof (options.model as Module).call !== "function") throw new TypeError("Trainer: model must be an nn.Module");
    if (!(options.args instanceof TrainingArguments)) throw new TypeError("Trainer: args must be a TrainingArguments (new TrainingArguments({ outputDir, … }))");
    this.model = options.model;
    this.args = options.args;
    this.trainDataset = options.trainDataset ?? null;
    this.evalDataset = options.evalDataset ?? null;
    this.collate = options.dataCollator as ((samples: unknown[]) => unknown) | undefined;
    this.computeMetrics = options.computeMetrics ?? null;
    this.computeLossFunc = options.computeLossFunc ?? null;
    this.callStyle = callStyleOf(options.model);
    this.optimizer = options.optimizers?.[0] ?? null;
    this.lrScheduler = options.optimizers?.[1] ?? null;
    this.callbacks = [...(options.callbacks ?? [])];
    this.state = freshState(this.rank === 0);
    // As HF: the seed is set when the Trainer is made, so dropout and shuffles follow from it.
    manualSeed(this.args.seed);
    this.fire("onInitEnd");
  }

  get rank(): number {
    return isInitialized() ? getRank() : 0;
  }

  get worldSize(): number {
    return isInitialized() ? getWorldSize() : 1;
  }

  addCallback(callback: TrainerCallback): void {
    this.callbacks.push(callback);
  }

  /**
   * Trains from scratch, or from a checkpoint: true for the newest under outputDir (which must
   * exist), or a checkpoint's path. When ringrun restarted the group after a failure
   * (RINGTORCH_RESTART_COUNT > 0) and resumeFromCheckpoint is not given, training resumes from the
   * newest checkpoint under outputDir if there is one, so that the unchanged script continues
   * where the failed attempt last saved; pass false to start over.
   */
  async train(options: { resumeFromCheckpoint?: boolean | string } = {}): Promise<TrainOutput> {
    checkOptions("Trainer.train", options, ["resumeFromCheckpoint"]);
    if (!this.trainDataset) throw new Error("Trainer.train: give the Trainer a trainDataset");
    const args = this.args;
    await joinLauncherGroup();
    const rank = this.rank;
    const worldSize = this.worldSize;
    const sampler = new DistributedSampler(this.trainDataset, { shuffle: true, seed: args.dataSeed ?? args.seed, numReplicas: worldSize, rank });
    const loader = new DataLoader(this.trainDataset, { batchSize: args.perDeviceTrainBatchSize, sampler, ...(this.collate ? { collateFn: this.collate } : {}) });
    const batchesPerEpoch = Math.ceil(sampler.numSamples / args.perDeviceTrainBatchSize);
    if (batchesPerEpoch === 0) throw new Error("Trainer.train: the training dataset is empty");
    const updatesPerEpoch = Math.ceil(batchesPerEpoch / args.gradientAccumulationSteps);
    const maxSteps = args.maxSteps > 0 ? args.maxSteps : Math.ceil(args.numTrainEpochs * updatesPerEpoch);
    const numEpochs = Math.ceil(maxSteps / updatesPerEpoch);
    if (worldSize > 1 && args.fsdp && this.optimizer && !this.parallel) {
      throw new Error("Trainer: with fsdp the optimizer must be made over the sharded parameters, which exist only once training starts; leave optimizers[0] null (the Trainer makes AdamW after sharding)");
    }
    // FSDP replaces the parameters by their shards: the optimizer is made after wrapping.
    const parallel = (this.parallel ??= new ParallelModel(this.model, args, worldSize));
    this.optimizer ??= createOptimizer(this.model, args);
    this.lrScheduler ??= createScheduler(this.optimizer, args, maxSteps);
    const optimizer = this.optimizer;
    const scheduler = this.lrScheduler;
    const model = parallel.forwardModule;

    this.state = { ...freshState(rank === 0), maxSteps, numTrainEpochs: numEpochs };
    let startEpoch = 0;
    let startBatch = 0;
    let runId: string | undefined;
    let totals = freshTotals();
    const restarted = Number(process.env.RINGTORCH_RESTART_COUNT ?? process.env.TORCHELASTIC_RESTART_COUNT ?? 0) > 0;
    const resumeFrom = options.resumeFromCheckpoint;
    if (resumeFrom || (resumeFrom === undefined && restarted)) {
      const path = typeof resumeFrom === "string" ? resumeFrom : args.outputDir;
      const weights = parallel.isSharded ? {} : { model: this.model, optimizer };
      const point = await resumeCheckpoint(path, { ...weights, scheduler, sampler, batchSize: args.perDeviceTrainBatchSize, ...(resumeFrom === true ? { step: "latest" as const } : {}) });
      if (point.path) {
        if (parallel.isSharded) parallel.loadCheckpoint(point.path, rank, optimizer, scheduler);
        startEpoch = point.epoch;
        startBatch = point.batch;
        const saved = point.state.trainerState as TrainerState | undefined;
        if (saved) this.state = { ...saved, maxSteps, numTrainEpochs: numEpochs, isWorldProcessZero: rank === 0 };
        this.state.globalStep = point.step;
        runId = point.runId;
        totals = restoredTotals(point.state.lossTotals, rank, worldSize);
      }
    }
    this.lossTotals = totals;
    this.reporter?.finish();
    this.reporter = new TrainerReporter(args, rank, maxSteps, this.state.globalStep, runId);
    this.model.train();
    this.fire("onTrainBegin");

    const gas = args.gradientAccumulationSteps;
    for (let epoch = startEpoch; epoch < numEpochs && !this.control.shouldTrainingStop; epoch++) {
      sampler.setEpoch(epoch);
      this.fire("onEpochBegin");
      let micro = epoch === startEpoch ? startBatch : 0;
      let accumulated = 0;
      for (const batch of loader) {
        const isUpdate = (micro + 1) % gas === 0 || micro + 1 === batchesPerEpoch;
        if (micro % gas === 0) this.fire("onStepBegin");
        const backward = () => {
          const forward = () => forwardBatch(model, batch, this.computeLossFunc, this.callStyle);
          const out = args.bf16 ? autocast("bfloat16", forward) : forward();
          if (!out.loss) throw new Error("Trainer: the model returned no loss; return { loss, logits } when the batch has labels, or give computeLossFunc");
          // Dividing by 1 changes no bit: skip the op (and its backward node) then.
          const loss = gas === 1 ? out.loss : out.loss.div(gas);
          loss.backward();
          return loss.item();
        };
        // Micro-batches before the last of a group keep their gradients local; the last one's backward all-reduces (FSDP: reduce-scatters) the sum.
        accumulated += isUpdate ? backward() : parallel.noSync(backward);
        micro++;
        if (!isUpdate) continue;
        const gradNorm = args.maxGradNorm > 0 ? parallel.clipGradNorm(args.maxGradNorm) : null;
        optimizer.step();
        scheduler.step();
        optimizer.zeroGrad();
        this.state.globalStep++;
        this.state.epoch = epoch + micro / batchesPerEpoch;
        totals.sinceLog += accumulated;
        totals.total += accumulated;
        totals.stepsSinceLog++;
        totals.steps++;
        accumulated = 0;
        const step = this.state.globalStep;
        this.reporter.advance(step);
        const lastStep = step >= maxSteps;
        this.control.shouldLog ||= args.loggingStrategy === "steps" && step % args.loggingSteps === 0;
        this.control.shouldEvaluate ||= args.evalStrategy === "steps" && step % args.evalSteps === 0;
        this.control.shouldSave ||= args.saveStrategy === "steps" && step % args.saveSteps === 0;
        if (lastStep) this.control.shouldTrainingStop = true;
        this.fire("onStepEnd");
        if (this.control.shouldLog) {
          this.log({ loss: allReduceMean(totals.sinceLog / totals.stepsSinceLog), ...(gradNorm === null ? {} : { grad_norm: gradNorm }), learning_rate: scheduler.getLastLr()[0] });
          totals.sinceLog = 0;
          totals.stepsSinceLog = 0;
        }
        const endOfEpoch = micro === batchesPerEpoch;
        await this.maybeEvaluateAndSave(endOfEpoch ? epoch + 1 : epoch, endOfEpoch ? 0 : micro);
        if (this.control.shouldTrainingStop || this.control.shouldEpochStop) break;
      }
      this.control.shouldEpochStop = false;
      this.control.shouldLog ||= args.loggingStrategy === "epoch";
      this.control.shouldEvaluate ||= args.evalStrategy === "epoch";
      this.control.shouldSave ||= args.saveStrategy === "epoch";
      this.fire("onEpochEnd");
      if (this.control.shouldLog && totals.stepsSinceLog > 0) {
        this.log({ loss: allReduceMean(totals.sinceLog / totals.stepsSinceLog), learning_rate: scheduler.getLastLr()[0] });
        totals.sinceLog = 0;
        totals.stepsSinceLog = 0;
      }
      this.control.shouldLog = false;
      await this.maybeEvaluateAndSave(epoch + 1, 0);
    }

    if (args.loadBestModelAtEnd && this.state.bestModelCheckpoint) parallel.loadCheckpoint(this.state.bestModelCheckpoint, rank);
    const metrics = { train_loss: allReduceMean(totals.steps > 0 ? totals.total / totals.steps : 0), epoch: this.state.epoch };
    this.log(metrics);
    this.fire("onTrainEnd");
    this.control.shouldTrainingStop = false;
    this.reporter.closeBar();
    return { globalStep: this.state.globalStep, trainingLoss: metrics.train_loss, metrics };
  }

  /** Evaluates on evalDataset (or the one given): `eval_loss` and computeMetrics' values, each prefixed "eval_". */
  async evaluate(options: { evalDataset?: Dataset<unknown>; metricKeyPrefix?: string } = {}): Promise<Record<string, number>> {
    checkOptions("Trainer.evaluate", options, ["evalDataset", "metricKeyPrefix"]);
    const dataset = options.evalDataset ?? this.evalDataset;
    if (!dataset) throw new Error("Trainer.evaluate: give the Trainer an evalDataset, or pass { evalDataset }");
    await joinLauncherGroup();
    const { metrics } = this.predictionLoop(dataset, options.metricKeyPrefix ?? "eval");
    this.log(metrics);
    this.lastEvalMetrics = metrics;
    this.fire("onEvaluate", { metrics });
    return metrics;
  }

  /** Predictions for a dataset, in its order, with `test_`-prefixed metrics when it has labels. */
  async predict(testDataset: Dataset<unknown>, options: { metricKeyPrefix?: string } = {}): Promise<EvalPrediction & { metrics: Record<string, number> }> {
    checkArity("Trainer.predict", arguments, 2, "trainer.predict(testDataset, { metricKeyPrefix })");
    checkOptions("Trainer.predict", options, ["metricKeyPrefix"]);
    await joinLauncherGroup();
    const out = this.predictionLoop(testDataset, options.metricKeyPrefix ?? "test");
    this.fire("onPredict", { metrics: out.metrics });
    return out;
  }

  private predictionLoop(dataset: Dataset<unknown>, prefix: string): EvalPrediction & { metrics: Record<string, number> } {
    const r = evaluationLoop(dataset, {
      model: this.model,
      batchSize: this.args.perDeviceEvalBatchSize,
      collateFn: this.collate,
      computeLossFunc: this.computeLossFunc,
      callStyle: this.callStyle,
      rank: this.rank,
      worldSize: this.worldSize,
      // FSDP's forward gathers each unit's shards from every rank: all ranks run as many batches.
      lockstep: this.parallel?.isSharded ?? false,
      bf16: this.args.bf16,
    });
    const metrics: Record<string, number> = {};
    if (r.loss !== null) metrics[`${prefix}_loss`] = r.loss;
    if (this.computeMetrics && r.labelIds) {
      for (const [k, v] of Object.entries(this.computeMetrics({ predictions: r.predictions, labelIds: r.labelIds }))) metrics[k.startsWith(`${prefix}_`) ? k : `${prefix}_${k}`] = v;
    }
    return { predictions: r.predictions, labelIds: r.labelIds, metrics };
  }

  private async maybeEvaluateAndSave(epoch: number, batch: number): Promise<void> {
    if (this.control.shouldEvaluate) {
      this.control.shouldEvaluate = false;
      if (this.evalDataset) await this.evaluate();
    }
    if (this.control.shouldSave) {
      this.control.shouldSave = false;
      await this.saveCheckpoint(epoch, batch);
    }
  }

  /** Saves outputDir/step_<globalStep>/ on every rank, tracks the best checkpoint, and rotates old ones. */
  private async saveCheckpoint(epoch: number, batch: number): Promise<void> {
    const args = this.args;
    const path = join(args.outputDir, stepDirName(this.state.globalStep));
    updateBest(this.state, args, this.lastEvalMetrics, path);
    const weights = this.parallel!.checkpointState(this.optimizer!);
    await saveCheckpoint(
      args.outputDir,
      { ...weights.state, scheduler: this.lrScheduler, epoch, batch, trainerState: this.state, lossTotals: everyRanksTotals(this.lossTotals, this.rank, this.worldSize) },
      { step: this.state.globalStep, ...(weights.sharded ? { sharded: weights.sharded } : {}) },
    );
    if (this.rank === 0 && args.saveTotalLimit !== null) rotateCheckpoints(args.outputDir, args.saveTotalLimit, this.state.bestModelCheckpoint);
    this.fire("onSave", { checkpoint: path });
  }

  private log(logs: Record<string, number>): void {
    const record = { ...logs, epoch: Math.round(this.state.epoch * 100) / 100, step: this.state.globalStep };
    this.state.logHistory.push(record);
    this.reporter?.log(logs, this.state.globalStep);
    this.fire("onLog", { logs });
  }

  private fire(event: CallbackEvent, extras: CallbackExtras = {}): void {
    for (const cb of this.callbacks) cb[event]?.call(cb, this.args, this.state, this.control, extras);
  }
}

function freshState(isWorldProcessZero: boolean): TrainerState {
  return { epoch: 0, globalStep: 0, maxSteps: 0, numTrainEpochs: 0, bestMetric: null, bestModelCheckpoint: null, logHistory: [], isWorldProcessZero };
}

/** Under ringrun (WORLD_SIZE > 1 in the environment) the script need not initialise the process group itself. */
async function joinLauncherGroup(): Promise<void> {
  if (isInitialized()) return;
  const worldSize = Number(process.env.WORLD_SIZE ?? 1);
  if (worldSize > 1) await initProcessGroup();
}
