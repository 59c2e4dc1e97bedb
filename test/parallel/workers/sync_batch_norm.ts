// One rank of test/parallel/sync_batch_norm.test.ts. Every rank builds the same small CNN, converts
// its BatchNorm2d to SyncBatchNorm and runs its own, unevenly sized, slice of each batch; beside it a
// plain model runs the whole batch in this one process (the reference). With a summed loss, each
// rank's outputs and input gradients must equal the reference's rows for its slice, the parameter
// gradients summed over ranks must equal the reference's, and the running statistics must match.
// Prints RESULT {failures, checks}.
import * as rt from "../../../src/index.js";

const { nn, dist } = rt;
await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const failures: string[] = [];
const checks: string[] = [];

// Uneven slices: rank r holds r + 1 samples (rank 0 a single one, which only the other ranks'
// samples make a valid batch-norm batch).
const sizes = Array.from({ length: world }, (_, r) => r + 1);
const total = sizes.reduce((a, b) => a + b, 0);
const start = sizes.slice(0, rank).reduce((a, b) => a + b, 0);

function build(): rt.nn.Sequential {
  rt.manualSeed(7);
  return new nn.Sequential(new nn.Conv2d(2, 4, 3, { padding: 1, dtype: "float64" }), new nn.BatchNorm2d(4, { dtype: "float64" }), new nn.ReLU(), new nn.Conv2d(4, 3, 2, { dtype: "float64" }), new nn.BatchNorm2d(3, { momentum: null, dtype: "float64" }));
}

const sync = nn.SyncBatchNorm.convertSyncBatchnorm(build()) as rt.nn.Sequential;
const reference = build();
if (!(sync.get(1) instanceof nn.SyncBatchNorm) || !(sync.get(4) instanceof nn.SyncBatchNorm)) failures.push("convertSyncBatchnorm left a BatchNorm2d in place");

function close(name: string, got: rt.Tensor, want: rt.Tensor, tol = 1e-9): void {
  const a = got.contiguous().data() as Float64Array;
  const b = want.contiguous().data() as Float64Array;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1 + Math.abs(b[i])));
  if (a.length !== b.length || !(worst <= tol)) failures.push(`${name}: differs from the one-process BatchNorm by ${worst} (lengths ${a.length}, ${b.length})`);
  else checks.push(name);
}

for (let step = 0; step < 2; step++) {
  const g = new rt.Generator(100 + step);
  const x = rt.randn([total, 2, 5, 4], { dtype: "float64", generator: g }).mul(2).add(1);
  const c = rt.randn([total, 3, 4, 3], { dtype: "float64", generator: g });
  const xr = x.narrow(0, start, sizes[rank]).contiguous().requiresGrad_();
  const xw = x.detach().requiresGrad_();
  for (const m of [sync, reference]) m.zeroGrad();
  const yr = sync.call(xr) as rt.Tensor;
  const yw = reference.call(xw) as rt.Tensor;
  yr.mul(c.narrow(0, start, sizes[rank])).sum().backward();
  yw.mul(c).sum().backward();
  close(`step ${step} output`, yr, yw.narrow(0, start, sizes[rank]));
  close(`step ${step} input gradient`, xr.grad!, xw.grad!.narrow(0, start, sizes[rank]));
  const want = new Map(reference.namedParameters());
  for (const [name, p] of sync.namedParameters()) {
    const summed = p.grad!.clone();
    dist.allReduce(summed);
    close(`step ${step} gradient of ${name} summed over ranks`, summed, want.get(name)!.grad!);
  }
  const wantBuffers = new Map(reference.namedBuffers());
  for (const [name, b] of sync.namedBuffers()) close(`step ${step} buffer ${name}`, b.to("float64"), wantBuffers.get(name)!.to("float64"));
}

// Eval mode uses the running statistics and no collective: a rank may run it alone.
sync.eval();
reference.eval();
const probe = rt.randn([2, 2, 5, 4], { dtype: "float64", generator: new rt.Generator(9) });
close("eval output", sync.call(probe) as rt.Tensor, reference.call(probe) as rt.Tensor);

// DDP over plain BatchNorm broadcasts rank 0's buffers before each forward, as PyTorch does; each
// rank then moves them by its own batch.
{
  rt.manualSeed(3);
  const bn = new nn.BatchNorm2d(2, { dtype: "float64" });
  rt.noGrad(() => bn.running_mean!.fill_(rank + 1));
  const ddp = new rt.DDP(bn);
  const x = rt.randn([2, 2, 3, 3], { dtype: "float64", generator: new rt.Generator(20 + rank) });
  rt.noGrad(() => bn.running_mean!.fill_(rank + 5));
  ddp.call(x);
  close("DDP broadcasts rank 0's running mean before the forward", bn.running_mean!, rt.full([2], 5, { dtype: "float64" }).mul(0.9).add(x.mean([0, 2, 3]).mul(0.1)));
}

dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ failures, checks }));
