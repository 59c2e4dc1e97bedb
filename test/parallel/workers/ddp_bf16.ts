// One rank of test/parallel/ddp_bf16.test.ts: DDP composed with bfloat16 mixed precision. Each
// scenario trains a DDP model under autocast on this rank's shard, and beside it a plain model under
// autocast on the whole batch (the one-process reference), and compares the parameters at the end.
// Prints RESULT {failures, checks}.
import * as rt from "../../../src/index.js";

const { nn, optim, dist } = rt;
await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const STEPS = 10;
const B = 12;
const failures: string[] = [];
const checks: string[] = [];

const mlp = (dtype: "float32" | "bfloat16") => {
  rt.manualSeed(0);
  return new nn.Sequential(new nn.Linear(8, 16), new nn.ReLU(), new nn.Linear(16, 3)).to(dtype);
};

function batch(step: number): { x: rt.Tensor; y: rt.Tensor } {
  const g = new rt.Generator(500 + step);
  return { x: rt.randn([B, 8], { generator: g }), y: rt.randint(0, 3, [B], { generator: g }) };
}
const shard = (t: rt.Tensor) => t.narrow(0, (rank * B) / world, B / world);
const lossOf = (m: rt.nn.Module, x: rt.Tensor, y: rt.Tensor) => rt.autocast("bfloat16", () => rt.crossEntropy(m.call(x) as rt.Tensor, y));

function scenario(name: string, dtype: "float32" | "bfloat16", hook: rt.parallel.CommHook<null> | null, tol: number): void {
  const ref = mlp(dtype);
  const ddp = new rt.DDP(mlp(dtype), { bucketCapMb: 0.0002 });
  if (hook) ddp.registerCommHook(null, hook);
  const refOpt = new optim.SGD(ref.parameters(), { lr: 0.05, momentum: 0.9 });
  const opt = new optim.SGD(ddp.parameters(), { lr: 0.05, momentum: 0.9 });
  for (let step = 0; step < STEPS; step++) {
    const b = batch(step);
    lossOf(ref, b.x, b.y).backward();
    lossOf(ddp, shard(b.x), shard(b.y)).backward();
    refOpt.step();
    opt.step();
    refOpt.zeroGrad();
    opt.zeroGrad();
  }
  const want = new Map(ref.namedParameters());
  let worst = 0;
  for (const [n, p] of ddp.module.namedParameters()) {
    if (p.dtype !== dtype) failures.push(`rank ${rank} ${name}: ${n} became ${p.dtype}`);
    const a = p.float().data(), b = want.get(n)!.float().data();
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  }
  checks.push(name);
  if (!(worst <= tol)) failures.push(`rank ${rank} ${name}: parameters differ from the one-process run by up to ${worst}`);
}

// float32 parameters, autocast products, gradients sent as bfloat16 by the compression hook.
scenario("autocast + bf16CompressHook", "float32", rt.parallel.commHooks.bf16CompressHook, 3e-3);
// bfloat16 parameters (float32 master weights in SGD), bfloat16 gradients all-reduced as they are.
// A weight may land one bfloat16 spacing (2^-8 of its size, the weights are below 1) from the reference.
scenario("bf16 parameters with master weights", "bfloat16", null, 8e-3);

console.log("RESULT " + JSON.stringify({ failures, checks }));
await dist.destroyProcessGroup();
