// One rank of `bench/cnn.ts --ranks N` (started by ringrun): the Fashion-MNIST CNN under
// DistributedDataParallel, each rank on batch/N samples of a global batch, Adam; rank 0 prints
// RESULT {"rates": [...]}: total samples/s over all ranks per run (a barrier before and after);
// every rank prints its own peak RSS (bench/rss.ts).
import * as rt from "../../src/index.js";
import { fashionCnn } from "../../examples/fashion_mnist_cnn.js";
import { printPeakRss } from "../rss.js";

const { nn, optim, dist } = rt;
const RUNS = Number(process.env.RUNS ?? 5);
const STEPS = Number(process.env.STEPS ?? 20);
const BATCH = Number(process.env.BATCH ?? 128);

await dist.initProcessGroup({ timeoutMs: 120_000 });
const world = dist.getWorldSize();
const local = BATCH / world;
rt.manualSeed(0);
const model = new rt.DDP(fashionCnn());
const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
const lossFn = new nn.CrossEntropyLoss();
const x = rt.randn([local, 1, 28, 28]);
const y = rt.randint(0, 10, [local]);
const step = () => {
  opt.zeroGrad();
  lossFn.call(model.call(x) as rt.Tensor, y).backward();
  opt.step();
};
for (let i = 0; i < 3; i++) step();
const rates: number[] = [];
for (let r = 0; r < RUNS; r++) {
  dist.barrier();
  const t0 = performance.now();
  for (let i = 0; i < STEPS; i++) step();
  dist.barrier();
  rates.push((STEPS * local * world) / ((performance.now() - t0) / 1000));
}
if (dist.getRank() === 0) console.log("RESULT " + JSON.stringify({ rates }));
printPeakRss(dist.getRank());
dist.destroyProcessGroup();
