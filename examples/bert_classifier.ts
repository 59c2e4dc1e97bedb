// npx ringrun --standalone --nproc-per-node 2 examples/bert_classifier.ts --data fortunes:computers,politics --epochs 3
//
// Note 004: a BERT sequence classifier on a binary text task. --data is "fortunes:A,B" (fortune
// files A and B of /usr/share/games/fortunes, label 0 and 1: which file a quote came from) or a
// JSONL / CSV file with `text` and `label` columns. The records are split at random with a fixed
// seed; a WordPiece tokenizer is trained on the training part, or the one in --model DIR is used
// with that directory's Hugging Face BERT weights (a fresh classifier head when the file has none).
// DDP with a DistributedSampler; after each epoch every rank evaluates its share of the test split
// (an evaluation sampler: no padded duplicates) and accuracy and F1 are summed across ranks; the
// model with the best F1 is kept in Hugging Face format (runs/<name>/best, savePretrained), and a
// training checkpoint is written every --ckpt-freq steps; --resume latest continues. A multinomial
// naive-Bayes baseline on the same split and tokens is printed first.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "ringtorch";
import { parseFlags, say } from "./lib/cli.js";
import { naiveBayes } from "./lib/naive_bayes.js";

const { data, dist, models, optim, text, metrics, checkpoint } = rt;

const flags = parseFlags("bert_classifier", process.argv.slice(2), {
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
  epochs: 3,
  warmup: 50,
  testSize: 0.2,
  ckptFreq: 200,
  logFreq: 20,
  resume: "",
  seed: 0,
});

interface Labelled {
  text: string;
  label: number;
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

async function readLabelled(): Promise<Labelled[]> {
  if (flags.data.startsWith("fortunes:")) return fortunes(flags.data.slice("fortunes:".length));
  const rows: Labelled[] = [];
  const source = flags.data.endsWith(".csv") ? data.readCsv(flags.data) : data.readJsonl(flags.data);
  for await (const r of source as AsyncIterable<Record<string, unknown>>) {
    const label = Number(r.label);
    if (typeof r.text !== "string" || !(label === 0 || label === 1)) throw new Error(`bert_classifier: ${flags.data} row ${rows.length}: expected text (string) and label 0 or 1, got ${JSON.stringify(r).slice(0, 80)}`);
    rows.push({ text: r.text, label });
  }
  return rows;
}

function wordPiece(texts: string[]): rt.text.Tokenizer {
  const tok = new text.Tokenizer(new text.WordPiece(new Map()));
  tok.normalizer = new text.normalizers.BertNormalizer();
  tok.preTokenizer = text.preTokenizers.BertPreTokenizer();
  tok.decoder = new text.decoders.WordPieceDecoder();
  tok.train(texts, new text.WordPieceTrainer({ vocabSize: flags.vocabSize, specialTokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] }));
  tok.postProcessor = new text.processors.BertProcessing(["[SEP]", tok.tokenToId("[SEP]")!], ["[CLS]", tok.tokenToId("[CLS]")!]);
  return tok;
}

