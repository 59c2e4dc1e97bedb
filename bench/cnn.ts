// node --import tsx --conditions=source bench/cnn.ts [--runs 5] [--steps 20] [--batch 128] [--threads 1] [--ranks 2] [--no-peer]
//
// The Fashion-MNIST CNN of examples/fashion_mnist_cnn.ts (conv 3×3 32 → BN → ReLU → max-pool →
// conv 3×3 64 → BN → ReLU → max-pool → 128 → 10) trained with Adam on 28×28 inputs, one thread on
// each side (--threads): training samples/s of ringtorch and of the strongest PyTorch here
// (bench/peer.ts; bench/torch/cnn.py, the same network and protocol: 3 warm-up steps, then the
// median of `runs` timings of `steps` steps), with each side's peak resident memory. With
// --ranks N, both sides train with DDP on N processes of one thread each (ringrun and
// bench/workers/cnn_ddp.ts; PyTorch's DDP over gloo), the global batch split over the ranks, and
// the figures are total samples/s, with each rank's own peak memory.
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { backendName, manualSeed, randint, randn } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { fashionCnn } from "../examples/fashion_mnist_cnn.js";
import { median, printTable, setThreads, torchPeer, type Measured } from "./mlp.js";
import { peerScript } from "./peer.js";
import { parseRankRss } from "./rss.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const runs = option("--runs", 5);
const steps = option("--steps", 20);
const batch = option("--batch", 128);

function ringtorch(): Measured {
  manualSeed(0);
  const model = fashionCnn();
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const lossFn = new nn.CrossEntropyLoss();
  const x = randn([batch, 1, 28, 28]);
  const y = randint(0, 10, [batch]);
  const step = () => {
    opt.zeroGrad();
    const loss = lossFn.call(model.call(x), y);
    loss.backward();
    opt.step();
  };
  for (let i = 0; i < 3; i++) step();
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step();
    rates.push((steps * batch) / ((performance.now() - t0) / 1000));
  }
  console.log(`ringtorch (${backendName()} backend) samples/s runs=[${rates.map(Math.round).join(", ")}]`);
  return { median: median(rates), max: Math.max(...rates), rssMb: [process.resourceUsage().maxRSS / 1024] };
}

/** The same training under ringrun and DDP on `ranks` one-thread processes. */
function ringtorchRanks(ranks: number): Measured {
  const out = execFileSync(process.execPath, ["bin/ringrun.js", "--standalone", "--nproc-per-node", String(ranks), "bench/workers/cnn_ddp.ts"], {
    env: { ...process.env, RINGTORCH_NUM_THREADS: "1", RUNS: String(runs), STEPS: String(steps), BATCH: String(batch) },
  }).toString();
  const line = out.split("\n").find((l) => l.includes("RESULT "));
  if (!line) throw new Error(`bench/cnn: no result from the ringtorch ranks:\n${out}`);
  const { rates } = JSON.parse(line.slice(line.indexOf("RESULT ") + 7)) as { rates: number[] };
  console.log(`ringtorch DDP ${ranks} ranks total samples/s runs=[${rates.map(Math.round).join(", ")}]`);
  return { median: median(rates), max: Math.max(...rates), rssMb: parseRankRss(out) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ranks = option("--ranks", 1);
  const threads = ranks > 1 ? 1 : option("--threads", 1);
  if (!Number.isInteger(ranks) || ranks < 1 || batch % ranks !== 0) throw new Error(`bench/cnn: --ranks must be a positive integer dividing --batch ${batch}, got ${ranks}`);
  setThreads(threads);
  const ours = ranks > 1 ? ringtorchRanks(ranks) : ringtorch();
  const peerArgs = ["--runs", String(runs), "--steps", String(steps), "--batch", String(batch), "--ranks", String(ranks)];
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : torchPeer(peerScript("cnn.py"), threads, peerArgs);
  const setup = ranks > 1 ? `DDP on ${ranks} ranks of 1 thread, global batch ${batch}` : `batch ${batch}, ${threads} thread(s)`;
  console.log(`\nFashion-MNIST CNN (2 conv + BN + max-pool, 28×28), Adam, ${setup} (median of ${runs} runs of ${steps} steps)`);
  printTable("samples/s", ours, peer);
}
