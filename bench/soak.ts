// node --import tsx --conditions=source bench/soak.ts [--steps 10000] [--threads 1]
//
// Steady-state memory over a long run (not CI): `steps` training steps of a small MLP
// (256-512-512-10, Adam, batch 64) with an evaluation forward under noGrad and some inference-style
// ops whose results are dropped (softmax, layer norm, a sum read back with item()), nothing released
// by hand. Every tenth of the way it prints the resident memory and the arena's counters. Memory
// must stay flat: the last row's RSS within 10% of the row after the first tenth (warm-up), and
// `ever fresh` must stop growing faster than the few MB a loop's free lists turn over. Exits 1 when
// RSS drifts past that bound, so that a run by hand says plainly whether memory leaked.
import { layerNorm, manualSeed, memoryPool, noGrad, randint, randn } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { setThreads } from "./mlp.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const STEPS = option("--steps", 10_000);
setThreads(option("--threads", 1));

manualSeed(0);
const model = new nn.Sequential(new nn.Linear(256, 512), new nn.ReLU(), new nn.Linear(512, 512), new nn.ReLU(), new nn.Linear(512, 10));
const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
const lossFn = new nn.CrossEntropyLoss();
const x = randn([64, 256]);
const y = randint(0, 10, [64]);
const MiB = 2 ** 20;
const rows: (string | number)[][] = [];
const every = Math.max(1, Math.floor(STEPS / 10));
let lossSum = 0;
const t0 = performance.now();
for (let i = 1; i <= STEPS; i++) {
  opt.zeroGrad();
  const loss = lossFn.call(model.call(x), y);
  loss.backward();
  opt.step();
  noGrad(() => {
    const logits = model.call(x);
    lossSum += layerNorm(logits.softmax(-1), [10]).sum().item();
  });
  if (i % every === 0) {
    const s = memoryPool.stats();
    rows.push([i, process.memoryUsage().rss / MiB, s ? s.held / MiB : NaN, s ? s.free / MiB : NaN, s ? s.fresh / MiB : NaN, s ? s.collections : NaN]);
  }
}
const ms = (performance.now() - t0) / STEPS;
console.log(`soak: ${STEPS} steps of MLP 256-512-512-10 training (Adam, batch 64) plus a noGrad evaluation, ${ms.toFixed(2)} ms/step (checksum ${lossSum.toFixed(1)})`);
printTable(["step", "RSS MB", "arena held MB", "arena free MB", "ever fresh MB", "scavenges asked"], rows);
if (rows.length >= 2) {
  const [first, last] = [rows[0][1] as number, rows[rows.length - 1][1] as number];
  const drift = last / first - 1;
  console.log(`RSS from step ${rows[0][0]} to step ${rows[rows.length - 1][0]}: ${first.toFixed(0)} → ${last.toFixed(0)} MB (${(100 * drift).toFixed(1)}%; bound 10%)`);
  if (drift > 0.1) process.exitCode = 1;
}
