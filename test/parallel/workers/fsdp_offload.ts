// One rank (of 2) of test/parallel/fsdp_offload.test.ts. Offload: the same model trained under
// FULL_SHARD with and without `offload` (shards, gradients and optimizer state in a memory-mapped
// file of DIR) takes bit-identical steps; the offloaded bytes sit in the file, not in the tensor
// pool. Memory cap: a model whose DDP state (16Ψ bytes with AdamW) is over a per-rank cap trains
// under FULL_SHARD with the pool's high-water mark under the cap. Prints RESULT.
import { readdirSync } from "node:fs";
import * as rt from "../../../src/index.js";
import { heldBytes as held } from "./held_memory.js";

const { nn, optim, dist, fsdp } = rt;
rt.getBackend();
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
const N = dist.getWorldSize();
const DIR = process.env.DIR!;
const failures: string[] = [];
const checks: string[] = [];
const memory: Record<string, unknown> = {};
const keep: unknown[] = [];

/** Uneven shapes (padding): weights (15, 3), (7, 15), (3, 7) and biases of 15, 7 and 3 rows. */
class Net extends nn.Module {
  a = new nn.Linear(3, 15);
  b = new nn.Linear(15, 7);
  c = new nn.Linear(7, 3);
  override forward(x: rt.Tensor): rt.Tensor {
    return this.c.call(this.b.call(this.a.call(x).tanh()).tanh());
  }
}

function shard(offload: boolean): rt.nn.Module {
  rt.manualSeed(0);
  const model = new Net();
  const opts = offload ? { offload: { dir: DIR } } : {};
  for (const l of [model.a, model.b, model.c]) fsdp.fullyShard(l, opts);
  return fsdp.fullyShard(model, opts);
}

// Parity: per step, the losses and every shard value equal (the same kernels on the same values;
// the offloaded optimizer only steps one parameter at a time). clipGradNorm reads offloaded gradients.
for (const kind of ["SGD momentum", "AdamW, clipGradNorm"]) {
  const plain = shard(false);
  const off = shard(true);
  const make = (ps: rt.Tensor[]) => (kind.startsWith("SGD") ? new optim.SGD(ps, { lr: 0.1, momentum: 0.9 }) : new optim.AdamW(ps, { lr: 0.01, weightDecay: 0.1 }));
  const [o1, o2] = [make(plain.parameters()), make(off.parameters())];
  for (let step = 0; step < 4; step++) {
    const g = new rt.Generator(100 + step);
    const x = rt.randn([8, 3], { generator: g }).narrow(0, rank * 4, 4);
    const y = rt.randint(0, 3, [8], { generator: g }).narrow(0, rank * 4, 4);
    const losses = [plain, off].map((m) => {
      const l = rt.crossEntropy(m.call(x) as rt.Tensor, y);
      l.backward();
      return l.item();
    });
    if (kind.includes("clip")) {
      const norms = [fsdp.clipGradNorm(plain, 0.05).item(), fsdp.clipGradNorm(off, 0.05).item()];
      if (norms[0] !== norms[1]) failures.push(`rank ${rank} ${kind} step ${step}: clipGradNorm ${norms[1]} offloaded, ${norms[0]} not`);
    }
    o1.step();
    o2.step();
    o1.zeroGrad();
    o2.zeroGrad();
    if (losses[0] !== losses[1]) failures.push(`rank ${rank} ${kind} step ${step}: loss ${losses[1]} offloaded, ${losses[0]} not`);
    const [a, b] = [plain.parameters(), off.parameters()];
    a.forEach((p, i) => {
      const [u, v] = [p.data(), b[i].data()];
      for (let j = 0; j < u.length; j++) if (u[j] !== v[j]) return void failures.push(`rank ${rank} ${kind} step ${step}: shard ${i}[${j}] = ${v[j]} offloaded, ${u[j]} not`);
    });
  }
  // Every shard and every moment of the offloaded run is in the file.
  const inFile = off.parameters().every((p) => [...Object.values(o2.state.get(p) ?? {})].filter((v) => v instanceof rt.Tensor).length === (kind.startsWith("SGD") ? 1 : 2));
  if (!inFile) failures.push(`rank ${rank} ${kind}: some shard has no optimizer state`);
  checks.push(`offload parity, ${kind}`);
  keep.push(plain, off, o1, o2);
}

