// node --import tsx --conditions=source bench/gpt.ts [--runs 5] [--steps 10] [--warmup 3] [--threads 1] [--no-peer]
//
// GPT-style causal LM as bench/torch/gpt.py builds it (4 pre-norm GELU encoder layers,
// d=256, 4 heads, seq 128, vocab 8192, batch 8, AdamW lr 3e-4, one thread): training tokens/s of
// ringtorch and of the strongest PyTorch here (bench/peer.ts), with the same protocol (3 warm-up steps, then the median of `runs`
// timings of `steps` steps), measured in this one run, with each side's peak resident memory.
// ringtorch's first ~15 steps run slower while its process maps fresh memory for every
// intermediate tensor (PyTorch's allocator starts warm); `--warmup 20` measures the steady state.
import { pathToFileURL } from "node:url";
import { arange, backendName, crossEntropy, manualSeed, randint, type Tensor } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { median, peerScript, printTable, setThreads, torchPeer, type Measured } from "./mlp.js";
import { describeNewSpace } from "./rss.js";

const [V, D, H, L, T, B] = [8192, 256, 4, 4, 128, 8];

/** The GPT's sizes: vocabulary, width, heads, layers, context (this bench's by default; bench/soak.ts uses a smaller one). */
export interface GptShape {
  vocab: number;
  dim: number;
  heads: number;
  layers: number;
  context: number;
}

export class GPT extends nn.Module {
  tok: nn.Embedding;
  pos: nn.Embedding;
  blocks: nn.TransformerEncoder;
  ln: nn.LayerNorm;
  head: nn.Linear;
  declare mask: Tensor;
  private readonly positions: Tensor;

  constructor({ vocab, dim, heads, layers, context }: GptShape = { vocab: V, dim: D, heads: H, layers: L, context: T }) {
    super();
    this.tok = new nn.Embedding(vocab, dim);
    this.pos = new nn.Embedding(context, dim);
    this.blocks = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(dim, heads, { dimFeedforward: 4 * dim, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true }), layers);
    this.ln = new nn.LayerNorm(dim);
    this.head = new nn.Linear(dim, vocab, { bias: false });
    this.positions = arange(context);
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(context));
  }

  override forward(idx: Tensor): Tensor {
    const x = this.tok.call(idx).add(this.pos.call(this.positions));
    return this.head.call(this.ln.call(this.blocks.call(x, { mask: this.mask })));
  }
}

function ringtorch(runs: number, steps: number, warmup: number): Measured {
  manualSeed(0);
  const model = new GPT();
  const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
  const idx = randint(0, V, [B, T]);
  const tgt = randint(0, V, [B, T]).reshape([-1]);
  const step = () => {
    opt.zeroGrad();
    const loss = crossEntropy(model.call(idx).reshape([-1, V]), tgt);
    loss.backward();
    opt.step();
  };
  for (let i = 0; i < warmup; i++) step();
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step();
    rates.push((steps * B * T) / ((performance.now() - t0) / 1000));
  }
  console.log(`ringtorch (${backendName()} backend) tokens/s runs=[${rates.map(Math.round).join(", ")}]`);
  console.log(`ringtorch's ${describeNewSpace()}`);
  return { median: median(rates), max: Math.max(...rates), rssMb: [process.resourceUsage().maxRSS / 1024] };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
  const threads = option("--threads", 1);
  setThreads(threads);
  const warmup = option("--warmup", 3);
  const ours = ringtorch(option("--runs", 5), option("--steps", 10), warmup);
  const peer = args.includes("--no-peer") ? "skipped (--no-peer)" : torchPeer(peerScript("gpt.py"), threads);
  console.log(`\nGPT L=${L} D=${D} H=${H} T=${T} V=${V} B=${B}, AdamW, ${threads} thread(s); ringtorch warmed up ${warmup} steps, PyTorch 3`);
  printTable("tokens/s", ours, peer);
}
