// npx ringrun --standalone --nproc-per-node 2 examples/bert_classifier_trainer.ts --data fortunes:computers,politics --epochs 3
// node --import tsx --conditions=source examples/bert_classifier_trainer.ts --epochs 3      (one process: the same script, unchanged)
//
// Note 004 part II: the BERT sequence classifier of examples/bert_classifier.ts (the same flags,
// data, split, tokenizer and model: examples/lib/bert_task.ts) trained by ringtorch's Trainer.
// The script has no distributed code: under ringrun the Trainer joins the process group, wraps the
// model in DDP and shards the data. It evaluates and saves every epoch (runs/<name>/trainer/
// step_<n>/, the last two and the best kept), restores the checkpoint with the best F1 at the end
// and saves it in Hugging Face format (runs/<name>/best). Metrics go to runs/<name>/trainer/runs
// (JSONL). --resume latest continues from the newest checkpoint; after a crash under
// `ringrun --max-restarts N` it continues by itself.
import { join } from "node:path";
import * as rt from "ringtorch";
import { parseFlags, say } from "./lib/cli.js";
import { BERT_FLAGS, newModel, prepareTask } from "./lib/bert_task.js";
import { bertTrainer, bertTrainingArguments } from "./lib/bert_trainer.js";

const flags = parseFlags("bert_classifier_trainer", process.argv.slice(2), BERT_FLAGS);
const rank = Number(process.env.RANK ?? 0);
const task = await prepareTask(flags);
const model = newModel(flags, task);
say(rank, `bert_classifier_trainer: ${task.train.length} training / ${task.test.length} test records, vocab ${task.tok.getVocabSize()}, ${process.env.WORLD_SIZE ?? 1} rank(s)`);
const trainer = bertTrainer(task, model, bertTrainingArguments(flags, { loadBestModelAtEnd: true }), (line) => say(rank, line));
const result = await trainer.train(flags.resume ? { resumeFromCheckpoint: flags.resume === "latest" ? true : flags.resume } : {});
if (trainer.state.isWorldProcessZero) {
  const best = join(flags.runsDir, flags.experimentName, "best");
  model.savePretrained(best);
  task.tok.save(join(best, "tokenizer.json"));
  console.log(`trained ${result.globalStep} steps, train loss ${result.trainingLoss.toFixed(4)}; best F1 ${trainer.state.bestMetric?.toFixed(4)} (${trainer.state.bestModelCheckpoint}), saved ${best}`);
}
if (rt.dist.isInitialized()) await rt.dist.destroyProcessGroup();