// Memory: 8 layers of 256 × 256 under FULL_SHARD with AdamW, offloaded. The file holds the shards,
// their gradients and both moments (16Ψ/N bytes); the pool holds what is not offloaded: FSDP's two
// communication buffers (one unit each; made by the parity models already, so not new here) and at
// most a unit gathered or a dead activation not yet collected.
{
  const D = 256;
  const LAYERS = 8;
  const psi = LAYERS * D * D;
  const base = held();
  rt.manualSeed(0);
  const model = new nn.Sequential(...Array.from({ length: LAYERS }, () => new nn.Linear(D, D, { bias: false })));
  const net = new rt.FSDP(model, { autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]), syncModuleStates: false, offload: { dir: DIR } });
  const opt = new optim.AdamW(net.parameters(), { lr: 1e-3 });
  for (let s = 0; s < 2; s++) {
    opt.zeroGrad();
    (net.call(rt.randn([4, D], { generator: new rt.Generator(7 + s) })) as rt.Tensor).square().mean().backward();
    opt.step();
  }
  const poolBytes = held() - base;
  const stats = fsdp.offloadStats(net);
  const formula = (16 * psi) / N;
  const unit = 4 * D * D;
  memory.offload = { poolBytes, formula, stats, fsdp: fsdp.memoryStats(model) };
  // The parity models' shards are in the same file (one per rank and directory).
  if (!(stats.mappedBytes >= formula)) failures.push(`rank ${rank}: the offload file maps ${stats.mappedBytes} bytes, less than the 16Ψ/N = ${formula} of shards, gradients and Adam state`);
  // Two buffers of a unit (and its sequence tags) each, rounded up to the pool's size classes (under
  // 25%), and 64 KiB for small tensors (the step's input, scalars), each a 64-byte block at least.
  const buffers = 2 * 1.25 * (unit + 4 * N) + 65536;
  if (!(poolBytes <= buffers)) failures.push(`rank ${rank}: the pool holds ${poolBytes} bytes more with the offloaded model; expected at most FSDP's two communication buffers (${buffers}), not its ${formula} offloaded bytes`);
  const files = readdirSync(DIR).filter((f) => f.startsWith(`ringtorch-fsdp.rank${rank}-p${process.pid}-`));
  if (files.length !== 1) failures.push(`rank ${rank}: expected one offload file of this rank in ${DIR}, found ${JSON.stringify(files)}`);
  // A resume: state loaded back from a state dict goes into the file again, not into the pool.
  const savedState = opt.stateDict();
  const mappedBefore = fsdp.offloadStats(net).mappedBytes;
  opt.loadStateDict(savedState);
  const reloaded = held() - base;
  if (!(reloaded <= buffers)) failures.push(`rank ${rank}: after loadStateDict the pool holds ${reloaded} bytes more; the loaded Adam state (${(8 * psi) / N} bytes) should be in the offload file`);
  if (!(fsdp.offloadStats(net).mappedBytes > mappedBefore)) failures.push(`rank ${rank}: loadStateDict put no state into the offload file`);
  const loadedState = opt.stateDict().state;
  for (const [key, entry] of Object.entries(savedState.state)) {
    for (const [name, v] of Object.entries(entry)) {
      if (!(v instanceof rt.Tensor)) continue;
      const [u, w] = [v.data(), (loadedState[Number(key)]![name] as rt.Tensor).data()];
      if (u.length !== w.length || u.some((x, j) => x !== w[j])) failures.push(`rank ${rank}: ${name} of parameter ${key} changed through stateDict → loadStateDict`);
    }
  }
  checks.push("offloaded bytes outside the pool");
  keep.push(net, opt);
}

