// One rank of bench/ddp.ts (started by ringrun): the peer's workload exactly — MLP 784-1024-1024-10,
// Adam, batch 64 per rank — with DDP ("ddp") or the same processes without synchronisation ("noddp").
import * as rt from "../../src/index.js";

const { nn, optim, dist } = rt;
const MODE = process.argv[2] ?? "ddp";
const STEPS = Number(process.env.STEPS ?? 200);
const RUNS = Number(process.env.RUNS ?? 5);
const B = 64;

await dist.initProcessGroup();
const world = dist.getWorldSize();
rt.manualSeed(0);
const mlp = new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10));
const model: rt.nn.Module = MODE === "ddp" ? new rt.DDP(mlp) : mlp;
const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
const x = rt.randn([B, 784]);
const y = rt.randint(0, 10, [B]);
const step = () => {
  opt.zeroGrad(true);
  rt.crossEntropy(model.call(x) as rt.Tensor, y).backward();
  opt.step();
};
for (let i = 0; i < 20; i++) step();
const res: number[] = [];
for (let r = 0; r < RUNS; r++) {
  dist.barrier();
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) step();
  dist.barrier();
  res.push((world * STEPS * B) / ((performance.now() - t0) / 1000));
}
if (dist.getRank() === 0) console.log("RESULT " + JSON.stringify({ mode: MODE, world, runs: res, rssMb: process.memoryUsage().rss / 2 ** 20 }));
dist.destroyProcessGroup();
