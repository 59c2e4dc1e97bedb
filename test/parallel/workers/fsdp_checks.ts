// One rank (of 2) of test/parallel/fsdp.test.ts: memory after the optimizer step against the ZeRO
// formulas, read from the tensor pool's own byte counts; ZeRO-1 against plain AdamW; and the
// collective-sequence check, last, since it leaves the group out of step. Prints RESULT.
import * as rt from "../../../src/index.js";
import { heldBytes as held } from "./held_memory.js";

const { nn, optim, dist, fsdp } = rt;
rt.getBackend(); // the backend, and with it the arena, is set up on first use
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
const N = dist.getWorldSize();
const failures: string[] = [];
const checks: string[] = [];
const memory: Record<string, unknown> = {};

/**
 * Every model measured stays alive to the end: a dropped model's memory returns only when every
 * thread that saw its buffers has collected them, the comm worker included, whose collections run
 * on its own schedule; freed during a later measurement, it would be subtracted from that one.
 */
const keep: unknown[] = [];

const D = 256;
const LAYERS = 16;
/** FSDP's checks take 16 units, so that the 5% tolerance is well above one unit; ZeRO-1's 4 layers. */
const build = (layers = LAYERS) => {
  rt.manualSeed(0);
  return new nn.Sequential(...Array.from({ length: layers }, () => new nn.Linear(D, D, { bias: false })));
};
const psi = LAYERS * D * D;
const ZERO1_LAYERS = 4;

/** Two steps; the gradients of the last are still held when memory is read, as the formulas count them. */
function train(model: rt.nn.Module, step: () => void): void {
  for (let s = 0; s < 2; s++) {
    model.zeroGrad();
    const g = new rt.Generator(7 + s);
    const x = rt.randn([4, D], { generator: g });
    (model.call(x) as rt.Tensor).square().mean().backward();
    step();
  }
}

// FULL_SHARD (ZeRO-3) and SHARD_GRAD_OP (ZeRO-2) with AdamW, after the step: parameter shards,
// gradient shards and both moments, 16Ψ/N bytes under ZeRO-3; ZeRO-2 keeps the parameters whole,
// 4Ψ + 12Ψ/N. On top, FSDP's two communication buffers (serving all-gather outputs and
// reduce-scatter inputs alike, each the largest unit plus the 4-byte sequence tag per rank) and, as the issue allows, up to the largest unit: no unit stays gathered, but a dead
// unit-sized buffer may not have been collected everywhere yet (the comm worker's heap). During the step, at most limitAllGathers (2) units are gathered
// or gathering at once, and the unsharded memory held peaks at one unit (ZeRO-3: each is freed
// before the next one's prefetch lands) or the whole model (ZeRO-2).
const LARGEST_UNIT = 4 * D * D;
const BUFFERS = 2 * (LARGEST_UNIT + N * 4);
for (const [strategy, formula, peakHeld] of [
  ["FULL_SHARD", (16 * psi) / N, LARGEST_UNIT],
  ["SHARD_GRAD_OP", 4 * psi + (12 * psi) / N, 4 * psi],
] as const) {
  const base = held();
  const model = build();
  // Every rank builds the same weights from the seed. syncModuleStates is off because its one-off
  // broadcast buffers reach the comm worker, which drops its handles only at its own collections
  // (after 64 MB of new buffers): whether they count here would depend on its timing.
  const fsdpModel = new rt.FSDP(model, { shardingStrategy: strategy, autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]), syncModuleStates: false });
  const opt = new optim.AdamW(fsdpModel.parameters(), { lr: 1e-3 });
  train(fsdpModel, () => opt.step());
  const bytes = held() - base;
  const stats = fsdp.memoryStats(model);
  // The buffers belong to the process group's FSDP comm, shared by every model over it: the
  // first model here makes them, the second finds them made (its units are no larger).
  const fresh = strategy === "FULL_SHARD" ? BUFFERS : 0;
  memory[strategy] = { bytes, formula, buffers: fresh, stats };
  if (!(bytes >= (formula + fresh) * 0.95 && bytes <= (formula + fresh + LARGEST_UNIT) * 1.05)) {
    failures.push(`rank ${rank} ${strategy} holds ${bytes} bytes after the step; the ZeRO formula says ${formula}, + ${fresh} of new communication buffers (+ up to ${LARGEST_UNIT} for the largest unit)`);
  }
  if (stats.bufferBytes !== BUFFERS) failures.push(`rank ${rank} ${strategy}: FSDP reports ${stats.bufferBytes} bytes of buffers, expected ${BUFFERS}`);
  if (stats.peakGatheredUnits > 2) failures.push(`rank ${rank} ${strategy}: ${stats.peakGatheredUnits} units gathered at once, over limitAllGathers (2)`);
  if (strategy === "FULL_SHARD" && stats.peakGatheredUnits !== 2) failures.push(`rank ${rank} FULL_SHARD: the next unit was never prefetched (at most ${stats.peakGatheredUnits} gathered at once)`);
  if (stats.peakHeldBytes !== peakHeld) failures.push(`rank ${rank} ${strategy}: unsharded parameters peaked at ${stats.peakHeldBytes} bytes, expected ${peakHeld}`);
  checks.push(`${strategy} memory`);
  keep.push(fsdpModel, opt);
}