// Bad offload options are refused with what was expected.
for (const [what, make, pattern] of [
  ["SHARD_GRAD_OP", () => new rt.FSDP(new nn.Linear(4, 4), { shardingStrategy: "SHARD_GRAD_OP", offload: { dir: DIR } }), /FULL_SHARD or HYBRID_SHARD/],
  ["tmpfs", () => fsdp.fullyShard(new nn.Linear(4, 4), { offload: { dir: "/dev/shm" } }), /tmpfs/],
  ["unknown key", () => fsdp.fullyShard(new nn.Linear(4, 4), { offload: { dir: DIR, optimizer: true } as never }), /optimizer/],
] as const) {
  try {
    make();
    failures.push(`rank ${rank}: offload with ${what} was accepted`);
  } catch (err) {
    if (!pattern.test((err as Error).message)) failures.push(`rank ${rank}: offload with ${what}: unclear error: ${(err as Error).message}`);
  }
}
checks.push("offload errors");

// The cap: 16 layers of 256 × 256 (Ψ = 1M), AdamW. DDP holds parameters, gradients and both moments
// whole (16Ψ bytes), over a cap of 12Ψ; FULL_SHARD on 2 ranks needs 16Ψ/2 plus a unit or two. The
// pool's held high-water mark (every live tensor, and dead ones not yet collected), over the
// pool's bytes before the model was built, must stay under the cap while the model is built whole
// and sharded, and again over three training steps. Between the two the dead whole model is
// collected, as the arena itself would once it needed the memory.
{
  const D = 256;
  const LAYERS = 16;
  const psi = LAYERS * D * D;
  const cap = 12 * psi;
  const ddpFormula = 16 * psi;
  if (!(ddpFormula > cap)) failures.push("the cap does not exclude DDP");
  const base = held();
  rt.memoryPool.resetHighWater();
  rt.manualSeed(0);
  const model = new nn.Sequential(...Array.from({ length: LAYERS }, () => new nn.Linear(D, D, { bias: false })));
  const net = new rt.FSDP(model, { autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]), syncModuleStates: false });
  const built = rt.memoryPool.stats()!.heldHighWater - base;
  if (!(built <= cap)) failures.push(`rank ${rank}: building and sharding the model took the pool's high-water mark to ${built} bytes, over the cap of ${cap}`);
  held();
  rt.memoryPool.resetHighWater();
  const opt = new optim.AdamW(net.parameters(), { lr: 1e-3 });
  const losses: number[] = [];
  for (let s = 0; s < 3; s++) {
    opt.zeroGrad();
    const l = (net.call(rt.randn([4, D], { generator: new rt.Generator(7) })) as rt.Tensor).square().mean();
    l.backward();
    losses.push(l.item());
    opt.step();
  }
  const peak = rt.memoryPool.stats()!.heldHighWater - base;
  memory.cap = { cap, ddpFormula, built, peak, losses };
  if (!(peak <= cap)) failures.push(`rank ${rank}: FULL_SHARD's pool high-water mark is ${peak} bytes, over the cap of ${cap} (DDP's state alone: ${ddpFormula})`);
  if (!(losses[2] < losses[0])) failures.push(`rank ${rank}: FULL_SHARD under the cap did not train: losses ${losses}`);
  checks.push("trains under a cap DDP's state exceeds");
  keep.push(net, opt);
  // The witness: DDP on the same model, measured the same way, goes over the cap.
  const ddpBase = held();
  rt.memoryPool.resetHighWater();
  rt.manualSeed(0);
  const ddp = new rt.DDP(new nn.Sequential(...Array.from({ length: LAYERS }, () => new nn.Linear(D, D, { bias: false }))));
  const ddpOpt = new optim.AdamW(ddp.parameters(), { lr: 1e-3 });
  for (let s = 0; s < 2; s++) {
    ddpOpt.zeroGrad();
    (ddp.call(rt.randn([4, D], { generator: new rt.Generator(7) })) as rt.Tensor).square().mean().backward();
    ddpOpt.step();
  }
  const ddpPeak = rt.memoryPool.stats()!.heldHighWater - ddpBase;
  memory.cap = { ...(memory.cap as object), ddpPeak };
  if (!(ddpPeak > cap)) failures.push(`rank ${rank}: DDP's pool high-water mark ${ddpPeak} is under the cap ${cap}: the cap proves nothing`);
  keep.push(ddp, ddpOpt);
}

dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ failures, checks, memory }));
process.exit(0);
