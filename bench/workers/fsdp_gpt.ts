// One rank of bench/fsdp.ts (started by ringrun): bench/gpt.ts's GPT (4 pre-norm layers, d=256,
// seq 128, vocab 8192, batch 8 per rank, AdamW) trained under MODE: "ddp" (DistributedDataParallel)
// or an FSDP sharding strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD), each Transformer layer a unit.
// Prints RESULT {mode, rank, tokensPerSec (all ranks), rssMb (this rank's peak)}.
import * as rt from "../../src/index.js";
import { GPT } from "../gpt.js";
import { commStats } from "../../src/distributed/comm_stats.js";

const { nn, optim, dist, fsdp } = rt;
const MODE = process.env.MODE ?? "FULL_SHARD";
const STEPS = Number(process.env.STEPS ?? 5);
const RUNS = Number(process.env.RUNS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 3);
const [V, T, B] = [8192, 128, 8];

await dist.initProcessGroup();
const world = dist.getWorldSize();
rt.manualSeed(0);
const net = new GPT();
const model: rt.nn.Module =
  MODE === "ddp" ? new rt.DDP(net) : new rt.FSDP(net, { shardingStrategy: MODE as rt.fsdp.ShardingStrategyName, autoWrapPolicy: fsdp.moduleWrapPolicy([nn.TransformerEncoderLayer]) });
const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
const g = new rt.Generator(1 + dist.getRank());
const idx = rt.randint(0, V, [B, T], { generator: g });
const tgt = rt.randint(0, V, [B, T], { generator: g }).reshape([-1]);
const step = () => {
  opt.zeroGrad();
  rt.crossEntropy((model.call(idx) as rt.Tensor).reshape([-1, V]), tgt).backward();
  opt.step();
};
for (let i = 0; i < WARMUP; i++) step();
const rates: number[] = [];
const waits: number[] = [];
for (let r = 0; r < RUNS; r++) {
  dist.barrier();
  const t0 = performance.now();
  const w0 = commStats.waitMs;
  for (let i = 0; i < STEPS; i++) step();
  // Time this thread was blocked on communication per step (inside a collective or waiting for one).
  waits.push((commStats.waitMs - w0) / STEPS);
  dist.barrier();
  rates.push((world * STEPS * B * T) / ((performance.now() - t0) / 1000));
}
// The tensor arena's most bytes held + kept free at once: the tensor part of RSS, without V8's heap and the code.
const arenaMb = (rt.memoryPool.stats()?.highWater ?? NaN) / 2 ** 20;
const fsdpStats = MODE === "ddp" ? null : fsdp.memoryStats(net);
console.log("RESULT " + JSON.stringify({ mode: MODE, rank: dist.getRank(), rates, waitMsPerStep: waits, rssMb: process.resourceUsage().maxRSS / 1024, arenaMb, fsdp: fsdpStats }));
dist.destroyProcessGroup();
