// node --import tsx --conditions=source bench/dataparallel.ts [--threads 2] [--steps 30] [--runs 3] [--warmup 40] [--no-peer]
//
// nn.DataParallel in one process: training steps/s (forward, backward, SGD) of the MLP 784-1024-1024-10
// at batch 64 and of a small Transformer (2 encoder layers, d 64, 4 heads, sequence 32, batch 32),
// each run three ways on the same machine in this one run: one thread; intra-op threading with
// --threads kernel threads; DataParallel with --threads replicas (one kernel thread each). The
// ratios are over one thread. The target: DataParallel >= 1.6x one thread on 2 cores for
// the Transformer, whose many small operations intra-op threading cannot split. PyTorch (the
// strongest peer here, bench/torch/dataparallel.py) runs the same models with 1 and --threads
// intra-op threads (its DataParallel on CPU runs replicas one after another).
import { performance } from "node:perf_hooks";
import * as rt from "../src/index.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";

const { nn, optim } = rt;
type Tensor = rt.Tensor;
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const threads = option("--threads", 2);
const steps = option("--steps", 30);
const runs = option("--runs", 3);
// Each replica's thread has a JIT of its own: a worker's code runs optimized only after a few tens
// of steps (before that, its forward takes 2-3 times as long as the warmed main thread's), so every
// mode gets the same warm-up before it is timed.
const warmup = option("--warmup", 40);

interface Case {
  name: string;
  make(): { model: rt.nn.Module; x: Tensor; y: Tensor; lossFn: (o: Tensor, y: Tensor) => Tensor };
}

const cases: Case[] = [
  {
    name: "mlp",
    make: () => ({
      model: new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)),
      x: rt.randn([64, 784]),
      y: rt.randint(0, 10, [64]),
      lossFn: (o, y) => nn.functional.crossEntropy(o, y),
    }),
  },
  {
    name: "transformer",
    make: () => {
      const layer = () => new nn.TransformerEncoderLayer(64, 4, { dimFeedforward: 128, dropout: 0, activation: "gelu", batchFirst: true });
      return {
        model: new nn.Sequential(layer(), layer(), new nn.Linear(64, 16)),
        x: rt.randn([32, 32, 64]),
        y: rt.randint(0, 16, [32, 32]),
        lossFn: (o, y) => nn.functional.crossEntropy(o.reshape(-1, 16), y.reshape(-1)),
      };
    },
  },
];

/** Steps per second: the median of `runs` timings of `steps` steps, after warm-up. */
function measure(model: rt.nn.Module, run: rt.nn.Module, x: Tensor, y: Tensor, lossFn: (o: Tensor, y: Tensor) => Tensor): number {
  const opt = new optim.SGD(model.parameters(), { lr: 1e-3 });
  const step = () => {
    opt.zeroGrad();
    lossFn(run.call(x) as Tensor, y).backward();
    opt.step();
  };
  for (let i = 0; i < warmup; i++) step();
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step();
    rates.push((steps * 1000) / (performance.now() - t0));
  }
  return median(rates);
}

const results: Record<string, { one: number; intra: number; dp: number }> = {};
for (const c of cases) {
  rt.manualSeed(0);
  const { model, x, y, lossFn } = c.make();
  rt.setNumThreads(1);
  const one = measure(model, model, x, y, lossFn);
  rt.setNumThreads(threads);
  const intra = measure(model, model, x, y, lossFn);
  const dp = new nn.DataParallel(model, { threads });
  const dpRate = measure(model, dp, x, y, lossFn);
  await dp.close();
  results[c.name] = { one, intra, dp: dpRate };
}

let peer: Record<string, { one: number; intra: number }> | null = null;
if (!args.includes("--no-peer")) {
  const p = findPeer();
  console.log(describePeer(p, threads));
  if (typeof p !== "string") {
    const at = (n: number) => JSON.parse(peerOutput(runPeer(p, [peerScript("dataparallel.py"), String(n), String(steps), String(runs)], n), "dataparallel.py").trim().split("\n").pop()!) as Record<string, number>;
    const [one, intra] = [at(1), at(threads)];
    peer = Object.fromEntries(Object.keys(one).map((k) => [k, { one: one[k]!, intra: intra[k]! }]));
  }
}

console.log(`\ntraining steps/s, ${threads} threads (ratios over one thread of the same side; last column: ringtorch DataParallel over PyTorch's best)`);
printTable(
  ["model", "rt 1 thread", `rt intra-op ${threads}`, "ratio", `rt DataParallel ${threads}`, "ratio", "torch 1 thread", `torch intra-op ${threads}`, "ratio", "rt DP / torch best"],
  Object.entries(results).map(([name, r]) => {
    const p = peer?.[name];
    return [name, r.one, r.intra, r.intra / r.one, r.dp, r.dp / r.one, p?.one ?? NaN, p?.intra ?? NaN, p ? p.intra / p.one : NaN, p ? r.dp / Math.max(p.one, p.intra) : NaN];
  }),
);
