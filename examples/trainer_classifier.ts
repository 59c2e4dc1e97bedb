// node --import tsx --conditions=source examples/trainer_classifier.ts [--epochs 3] [--train 1200] [--eval 300] [--out runs/trainer_classifier]
// npx ringrun --standalone --nproc-per-node 2 examples/trainer_classifier.ts      (the same script, unchanged)
//
// Note 004 part II with ringtorch's Trainer: a small TransformerEncoder sentence classifier on
// generated two-class "reviews", trained with TrainingArguments, evaluated and saved every epoch,
// the best checkpoint by accuracy restored at the end. The script has no distributed code: under
// ringrun the Trainer joins the process group, wraps the model in DDP and shards the data. It
// exits with status 1 if the final accuracy is below --min-accuracy (0.85; 2 ranks take half the
// optimizer steps of one process, with batches twice as large).
import * as rt from "../src/index.js";

const { nn, data, Trainer, TrainingArguments, EarlyStoppingCallback } = rt;

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const epochs = Number(flag("--epochs", "3"));
const trainSize = Number(flag("--train", "1200"));
const evalSize = Number(flag("--eval", "300"));
const outputDir = flag("--out", "runs/trainer_classifier");
const minAccuracy = Number(flag("--min-accuracy", "0.85"));

const POSITIVE = ["great", "wonderful", "moving", "funny", "brilliant", "charming", "superb", "fresh"];
const NEGATIVE = ["dull", "awful", "boring", "clumsy", "tedious", "bland", "weak", "messy"];
const FILLER = ["the", "movie", "was", "and", "plot", "acting", "really", "quite", "story", "a", "bit", "ending", "cast", "music", "felt"];
const VOCAB = ["[PAD]", ...POSITIVE, ...NEGATIVE, ...FILLER];
const ID = new Map(VOCAB.map((w, i) => [w, i]));

/** A review of filler words with 1–3 sentiment words of one polarity, sometimes one of the other. */
function reviews(n: number, seed: number): rt.data.ListDataset<rt.data.TextFeature> {
  const g = new rt.Generator(seed);
  const u = () => rt.rand([1], { generator: g }).item();
  const pick = <T>(xs: T[]) => xs[Math.floor(u() * xs.length)];
  return new data.ListDataset(
    Array.from({ length: n }, () => {
      const label = u() < 0.5 ? 1 : 0;
      const words = Array.from({ length: 4 + Math.floor(u() * 8) }, () => pick(FILLER));
      const strong = 1 + Math.floor(u() * 3);
      for (let k = 0; k < strong; k++) words.splice(Math.floor(u() * words.length), 0, pick(label ? POSITIVE : NEGATIVE));
      if (strong > 1 && u() < 0.3) words.splice(Math.floor(u() * words.length), 0, pick(label ? NEGATIVE : POSITIVE));
      return { inputIds: words.map((w) => ID.get(w)!), labels: label };
    }),
  );
}

/** Embeddings, a 2-layer TransformerEncoder, masked mean pooling, a linear head; returns { loss, logits } given labels. */
class SentenceClassifier extends nn.Module {
  embed = new nn.Embedding(VOCAB.length, 32, { paddingIdx: 0 });
  pos = new nn.Embedding(32, 32);
  encoder = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(32, 4, { dimFeedforward: 64, dropout: 0.1, batchFirst: true }), 2);
  head = new nn.Linear(32, 2);
  override forward(batch: rt.data.TextBatch): { loss?: rt.Tensor; logits: rt.Tensor } {
    const [, t] = batch.inputIds.shape;
    const h = this.embed.call(batch.inputIds).add(this.pos.call(rt.arange(t)));
    const encoded = this.encoder.call(h, { srcKeyPaddingMask: batch.attentionMask.eq(0) });
    const mask = batch.attentionMask.to("float32").unsqueeze(2);
    const pooled = encoded.mul(mask).sum(1).div(mask.sum(1));
    const logits = this.head.call(pooled);
    return batch.labels ? { loss: rt.crossEntropy(logits, batch.labels), logits } : { logits };
  }
}

const accuracy = ({ predictions, labelIds }: rt.trainer.EvalPrediction) => {
  const pred = predictions.argmax(1).toArray() as number[];
  const labels = labelIds!.toArray() as number[];
  return { accuracy: pred.filter((p, i) => p === labels[i]).length / labels.length };
};

const args = new TrainingArguments({
  outputDir,
  perDeviceTrainBatchSize: 16,
  perDeviceEvalBatchSize: 64,
  gradientAccumulationSteps: 2,
  learningRate: 2e-3,
  weightDecay: 0.01,
  warmupRatio: 0.1,
  numTrainEpochs: epochs,
  loggingSteps: 10,
  evalStrategy: "epoch",
  saveStrategy: "epoch",
  saveTotalLimit: 2,
  loadBestModelAtEnd: true,
  metricForBestModel: "accuracy",
  reportTo: "jsonl",
});
rt.manualSeed(0);
const trainer = new Trainer({
  model: new SentenceClassifier(),
  args,
  trainDataset: reviews(trainSize, 1),
  evalDataset: reviews(evalSize, 2),
  dataCollator: new data.DataCollatorWithPadding({ padId: 0 }).collate,
  computeMetrics: accuracy,
  callbacks: [new EarlyStoppingCallback({ earlyStoppingPatience: 2 })],
});
const result = await trainer.train();
const metrics = await trainer.evaluate();
if (trainer.state.isWorldProcessZero) {
  console.log(`trained ${result.globalStep} steps, train loss ${result.trainingLoss.toFixed(4)}; best ${trainer.state.bestModelCheckpoint} (accuracy ${trainer.state.bestMetric})`);
  console.log(`eval accuracy ${metrics.eval_accuracy.toFixed(4)}, eval loss ${metrics.eval_loss.toFixed(4)}`);
}
if (rt.dist.isInitialized()) await rt.dist.destroyProcessGroup();
if (metrics.eval_accuracy < minAccuracy) process.exit(1);
