import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import type { DdpComm } from "../../src/parallel/comm.js";
import { overlapPays } from "../../src/parallel/overlap_policy.js";

const { nn } = rt;

/**
 * A comm of two "ranks" whose other rank sent gradients equal to this one's: every reduction
 * leaves each element (g + g) / divisor, and each call's tensors are recorded, so that the
 * reducer's choice of what to reduce can be checked without a process group.
 */
function recordingComm(onCall: (blocking: boolean) => void = () => {}): { comm: DdpComm; calls: rt.Tensor[][] } {
  const calls: rt.Tensor[][] = [];
  const reduce = (tensors: readonly rt.Tensor[], divisor: number, blocking: boolean) => {
    onCall(blocking);
    calls.push([...tensors]);
    rt.noGrad(() => tensors.forEach((t) => t.mul_(2 / divisor)));
  };
  const comm: DdpComm = {
    rank: 0,
    worldSize: 2,
    allReduceAverageAsync(tensors, divisor) {
      reduce(tensors, divisor, false);
      return { wait() {} };
    },
    allReduceAverage: (tensors, divisor) => reduce(tensors, divisor, true),
    broadcast() {},
    allGatherInts: (v) => [v, v],
  };
  return { comm, calls };
}

function model(): rt.nn.Module {
  rt.manualSeed(0);
  return new nn.Sequential(new nn.Linear(4, 6), new nn.ReLU(), new nn.Linear(6, 2));
}

function backward(m: rt.nn.Module): void {
  rt.manualSeed(1);
  rt.mseLoss(m.call(rt.randn([3, 4])) as rt.Tensor, rt.randn([3, 2])).backward();
}

test("DDP reduces the .grad tensors themselves, with no copy, and leaves the averaged gradients", () => {
  const ref = model();
  backward(ref);
  const { comm, calls } = recordingComm();
  const ddp = new rt.DDP(model(), { comm, bucketCapMb: 0.00001, overlapReduction: true });
  backward(ddp);
  const grads = ddp.module.parameters().map((p) => p.grad!);
  assert.ok(calls.length > 1, "expected several buckets");
  const reduced = calls.flat();
  assert.equal(reduced.length, grads.length);
  for (const g of grads) assert.ok(reduced.includes(g), "a gradient was reduced through a copy");
  // Both "ranks" had the same gradient, so the average is the one-process gradient.
  ref.parameters().forEach((p, i) => assert.deepEqual(Array.from(grads[i].data()), Array.from(p.grad!.data())));
});

test("DDP gives a gradient that shares memory with another its own copy, so no memory is reduced twice", () => {
  const { comm, calls } = recordingComm();
  const m = model();
  const ddp = new rt.DDP(m, { comm, bucketCapMb: 0.00001, overlapReduction: true });
  const [, b1, w2] = m.parameters();
  // A user-made layout where two gradients would accumulate into the same memory.
  const shared = rt.zeros([12]);
  w2.grad = shared.view([2, 6]);
  b1.grad = shared.narrow(0, 0, 6);
  backward(ddp);
  const covered = calls.flat().filter((t) => t.storage === shared.storage);
  assert.equal(covered.length, 1, "both aliasing gradients were reduced in place");
  assert.equal([w2, b1].filter((p) => p.grad!.storage === shared.storage).length, 1);
});

test("with gradientAsBucketView, each bucket goes through its flat buffer and .grad becomes a view of it", () => {
  const { comm, calls } = recordingComm();
  const ddp = new rt.DDP(model(), { comm, gradientAsBucketView: true, overlapReduction: true });
  backward(ddp);
  assert.equal(calls.length, ddp.reducer.buckets.length);
  for (const [i, call] of calls.entries()) assert.deepEqual(call, [ddp.reducer.buckets[i].buffer]);
  for (const p of ddp.module.parameters()) assert.equal(p.grad!.storage, ddp.reducer.buckets[0].buffer.storage);
});

