// Two ranks under `ringrun --trace` for test/track/trace.test.ts: a small DDP MLP with its
// reduction overlapped with backward and small buckets (several per step), fed by a DataLoader,
// stepped by SGD, and one checkpoint save. Rank r's clock is skewed by r·SKEW_US before the
// process group forms; each rank prints how far its aligned trace clock is from the true one.
// With FAIL_RANK=r, rank r throws after two steps.
import * as rt from "../../../src/index.js";
import { alignedTraceNow, setTraceClockSkewForTest } from "../../../src/track/trace/tracing.js";
import { traceNow } from "../../../src/util/trace.js";

const { nn, optim, data, dist, checkpoint } = rt;
const rank = Number(process.env.RANK);
setTraceClockSkewForTest(rank * Number(process.env.SKEW_US ?? 0));
await dist.initProcessGroup({ timeoutMs: 30_000 });

// On one host performance.timeOrigin + now() is the clock every process shares: the residual is
// what alignment left of the injected skew (rank 0's clock is the reference and has none).
let residual = Infinity;
for (let i = 0; i < 5; i++) {
  const r = alignedTraceNow() - traceNow();
  if (Math.abs(r) < Math.abs(residual)) residual = r;
}
console.log(`RESIDUAL ${rank} ${residual}`);

rt.manualSeed(0);
const model = new nn.Sequential(new nn.Linear(32, 256), new nn.ReLU(), new nn.Linear(256, 256), new nn.ReLU(), new nn.Linear(256, 8));
const ddp = new rt.DDP(model, { bucketCapMb: 0.1, overlapReduction: true });
const opt = new optim.SGD(ddp.parameters(), { lr: 0.01 });
const g = new rt.Generator(rank);
const dataset = new data.TensorDataset(rt.randn([64, 32], { generator: g }), rt.randn([64, 8], { generator: g }));
let step = 0;
for (const [x, y] of new data.DataLoader(dataset, { batchSize: 16 })) {
  if (rank === Number(process.env.FAIL_RANK) && step === 2) throw new Error("trace test: this rank fails after two steps");
  opt.zeroGrad();
  rt.mseLoss(ddp.call(x), y).backward();
  opt.step();
  step++;
}
await checkpoint.save(process.env.CKPT_DIR!, { model }, { step: 1 });
await dist.destroyProcessGroup();
