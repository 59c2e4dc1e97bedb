// bfloat16 parameters through float32 master weights: each optimizer, fed the same gradients, keeps
// a bfloat16 parameter equal to its float32 twin rounded to bfloat16, step after step; the master
// survives a state dict round trip; an outside write to the parameter resyncs the master.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as optim from "../../src/optim/index.js";
import { manualSeed, randn, type Tensor } from "../../src/index.js";

const bits = (t: Tensor) => Array.from(t.contiguous().storage.data as Uint16Array).slice(0, t.numel);

type Make = (params: Tensor[]) => optim.Optimizer<{ lr: number }>;
const OPTIMIZERS: [string, Make][] = [
  ["SGD momentum nesterov", (p) => new optim.SGD(p, { lr: 0.01, momentum: 0.9, nesterov: true, weightDecay: 1e-3 })],
  ["Adam amsgrad", (p) => new optim.Adam(p, { lr: 1e-3, amsgrad: true })],
  ["AdamW", (p) => new optim.AdamW(p, { lr: 1e-3, weightDecay: 0.1 })],
  ["RMSprop", (p) => new optim.RMSprop(p, { lr: 1e-3, momentum: 0.5 })],
  ["Adagrad", (p) => new optim.Adagrad(p, { lr: 1e-2 })],
];

/** A bfloat16 parameter and a float32 twin holding the same values, with the same gradient each step. */
function pair(shape: number[]): { low: Tensor; twin: Tensor } {
  const low = randn(shape).to("bfloat16").requiresGrad_();
  const twin = low.detach().float().requiresGrad_();
  return { low, twin };
}

function feed(low: Tensor, twin: Tensor): void {
  const g = randn(low.shape).to("bfloat16");
  low.grad = g;
  twin.grad = g.float();
}

describe("bfloat16 parameters with float32 master weights", () => {
  for (const [name, make] of OPTIMIZERS) {
    it(`${name}: the bfloat16 parameter is its float32 twin rounded, every step`, () => {
      manualSeed(3);
      const { low, twin } = pair([7, 5]);
      const other = randn([4]).requiresGrad_();
      const a = make([low, other]), b = make([twin, other.detach().clone().requiresGrad_()]);
      for (let step = 0; step < 12; step++) {
        feed(low, twin);
        other.grad = randn([4]);
        a.step();
        b.step();
        assert.equal(low.dtype, "bfloat16");
        assert.deepEqual(bits(low), bits(twin.detach().to("bfloat16")), `step ${step}`);
      }
    });
  }

  it("keeps updates smaller than bfloat16's spacing, which a bfloat16-only update would round away", () => {
    const p = randn([64]).add(10).to("bfloat16").requiresGrad_();
    const before = p.float();
    const opt = new optim.SGD([p], { lr: 1e-3 });
    for (let i = 0; i < 40; i++) {
      p.grad = randn([64]).mul(0).add(1).to("bfloat16");
      opt.step();
    }
    // 40 steps of 1e-3 = 0.04 ≈ one bfloat16 spacing at 10 (0.0625) or more: some weights moved.
    const moved = before.sub(p.float()).abs().max().item();
    assert.ok(moved > 0, "the accumulated updates reached the bfloat16 parameter");
  });

  it("round-trips the master and its float32 state through stateDict/loadStateDict", () => {
    manualSeed(5);
    const { low, twin } = pair([3, 4]);
    const a = new optim.Adam([low], { lr: 1e-2 }), b = new optim.Adam([twin], { lr: 1e-2 });
    for (let i = 0; i < 3; i++) {
      feed(low, twin);
      a.step();
      b.step();
    }
    const sd = a.stateDict();
    const master = sd.state[0].master_param as Tensor;
    assert.equal(master.dtype, "float32");
    assert.equal((sd.state[0].exp_avg as Tensor).dtype, "float32");
    assert.deepEqual(Array.from(master.storage.data as Float32Array).slice(0, 12), Array.from(twin.detach().contiguous().storage.data as Float32Array).slice(0, 12));
    const resumed = low.detach().clone().requiresGrad_();
    const c = new optim.Adam([resumed], { lr: 1e-2 });
    c.loadStateDict(sd);
    for (let i = 0; i < 3; i++) {
      feed(resumed, twin);
      c.step();
      b.step();
      assert.deepEqual(bits(resumed), bits(twin.detach().to("bfloat16")));
    }
  });

  it("takes the master again from the parameter after an outside write", () => {
    const p = randn([6]).to("bfloat16").requiresGrad_();
    const opt = new optim.SGD([p], { lr: 0.1 });
    p.grad = randn([6]).to("bfloat16");
    opt.step();
    const fresh = randn([6]).to("bfloat16");
    p.detach().copy_(fresh);
    p.grad = randn([6]).mul(0).to("bfloat16");
    opt.step();
    assert.deepEqual(bits(p), bits(fresh));
  });
});
