// One rank of test/parallel/fsdp.test.ts. Each scenario trains the same model twice on this rank's
// shard of every batch: under DDP (the reference) and under FSDP, and after every step compares the
// losses and this rank's parameter shards with the matching rows of DDP's parameters. It counts
// FSDP's collectives through a wrapped process group. Prints RESULT {failures, checks}.
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../../src/index.js";

const { nn, optim, dist, fsdp, checkpoint } = rt;
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const STEPS = 6;
const B = 12;
const failures: string[] = [];
const checks: string[] = [];

/** Uneven shapes: weights (15, 3), (7, 15), (3, 7) and biases of 15, 7 and 3 rows. */
class Net extends nn.Module {
  a = new nn.Linear(3, 15);
  b = new nn.Linear(15, 7);
  c = new nn.Linear(7, 3);
  override forward(x: rt.Tensor): rt.Tensor {
    return this.c.call(this.b.call(this.a.call(x).tanh()).tanh());
  }
}
const build = () => {
  rt.manualSeed(0);
  return new Net();
};

function batch(step: number, micro: number) {
  const g = new rt.Generator(1000 + step * 10 + micro);
  const x = rt.randn([B, 3], { generator: g });
  const y = rt.randint(0, 3, [B], { generator: g });
  const n = B / world;
  return { x: x.narrow(0, rank * n, n), y: y.narrow(0, rank * n, n) };
}

/** FSDP's default comm with every collective counted, as the test's own witness. */
function countingComm(inner: rt.fsdp.FsdpComm) {
  const counts = { allGather: 0, reduceScatter: 0, allReduce: 0, replicas: 0 };
  const comm: rt.fsdp.FsdpComm = {
    get shardRank() { return inner.shardRank; },
    get shardSize() { return inner.shardSize; },
    get replicaSize() { return inner.replicaSize; },
    get worldSize() { return inner.worldSize; },
    allGather: (o, i) => (counts.allGather++, inner.allGather(o, i)),
    reduceScatter: (o, i) => (counts.reduceScatter++, inner.reduceScatter(o, i)),
    allReduceReplicas: (t) => (counts.replicas++, inner.allReduceReplicas(t)),
    allReduce: (t, op) => (counts.allReduce++, inner.allReduce(t, op)),
    broadcast: (t, s) => inner.broadcast(t, s),
  };
  return { comm, counts };
}

interface Scenario {
  strategy?: rt.fsdp.ShardingStrategyName;
  /** fullyShard per Linear and on the root (FSDP2) instead of the FSDP class. */
  fully?: boolean;
  adamw?: boolean;
  clip?: number;
  accumulate?: number;
  mixed?: boolean;
  tol?: number;
  /** At this step: save a sharded checkpoint, zero the shards and the optimizer state, load it back. */
  reloadAt?: number;
  /** Collectives expected per step: [allGather, reduceScatter, allReduce (clip), replica all-reduces]. */
  perStep: [number, number, number, number];
}

function compare(name: string, step: number, model: rt.nn.Module, ref: rt.nn.Module, names: Map<rt.Tensor, string>, tol: number): void {
  const want = new Map(ref.namedParameters());
  let worst = 0;
  let where = "";
  for (const m of model.modules()) {
    const state = fsdp.fsdpStateOf(m);
    if (!state) continue;
    for (const fp of state.unit.params) {
      const full = want.get(names.get(fp.unsharded)!)!;
      const rows = fp.layout.rowsOf(fp.shardRank);
      if (fp.shard.shape[0] !== rows && fp.shard.ndim > 0 && fp.layout.size > 1) failures.push(`${name}: shard of ${names.get(fp.unsharded)} has ${fp.shard.shape[0]} rows, expected ${rows}`);
      const slice = fp.layout.size > 1 ? full.narrow(0, fp.rowStart, rows) : full;
      const a = fp.shard.contiguous().data();
      const b = slice.contiguous().data();
      if (a.length !== b.length) failures.push(`${name}: shard of ${names.get(fp.unsharded)} has ${a.length} elements, the slice ${b.length}`);
      for (let i = 0; i < a.length; i++) {
        const d = Math.abs(a[i] - b[i]);
        if (!(d <= worst)) [worst, where] = [d, `${names.get(fp.unsharded)}[${i}]`];
      }
    }
  }
  if (!(worst <= tol)) failures.push(`rank ${rank} ${name} step ${step}: shard differs from DDP's slice by ${worst} at ${where}`);
}

/** Every rank of the job names the same directory (the store's port is the job's). */
const RELOAD_DIR = join(tmpdir(), `fsdp-parity-${process.env.MASTER_PORT}`);

async function reload(net: rt.nn.Module, opt: rt.optim.Optimizer<{ lr: number }>, step: number): Promise<void> {
  await checkpoint.save(RELOAD_DIR, { step }, { step, sharded: fsdp.shardedStateDict(net, opt) });
  rt.noGrad(() => {
    for (const p of net.parameters()) p.zero_();
    for (const state of opt.state.values()) for (const v of Object.values(state)) if (v instanceof rt.Tensor) v.zero_();
  });
  fsdp.loadShardedStateDict(net, join(RELOAD_DIR, `step_${String(step).padStart(8, "0")}`), { optimizer: opt });
  dist.barrier();
  if (rank === 0) rmSync(RELOAD_DIR, { recursive: true, force: true });
}

