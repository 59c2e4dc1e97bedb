import { test } from "node:test";
import assert from "node:assert/strict";
import * as rt from "../../src/index.js";
import type { DdpComm } from "../../src/parallel/comm.js";

const { nn } = rt;

/**
 * A comm of two "ranks" whose other rank sent gradients equal to this one's: every reduction
 * leaves each element (g + g) / divisor, and each call's tensors are recorded, so that the
 * reducer's choice of what to reduce can be checked without a process group.
 */
function recordingComm(): { comm: DdpComm; calls: rt.Tensor[][] } {
  const calls: rt.Tensor[][] = [];
  const comm: DdpComm = {
    rank: 0,
    worldSize: 2,
    allReduceAverageAsync(tensors, divisor) {
      calls.push([...tensors]);
      rt.noGrad(() => tensors.forEach((t) => t.mul_(2 / divisor)));
      return { wait() {} };
    },
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
  const ddp = new rt.DDP(model(), { comm, bucketCapMb: 0.00001 });
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
  const ddp = new rt.DDP(m, { comm, bucketCapMb: 0.00001 });
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
  const ddp = new rt.DDP(model(), { comm, gradientAsBucketView: true });
  backward(ddp);
  assert.equal(calls.length, ddp.reducer.buckets.length);
  for (const [i, call] of calls.entries()) assert.deepEqual(call, [ddp.reducer.buckets[i].buffer]);
  for (const p of ddp.module.parameters()) assert.equal(p.grad!.storage, ddp.reducer.buckets[0].buffer.storage);
});
