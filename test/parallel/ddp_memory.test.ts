import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import type { DdpComm } from "../../src/parallel/comm.js";
import { exposeCollector } from "../../src/tensor/arena.js";

/**
 * The tensor memory DDP training holds, against formulas from the model's sizes (layer widths,
 * not read from the model or from a recorded run):
 * - between steps, after a full collection: parameters + gradients + Adam's two moments + input,
 *   so DDP keeps no second copy of the gradients (flat buckets beside .grad) and no activation
 *   outlives its backward;
 * - the arena's held high-water mark over twelve steps (memoryPool.stats().heldHighWater: every
 *   block JavaScript held at once, dead ones not yet collected included): the live tensors plus
 *   activations, plus what the arena's policy lets the collector leave uncollected
 *   (`collectorSlack`), so memory that piles up past the policy breaks it. Anything tighter
 *   depends on when V8 promotes a tensor, which moves with unrelated allocations.
 * Skipped on the reference backend, which has no arena.
 */
rt.getBackend();
const arena = rt.memoryPool.stats() !== null;
const collect = exposeCollector()!;
const MiB = 2 ** 20;
const F32 = 4;
const WIDTHS = [784, 1024, 1024, 10];
const BATCH = 64;

/**
 * A two-rank comm whose other rank sent the same gradients: each reduction leaves (g + g) / divisor
 * in place. It writes through the storage's array, so that the comm itself allocates nothing.
 */
const inPlaceComm: DdpComm = {
  rank: 0,
  worldSize: 2,
  allReduceAverageAsync(tensors, divisor) {
    this.allReduceAverage(tensors, divisor);
    return { wait() {} };
  },
  allReduceAverage(tensors, divisor) {
    for (const t of tensors) {
      const a = t.storage.data as Float32Array;
      for (let i = t.offset; i < t.offset + t.numel; i++) a[i] *= 2 / divisor;
    }
  },
  broadcast() {},
  allGatherInts: (v) => [v, v],
};

/** Bytes of the model's parameters, from the widths: each Linear's weight and bias. */
function parameterBytes(): number {
  let n = 0;
  for (let l = 1; l < WIDTHS.length; l++) n += WIDTHS[l - 1] * WIDTHS[l] + WIDTHS[l];
  return F32 * n;
}

/** Bytes of one step's activations: the input, each hidden layer before and after its ReLU, the logits and their softmax. */
function activationBytes(): number {
  const hidden = WIDTHS.slice(1, -1).reduce((s, w) => s + 2 * w, 0);
  return F32 * BATCH * (WIDTHS[0] + hidden + 2 * WIDTHS[WIDTHS.length - 1]);
}

/**
 * Dead tensors the collector may not have found yet, as the arena's policy allows
 * (src/tensor/arena.ts): what it hands out between two scavenges (its budget, or three blocks of
 * the largest size asked for, a weight's gradient here), and tensors that outlived two scavenges
 * before they died (a step's gradients, dropped by the next zeroGrad), promoted to V8's old
 * generation and found only by a full collection, which the arena starts once they exceed its
 * fullMin (or what was live after the last one, when that is more).
 */
function collectorSlack(live: number): number {
  const largestBlock = F32 * Math.max(...WIDTHS.slice(1).map((w, l) => WIDTHS[l] * w));
  const policy = rt.memoryPool.policy()!;
  return Math.max(policy.budget, 3 * largestBlock) + Math.max(policy.fullMin, live);
}

/** Size classes round a block up: the arena may hold up to this much more than the bytes asked for. */
const SIZE_CLASS_ROUNDING = 1.25;

function train(options: rt.DistributedDataParallelOptions): { high: number; heldAfterFull: number; live: number; kept: number } {
  rt.memoryPool.clear();
  rt.manualSeed(0);
  const layers: rt.nn.Module[] = [];
  for (let l = 1; l < WIDTHS.length; l++) {
    layers.push(new rt.nn.Linear(WIDTHS[l - 1], WIDTHS[l]));
    if (l < WIDTHS.length - 1) layers.push(new rt.nn.ReLU());
  }
  const model = new rt.DDP(new rt.nn.Sequential(...layers), { comm: inPlaceComm, ...options });
  const opt = new rt.optim.Adam(model.parameters(), { lr: 1e-3 });
  const x = rt.randn([BATCH, WIDTHS[0]]);
  const y = rt.randint(0, WIDTHS[WIDTHS.length - 1], [BATCH]);
  const step = () => {
    opt.zeroGrad();
    rt.crossEntropy(model.call(x) as rt.Tensor, y).backward();
    opt.step();
  };
  for (let i = 0; i < 3; i++) step(); // Adam's moments exist from the first step on
  rt.memoryPool.resetHighWater();
  for (let i = 0; i < 12; i++) step();
  const high = rt.memoryPool.stats()!.heldHighWater;
  collect();
  const p = parameterBytes();
  return { high, heldAfterFull: rt.memoryPool.stats()!.held, live: 4 * p + 2 * activationBytes(), kept: 4 * p + F32 * BATCH * (WIDTHS[0] + 1) };
}

const cases: [string, rt.DistributedDataParallelOptions][] = [
  ["gradients reduced where they lie, overlapped", { overlapReduction: true }],
  ["gradients reduced where they lie, after backward", { overlapReduction: false }],
  ["gradients as views of the buckets", { gradientAsBucketView: true, overlapReduction: true }],
];

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

for (const [what, options] of cases) {
  test(`DDP training steps hold no more tensor memory than params + grads + Adam state + activations allow (${what})`, { skip: !arena && "no native arena" }, () => {
    const { high, heldAfterFull, live, kept } = train(options);
    const bound = SIZE_CLASS_ROUNDING * live + collectorSlack(live);
    if (process.env.RINGTORCH_TEST_VERBOSE) console.log(`${what}: held high water ${mib(high)} (live ${mib(live)}, bound ${mib(bound)}); after a full collection ${mib(heldAfterFull)} (params, grads, moments, input: ${mib(kept)})`);
    // Between steps, only the parameters, their gradients, Adam's moments and the input are alive:
    // no second copy of the gradients, no saved activation kept past its backward.
    assert.ok(heldAfterFull >= kept * 0.9, `after a full collection ${mib(heldAfterFull)} are held, below the ${mib(kept)} of live tensors: the measurement is not seeing them`);
    assert.ok(heldAfterFull <= kept * SIZE_CLASS_ROUNDING, `between steps DDP training keeps ${mib(heldAfterFull)} of tensors alive; params, grads, Adam's moments and the input are ${mib(kept)}`);
    assert.ok(high <= bound, `a DDP step held up to ${mib(high)} of tensor memory; its live tensors need ${mib(live)}, and the collector's slack brings the bound to ${mib(bound)}`);
  });
}
