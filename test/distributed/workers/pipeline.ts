// One rank of test/distributed/pipeline.test.ts (4 ranks). Every case is checked against the
// unsplit model run on this one process from the same weights: outputs, loss, and the gradient of
// every parameter this rank holds. Prints RESULT {failures, cases, errors}.
import * as rt from "../../../src/index.js";

const { nn, dist } = rt;
const { pipelining } = dist;
const F = dist.nn.functional;
type Tensor = rt.Tensor;

await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
const failures: string[] = [];
const errors: Record<string, string | null> = {};
let cases = 0;

function model(): rt.nn.Sequential {
  rt.manualSeed(1234);
  return new nn.Sequential(new nn.Linear(6, 8), new nn.Tanh(), new nn.Linear(8, 8), new nn.ReLU(), new nn.Linear(8, 5), new nn.Tanh(), new nn.Linear(5, 3));
}

function batch(n: number): { x: Tensor; y: Tensor } {
  rt.manualSeed(99);
  return { x: rt.randn([n, 6]), y: rt.randn([n, 3]) };
}

function close(what: string, got: Tensor | null | undefined, want: Tensor | null | undefined, tol = 1e-5): void {
  cases++;
  if (!got || !want) {
    failures.push(`${what}: ${got ? "" : "got none"} ${want ? "" : "want none"}`);
    return;
  }
  const a = got.toArray() as unknown;
  const b = want.toArray() as unknown;
  const fa = [a].flat(Infinity) as number[];
  const fb = [b].flat(Infinity) as number[];
  if (fa.length !== fb.length) return void failures.push(`${what}: ${fa.length} values, want ${fb.length}`);
  const worst = fa.reduce((m, v, i) => Math.max(m, Math.abs(v - fb[i]!) / Math.max(1, Math.abs(fb[i]!))), 0);
  if (!(worst <= tol)) failures.push(`${what}: off by ${worst}`);
}

/** The unsplit model on this process: output, loss and every parameter's gradient. */
function reference(n: number, reduction: "mean" | "sum") {
  const m = model();
  const { x, y } = batch(n);
  const out = m.call(x) as Tensor;
  const loss = nn.functional.mseLoss(out, y, { reduction });
  loss.backward();
  const grads = new Map([...m.namedParameters()].map(([name, p]) => [name, p.grad!.clone()]));
  return { out: out.detach(), loss: loss.detach(), grads };
}

/** inputGradientFirst false: each backward whole, its weight gradients before the gradient it sends (the schedules' default sends first). */
function pipelineCase(ranks: number[], splitPoints: string[], kind: "gpipe" | "1f1b", n: number, m: number, reduction: "mean" | "sum", inputGradientFirst = true): void {
  const group = dist.newGroup(ranks);
  if (!ranks.includes(rank)) return;
  const name = `${ranks.length} stages ${kind} batch ${n} in ${m} (${reduction}${inputGradientFirst ? "" : ", whole backward"})`;
  const ref = reference(n, reduction);
  const pipe = pipelining.pipeline(model(), { splitPoints });
  const s = ranks.indexOf(rank);
  const stage = pipe.buildStage(s, { group });
  const Schedule = kind === "gpipe" ? pipelining.ScheduleGPipe : pipelining.Schedule1F1B;
  const schedule = new Schedule(stage, { nMicrobatches: m, lossFn: (o, t) => nn.functional.mseLoss(o, t, { reduction }), lossScaling: reduction, inputGradientFirst });
  const { x, y } = batch(n);
  const losses: Tensor[] = [];
  const out = stage.isFirst ? schedule.step(x) : stage.isLast ? schedule.step({ target: y, losses }) : schedule.step();
  if (stage.isLast) {
    close(`${name}: output`, out, ref.out);
    // "mean" weighs each micro-batch's mean loss by its share of the batch (sizes as tensor_split).
    const weight = (mb: number) => (reduction === "mean" ? (Math.floor(n / m) + (mb < n % m ? 1 : 0)) / n : 1);
    close(`${name}: loss`, rt.tensor(losses.reduce((acc, l, mb) => acc + l.item() * weight(mb), 0)), ref.loss);
    cases++;
    if (losses.length !== m) failures.push(`${name}: ${losses.length} micro-batch losses, want ${m}`);
  }
  for (const [pname, p] of pipe.getStageModule(s).namedParameters()) close(`${name}: grad of ${pname} on stage ${s}`, p.grad, ref.grads.get(pname));
  const peak = schedule.lastTimeline!.peakMicrobatches;
  cases++;
  if (kind === "1f1b" ? peak > ranks.length - s : peak !== m) failures.push(`${name}: stage ${s} held ${peak} micro-batches at once`);
}

