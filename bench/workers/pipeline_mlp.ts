// One rank of bench/pipeline.ts (started by ringrun, or alone with no RANK for the unsplit model):
// a deep MLP (LAYERS blocks of Linear(D, D) + ReLU, then Linear(D, 10)) trained with SGD on a
// fixed batch of B samples, split in the middle into one stage per rank and run by SCHEDULE
// ("gpipe" | "1f1b") over MICROBATCHES micro-batches. Prints RESULT with samples/s per run, the
// schedule's measured bubble fraction (median over the timed steps) beside the ideal (p-1)/(m+p-1),
// and the activation memory this rank held at its peak: the most tensor-arena bytes held during a
// step above what it held when the step began (the saved tensors of the micro-batches in flight).
import * as rt from "../../src/index.js";
import { median } from "../table.js";

const { nn, optim, dist } = rt;
const SCHEDULE = process.env.SCHEDULE ?? "1f1b";
const M = Number(process.env.MICROBATCHES ?? 4);
const [LAYERS, D, B] = [8, Number(process.env.WIDTH ?? 512), Number(process.env.BATCH ?? 256)];
const STEPS = Number(process.env.STEPS ?? 10);
const RUNS = Number(process.env.RUNS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 5);

rt.manualSeed(0);
const layers: rt.nn.Module[] = [];
for (let i = 0; i < LAYERS; i++) layers.push(new nn.Sequential(new nn.Linear(D, D), new nn.ReLU()));
const model = new nn.Sequential(...layers, new nn.Linear(D, 10));
const x = rt.randn([B, D]);
const y = rt.randn([B, 10]);
const lossFn = (out: rt.Tensor, target: rt.Tensor) => nn.functional.mseLoss(out, target);

const distributed = process.env.RANK !== undefined;
let step: () => void;
let timeline: () => rt.dist.pipelining.StepTimeline | null = () => null;
let ideal = 0;
if (!distributed) {
  const opt = new optim.SGD(model.parameters(), { lr: 1e-3 });
  step = () => {
    opt.zeroGrad();
    lossFn(model.call(x) as rt.Tensor, y).backward();
    opt.step();
  };
} else {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  const p = dist.getWorldSize();
  const splitPoints = Array.from({ length: p - 1 }, (_, i) => String(Math.floor(((i + 1) * LAYERS) / p)));
  const pipe = dist.pipelining.pipeline(model, { splitPoints });
  const stage = pipe.buildStage(rank);
  const Schedule = SCHEDULE === "gpipe" ? dist.pipelining.ScheduleGPipe : dist.pipelining.Schedule1F1B;
  const sched = new Schedule(stage, { nMicrobatches: M, lossFn, lossScaling: "mean" });
  const opt = new optim.SGD(pipe.getStageModule(rank).parameters(), { lr: 1e-3 });
  // Gradients stay allocated between steps (zeroed, not dropped), so a step's extra held bytes are its activations.
  step = () => {
    opt.zeroGrad(false);
    if (stage.isFirst) sched.step(x);
    else if (stage.isLast) sched.step({ target: y });
    else sched.step();
    opt.step();
  };
  timeline = () => sched.lastTimeline;
  ideal = sched.idealBubbleFraction();
}

for (let i = 0; i < WARMUP; i++) step();
const rates: number[] = [];
const bubbles: number[] = [];
let activationBytes = 0;
for (let r = 0; r < RUNS; r++) {
  if (distributed) dist.barrier();
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const before = rt.memoryPool.stats()?.held ?? 0;
    step();
    const t = timeline();
    if (t) {
      bubbles.push(t.bubbleFraction);
      for (const a of t.actions) activationBytes = Math.max(activationBytes, (a.heldBytes ?? 0) - before);
    }
  }
  if (distributed) dist.barrier();
  rates.push((STEPS * B) / ((performance.now() - t0) / 1000));
}
const rank = distributed ? dist.getRank() : 0;
console.log(
  "RESULT " +
    JSON.stringify({ schedule: distributed ? SCHEDULE : "unsplit", m: M, rank, rates, bubble: bubbles.length ? median(bubbles) : null, ideal, activationMb: activationBytes / 2 ** 20, rssMb: process.resourceUsage().maxRSS / 1024 }),
);
if (distributed) await dist.destroyProcessGroup();
