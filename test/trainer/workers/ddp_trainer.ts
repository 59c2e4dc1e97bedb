// One rank of test/trainer/ddp.test.ts. The Trainer joins the process group from the torchrun
// environment itself (the script has no distributed code), trains on this rank's share, and is
// compared with a one-process hand-written loop on the global batch, computed here on each rank
// without the process group. Prints RESULT {...}.
import * as rt from "../../../src/index.js";
import { Classifier, dataset } from "../fixtures/classifier.js";

const { optim, data, Trainer, TrainingArguments } = rt;
const PER_DEVICE = 4;
const EPOCHS = 2;
const world = Number(process.env.WORLD_SIZE);

function handLoop(model: Classifier, ds: rt.data.ListDataset<{ x: rt.Tensor; labels: number }>, batch: number): number[] {
  rt.manualSeed(42);
  const isDecay = (name: string) => !name.endsWith("bias") && !name.startsWith("norm.");
  const named = [...model.namedParameters()];
  const optimizer = new optim.AdamW(
    [
      { params: named.filter(([n]) => isDecay(n)).map(([, p]) => p), weightDecay: 0.01 },
      { params: named.filter(([n]) => !isDecay(n)).map(([, p]) => p), weightDecay: 0 },
    ],
    { lr: 0.02, weightDecay: 0.01 },
  );
  const sampler = new data.DistributedSampler(ds, { numReplicas: 1, rank: 0, seed: 42 });
  const loader = new data.DataLoader(ds, { batchSize: batch, sampler });
  const scheduler = optim.getLinearScheduleWithWarmup(optimizer, 2, EPOCHS * loader.length);
  const losses: number[] = [];
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    sampler.setEpoch(epoch);
    for (const b of loader) {
      const { loss } = model.call(b) as { loss: rt.Tensor };
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

const ds = dataset(16 * world);
const evalDs = dataset(11, 3);
rt.manualSeed(0);
const reference = new Classifier();
const handLosses = handLoop(reference, ds, PER_DEVICE * world);

rt.manualSeed(0);
const model = new Classifier();
const args = new TrainingArguments({
  outputDir: process.env.TRAINER_OUT!, perDeviceTrainBatchSize: PER_DEVICE, perDeviceEvalBatchSize: 2, learningRate: 0.02, weightDecay: 0.01,
  warmupSteps: 2, numTrainEpochs: EPOCHS, loggingSteps: 1, evalStrategy: "epoch", saveStrategy: "epoch", disableTqdm: true,
});
const accuracy = (p: rt.trainer.EvalPrediction) => {
  const pred = p.predictions.argmax(1).toArray() as number[];
  const labels = p.labelIds!.toArray() as number[];
  return { accuracy: pred.filter((v, i) => v === labels[i]).length / labels.length };
};
const trainer = new Trainer({ model, args, trainDataset: ds, evalDataset: evalDs, computeMetrics: accuracy });
await trainer.train();
const losses = trainer.state.logHistory.filter((r) => "loss" in r).map((r) => r.loss);
const w = model.parameters().map((p) => Array.from(p.data() as ArrayLike<number>)).flat();
const wRef = reference.parameters().map((p) => Array.from(p.data() as ArrayLike<number>)).flat();
const maxWeightDiff = Math.max(...w.map((v, i) => Math.abs(v - wRef[i])));

const { predictions, metrics } = await trainer.predict(evalDs);
const single = rt.noGrad(() => model.call(data.defaultCollate(evalDs.items) as { x: rt.Tensor; labels: rt.Tensor }));
console.log("RESULT " + JSON.stringify({
  rank: rt.dist.getRank(), world: rt.dist.getWorldSize(), losses, handLosses, maxWeightDiff,
  predictions: predictions.toArray(), singlePredictions: single.logits.toArray(),
  testLoss: metrics.test_loss, singleLoss: single.loss!.item(), testAccuracy: metrics.test_accuracy, singleAccuracy: accuracy({ predictions: single.logits, labelIds: data.defaultCollate(evalDs.items.map((s) => s.labels)) as rt.Tensor }).accuracy,
}));
await rt.dist.destroyProcessGroup();
