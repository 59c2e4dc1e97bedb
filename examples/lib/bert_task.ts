// Note 004's BERT classification task, shared by examples/bert_classifier.ts (the hand-written
// loop) and examples/bert_classifier_trainer.ts (the Trainer): the flags, the labelled records,
// the tokenizer, the model, and the hand-written loop itself, so that a test can run both on the
// same data with a tiny configuration.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "ringtorch";

const { data, dist, models, optim, text, metrics, checkpoint } = rt;

/** The flags both scripts take (see parseFlags in ./cli.ts). */
export const BERT_FLAGS = {
  data: "fortunes:computers,politics",
  model: "",
  experimentName: "bert-classifier",
  runsDir: "runs",
  maxLength: 128,
  hidden: 256,
  layers: 4,
  heads: 4,
  vocabSize: 8000,
  batchSize: 16,
  lr: 1e-4,
  weightDecay: 0.01,
  epochs: 3,
  warmup: 50,
  testSize: 0.2,
  /** Keep only the first N training records (0: all); for quick runs and tests. */
  maxTrain: 0,
  ckptFreq: 200,
  logFreq: 20,
  resume: "",
  seed: 0,
};
export type BertFlags = typeof BERT_FLAGS;

export interface Labelled {
  text: string;
  label: number;
}

export interface Encoded {
  inputIds: number[];
  label: number;
}

export interface BertTask {
  train: rt.data.ListDataset<Encoded>;
  test: rt.data.ListDataset<Encoded>;
  tok: rt.text.Tokenizer;
  padId: number;
  collate: (features: Encoded[]) => rt.data.TextBatch;
}

function fortunes(spec: string): Labelled[] {
  const files = spec.split(",");
  if (files.length !== 2) throw new Error(`bert_classifier: --data fortunes:A,B names two fortune files, got "${spec}"`);
  return files.flatMap((f, label) =>
    readFileSync(join("/usr/share/games/fortunes", f), "utf8")
      .split(/^%$/m)
      .map((t) => t.trim().replace(/\s+/g, " "))
      .filter((t) => t.length > 0)
      .map((t) => ({ text: t, label })),
  );
}

/** The records of --data: two fortune files, or a JSONL / CSV file with `text` and `label` (0 or 1). */
export async function readLabelled(source: string): Promise<Labelled[]> {
  if (source.startsWith("fortunes:")) return fortunes(source.slice("fortunes:".length));
  const rows: Labelled[] = [];
  const reader = source.endsWith(".csv") ? data.readCsv(source) : data.readJsonl(source);
  for await (const r of reader as AsyncIterable<Record<string, unknown>>) {
    const label = Number(r.label);
    if (typeof r.text !== "string" || !(label === 0 || label === 1)) throw new Error(`bert_classifier: ${source} row ${rows.length}: expected text (string) and label 0 or 1, got ${JSON.stringify(r).slice(0, 80)}`);
    rows.push({ text: r.text, label });
  }
  return rows;
}

function wordPiece(texts: string[], vocabSize: number): rt.text.Tokenizer {
  const tok = new text.Tokenizer(new text.WordPiece(new Map()));
  tok.normalizer = new text.normalizers.BertNormalizer();
  tok.preTokenizer = text.preTokenizers.BertPreTokenizer();
  tok.decoder = new text.decoders.WordPieceDecoder();
  tok.train(texts, new text.WordPieceTrainer({ vocabSize, specialTokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] }));
  tok.postProcessor = new text.processors.BertProcessing(["[SEP]", tok.tokenToId("[SEP]")!], ["[CLS]", tok.tokenToId("[CLS]")!]);
  return tok;
}

/**
 * The records split at random with the seed, a WordPiece tokenizer trained on the training part
 * (or the one in --model), and both parts encoded. Every rank computes the same.
 */
export async function prepareTask(flags: BertFlags): Promise<BertTask> {
  const { train: trainAll, test: testRaw } = new data.ListDataset(await readLabelled(flags.data)).trainTestSplit({ testSize: flags.testSize, seed: flags.seed });
  const trainRaw = flags.maxTrain > 0 ? new data.ListDataset(trainAll.items.slice(0, flags.maxTrain)) : trainAll;
  const tok = flags.model ? text.Tokenizer.fromFile(join(flags.model, "tokenizer.json")) : wordPiece([...trainRaw].map((r) => r.text), flags.vocabSize);
  const padId = tok.tokenToId("[PAD]") ?? 0;
  const encode = (r: Labelled): Encoded => ({ inputIds: tok.encode(r.text, null, { truncation: true, maxLength: flags.maxLength }).ids, label: r.label });
  const collate = new data.DataCollatorWithPadding({ padId }).collate as (features: Encoded[]) => rt.data.TextBatch;
  return { train: trainRaw.map(encode), test: testRaw.map(encode), tok, padId, collate };
}

/** The classifier: --model's Hugging Face weights, or a fresh BERT of the flags' size, initialised from the seed. */
export function newModel(flags: BertFlags, task: BertTask): rt.models.BertForSequenceClassification {
  rt.manualSeed(flags.seed);
  if (flags.model) return models.BertForSequenceClassification.fromPretrained(flags.model).train();
  return new models.BertForSequenceClassification({
    vocab_size: task.tok.getVocabSize(),
    hidden_size: flags.hidden,
    num_hidden_layers: flags.layers,
    num_attention_heads: flags.heads,
    intermediate_size: 4 * flags.hidden,
    max_position_embeddings: flags.maxLength,
    num_labels: 2,
    pad_token_id: task.padId,
  });
}

/** BERT fine-tuning's classic rule: no weight decay on biases and LayerNorm weights. */
export function noDecay(name: string): boolean {
  return name.endsWith("bias") || name.includes("LayerNorm.");
}

