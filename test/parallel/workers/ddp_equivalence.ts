// One rank of test/parallel/ddp.test.ts. Each scenario trains a DDP model on this rank's shard of
// every batch, and beside it a plain model on the whole batch (the one-process reference), and
// checks that both end with the same parameters. Prints RESULT {failures, checks, overlap}.
import * as rt from "../../../src/index.js";

const { nn, optim, dist } = rt;
// RINGTORCH_TEST_BACKEND=mpi runs the same steps on the mpi backend (test/cluster/mpi.test.ts).
await dist.initProcessGroup(process.env.RINGTORCH_TEST_BACKEND === "mpi" ? { backend: "mpi", timeoutMs: 30_000 } : { timeoutMs: 30_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const STEPS = 20;
const B = 12;
const failures: string[] = [];
const checks: string[] = [];
let overlap: { readyParams: number; totalParams: number; launches: number } | null = null;

type Build = () => rt.nn.Module;
type Batch = { x: rt.Tensor; y: rt.Tensor };

const mlp: Build = () => {
  rt.manualSeed(0);
  return new nn.Sequential(new nn.Linear(8, 16), new nn.ReLU(), new nn.Linear(16, 16), new nn.Tanh(), new nn.Linear(16, 3));
};

class TinyTransformer extends nn.Module {
  encoder = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0, batchFirst: true }), 2);
  head = new nn.Linear(8, 3);
  override forward(x: rt.Tensor): rt.Tensor {
    return this.head.call(this.encoder.call(x).mean(1));
  }
}
const transformer: Build = () => {
  rt.manualSeed(0);
  return new TinyTransformer();
};

/** A buffer that differs per rank: DDP must make every rank use rank 0's before each forward. */
class Scaled extends nn.Module {
  lin = new nn.Linear(8, 3);
  declare scale: rt.Tensor;
  constructor() {
    super();
    this.registerBuffer("scale", rt.full([1], 1));
  }
  override forward(x: rt.Tensor): rt.Tensor {
    return this.lin.call(x.mul(this.scale));
  }
}
const scaled: Build = () => {
  rt.manualSeed(0);
  return new Scaled();
};

class WithUnused extends nn.Module {
  used = new nn.Linear(8, 3);
  unused = new nn.Linear(8, 3);
  override forward(x: rt.Tensor): rt.Tensor {
    return this.used.call(x);
  }
}
const withUnused: Build = () => {
  rt.manualSeed(0);
  return new WithUnused();
};

function batch(step: number, micro: number, seq: boolean): Batch {
  const g = new rt.Generator(1000 + step * 10 + micro);
  return { x: rt.randn(seq ? [B, 5, 8] : [B, 8], { generator: g }), y: rt.randint(0, 3, [B], { generator: g }) };
}

const shard = (t: rt.Tensor, r = rank) => t.narrow(0, (r * B) / world, B / world);
const lossOf = (model: rt.nn.Module, b: Batch) => rt.crossEntropy(model.call(b.x) as rt.Tensor, b.y);

function compare(name: string, got: rt.nn.Module, want: rt.nn.Module, tol = 2e-5): void {
  const w = new Map(want.namedParameters());
  let worst = 0;
  let worstName = "";
  for (const [n, p] of got.namedParameters()) {
    const a = p.data();
    const b = w.get(n)!.data();
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      if (d > worst) [worst, worstName] = [d, `${n}[${i}]`];
    }
  }
  checks.push(name);
  if (!(worst <= tol)) failures.push(`rank ${rank} ${name}: parameters differ from the one-process run by up to ${worst} (worst: ${worstName})`);
}

interface Scenario {
  build: Build;
  ddp?: rt.DistributedDataParallelOptions;
  accumulate?: number;
  seq?: boolean;
  diverge?: (m: rt.nn.Module) => void;
  /**
   * SGD instead of Adam. Adam turns pure float noise into full-size steps when a gradient is
   * mathematically zero (attention's key bias: softmax ignores a constant added to every score),
   * which would compare rounding, not DDP.
   */
  sgd?: boolean;
  hook?: rt.parallel.CommHook<null>;
  tol?: number;
}