test("overlapReduction: true starts each bucket's all-reduce on the comm thread as it fills, in bucket order, during backward", () => {
  const seen: { blocking: boolean; gradsMissing: number }[] = [];
  let ddp: rt.DDP | null = null;
  const { comm, calls } = recordingComm((blocking) => seen.push({ blocking, gradsMissing: ddp!.module.parameters().filter((p) => p.grad === null).length }));
  ddp = new rt.DDP(model(), { comm, bucketCapMb: 0.00001, overlapReduction: true });
  backward(ddp);
  assert.equal(calls.length, ddp.reducer.buckets.length);
  assert.ok(seen.every((c) => !c.blocking), "a bucket was reduced blocking");
  assert.ok(seen[0].gradsMissing > 0, "the first bucket started only after backward had produced every gradient");
  const params = ddp.module.parameters();
  calls.forEach((call, b) => assert.deepEqual(call, ddp!.reducer.buckets[b].paramIndices.map((i) => params[i].grad)));
});

test("overlapReduction: false reduces every bucket in one blocking all-reduce when backward ends, with the same result", () => {
  const ref = model();
  backward(ref);
  const seen: { blocking: boolean; gradsMissing: number }[] = [];
  let ddp: rt.DDP | null = null;
  const { comm, calls } = recordingComm((blocking) => seen.push({ blocking, gradsMissing: ddp!.module.parameters().filter((p) => p.grad === null).length }));
  ddp = new rt.DDP(model(), { comm, bucketCapMb: 0.00001, overlapReduction: false });
  backward(ddp);
  assert.deepEqual(seen, [{ blocking: true, gradsMissing: 0 }]);
  const params = ddp.module.parameters();
  // Bucket order, and each bucket's gradients in its own order: the same sequence as the overlapped path.
  assert.deepEqual(calls[0], ddp.reducer.buckets.flatMap((b) => b.paramIndices.map((i) => params[i].grad)));
  ref.parameters().forEach((p, i) => assert.deepEqual(Array.from(params[i].grad!.data()), Array.from(p.grad!.data())));
  // A communication hook reduces bucket by bucket whatever the option says.
  const hooked: number[] = [];
  const withHook = new rt.DDP(model(), { comm: recordingComm().comm, bucketCapMb: 0.00001, overlapReduction: false });
  withHook.registerCommHook(null, (_state, bucket) => {
    hooked.push(bucket.index());
    return { wait: () => bucket.buffer() };
  });
  backward(withHook);
  assert.deepEqual(hooked, withHook.reducer.buckets.map((b) => b.index));
});

test('overlapReduction "auto" overlaps unless every core of a one-host job already runs a rank', () => {
  const host = (world: number, local: number) => ({ WORLD_SIZE: String(world), LOCAL_WORLD_SIZE: String(local) });
  // 2 single-threaded ranks on 2 cores: a comm thread could only take a core from a rank.
  assert.equal(overlapPays({ env: host(2, 2), cores: 2, threads: 1 }), false);
  assert.equal(overlapPays({ env: host(4, 4), cores: 6, threads: 1 }), false);
  assert.equal(overlapPays({ env: host(2, 2), cores: 8, threads: 4 }), false);
  assert.equal(overlapPays({ env: host(2, 2), cores: 4, threads: 1 }), true);
  assert.equal(overlapPays({ env: host(2, 2), cores: 16, threads: 4 }), true);
  // Across hosts most of an all-reduce is wire time: overlap pays whatever the cores.
  assert.equal(overlapPays({ env: host(4, 2), cores: 2, threads: 1 }), true);
  // No launcher layout: keep the overlap.
  assert.equal(overlapPays({ env: {}, cores: 1, threads: 1 }), true);
  assert.throws(() => new rt.DDP(model(), { comm: recordingComm().comm, overlapReduction: "yes" as never }), /overlapReduction must be true, false or "auto", got "yes"/);
});
