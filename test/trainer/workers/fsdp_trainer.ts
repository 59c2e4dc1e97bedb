// One rank of test/trainer/fsdp.test.ts. The same Trainer script trains with DDP and with each
// fsdp option (the Classifier's Linear layers as units of their own, so that a step gathers and
// reduce-scatters several units), accumulating two micro-batches under noSync and evaluating an
// uneven split every epoch; then a full_shard run resumes from its own mid-epoch sharded
// checkpoint. Each strategy run saves every epoch and restores the best by a scripted score (the
// first epoch's), so that its final weights are those of a checkpoint it loaded back. Prints
// RESULT {...} with the losses, evaluations and full weights of each.
import { join } from "node:path";
import * as rt from "../../../src/index.js";
import { Classifier, dataset } from "../fixtures/classifier.js";

const { Trainer, TrainingArguments } = rt;
const out = process.env.TRAINER_OUT!;
const ds = dataset(32);
const evalDs = dataset(13, 3);

function args(name: string, fsdp: rt.trainer.FsdpOption | "", extra: Partial<rt.trainer.TrainingArgumentsOptions> = {}) {
  return new TrainingArguments({
    outputDir: join(out, name), perDeviceTrainBatchSize: 2, gradientAccumulationSteps: 2, perDeviceEvalBatchSize: 2, learningRate: 0.02,
    weightDecay: 0.01, warmupSteps: 2, numTrainEpochs: 2, loggingSteps: 1, evalStrategy: "epoch", saveStrategy: "no", disableTqdm: true,
    fsdp, ...(fsdp ? { fsdpConfig: { transformerLayerClsToWrap: ["Linear"] } } : {}), ...extra,
  });
}

/** The whole model's weights on every rank: FSDP's are gathered unit by unit to rank 0, then broadcast. */
function fullWeights(model: rt.nn.Module, sharded: boolean): number[] {
  const sd = sharded ? rt.parallel.fsdp.fullStateDict(model) : model.stateDict();
  const names = Object.keys(model.stateDict());
  // Ranks other than 0 get no full state: they receive as many numbers as an unsharded Classifier has.
  const total = Object.values(new Classifier().stateDict()).reduce((n, t) => n + t.numel, 0);
  const flat = rt.dist.getRank() === 0 ? rt.cat(names.map((n) => sd[n].reshape([-1]))) : rt.zeros([total]);
  rt.dist.broadcast(flat, 0);
  return Array.from(flat.data() as ArrayLike<number>);
}

async function run(name: string, fsdp: rt.trainer.FsdpOption | "", extra: Partial<rt.trainer.TrainingArgumentsOptions> = {}, resumeFromCheckpoint?: string) {
  rt.manualSeed(resumeFromCheckpoint ? 9 : 0);
  const model = new Classifier();
  let evaluation = 0;
  const firstEpochBest = () => ({ score: evaluation++ === 0 ? 0.9 : 0.5 });
  const trainer = new Trainer({ model, args: args(name, fsdp, extra), trainDataset: ds, evalDataset: evalDs, computeMetrics: firstEpochBest });
  await trainer.train(resumeFromCheckpoint ? { resumeFromCheckpoint } : {});
  const logs = trainer.state.logHistory;
  return {
    losses: logs.filter((r) => "loss" in r).map((r) => r.loss),
    gradNorms: logs.filter((r) => "grad_norm" in r).map((r) => r.grad_norm),
    evalLosses: logs.filter((r) => "eval_loss" in r).map((r) => r.eval_loss),
    weights: fullWeights(model, fsdp !== ""),
  };
}

const keepBest = { saveStrategy: "epoch", loadBestModelAtEnd: true, metricForBestModel: "score" } as const;
const ddp = await run("ddp", "", keepBest);
const strategies: Record<string, Awaited<ReturnType<typeof run>>> = {};
for (const s of ["full_shard", "shard_grad_op", "no_shard", "hybrid_shard"] as const) strategies[s] = await run(s, s, keepBest);
const lastEpoch = await run("last", "full_shard");
const straight = await run("straight", "full_shard", { saveStrategy: "steps", saveSteps: 3 });
const resumed = await run("resumed", "full_shard", {}, join(out, "straight", "step_00000003"));
console.log("RESULT " + JSON.stringify({ rank: rt.dist.getRank(), ddp, strategies, lastEpoch, straight, resumed }));
await rt.dist.destroyProcessGroup();