/**
 * Interleaved 1F1B on the ranks of `ranks`, each holding stages r, r + p, …: the model is split
 * into p * v stages. Against the unsplit model: output, loss, every gradient on every stage.
 */
function interleavedCase(ranks: number[], splitPoints: string[], n: number, m: number, reduction: "mean" | "sum"): void {
  const group = dist.newGroup(ranks);
  if (!ranks.includes(rank)) return;
  const p = ranks.length;
  const numStages = splitPoints.length + 1;
  const name = `interleaved ${numStages} stages on ${p} ranks batch ${n} in ${m} (${reduction})`;
  const ref = reference(n, reduction);
  const pipe = pipelining.pipeline(model(), { splitPoints });
  const r = ranks.indexOf(rank);
  const mine = Array.from({ length: numStages / p }, (_, i) => i * p + r);
  const stages = mine.map((s) => pipe.buildStage(s, { group }));
  const schedule = new pipelining.ScheduleInterleaved1F1B(stages, { nMicrobatches: m, lossFn: (o, t) => nn.functional.mseLoss(o, t, { reduction }), lossScaling: reduction });
  const { x, y } = batch(n);
  const losses: Tensor[] = [];
  const holdsFirst = mine.includes(0);
  const holdsLast = mine.includes(numStages - 1);
  const out = holdsFirst ? schedule.step(x) : holdsLast ? schedule.step({ target: y, losses }) : schedule.step();
  if (holdsLast) {
    close(`${name}: output`, out, ref.out);
    const weight = (mb: number) => (reduction === "mean" ? (Math.floor(n / m) + (mb < n % m ? 1 : 0)) / n : 1);
    close(`${name}: loss`, rt.tensor(losses.reduce((acc, l, mb) => acc + l.item() * weight(mb), 0)), ref.loss);
  }
  for (const s of mine) {
    for (const [pname, prm] of pipe.getStageModule(s).namedParameters()) close(`${name}: grad of ${pname} on stage ${s}`, prm.grad, ref.grads.get(pname));
  }
  // The order's own count of live micro-batches (PyTorch's order, checked on its own in pipeline.test.ts).
  const peak = schedule.lastTimeline!.peakMicrobatches;
  cases++;
  if (peak !== pipelining.peakInFlight(schedule.order())) failures.push(`${name}: held ${peak} micro-batches at once, the order holds ${pipelining.peakInFlight(schedule.order())}`);
}

/**
 * 2-D parallelism on 4 ranks: pipelines {0, 1} and {2, 3} each train on half of the batch; each
 * stage module is wrapped in DistributedDataParallel over its data-parallel group ({0, 2} for
 * stage 0, {1, 3} for stage 1), which averages the gradients of all micro-batches once, in the
 * stage's last backward. Against the unsplit model on the whole batch.
 */
