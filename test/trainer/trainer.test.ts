import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../src/index.js";
import { assertClose } from "../helpers.js";
import { Classifier, dataset, type Sample } from "./fixtures/classifier.js";

const { optim, data, checkpoint, Trainer, TrainingArguments, EarlyStoppingCallback } = rt;

const tempDir = () => mkdtempSync(join(tmpdir(), "ringtorch-trainer-"));
const weights = (m: rt.nn.Module) => m.parameters().map((p) => Array.from(p.data() as ArrayLike<number>));
const stepLosses = (t: rt.Trainer) => t.state.logHistory.filter((r) => "loss" in r).map((r) => r.loss);

function newModel(): Classifier {
  rt.manualSeed(0);
  return new Classifier();
}

/**
 * The loop a user writes by hand for what the arguments below say: AdamW with weight decay on
 * the weights only (not biases or LayerNorm), linear warmup and decay, gradient clipping, the
 * data shuffled by a seeded sampler.
 */
function handLoop(model: Classifier, ds: rt.data.ListDataset<Sample>, o: { batch: number; epochs: number; lr: number; warmup: number; seed: number }): number[] {
  rt.manualSeed(o.seed);
  const isDecay = (name: string) => !name.endsWith("bias") && !name.startsWith("norm.");
  const named = [...model.namedParameters()];
  const optimizer = new optim.AdamW(
    [
      { params: named.filter(([n]) => isDecay(n)).map(([, p]) => p), weightDecay: 0.01 },
      { params: named.filter(([n]) => !isDecay(n)).map(([, p]) => p), weightDecay: 0 },
    ],
    { lr: o.lr, weightDecay: 0.01, eps: 1e-8 },
  );
  const sampler = new data.DistributedSampler(ds, { numReplicas: 1, rank: 0, seed: o.seed });
  const loader = new data.DataLoader(ds, { batchSize: o.batch, sampler });
  const total = o.epochs * loader.length;
  const scheduler = optim.getLinearScheduleWithWarmup(optimizer, o.warmup, total);
  const losses: number[] = [];
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    sampler.setEpoch(epoch);
    for (const batch of loader) {
      const { loss } = model.call(batch as never) as { loss: rt.Tensor };
      loss.backward();
      rt.nn.utils.clipGradNorm(model.parameters(), 1);
      optimizer.step();
      scheduler.step();
      optimizer.zeroGrad();
      losses.push(loss.item());
    }
  }
  return losses;
}

const baseArgs = (outputDir: string, extra: Partial<rt.trainer.TrainingArgumentsOptions> = {}) =>
  new TrainingArguments({ outputDir, learningRate: 0.02, weightDecay: 0.01, warmupSteps: 2, numTrainEpochs: 2, loggingSteps: 1, saveStrategy: "no", disableTqdm: true, ...extra });