/** Accuracy and binary F1 (precision, recall) of predicted classes against labels. */
export function scores(preds: rt.Tensor | readonly number[], labels: rt.Tensor | readonly number[], sync: boolean): { accuracy: number; f1: number; precision: number; recall: number } {
  const accuracy = new metrics.Accuracy().update(preds, labels).compute({ sync });
  const prf = new metrics.PrecisionRecallF1({ average: "binary" }).update(preds, labels).compute({ sync });
  return { accuracy, ...prf };
}

export interface HandLoopResult {
  /** Each optimizer step's loss, averaged over ranks (what the Trainer logs with loggingSteps 1). */
  losses: number[];
  bestF1: number;
}

/**
 * Note 004 part I, the loop written by hand: DDP with a DistributedSampler; AdamW with weight
 * decay off for biases and LayerNorm weights, linear warmup and decay, gradients clipped to norm
 * 1; after each epoch every rank evaluates its share of the test split (an evaluation sampler: no
 * padded duplicates) and accuracy and F1 are summed across ranks; the model with the best F1 is
 * kept in Hugging Face format (runs/<name>/best), and a training checkpoint is written every
 * --ckpt-freq steps and after each epoch; --resume latest continues.
 */
export async function handLoop(flags: BertFlags, task: BertTask, model: rt.models.BertForSequenceClassification, log: (line: string) => void): Promise<HandLoopResult> {
  const rank = dist.getRank();
  const { train, test, collate } = task;
  // As HF's Trainer does when it starts: the seed decides dropout from here on.
  rt.manualSeed(flags.seed);
  const sampler = new data.DistributedSampler(train, { seed: flags.seed });
  const loader = new data.DataLoader(train, { batchSize: flags.batchSize, sampler, collateFn: collate });
  const testLoader = new data.DataLoader(test, { batchSize: 64, sampler: new data.DistributedSampler(test, { evaluation: true }), collateFn: collate });
  const ddp = new rt.DDP(model);
  const named = [...model.namedParameters()];
  const optimizer = new optim.AdamW(
    [
      { params: named.filter(([n]) => !noDecay(n)).map(([, p]) => p), weightDecay: flags.weightDecay },
      { params: named.filter(([n]) => noDecay(n)).map(([, p]) => p), weightDecay: 0 },
    ],
    { lr: flags.lr, weightDecay: flags.weightDecay, eps: 1e-8 },
  );
  const scheduler = optim.getLinearScheduleWithWarmup(optimizer, flags.warmup, flags.epochs * loader.length);
  const runDir = join(flags.runsDir, flags.experimentName);
  const ckptDir = join(runDir, "checkpoints");
  const start = await checkpoint.resume(ckptDir, { model, optimizer, scheduler, sampler, batchSize: flags.batchSize, ...(flags.resume ? { step: flags.resume as "latest" } : {}) });
  if (start.path) log(`resumed from ${start.path} at step ${start.step}`);
  let best = typeof start.state.bestF1 === "number" ? start.state.bestF1 : -1;
  const losses: number[] = [];

  let step = start.step;
  for (let epoch = start.epoch; epoch < flags.epochs; epoch++) {
    sampler.setEpoch(epoch);
    let batch = epoch === start.epoch ? start.batch : 0;
    let running = 0;
    let loggedAt = step;
    for (const b of loader) {
      batch++;
      const { loss } = ddp.call(b.inputIds, { attentionMask: b.attentionMask, labels: b.labels });
      loss!.backward();
      rt.nn.utils.clipGradNorm(model.parameters(), 1);
      optimizer.step();
      scheduler.step();
      optimizer.zeroGrad();
      const value = loss!.item();
      losses.push(value);
      running += value;
      step++;
      if (step % flags.logFreq === 0) {
        log(`epoch ${epoch} step ${step} | loss ${rt.parallel.allReduceMean(running / (step - loggedAt), 1).toFixed(4)}`);
        running = 0;
        loggedAt = step;
      }
      if (step % flags.ckptFreq === 0) await checkpoint.save(ckptDir, { model, optimizer, scheduler, epoch, batch, bestF1: best }, { step, keepLast: 2 });
    }
    // Every rank scores its own share of the test split; compute() sums the counts over ranks.
    model.eval();
    const preds: rt.Tensor[] = [];
    const labels: rt.Tensor[] = [];
    rt.noGrad(() => {
      for (const b of testLoader) {
        preds.push(model.call(b.inputIds, { attentionMask: b.attentionMask }).logits.argmax(-1));
        labels.push(b.labels!);
      }
    });
    model.train();
    const { accuracy, f1, precision, recall } = scores(rt.cat(preds), rt.cat(labels), true);
    log(`epoch ${epoch} | test accuracy ${accuracy.toFixed(4)} | F1 ${f1.toFixed(4)} (precision ${precision.toFixed(4)}, recall ${recall.toFixed(4)}) on ${test.length} records`);
    if (f1 > best) {
      best = f1;
      if (rank === 0) {
        model.savePretrained(join(runDir, "best"));
        task.tok.save(join(runDir, "best", "tokenizer.json"));
        log(`epoch ${epoch} | best F1 so far: saved ${join(runDir, "best")}`);
      }
    }
    await checkpoint.save(ckptDir, { model, optimizer, scheduler, epoch: epoch + 1, batch: 0, bestF1: best }, { step, keepLast: 2 });
  }
  // One all-reduce for the whole run: each step's loss, averaged over ranks.
  const world = dist.getWorldSize();
  return { losses: rt.parallel.allReduceSum(losses).map((v) => v / world), bestF1: best };
}
