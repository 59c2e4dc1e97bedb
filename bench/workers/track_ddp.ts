// One rank of bench/track.ts (started by ringrun): the DDP MLP of bench/ddp.ts (784-1024-1024-10,
// Adam, batch 64 per rank) in turns without anything, with logging 10 scalars per step to a run
// (JSONL, TensorBoard events and the system sampler all on), and with the timeline traced
// (track.startTrace: what ringrun --trace turns on), so that all three see the same machine.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../src/index.js";

const { nn, optim, dist, track } = rt;
const STEPS = Number(process.env.STEPS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const B = 64;

await dist.initProcessGroup();
const rank = dist.getRank();
const dir = mkdtempSync(join(tmpdir(), "ringtorch-bench-track-"));
const run = track.init({ id: "bench", dir, config: { batchSize: B }, systemMetrics: { samplesPerStep: B } });
const x = rt.randn([B, 784]);
const y = rt.randint(0, 10, [B]);
rt.manualSeed(0);
const model = new rt.DDP(new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)));
const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
let step = 0;
const train = (log: boolean) => {
  opt.zeroGrad(true);
  const loss = rt.crossEntropy(model.call(x) as rt.Tensor, y);
  loss.backward();
  opt.step();
  if (log) {
    const v = loss.item();
    const metrics: Record<string, number> = {};
    for (let k = 0; k < 10; k++) metrics[`metric_${k}`] = v + k;
    run.log(metrics, { step: step++ });
  }
};
for (let i = 0; i < 20; i++) train(i % 2 === 0);
const ms: { plain: number[]; logged: number[]; traced: number[] } = { plain: [], logged: [], traced: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of ["plain", "logged", "traced"] as const) {
    if (mode === "traced") track.startTrace(join(dir, "trace"));
    dist.barrier();
    const t0 = performance.now();
    for (let i = 0; i < STEPS; i++) train(mode === "logged");
    dist.barrier();
    ms[mode].push((performance.now() - t0) / STEPS);
    // Closing the file is part of tracing's cost: it is paid inside the next turn's barrier, not timed.
    if (mode === "traced") track.stopTrace();
  }
}
// The bare cost of a log call of 10 scalars, apart from training.
const t0 = performance.now();
const N = 2000;
for (let i = 0; i < N; i++) {
  const metrics: Record<string, number> = {};
  for (let k = 0; k < 10; k++) metrics[`metric_${k}`] = i * 0.001 + k;
  run.log(metrics, { step: step++ });
}
const log10Us = ((performance.now() - t0) / N) * 1000;
run.finish();
if (rank === 0) console.log("RESULT " + JSON.stringify({ ms, log10Us }));
rmSync(dir, { recursive: true, force: true });
dist.destroyProcessGroup();