function pipelineTimesData(kind: "gpipe" | "1f1b"): void {
  const pipes = [dist.newGroup([0, 1]), dist.newGroup([2, 3])];
  const replicas = [dist.newGroup([0, 2]), dist.newGroup([1, 3])];
  const n = 12;
  const name = `PP x DDP ${kind}`;
  const ref = reference(n, "mean");
  const replica = rank < 2 ? 0 : 1;
  const s = rank % 2;
  const pipe = pipelining.pipeline(model(), { splitPoints: ["3"] });
  const ddp = new rt.DDP(pipe.getStageModule(s), { processGroup: replicas[s] });
  const stage = new pipelining.PipelineStage(ddp, s, 2, { group: pipes[replica] });
  const Schedule = kind === "gpipe" ? pipelining.ScheduleGPipe : pipelining.Schedule1F1B;
  const schedule = new Schedule(stage, { nMicrobatches: 4, lossFn: (o, t) => nn.functional.mseLoss(o, t), lossScaling: "mean" });
  const { x, y } = batch(n);
  const shard = (t: Tensor) => t.narrow(0, replica * (n / 2), n / 2);
  const out = stage.isFirst ? schedule.step(shard(x)) : schedule.step({ target: shard(y) });
  if (stage.isLast) close(`${name}: output of replica ${replica}`, out, shard(ref.out));
  for (const [pname, p] of pipe.getStageModule(s).namedParameters()) close(`${name}: grad of ${pname} on stage ${s}`, p.grad, ref.grads.get(pname));
  // Only the last backward of the step synchronised: one launch record set, not one per micro-batch.
  cases++;
  if (ddp.launchRecords.length === 0) failures.push(`${name}: DDP reduced nothing`);
}

/**
 * Several steps of one schedule whose batch changes size between steps: a receiver posts each
 * activation's receive at the shape that micro-batch had the step before, before its header is in
 * (inbox.ts), so a step whose shapes changed takes the placeholder path. The stages' weights are
 * not stepped, so every step is checked against the unsplit model on its own batch.
 */
function changingBatchCase(ranks: number[], splitPoints: string[], kind: "1f1b" | "interleaved", sizes: number[], m: number): void {
  const group = dist.newGroup(ranks);
  if (!ranks.includes(rank)) return;
  const p = ranks.length;
  const numStages = splitPoints.length + 1;
  const pipe = pipelining.pipeline(model(), { splitPoints });
  const r = ranks.indexOf(rank);
  const mine = Array.from({ length: numStages / p }, (_, i) => i * p + r);
  const stages = mine.map((s) => pipe.buildStage(s, { group }));
  const lossFn = (o: Tensor, t: Tensor) => nn.functional.mseLoss(o, t);
  const schedule =
    kind === "interleaved"
      ? new pipelining.ScheduleInterleaved1F1B(stages, { nMicrobatches: m, lossFn, lossScaling: "mean" })
      : new pipelining.Schedule1F1B(stages[0]!, { nMicrobatches: m, lossFn, lossScaling: "mean" });
  sizes.forEach((n, step) => {
    const name = `${kind} on ${p} ranks, step ${step} of batches ${sizes.join(", ")} in ${m}`;
    const ref = reference(n, "mean");
    for (const s of mine) pipe.getStageModule(s).zeroGrad();
    const { x, y } = batch(n);
    const out = mine.includes(0) ? schedule.step(x) : mine.includes(numStages - 1) ? schedule.step({ target: y }) : schedule.step();
    if (mine.includes(numStages - 1)) close(`${name}: output`, out, ref.out);
    for (const s of mine) {
      for (const [pname, prm] of pipe.getStageModule(s).namedParameters()) close(`${name}: grad of ${pname} on stage ${s}`, prm.grad, ref.grads.get(pname));
    }
  });
}

/** Model parallelism by hand: layers 0-3 on rank 0, 4-6 on rank 1, autograd through send/recv. */
function byHand(): void {
  if (rank > 1) return;
  const n = 5;
  const ref = reference(n, "mean");
  const full = model();
  const { x, y } = batch(n);
  const mine = new nn.Sequential(...[...full.children()].slice(rank === 0 ? 0 : 4, rank === 0 ? 4 : 7));
  if (rank === 0) F.send(mine.call(x) as Tensor, 1).backward();
  else {
    const out = mine.call(F.recv([n, 8], 0)) as Tensor;
    nn.functional.mseLoss(out, y).backward();
    close("by hand: output", out, ref.out);
  }
  for (const [pname, p] of full.namedParameters()) {
    const index = Number(pname.split(".")[0]);
    if ((rank === 0) === index < 4) close(`by hand: grad of ${pname}`, p.grad, ref.grads.get(pname));
  }
}