function scenario(name: string, s: Scenario): rt.DistributedDataParallel {
  const ref = s.build();
  const local = s.build();
  // Perturb the replicas of other ranks: construction must copy rank 0's state everywhere.
  if (rank !== 0) rt.noGrad(() => local.parameters().forEach((p) => p.add_(0.5)));
  const ddp = new rt.DDP(local, s.ddp);
  if (s.hook) ddp.registerCommHook(null, s.hook);
  const makeOpt = (params: rt.Tensor[]) => (s.sgd ? new optim.SGD(params, { lr: 0.05, momentum: 0.9 }) : new optim.Adam(params, { lr: 0.01 }));
  const refOpt = makeOpt(ref.parameters());
  const opt = makeOpt(ddp.parameters());
  const accumulate = s.accumulate ?? 1;
  for (let step = 0; step < STEPS; step++) {
    for (let m = 0; m < accumulate; m++) {
      const b = batch(step, m, s.seq ?? false);
      lossOf(ref, b).div(accumulate).backward();
      const local = () => lossOf(ddp, { x: shard(b.x), y: shard(b.y) }).div(accumulate).backward();
      if (m < accumulate - 1) ddp.noSync(local);
      else local();
    }
    refOpt.step();
    opt.step();
    refOpt.zeroGrad();
    opt.zeroGrad(!(s.ddp?.gradientAsBucketView ?? false));
    s.diverge?.(ddp.module);
  }
  compare(name, ddp.module, ref, s.tol);
  return ddp;
}

scenario("mlp", { build: mlp });
const many = scenario("mlp, tiny buckets overlapped", { build: mlp, ddp: { bucketCapMb: 0.0002, overlapReduction: true } });
scenario("mlp, tiny buckets reduced after backward", { build: mlp, ddp: { bucketCapMb: 0.0002, overlapReduction: false } });
overlap = { ...many.launchRecords[0], launches: many.launchRecords.length };
scenario("mlp, gradient as bucket view", { build: mlp, ddp: { bucketCapMb: 0.001, gradientAsBucketView: true } });
scenario("mlp, noSync accumulation of 3 micro-batches", { build: mlp, accumulate: 3 });
scenario("transformer", { build: transformer, seq: true, sgd: true, ddp: { bucketCapMb: 0.002 } });
scenario("buffers broadcast before each forward", {
  build: scaled,
  diverge: (m) => rt.noGrad(() => (m as Scaled).scale.add_(rank * 0.25)),
});
scenario("allreduce comm hook", { build: mlp, hook: rt.parallel.commHooks.allreduceHook, ddp: { bucketCapMb: 0.0002 } });
// bfloat16 keeps 8 bits of mantissa: SGD steps stay within a few parts in a thousand of the float32 ones.
scenario("bf16 compression comm hook", { build: mlp, sgd: true, hook: rt.parallel.commHooks.bf16CompressHook, tol: 2e-3 });
scenario("fp16 compression comm hook", { build: mlp, sgd: true, hook: rt.parallel.commHooks.fp16CompressHook, tol: 5e-4 });
scenario("unused parameters reduced as zeros", { build: withUnused, ddp: { findUnusedParameters: true } });

// Without findUnusedParameters, the parameters that got no gradient are named.
{
  const ddp = new rt.DDP(withUnused(), { bucketCapMb: 0.0001 });
  try {
    lossOf(ddp, batch(0, 0, false)).backward();
    failures.push(`rank ${rank}: a backward with unused parameters did not fail`);
  } catch (err) {
    const msg = (err as Error).message;
    if (!/unused\.weight \[3, 8\], unused\.bias \[3\]/.test(msg) || !/findUnusedParameters: true/.test(msg)) failures.push(`rank ${rank}: unclear unused-parameter error: ${msg}`);
    checks.push("unused parameters named");
  }
}

// Uneven inputs: rank r has 3 + r batches. join() must not hang, and every rank must end with the
// parameters of a one-process run that, at each step, sums the losses of the ranks still training
// and divides by the initial world size (divideByInitialWorldSize).
for (const overlapReduction of [true, false]) {
  const ref = mlp();
  const ddp = new rt.DDP(mlp(), { bucketCapMb: 0.0006, overlapReduction });
  const refOpt = new optim.SGD(ref.parameters(), { lr: 0.1, momentum: 0.9 });
  const opt = new optim.SGD(ddp.parameters(), { lr: 0.1, momentum: 0.9 });
  const batches = (r: number) => 3 + r;
  for (let step = 0; step < batches(world - 1); step++) {
    const b = batch(step, 0, false);
    let loss = rt.tensor(0);
    for (let r = 0; r < world; r++) if (step < batches(r)) loss = loss.add(lossOf(ref, { x: shard(b.x, r), y: shard(b.y, r) }));
    loss.div(world).backward();
    refOpt.step();
    refOpt.zeroGrad();
  }
  await ddp.join(() => {
    for (let step = 0; step < batches(rank); step++) {
      const b = batch(step, 0, false);
      lossOf(ddp, { x: shard(b.x), y: shard(b.y) }).backward();
      opt.step();
      opt.zeroGrad();
    }
  });
  compare(`join with uneven inputs${overlapReduction ? ", overlapped" : ", reduced after backward"}`, ddp.module, ref, 1e-5);
}

dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ failures, checks, overlap }));