// ZeRO-1 beside DDP: whole parameters and gradients, Adam state for this rank's partition: 8Ψ + 8Ψ/N.
// The parameters (4Ψ of it) are built before the base is read and added by hand: DDP's construction
// broadcasts them through a one-off buffer that the comm worker may keep a while.
{
  const zpsi = ZERO1_LAYERS * D * D;
  const model = build(ZERO1_LAYERS);
  const ddp = new rt.DDP(model, { bucketCapMb: 25, gradientAsBucketView: true });
  const base = held();
  const opt = new rt.parallel.ZeroRedundancyOptimizer(ddp.parameters(), { optimizerClass: optim.AdamW, lr: 1e-3 });
  train(ddp, () => opt.step());
  keep.push(ddp, opt);
  const bytes = held() - base + 4 * zpsi;
  const formula = 8 * zpsi + (8 * zpsi) / N;
  memory.zero1 = { bytes, formula };
  if (!(bytes >= formula * 0.95 && bytes <= formula * 1.05)) failures.push(`rank ${rank} ZeRO-1 holds ${bytes} bytes after the step; the formula says ${formula}`);
  checks.push("ZeRO-1 memory");
}

// ZeRO-1 takes the steps of a plain optimizer over the same averaged gradients.
for (const make of [(ps: rt.Tensor[]) => new optim.SGD(ps, { lr: 0.1, momentum: 0.9 }), (ps: rt.Tensor[]) => new optim.AdamW(ps, { lr: 0.01, weightDecay: 0.1 })]) {
  const ref = new rt.DDP(build(ZERO1_LAYERS));
  const zddp = new rt.DDP(build(ZERO1_LAYERS));
  const refOpt = make(ref.parameters());
  const isSgd = refOpt instanceof optim.SGD;
  const zopt = isSgd
    ? new rt.parallel.ZeroRedundancyOptimizer(zddp.parameters(), { optimizerClass: optim.SGD, lr: 0.1, momentum: 0.9 })
    : new rt.parallel.ZeroRedundancyOptimizer(zddp.parameters(), { optimizerClass: optim.AdamW, lr: 0.01, weightDecay: 0.1 });
  if (zopt.partitions[rank].length !== ZERO1_LAYERS / N) failures.push(`rank ${rank} owns ${zopt.partitions[rank].length} of ${ZERO1_LAYERS} equal parameters`);
  for (let s = 0; s < 3; s++) {
    const x = rt.randn([4, D], { generator: new rt.Generator(100 * rank + s) });
    for (const m of [ref, zddp]) (m.call(x) as rt.Tensor).square().mean().backward();
    refOpt.step();
    zopt.step();
    refOpt.zeroGrad();
    zopt.zeroGrad();
  }
  const want = ref.parameters();
  zddp.parameters().forEach((p, i) => {
    const a = p.data();
    const b = want[i].data();
    for (let j = 0; j < a.length; j++) if (!(Math.abs(a[j] - b[j]) <= 1e-6)) return void failures.push(`rank ${rank} ZeRO-1 (${isSgd ? "SGD" : "AdamW"}) parameter ${i}[${j}] = ${a[j]}, plain optimizer ${b[j]}`);
  });
  checks.push(`ZeRO-1 parity ${isSgd ? "SGD momentum" : "AdamW"}`);
}

// The sequence check: rank 1 skips the first unit's forward. Both units have one size, so without
// the check the gather would succeed with the wrong weights; with it, both ranks name the units.
{
  rt.manualSeed(0);
  const model = new nn.Sequential(new nn.Linear(8, 8), new nn.Linear(8, 8));
  for (const l of [...model.children()]) fsdp.fullyShard(l);
  fsdp.fullyShard(model);
  const x = rt.randn([2, 8]);
  try {
    rt.noGrad(() => (rank === 1 ? (model.children().next().value as rt.nn.Module) && [...model.children()][1].call(x) : model.call(x)));
    failures.push(`rank ${rank}: a skipped unit went unnoticed`);
  } catch (err) {
    const msg = (err as Error).message;
    if (!/collective sequence broken/.test(msg) || !/rank [01] all-gathered unit/.test(msg)) failures.push(`rank ${rank}: unclear sequence error: ${msg}`);
    memory.sequenceMessage = msg;
  }
  checks.push("sequence check");
}

console.log("RESULT " + JSON.stringify({ failures, checks, memory }));
process.exit(0);
