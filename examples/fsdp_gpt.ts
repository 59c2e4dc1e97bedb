// npx ringrun --standalone --nproc-per-node 2 examples/fsdp_gpt.ts [steps=60] [--bf16]
//
// A GPT (bench/gpt.ts's architecture: token and position embeddings, pre-norm GELU Transformer
// layers, a causal mask, an untied head; smaller here so that the demo runs in a minute) trained
// with fully sharded data parallelism: every Transformer layer is an FSDP unit, the embeddings and
// head form the root unit, and each rank keeps only its shard of parameters, gradients and AdamW
// state. The task is learnable on synthetic data: each sequence counts up from a random token.
// Every 20 steps every rank writes its shards to a sharded checkpoint; a restarted job (or one on a
// different number of ranks) resumes from the newest. `--bf16` all-gathers parameters and
// reduce-scatters gradients as bfloat16 (compute stays float32). Without ringrun it runs as one process.
import * as rt from "ringtorch";

const { nn, optim, dist, fsdp, checkpoint } = rt;
const steps = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 60);
const bf16 = process.argv.includes("--bf16");
const [V, D, H, L, T, B] = [512, 128, 4, 4, 64, 8];
const CKPT = "checkpoints/fsdp_gpt";

class GPT extends nn.Module {
  tok = new nn.Embedding(V, D);
  pos = new nn.Embedding(T, D);
  blocks = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(D, H, { dimFeedforward: 4 * D, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true }), L);
  ln = new nn.LayerNorm(D);
  head = new nn.Linear(D, V, { bias: false });
  declare mask: rt.Tensor;
  private readonly positions = rt.arange(T);
  constructor() {
    super();
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(T));
  }
  override forward(idx: rt.Tensor): rt.Tensor {
    const x = this.tok.call(idx).add(this.pos.call(this.positions));
    return this.head.call(this.ln.call(this.blocks.call(x, { mask: this.mask })));
  }
}

await dist.initProcessGroup();
const rank = dist.getRank();
const world = dist.getWorldSize();
rt.manualSeed(0);
const net = new GPT();
const model = new rt.FSDP(net, {
  shardingStrategy: "FULL_SHARD",
  autoWrapPolicy: fsdp.moduleWrapPolicy([nn.TransformerEncoderLayer]),
  ...(bf16 ? { mixedPrecision: { paramDtype: "bfloat16", reduceDtype: "bfloat16" } as const } : {}),
});
const opt = new optim.AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.01 });

// Resume from the newest sharded checkpoint, whatever number of ranks wrote it.
let start = 0;
const last = checkpoint.latest(CKPT);
if (last) {
  fsdp.loadShardedStateDict(net, last.path, { optimizer: opt });
  start = last.manifest.step;
  if (rank === 0) console.log(`resumed from ${last.path} (saved by ${last.manifest.worldSize} ranks)`);
}

function batch(step: number): { x: rt.Tensor; y: rt.Tensor } {
  const g = new rt.Generator(step * world + rank);
  const first = rt.randint(0, V, [B], { generator: g }).data();
  const tokens = Array.from({ length: B }, (_, b) => Array.from({ length: T + 1 }, (_, t) => (first[b] + t) % V));
  const seq = rt.tensor(tokens, { dtype: "int32" });
  return { x: seq.narrow(1, 0, T), y: seq.narrow(1, 1, T).reshape([-1]) };
}

for (let step = start; step < steps; step++) {
  const { x, y } = batch(step);
  const loss = rt.crossEntropy((model.call(x) as rt.Tensor).reshape([-1, V]), y);
  loss.backward();
  const norm = model.clipGradNorm(1.0);
  opt.step();
  opt.zeroGrad();
  if (rank === 0 && step % 10 === 0) console.log(`step ${step}: loss ${loss.item().toFixed(3)}, grad norm ${norm.item().toFixed(3)}`);
  if ((step + 1) % 20 === 0) await checkpoint.save(CKPT, { step: step + 1 }, { step: step + 1, sharded: fsdp.shardedStateDict(net, opt), keepLast: 2 });
}
const counts = model.collectiveCounts();
if (rank === 0) console.log(`done: ${counts.allGather} all-gathers, ${counts.reduceScatter} reduce-scatters, ${counts.allReduce} all-reduces on rank 0`);
dist.destroyProcessGroup();
