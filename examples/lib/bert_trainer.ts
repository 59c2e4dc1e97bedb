// Note 004 part II: the BERT classification task of ./bert_task.ts with Hugging Face's Trainer
// instead of the hand-written loop. The arguments say what the hand loop does (the same optimizer,
// schedule, clipping, batch size and seed), so that both take the same steps.
import { join } from "node:path";
import * as rt from "ringtorch";
import { scores, type BertFlags, type BertTask } from "./bert_task.js";

const { Trainer, TrainingArguments } = rt;

/** TrainingArguments for the flags; loadBestModelAtEnd restores the checkpoint with the best F1 after training. */
export function bertTrainingArguments(flags: BertFlags, options: { loadBestModelAtEnd: boolean }): rt.TrainingArguments {
  return new TrainingArguments({
    outputDir: join(flags.runsDir, flags.experimentName, "trainer"),
    perDeviceTrainBatchSize: flags.batchSize,
    perDeviceEvalBatchSize: 64,
    learningRate: flags.lr,
    weightDecay: flags.weightDecay,
    warmupSteps: flags.warmup,
    numTrainEpochs: flags.epochs,
    maxGradNorm: 1,
    loggingSteps: flags.logFreq,
    evalStrategy: "epoch",
    saveStrategy: "epoch",
    saveTotalLimit: 2,
    loadBestModelAtEnd: options.loadBestModelAtEnd,
    metricForBestModel: "f1",
    seed: flags.seed,
    reportTo: "jsonl",
    disableTqdm: process.env.RINGTORCH_QUIET === "1",
  });
}

/** The Trainer over the task's splits, scoring accuracy and binary F1 on every test record once. */
export function bertTrainer(task: BertTask, model: rt.models.BertForSequenceClassification, args: rt.TrainingArguments, log: (line: string) => void): rt.Trainer {
  return new Trainer({
    model,
    args,
    trainDataset: task.train,
    evalDataset: task.test,
    dataCollator: task.collate as never,
    computeMetrics: ({ predictions, labelIds }) => scores(predictions.argmax(-1), labelIds!, false),
    callbacks: [
      {
        onEvaluate: (_args, state, _control, { metrics }) =>
          log(`epoch ${Math.round(state.epoch)} | test accuracy ${metrics!.eval_accuracy.toFixed(4)} | F1 ${metrics!.eval_f1.toFixed(4)} (precision ${metrics!.eval_precision.toFixed(4)}, recall ${metrics!.eval_recall.toFixed(4)}) on ${task.test.length} records`),
      },
    ],
  });
}
