// The training script of test/trainer/restart.test.ts, run under `ringrun --nproc-per-node 2
// --max-restarts 1`. It has no resume logic of its own: after ringrun restarts the group, the
// Trainer resumes from the newest checkpoint under outputDir. With KILL_AT_STEP set, rank 1
// SIGKILLs itself once (KILL_MARKER records that it did) right after that optimizer step, past the
// last checkpoint, so that steps must be taken again. Rank 0 writes the final weights to
// WEIGHTS_OUT.
import { existsSync, writeFileSync } from "node:fs";
import * as rt from "../../../src/index.js";
import { Classifier, dataset } from "../fixtures/classifier.js";

const { Trainer, TrainingArguments } = rt;
const killAt = Number(process.env.KILL_AT_STEP ?? 0);
const marker = process.env.KILL_MARKER ?? "";

const killOnce: rt.trainer.TrainerCallback = {
  onStepEnd(_args, state) {
    if (killAt > 0 && state.globalStep === killAt && rt.dist.getRank() === 1 && !existsSync(marker)) {
      writeFileSync(marker, `killed at step ${killAt}\n`);
      process.kill(process.pid, "SIGKILL");
    }
  },
};

rt.manualSeed(0);
const model = new Classifier();
const args = new TrainingArguments({
  outputDir: process.env.TRAINER_OUT!, perDeviceTrainBatchSize: 4, perDeviceEvalBatchSize: 4, learningRate: 0.02, weightDecay: 0.01,
  warmupSteps: 2, numTrainEpochs: 3, loggingSteps: 1, evalStrategy: "epoch", saveStrategy: "steps", saveSteps: 4, reportTo: "jsonl", disableTqdm: true,
});
const trainer = new Trainer({ model, args, trainDataset: dataset(48), evalDataset: dataset(10, 3), callbacks: [killOnce] });
await trainer.train();
if (rt.dist.getRank() === 0) {
  const weights = Object.fromEntries(Object.entries(model.stateDict()).map(([k, t]) => [k, Array.from(t.data() as ArrayLike<number>)]));
  writeFileSync(process.env.WEIGHTS_OUT!, JSON.stringify(weights));
}
await rt.dist.destroyProcessGroup();
