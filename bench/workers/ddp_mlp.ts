// One rank of bench/ddp.ts (started by ringrun): the peer's workload exactly (MLP 784-1024-1024-10,
// Adam, batch 64 per rank), trained three ways in the same processes:
//   ddp      DistributedDataParallel as a user gets it (overlapReduction "auto"), gradients
//            averaged across ranks every step;
//   overlap  the same with overlapReduction: true, buckets all-reduced on the comm thread while
//            backward goes on (what "auto" picks where a core is free for it);
//   noddp    the same model with no synchronisation at all (each rank runs at its own pace);
//   barrier  no gradient sync, but a barrier after every step: the cost of keeping ranks in
//            step on this machine, which any synchronous data parallelism pays.
//   serial   no DDP: one blocking all-reduce of every gradient after backward, then the step.
//            Nothing overlaps, so its cost is the floor above plus the all-reduce's own time.
// The configurations take turns in blocks of STEPS steps, ROUNDS times, so that a noisy machine
// (other tenants, a busy host) slows each of them alike instead of whichever ran in a bad minute.
import * as rt from "../../src/index.js";
import { overlapPays } from "../../src/parallel/overlap_policy.js";
import { printPeakRss } from "../rss.js";

const { nn, optim, dist } = rt;
const STEPS = Number(process.env.STEPS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const B = 64;
const ALL_MODES = ["ddp", "overlap", "noddp", "barrier", "serial"] as const;
type Mode = (typeof ALL_MODES)[number];
// MODES=ddp runs one configuration alone: its peak RSS is then that of one model, as in the peer's process.
const MODES = (process.env.MODES?.split(",") ?? ALL_MODES) as Mode[];
for (const m of MODES) if (!ALL_MODES.includes(m)) throw new Error(`bench/workers/ddp_mlp: MODES must list some of ${ALL_MODES.join(", ")}, got ${m}`);

await dist.initProcessGroup();
const world = dist.getWorldSize();
const x = rt.randn([B, 784]);
const y = rt.randint(0, 10, [B]);

function trainer(mode: Mode): () => void {
  rt.manualSeed(0);
  const mlp = new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10));
  const model: rt.nn.Module = mode === "ddp" ? new rt.DDP(mlp) : mode === "overlap" ? new rt.DDP(mlp, { overlapReduction: true }) : mlp;
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  return () => {
    opt.zeroGrad(true);
    rt.crossEntropy(model.call(x) as rt.Tensor, y).backward();
    if (mode === "serial") dist.allReduceCoalesced(model.parameters().map((p) => p.grad!), { op: "avg" });
    opt.step();
    if (mode === "barrier") dist.barrier();
  };
}

const steps = Object.fromEntries(MODES.map((m) => [m, trainer(m)])) as Record<Mode, () => void>;
for (const m of MODES) for (let i = 0; i < 20; i++) steps[m]();
const runs = Object.fromEntries(MODES.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
for (let r = 0; r < ROUNDS; r++) {
  for (const m of MODES) {
    dist.barrier();
    const t0 = performance.now();
    for (let i = 0; i < STEPS; i++) steps[m]();
    dist.barrier();
    runs[m].push((world * STEPS * B) / ((performance.now() - t0) / 1000));
  }
}
dist.barrier();
if (dist.getRank() === 0) console.log("RESULT " + JSON.stringify({ world, runs, autoOverlaps: overlapPays() }));
printPeakRss();
dist.destroyProcessGroup();
