// node --import tsx --conditions=source bench/cnn.ts [--runs 5] [--steps 20] [--batch 128] [--threads 1] [--no-peer]
//
// The Fashion-MNIST CNN of examples/fashion_mnist_cnn.ts (conv 3×3 32 → BN → ReLU → max-pool →
// conv 3×3 64 → BN → ReLU → max-pool → 128 → 10) trained with Adam on 28×28 inputs, one thread on
// each side (--threads): training samples/s of ringtorch and of the strongest PyTorch here
// (bench/peer.ts; bench/torch/cnn.py, the same network and protocol: 3 warm-up steps, then the
// median of `runs` timings of `steps` steps), with each side's peak resident memory.
import { pathToFileURL } from "node:url";
import { backendName, manualSeed, randint, randn } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { fashionCnn } from "../examples/fashion_mnist_cnn.js";
import { median, printTable, setThreads, torchPeer, type Measured } from "./mlp.js";
import { peerScript } from "./peer.js";

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
  return { median: median(rates), max: Math.max(...rates), rssMb: process.resourceUsage().maxRSS / 1024 };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const threads = option("--threads", 1);
  setThreads(threads);
  const ours = ringtorch();
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : torchPeer(peerScript("cnn.py"), threads, ["--runs", String(runs), "--steps", String(steps), "--batch", String(batch)]);
  console.log(`\nFashion-MNIST CNN (2 conv + BN + max-pool, 28×28), Adam, batch ${batch}, ${threads} thread(s) (median of ${runs} runs of ${steps} steps)`);
  printTable("samples/s", ours, peer);
}
