// One rank of test/trainer/bert_loops.test.ts, run as one process or under ringrun: the hand loop
// of examples/bert_classifier.ts and the Trainer of examples/bert_classifier_trainer.ts on the
// same real records (a committed sample of the fortune files), with a tiny BERT, from the same
// seed. Writes each rank's per-step losses and final weights to $LOOPS_OUT/rank_<r>.json.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "ringtorch";
import { BERT_FLAGS, handLoop, newModel, prepareTask } from "../../../examples/lib/bert_task.js";
import { bertTrainer, bertTrainingArguments } from "../../../examples/lib/bert_trainer.js";

const out = process.env.LOOPS_OUT!;
const flags = {
  ...BERT_FLAGS,
  data: new URL("../fixtures/fortunes_small.jsonl", import.meta.url).pathname,
  runsDir: out,
  maxLength: 24, hidden: 16, layers: 1, heads: 2, vocabSize: 150,
  batchSize: 4, lr: 2e-3, epochs: 2, warmup: 2, testSize: 0.25, maxTrain: 32, logFreq: 1, ckptFreq: 1000,
};
const weights = (m: rt.nn.Module) => Object.fromEntries(Object.entries(m.stateDict()).map(([k, t]) => [k, Array.from(t.data() as ArrayLike<number>)]));

await rt.dist.initProcessGroup();
const task = await prepareTask(flags);
const handModel = newModel(flags, task);
const hand = await handLoop({ ...flags, experimentName: "hand" }, task, handModel, () => {});

const model = newModel(flags, task);
const trainer = bertTrainer(task, model, bertTrainingArguments({ ...flags, experimentName: "trainer" }, { loadBestModelAtEnd: false }), () => {});
await trainer.train();
const trainerLosses = trainer.state.logHistory.filter((r) => "loss" in r).map((r) => r.loss);
const rank = rt.dist.getRank();
writeFileSync(join(out, `rank_${rank}.json`), JSON.stringify({ world: rt.dist.getWorldSize(), handLosses: hand.losses, trainerLosses, hand: weights(handModel), trainer: weights(model) }));
await rt.dist.destroyProcessGroup();
