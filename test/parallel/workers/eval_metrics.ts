// One rank of test/parallel/metrics.test.ts: distributed evaluation with an evaluation-mode
// DistributedSampler must give exactly the one-process accuracy and mean loss.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as rt from "../../../src/index.js";

const { dist, data, parallel } = rt;
await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
const N = 13;
const g = new rt.Generator(7);
const x = rt.randn([N, 4], { generator: g });
const y = rt.randint(0, 3, [N], { generator: g });
rt.manualSeed(0);
const model = new rt.nn.Linear(4, 3);

const predict = (idx: number[]) => {
  const logits = model.call(x.indexSelect(0, idx));
  const labels = y.indexSelect(0, idx);
  return { correct: logits.argmax(1).eq(labels).sum().item(), loss: rt.crossEntropy(logits, labels, { reduction: "sum" }).item() };
};
const all = Array.from({ length: N }, (_, i) => i);
const single = predict(all);

const evalIdx = [...new data.DistributedSampler(N, { evaluation: true })];
const mine = evalIdx.length ? predict(evalIdx) : { correct: 0, loss: 0 };
const acc = parallel.globalAccuracy(mine.correct, evalIdx.length);
const meanLoss = parallel.allReduceMean(evalIdx.length ? mine.loss / evalIdx.length : 0, evalIdx.length);

// A padding sampler would count some samples twice: show that it differs here.
const padded = [...new data.DistributedSampler(N, { shuffle: false })];
const paddedTotal = parallel.allReduceSum([padded.length])[0];

const dir = `/tmp/ringtorch-rank0first-${process.env.MASTER_PORT}`;
const seen = await parallel.rank0First(() => {
  if (rank === 0) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/prepared`, "ok");
  }
  const ok = existsSync(`${dir}/prepared`);
  // The others finish late: rank 0 must still not return before their files exist (the second barrier).
  if (rank !== 0) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    writeFileSync(`${dir}/done_${rank}`, "ok");
  }
  return ok;
});
const othersDone = rank !== 0 || Array.from({ length: dist.getWorldSize() - 1 }, (_, i) => existsSync(`${dir}/done_${i + 1}`)).every(Boolean);
dist.barrier();
if (rank === 0) rmSync(dir, { recursive: true, force: true });

console.log("RESULT " + JSON.stringify({ acc, single, meanLoss, singleMeanLoss: single.loss / N, paddedTotal, seen, othersDone }));
dist.destroyProcessGroup();
