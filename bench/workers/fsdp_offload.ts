// One rank of bench/fsdp_offload.ts (started by ringrun): an MLP of BLOCKS blocks (D → 4D → D,
// 8D² parameters each: 2.1M at D = 512) trained under FULL_SHARD with AdamW, each block a unit, with
// OFFLOAD "none", "rss" (shards, gradients and Adam state in a memory-mapped file; pages leave the
// process after use) or "pageout" (and are written out and evicted from the page cache too).
// Each block is sharded as soon as it is built, so no rank ever holds the whole model. Peak RSS is
// taken over the training steps only (the kernel's high-water mark is reset after the first step,
// via /proc/self/clear_refs). Prints RESULT {offload, rank, msPerStep, peakRssMb, ...}.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as rt from "../../src/index.js";

const { nn, optim, dist, fsdp } = rt;
const OFFLOAD = process.env.OFFLOAD ?? "rss";
const DIR = process.env.DIR ?? ".bench-offload";
const BLOCKS = Number(process.env.BLOCKS ?? 24);
const STEPS = Number(process.env.STEPS ?? 3);
const D = Number(process.env.DIM ?? 512);
const ROWS = 64;

class Block extends nn.Module {
  up = new nn.Linear(D, 4 * D);
  down = new nn.Linear(4 * D, D);
  override forward(x: rt.Tensor): rt.Tensor {
    return x.add(this.down.call(rt.nn.functional.gelu(this.up.call(x))));
  }
}

await dist.initProcessGroup({ timeoutMs: 600_000 });
const rank = dist.getRank();
mkdirSync(DIR, { recursive: true });
const offload = OFFLOAD === "none" ? undefined : { dir: DIR, pageOut: OFFLOAD === "pageout" };
rt.manualSeed(0);
const blocks: Block[] = [];
for (let i = 0; i < BLOCKS; i++) {
  const b = new Block();
  fsdp.fullyShard(b, offload ? { offload } : {});
  blocks.push(b);
}
const model = fsdp.fullyShard(new nn.Sequential(...blocks), offload ? { offload } : {});
// The blocks as built are dead: give their memory back to the system before measuring.
rt.memoryPool.clear();
const opt = new optim.AdamW(model.parameters(), { lr: 1e-4 });
const shardNumel = model.parameters().reduce((n, p) => n + p.numel, 0);
const g = new rt.Generator(1 + rank);
const x = rt.randn([ROWS, D], { generator: g });
const step = () => {
  opt.zeroGrad();
  const loss = (model.call(x) as rt.Tensor).square().mean();
  loss.backward();
  opt.step();
  return loss.item();
};

const status = () => readFileSync("/proc/self/status", "utf8");
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status())?.[1] ?? NaN);
const losses = [step()];
rt.memoryPool.clear();
writeFileSync("/proc/self/clear_refs", "5");
const times: number[] = [];
for (let s = 0; s < STEPS; s++) {
  const t0 = performance.now();
  losses.push(step());
  times.push(performance.now() - t0);
}
const stats = offload ? fsdp.offloadStats(model) : null;
const result = {
  offload: OFFLOAD,
  rank,
  msPerStep: times,
  peakRssMb: kb("VmHWM") / 1024,
  rssAnonMb: kb("RssAnon") / 1024,
  rssFileMb: kb("RssFile") / 1024,
  // Parameters, gradients and Adam's two moments of this rank's shards, float32.
  stateMb: (16 * shardNumel) / 2 ** 20,
  fileMb: stats ? stats.fileBytes / 2 ** 20 : 0,
  pageCacheMb: stats ? stats.residentBytes / 2 ** 20 : 0,
  arenaPeakMb: (rt.memoryPool.stats()?.highWater ?? NaN) / 2 ** 20,
  losses,
};
console.log("RESULT " + JSON.stringify(result));
dist.destroyProcessGroup();