async function main(): Promise<void> {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  rt.manualSeed(flags.seed);
  const { train: trainRaw, test: testRaw } = new data.ListDataset(await readLabelled()).trainTestSplit({ testSize: flags.testSize, seed: flags.seed });
  const tok = flags.model ? text.Tokenizer.fromFile(join(flags.model, "tokenizer.json")) : wordPiece([...trainRaw].map((r) => r.text));
  const padId = tok.tokenToId("[PAD]") ?? 0;
  const encode = (r: Labelled) => ({ inputIds: tok.encode(r.text, null, { truncation: true, maxLength: flags.maxLength }).ids, label: r.label });
  const train = trainRaw.map(encode);
  const test = testRaw.map(encode);
  const collate = new data.DataCollatorWithPadding({ padId }).collate;
  const model = flags.model
    ? models.BertForSequenceClassification.fromPretrained(flags.model).train()
    : new models.BertForSequenceClassification({
        vocab_size: tok.getVocabSize(),
        hidden_size: flags.hidden,
        num_hidden_layers: flags.layers,
        num_attention_heads: flags.heads,
        intermediate_size: 4 * flags.hidden,
        max_position_embeddings: flags.maxLength,
        num_labels: 2,
        pad_token_id: padId,
      });
  const sampler = new data.DistributedSampler(train, { seed: flags.seed });
  const loader = new data.DataLoader(train, { batchSize: flags.batchSize, sampler, collateFn: collate });
  const testLoader = new data.DataLoader(test, { batchSize: 64, sampler: new data.DistributedSampler(test, { evaluation: true }), collateFn: collate });
  const ddp = new rt.DDP(model);
  const optimizer = new optim.AdamW(model.parameters(), { lr: flags.lr, weightDecay: 0.01 });
  const scheduler = optim.getLinearScheduleWithWarmup(optimizer, flags.warmup, flags.epochs * loader.length);
  const runDir = join(flags.runsDir, flags.experimentName);
  const ckptDir = join(runDir, "checkpoints");
  const start = await checkpoint.resume(ckptDir, { model, optimizer, scheduler, sampler, batchSize: flags.batchSize, ...(flags.resume ? { step: flags.resume as "latest" } : {}) });
  if (start.path) say(rank, `resumed from ${start.path} at step ${start.step}`);
  let best = typeof start.state.bestF1 === "number" ? start.state.bestF1 : -1;
  const positives = train.items.filter((r) => r.label === 1).length;
  say(rank, `bert_classifier: ${train.length} training (${positives} positive) / ${test.length} test records, vocab ${tok.getVocabSize()}, ${dist.getWorldSize()} rank(s)`);
  if (rank === 0) {
    const nb = naiveBayes(train.items, test.items, tok.getVocabSize());
    const truth = test.items.map((r) => r.label);
    const nbPrf = new metrics.PrecisionRecallF1({ average: "binary" }).update(nb, truth).compute({ sync: false });
    say(rank, `naive-Bayes baseline (same split, same tokens) | test accuracy ${new metrics.Accuracy().update(nb, truth).compute({ sync: false }).toFixed(4)} | F1 ${nbPrf.f1.toFixed(4)}`);
  }

  let step = start.step;
  let loggedAt = step;
  for (let epoch = start.epoch; epoch < flags.epochs; epoch++) {
    sampler.setEpoch(epoch);
    let batch = epoch === start.epoch ? start.batch : 0;
    let running = 0;
    loggedAt = step;
    for (const b of loader) {
      batch++;
      const { loss } = ddp.call(b.inputIds, { attentionMask: b.attentionMask, labels: b.labels });
      loss!.backward();
      optimizer.step();
      scheduler.step();
      optimizer.zeroGrad();
      running += loss!.item();
      step++;
      if (step % flags.logFreq === 0) {
        say(rank, `epoch ${epoch} step ${step} | loss ${rt.parallel.allReduceMean(running / (step - loggedAt), 1).toFixed(4)}`);
        running = 0;
        loggedAt = step;
      }
      if (step % flags.ckptFreq === 0) await checkpoint.save(ckptDir, { model, optimizer, scheduler, epoch, batch, bestF1: best }, { step, keepLast: 2 });
    }
    // Every rank scores its own share of the test split; compute() sums the counts over ranks.
    model.eval();
    const acc = new metrics.Accuracy();
    const prf = new metrics.PrecisionRecallF1({ average: "binary" });
    rt.noGrad(() => {
      for (const b of testLoader) {
        const preds = model.call(b.inputIds, { attentionMask: b.attentionMask }).logits.argmax(-1);
        acc.update(preds, b.labels!);
        prf.update(preds, b.labels!);
      }
    });
    model.train();
    const accuracy = acc.compute();
    const { f1, precision, recall } = prf.compute();
    say(rank, `epoch ${epoch} | test accuracy ${accuracy.toFixed(4)} | F1 ${f1.toFixed(4)} (precision ${precision.toFixed(4)}, recall ${recall.toFixed(4)}) on ${test.length} records`);
    if (f1 > best) {
      best = f1;
      if (rank === 0) {
        model.savePretrained(join(runDir, "best"));
        tok.save(join(runDir, "best", "tokenizer.json"));
        say(rank, `epoch ${epoch} | best F1 so far: saved ${join(runDir, "best")}`);
      }
    }
    await checkpoint.save(ckptDir, { model, optimizer, scheduler, epoch: epoch + 1, batch: 0, bestF1: best }, { step, keepLast: 2 });
  }
  dist.destroyProcessGroup();
}

await main();