test("the Trainer takes the same steps as the hand-written loop from the same seeds", async () => {
  const dir = tempDir();
  try {
    const ds = dataset(40);
    const expected = newModel();
    const handLosses = handLoop(expected, ds, { batch: 8, epochs: 2, lr: 0.02, warmup: 2, seed: 42 });
    const trainer = new Trainer({ model: newModel(), args: baseArgs(dir, { perDeviceTrainBatchSize: 8 }), trainDataset: ds });
    const out = await trainer.train();
    assert.equal(out.globalStep, 10);
    assert.deepEqual(stepLosses(trainer), handLosses);
    assert.deepEqual(weights(trainer.model), weights(expected));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("computeLossFunc: a model that returns only logits trains as one that returns its loss", async () => {
  const dir = tempDir();
  try {
    const ds = dataset(24);
    const expected = newModel();
    const handLosses = handLoop(expected, ds, { batch: 8, epochs: 2, lr: 0.02, warmup: 2, seed: 42 });
    let calls = 0;
    const computeLossFunc = (outputs: unknown, labels: rt.Tensor) => {
      calls++;
      const o = outputs as { loss?: rt.Tensor; logits: rt.Tensor };
      assert.equal(o.loss, undefined, "the labels are taken out of the batch before the forward");
      return rt.crossEntropy(o.logits, labels);
    };
    const trainer = new Trainer({ model: newModel(), args: baseArgs(dir, { perDeviceTrainBatchSize: 8 }), trainDataset: ds, computeLossFunc });
    await trainer.train();
    assert.equal(calls, 6);
    assert.deepEqual(stepLosses(trainer), handLosses);
    assert.deepEqual(weights(trainer.model), weights(expected));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("k accumulated micro-batches take the step of one batch k times larger", async () => {
  const dir = tempDir();
  try {
    const ds = dataset(48);
    const expected = newModel();
    const handLosses = handLoop(expected, ds, { batch: 12, epochs: 2, lr: 0.02, warmup: 2, seed: 42 });
    const trainer = new Trainer({ model: newModel(), args: baseArgs(dir, { perDeviceTrainBatchSize: 4, gradientAccumulationSteps: 3 }), trainDataset: ds });
    const out = await trainer.train();
    assert.equal(out.globalStep, 8);
    assertClose(stepLosses(trainer), handLosses, 1e-6, 1e-5, "loss per optimizer step");
    assertClose(weights(trainer.model).flat(), weights(expected).flat(), 1e-5, 1e-4, "final weights");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an unknown or snake_case argument is an error naming the closest known one", () => {
  assert.throws(() => new TrainingArguments({ outputDir: "o", learning_rate: 1 } as never), /unknown option "learning_rate"; did you mean learningRate\?/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", evalStrategey: "epoch" } as never), /did you mean evalStrategy\?/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", evalStrategy: "often" as never }), /evalStrategy must be one of "no", "steps", "epoch", got "often"/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", loadBestModelAtEnd: true, evalStrategy: "epoch", saveStrategy: "steps" }), /saveStrategy to match evalStrategy/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", fsdp: "zero3" as never }), /fsdp must be one of "full_shard", "shard_grad_op", "no_shard", "hybrid_shard", got "zero3"/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", fsdpConfig: { minNumParams: 10 } }), /fsdpConfig is given but fsdp is not/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", fsdp: "full_shard", fsdpConfig: { min_num_params: 10 } as never }), /unknown option "min_num_params"; did you mean minNumParams\?/);
  assert.throws(() => new TrainingArguments({ outputDir: "o", bf16: "yes" as never }), /bf16 must be a boolean/);
  const defaults = new TrainingArguments({ outputDir: "o" });
  assert.deepEqual([defaults.bf16, defaults.fsdp], [false, null]);
  assert.deepEqual(
    [defaults.perDeviceTrainBatchSize, defaults.gradientAccumulationSteps, defaults.learningRate, defaults.numTrainEpochs, defaults.maxSteps, defaults.lrSchedulerType, defaults.maxGradNorm, defaults.seed],
    [8, 1, 5e-5, 3, -1, "linear", 1, 42],
  );
});

/** A metric that follows a script, so that which evaluation is best is known beforehand. */
function scriptedMetric(values: number[]) {
  let call = 0;
  return (p: rt.trainer.EvalPrediction) => {
    assert.equal(p.predictions.shape[0], p.labelIds!.shape[0]);
    return { score: values[call++] };
  };
}

test("loadBestModelAtEnd restores the checkpoint with the best metric, and rotation keeps it", async () => {
  const dir = tempDir();
  try {
    const saved = new Map<string, number[][]>();
    const args = baseArgs(dir, { numTrainEpochs: 4, perDeviceTrainBatchSize: 8, evalStrategy: "epoch", saveStrategy: "epoch", loadBestModelAtEnd: true, metricForBestModel: "score", saveTotalLimit: 2 });
    const trainer = new Trainer({
      model: newModel(),
      args,
      trainDataset: dataset(24),
      evalDataset: dataset(10, 3),
      computeMetrics: scriptedMetric([0.5, 0.9, 0.7, 0.6]),
      callbacks: [{ onSave: (_a, _s, _c, extras) => void saved.set(extras.checkpoint!, weights(trainer.model)) }],
    });
    await trainer.train();
    const best = join(dir, "step_00000006");
    assert.equal(trainer.state.bestModelCheckpoint, best);
    assert.equal(trainer.state.bestMetric, 0.9);
    assert.deepEqual(weights(trainer.model), saved.get(best));
    assert.notDeepEqual(saved.get(best), saved.get(join(dir, "step_00000012")));
    const onDisk = checkpoint.load(best).state.model as Record<string, rt.Tensor>;
    assert.deepEqual(Array.from(onDisk["inp.weight"].data()), Array.from(trainer.model.stateDict()["inp.weight"].data()));
    assert.deepEqual(readdirSync(dir).filter((d) => d.startsWith("step_")).sort(), ["step_00000006", "step_00000012"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("EarlyStoppingCallback stops after `patience` evaluations without improvement", async () => {
  const dir = tempDir();
  try {
    const args = baseArgs(dir, { numTrainEpochs: 6, perDeviceTrainBatchSize: 8, evalStrategy: "epoch", metricForBestModel: "score" });
    const trainer = new Trainer({
      model: newModel(),
      args,
      trainDataset: dataset(16),
      evalDataset: dataset(6, 3),
      computeMetrics: scriptedMetric([0.5, 0.6, 0.55, 0.58, 0.9, 0.9]),
      callbacks: [new EarlyStoppingCallback({ earlyStoppingPatience: 2 })],
    });
    const out = await trainer.train();
    assert.equal(out.globalStep, 8, "stops after the 4th epoch: two evaluations below 0.6");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a run resumed from a mid-epoch checkpoint ends bit-identical to the uninterrupted one", async () => {
  const dir = tempDir();
  try {
    const ds = dataset(40);
    const args = baseArgs(dir, { perDeviceTrainBatchSize: 8, saveStrategy: "steps", saveSteps: 3 });
    const straight = new Trainer({ model: newModel(), args, trainDataset: ds });
    const straightOut = await straight.train();
    rt.manualSeed(5);
    const resumed = new Trainer({ model: new Classifier(), args, trainDataset: ds });
    const resumedOut = await resumed.train({ resumeFromCheckpoint: join(dir, "step_00000003") });
    assert.equal(resumed.state.globalStep, 10);
    assert.deepEqual(weights(resumed.model), weights(straight.model));
    assert.deepEqual(stepLosses(resumed), stepLosses(straight));
    // The losses of the steps before the checkpoint come back with it: the mean over all steps is the same number.
    assert.equal(resumedOut.trainingLoss, straightOut.trainingLoss);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("evaluate and predict run every sample once, in dataset order", async () => {
  const model = newModel();
  const ds = dataset(11, 3);
  const trainer = new Trainer({ model, args: baseArgs(tempDir(), { perDeviceEvalBatchSize: 4 }), evalDataset: ds });
  const all = rt.noGrad(() => model.call(data.defaultCollate(ds.items) as { x: rt.Tensor; labels: rt.Tensor }));
  const { predictions, labelIds, metrics } = await trainer.predict(ds);
  assert.deepEqual(predictions.toArray(), all.logits.toArray());
  assert.deepEqual(Array.from(labelIds!.data() as ArrayLike<number>), ds.items.map((s) => s.labels));
  // Batches of 4, 4 and 3: the mean loss per sample is the size-weighted mean of the batch means.
  assertClose(metrics.test_loss, all.loss!.item(), 1e-6, 1e-6, "test_loss");
  const evaluated = await trainer.evaluate();
  assert.equal(evaluated.eval_loss, metrics.test_loss);
});
