// npx ringrun --standalone --nproc-per-node 2 examples/bert_classifier.ts --data fortunes:computers,politics --epochs 3
//
// Note 004: a BERT sequence classifier on a binary text task, trained by a hand-written loop (the
// same task with Hugging Face's Trainer: examples/bert_classifier_trainer.ts). --data is
// "fortunes:A,B" (fortune files A and B of /usr/share/games/fortunes, label 0 and 1: which file a
// quote came from) or a JSONL / CSV file with `text` and `label` columns. The records are split at
// random with a fixed seed; a WordPiece tokenizer is trained on the training part, or the one in
// --model DIR is used with that directory's Hugging Face BERT weights (a fresh classifier head when
// the file has none). The loop (examples/lib/bert_task.ts): DDP with a DistributedSampler, AdamW
// without decay on biases and LayerNorm weights, linear warmup, gradients clipped to norm 1; after
// each epoch every rank evaluates its share of the test split (no padded duplicates) and accuracy
// and F1 are summed across ranks; the model with the best F1 is kept in Hugging Face format
// (runs/<name>/best, savePretrained), and a training checkpoint is written every --ckpt-freq steps;
// --resume latest continues. A multinomial naive-Bayes baseline on the same split and tokens is
// printed first.
import * as rt from "ringtorch";
import { parseFlags, say } from "./lib/cli.js";
import { naiveBayes } from "./lib/naive_bayes.js";
import { BERT_FLAGS, handLoop, newModel, prepareTask, scores } from "./lib/bert_task.js";

const { dist } = rt;

const flags = parseFlags("bert_classifier", process.argv.slice(2), BERT_FLAGS);

async function main(): Promise<void> {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  const task = await prepareTask(flags);
  const { train, test, tok } = task;
  const model = newModel(flags, task);
  const positives = train.items.filter((r) => r.label === 1).length;
  say(rank, `bert_classifier: ${train.length} training (${positives} positive) / ${test.length} test records, vocab ${tok.getVocabSize()}, ${dist.getWorldSize()} rank(s)`);
  if (rank === 0) {
    const nb = naiveBayes(train.items, test.items, tok.getVocabSize());
    const s = scores(nb, test.items.map((r) => r.label), false);
    say(rank, `naive-Bayes baseline (same split, same tokens) | test accuracy ${s.accuracy.toFixed(4)} | F1 ${s.f1.toFixed(4)}`);
  }
  await handLoop(flags, task, model, (line) => say(rank, line));
  dist.destroyProcessGroup();
}

await main();
