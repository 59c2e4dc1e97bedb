// node --no-node-snapshot --import tsx --conditions=source bench/soak.ts [--model mlp|gpt] [--steps 10000] [--threads 1]
//
// Steady-state memory over a long run (not CI), nothing released by hand. `--model mlp` (the
// default): a small MLP (256-512-512-10, Adam, batch 64) with an evaluation forward under noGrad
// and some inference-style ops whose results are dropped (softmax, layer norm, a sum read back with
// item()). `--model gpt`: a small GPT (2 pre-norm layers, d=128, 4 heads, seq 64, vocab 4096,
// batch 4, AdamW), whose activations live across a step and die in V8's old generation, so only
// the arena's full collections give them back. Every tenth of the way it prints the resident
// memory, the arena's counters and the most memory JavaScript held during that tenth. Memory must
// stay flat: from the second tenth (after warm-up) to the last, RSS and the tenth's held high-water
// mark may grow by at most 10%. Exits 1 when either drifts past that bound, so that a run by hand
// says plainly whether memory leaked.
import { crossEntropy, layerNorm, manualSeed, memoryPool, noGrad, randint, randn } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { GPT } from "./gpt.js";
import { setThreads } from "./mlp.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const MODEL = option("--model", "mlp");
if (MODEL !== "mlp" && MODEL !== "gpt") throw new Error(`soak: --model must be mlp or gpt, got ${MODEL}`);
const STEPS = Number(option("--steps", MODEL === "gpt" ? "2000" : "10000"));
setThreads(Number(option("--threads", "1")));

const [V, D, H, L, T, B] = [4096, 128, 4, 2, 64, 4];

/** One training step of the chosen model; returns a number read back from it (a checksum). */
function makeStep(): { describe: string; step: () => number } {
  manualSeed(0);
  if (MODEL === "gpt") {
    const model = new GPT({ vocab: V, dim: D, heads: H, layers: L, context: T });
    const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
    const idx = randint(0, V, [B, T]);
    const tgt = randint(0, V, [B, T]).reshape([-1]);
    return {
      describe: `GPT (${L} layers, d=${D}, seq ${T}, vocab ${V}, batch ${B}, AdamW)`,
      step: () => {
        opt.zeroGrad();
        const loss = crossEntropy(model.call(idx).reshape([-1, V]), tgt);
        loss.backward();
        opt.step();
        return loss.item();
      },
    };
  }
  const model = new nn.Sequential(new nn.Linear(256, 512), new nn.ReLU(), new nn.Linear(512, 512), new nn.ReLU(), new nn.Linear(512, 10));
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const lossFn = new nn.CrossEntropyLoss();
  const x = randn([64, 256]);
  const y = randint(0, 10, [64]);
  return {
    describe: "MLP 256-512-512-10 training (Adam, batch 64) plus a noGrad evaluation",
    step: () => {
      opt.zeroGrad();
      lossFn.call(model.call(x), y).backward();
      opt.step();
      return noGrad(() => layerNorm(model.call(x).softmax(-1), [10]).sum().item());
    },
  };
}

const { describe, step } = makeStep();
const MiB = 2 ** 20;
const rows: (string | number)[][] = [];
const every = Math.max(1, Math.floor(STEPS / 10));
let checksum = 0;
const t0 = performance.now();
memoryPool.resetHighWater();
for (let i = 1; i <= STEPS; i++) {
  checksum += step();
  if (i % every === 0) {
    const s = memoryPool.stats();
    rows.push([i, process.memoryUsage().rss / MiB, s ? s.heldHighWater / MiB : NaN, s ? s.held / MiB : NaN, s ? s.free / MiB : NaN, s ? s.fresh / MiB : NaN, s ? s.collections : NaN, s ? s.fullCollections : NaN]);
    memoryPool.resetHighWater();
  }
}
const ms = (performance.now() - t0) / STEPS;
console.log(`soak: ${STEPS} steps of ${describe}, ${ms.toFixed(2)} ms/step (checksum ${checksum.toFixed(1)})`);
printTable(["step", "RSS MB", "held high-water MB", "arena held MB", "arena free MB", "ever fresh MB", "scavenges asked", "full collections asked"], rows);
if (rows.length >= 3) {
  // The first tenth is warm-up (the free lists fill, V8's heap grows to its working size).
  const [from, to] = [rows[1], rows[rows.length - 1]];
  for (const [column, name] of [[1, "RSS"], [2, "held high-water mark"]] as const) {
    const [a, b] = [from[column] as number, to[column] as number];
    const drift = b / a - 1;
    console.log(`${name} from step ${from[0]} to step ${to[0]}: ${a.toFixed(0)} → ${b.toFixed(0)} MB (${(100 * drift).toFixed(1)}%; bound 10%)`);
    if (drift > 0.1) process.exitCode = 1;
  }
}