function capture(key: string, fn: () => void): void {
  try {
    fn();
    errors[key] = null;
  } catch (error) {
    errors[key] = (error as Error).message;
  }
}

byHand();
pipelineCase([0, 1, 2], ["2", "4"], "gpipe", 10, 4, "mean");
pipelineCase([0, 1, 2], ["2", "4"], "1f1b", 10, 4, "mean");
pipelineCase([0, 1, 2], ["2", "4"], "1f1b", 10, 4, "mean", false);
pipelineCase([0, 1, 2], ["3", "6"], "1f1b", 9, 9, "sum");
pipelineCase([0, 1], ["3"], "gpipe", 7, 3, "mean");
pipelineCase([0, 1], ["3"], "1f1b", 7, 5, "sum");
interleavedCase([0, 1], ["2", "4", "6"], 10, 4, "mean");
interleavedCase([0, 1], ["2", "4", "6"], 7, 3, "sum");
interleavedCase([0, 1, 2], ["1", "2", "3", "4", "5"], 9, 3, "mean");
changingBatchCase([0, 1, 2], ["2", "4"], "1f1b", [10, 10, 7, 12, 12], 4);
changingBatchCase([0, 1], ["2", "4", "6"], "interleaved", [10, 9, 9, 10], 4);
pipelineTimesData("gpipe");
pipelineTimesData("1f1b");

// Bad input, last: a failed step leaves receives posted that later cases would match.
capture("missingSplit", () => pipelining.pipeline(model(), { splitPoints: ["9"] }));
const pair = dist.newGroup([0, 1]);
if (rank < 2) {
  const pipe = pipelining.pipeline(model(), { splitPoints: ["2", "4", "6"] });
  capture("interleavedRounds", () => {
    const stages = [rank, rank + 2].map((s) => pipe.buildStage(s, { group: pair }));
    return new pipelining.ScheduleInterleaved1F1B(stages, { nMicrobatches: 5, lossFn: (o, t) => nn.functional.mseLoss(o, t), lossScaling: "mean" });
  });
  capture("interleavedStages", () => {
    const stages = [pipe.buildStage(rank, { group: pair })];
    return new pipelining.ScheduleInterleaved1F1B(stages, { nMicrobatches: 4, lossFn: (o, t) => nn.functional.mseLoss(o, t), lossScaling: "mean" });
  });
}
if (rank < 2) {
  const pipe = pipelining.pipeline(model(), { splitPoints: ["3"] });
  const lossFn = (o: Tensor, t: Tensor) => nn.functional.mseLoss(o, t);
  const { x, y } = batch(4);
  capture("tooManyMicrobatches", () => {
    const stage = pipe.buildStage(rank, { group: pair });
    const schedule = new pipelining.ScheduleGPipe(stage, { nMicrobatches: 5, lossFn, lossScaling: "mean" });
    if (rank === 0) schedule.step(x);
    else schedule.step({ target: y });
  });
  capture("inputGradientFirst", () => new pipelining.Schedule1F1B(pipe.buildStage(rank, { group: pair }), { nMicrobatches: 2, lossFn, lossScaling: "mean", inputGradientFirst: "yes" as unknown as boolean }));
  capture("shapeMismatch", () => {
    // Stage 1 declares it takes 16 features per sample; stage 0 sends 8.
    const stage = pipe.buildStage(rank, { group: pair, inputShape: rank === 1 ? [16] : undefined });
    const schedule = new pipelining.Schedule1F1B(stage, { nMicrobatches: 1, lossFn, lossScaling: "mean" });
    if (rank === 0) schedule.step(x);
    else schedule.step({ target: y });
  });
}

console.log(`RESULT ${JSON.stringify({ failures, cases, errors })}`);
await dist.destroyProcessGroup();