async function scenario(name: string, s: Scenario): Promise<void> {
  const ref = new rt.DDP(build(), { bucketCapMb: 1 });
  const model = build();
  // Other ranks start elsewhere: syncModuleStates must give every rank rank 0's weights.
  if (rank !== 0 && !s.fully) rt.noGrad(() => model.parameters().forEach((p) => p.add_(0.5)));
  const names = new Map<rt.Tensor, string>([...model.namedParameters()].map(([n, p]) => [p, n]));
  const base =
    s.strategy === "NO_SHARD" ? fsdp.fsdpCommFor("none") : s.strategy === "HYBRID_SHARD" ? fsdp.fsdpCommFor(hybrid!.shard, hybrid!.replicate) : fsdp.fsdpCommFor();
  const { comm, counts } = countingComm(base);
  const mixedPrecision = s.mixed ? { paramDtype: "bfloat16" as const, reduceDtype: "bfloat16" as const } : undefined;
  let net: rt.nn.Module;
  if (s.fully) {
    for (const l of [model.a, model.b, model.c]) fsdp.fullyShard(l, { comm, ...(mixedPrecision ? { mixedPrecision } : {}) });
    net = fsdp.fullyShard(model, { comm });
  } else {
    net = new rt.FSDP(model, { shardingStrategy: s.strategy ?? "FULL_SHARD", autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]), comm, ...(mixedPrecision ? { mixedPrecision } : {}) });
  }
  const makeOpt = (params: rt.Tensor[]) => (s.adamw ? new optim.AdamW(params, { lr: 0.01, weightDecay: 0.1 }) : new optim.SGD(params, { lr: 0.1, momentum: 0.9 }));
  const refOpt = makeOpt(ref.parameters());
  const opt = makeOpt(net.parameters());
  const accumulate = s.accumulate ?? 1;
  const tol = s.tol ?? 2e-6;
  for (let step = 0; step < STEPS; step++) {
    const before = { ...counts };
    let refLoss = 0;
    let loss = 0;
    for (let m = 0; m < accumulate; m++) {
      const b = batch(step, m);
      const last = m === accumulate - 1;
      const run = (model: rt.nn.Module) => {
        const l = rt.crossEntropy(model.call(b.x) as rt.Tensor, b.y).div(accumulate);
        l.backward();
        return l.item();
      };
      refLoss += last ? run(ref) : ref.noSync(() => run(ref));
      loss += last || s.fully ? run(net) : (net as rt.FullyShardedDataParallel).noSync(() => run(net));
    }
    if (s.clip !== undefined) {
      const refNorm = rt.nn.utils.clipGradNorm(ref.parameters(), s.clip).item();
      const norm = s.fully ? fsdp.clipGradNorm(net, s.clip).item() : (net as rt.FullyShardedDataParallel).clipGradNorm(s.clip).item();
      if (!(Math.abs(norm - refNorm) <= 1e-5 * Math.max(1, refNorm))) failures.push(`rank ${rank} ${name} step ${step}: clipGradNorm ${norm}, DDP's ${refNorm}`);
    }
    refOpt.step();
    opt.step();
    refOpt.zeroGrad();
    opt.zeroGrad();
    if (!(Math.abs(loss - refLoss) <= Math.max(tol, 1e-6) * 10)) failures.push(`rank ${rank} ${name} step ${step}: loss ${loss}, DDP's ${refLoss}`);
    if (step === s.reloadAt) await reload(net, opt, step);
    compare(name, step, model, ref.module, names, tol);
    const got = [counts.allGather - before.allGather, counts.reduceScatter - before.reduceScatter, counts.allReduce - before.allReduce, counts.replicas - before.replicas];
    if (got.join() !== s.perStep.join()) failures.push(`rank ${rank} ${name} step ${step}: collectives [allGather, reduceScatter, allReduce, replica allReduce] = [${got}], expected [${s.perStep}]`);
  }
  checks.push(name);
}

// On 4 ranks: a 2 × 2 mesh, sharded over pairs of ranks and replicated across them.
const hybrid = world === 4 ? fsdp.hybridGroups(2) : null;
if (hybrid) {
  await scenario("HYBRID_SHARD 2 × 2, SGD momentum", { strategy: "HYBRID_SHARD", perStep: [6, 3, 0, 3] });
  await scenario("HYBRID_SHARD 2 × 2, AdamW, clipGradNorm", { strategy: "HYBRID_SHARD", adamw: true, clip: 0.05, perStep: [6, 3, 1, 3] });
}
// Three Linear units (gathered in forward, again in backward) and a root without parameters.
if (process.env.FSDP_ONLY_HYBRID !== "1") {
await scenario("FULL_SHARD, fullyShard per Linear, SGD momentum", { fully: true, perStep: [6, 3, 0, 0] });
await scenario("FULL_SHARD, FSDP class, AdamW; save, zero and load at step 2", { adamw: true, reloadAt: 2, perStep: [6, 3, 0, 0] });
await scenario("FULL_SHARD, clipGradNorm with one all-reduce", { clip: 0.05, perStep: [6, 3, 1, 0] });
await scenario("SHARD_GRAD_OP: gathered once per step", { strategy: "SHARD_GRAD_OP", adamw: true, perStep: [3, 3, 0, 0] });
await scenario("NO_SHARD: gradients all-reduced", { strategy: "NO_SHARD", perStep: [0, 0, 0, 3] });
await scenario("noSync accumulation of 3 micro-batches", { accumulate: 3, perStep: [18, 3, 0, 0] });
// bfloat16 keeps 8 bits of mantissa: the weights used in compute are rounded, the steps close to float32's.
await scenario("mixed precision: bfloat16 gather and reduce", { fully: true, mixed: true, tol: 5e-3, perStep: [6, 3, 0, 0] });
}

dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ failures, checks }));
