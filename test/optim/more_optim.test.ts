// RMSprop, Adagrad and the schedulers of issue 15 against PyTorch 2.13
// (test/fixtures/nn/optim_more.json, written by tools/nn/gen_optim_more_fixtures.py).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { crossEntropy, ones, tensor } from "../../src/ops/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashLabels, hashTensor } from "../nn/det.js";
import { assertClose, readFixture, type Encoded } from "../nn/fixture.js";

interface Fixture {
  optimizers: { name: string; optimizer: "RMSprop" | "Adagrad"; options: Record<string, unknown>; losses: number[]; params: Record<string, Encoded> }[];
  schedulers: { name: string; lrs: number[] }[];
  plateau: { name: string; options: Record<string, unknown>; metrics: number[]; lrs: number[] }[];
}
const fixture = readFixture<Fixture>("optim_more.json");
const camel = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));

function tiny(): nn.Sequential {
  return detInit(new nn.Sequential(new nn.Linear(4, 5), new nn.Tanh(), new nn.Linear(5, 3))) as nn.Sequential;
}

describe("RMSprop and Adagrad against PyTorch", () => {
  for (const c of fixture.optimizers) {
    it(c.name, () => {
      const model = tiny();
      const opt = c.optimizer === "RMSprop" ? new optim.RMSprop(model.parameters(), camel(c.options)) : new optim.Adagrad(model.parameters(), camel(c.options));
      for (let s = 0; s < 10; s++) {
        opt.zeroGrad();
        const loss = crossEntropy(model.call(hashTensor([8, 4], 100 + s)) as Tensor, hashLabels([8], 200 + s, 3));
        loss.backward();
        opt.step();
        const e = c.losses[s];
        assert.ok(Math.abs(loss.item() - e) <= 1e-5 * Math.abs(e) + 1e-6, `${c.name}: loss at step ${s} is ${loss.item()}, PyTorch has ${e}`);
      }
      for (const [name, p] of model.namedParameters()) assertClose(p, c.params[name], `${c.name}: ${name}`, 1e-5, 1e-6);
    });
  }

  it("keeps PyTorch's state names, and Adagrad creates its sum at construction as PyTorch does", () => {
    const model = tiny();
    const ada = new optim.Adagrad(model.parameters(), { initialAccumulatorValue: 0.25 });
    assert.deepEqual(Object.keys(ada.stateDict().state[0]).sort(), ["step", "sum"]);
    assert.equal((ada.stateDict().state[0].sum as Tensor).data()[0], 0.25);
    const rms = new optim.RMSprop(model.parameters(), { momentum: 0.9, centered: true });
    model.call(hashTensor([2, 4], 1)).sum().backward();
    rms.step();
    assert.deepEqual(Object.keys(rms.stateDict().state[0]).sort(), ["grad_avg", "momentum_buffer", "square_avg", "step"]);
    assert.deepEqual(rms.paramGroups[0].lr, 1e-2);
  });
});

const opt = () => new optim.SGD([new nn.Parameter(ones([2]))], { lr: 0.1, momentum: 0.9 });
const builders: Record<string, (o: optim.SGD) => optim.LRScheduler> = {
  multistep: (o) => new optim.MultiStepLR(o, [2, 5, 5, 8], { gamma: 0.5 }),
  exponential: (o) => new optim.ExponentialLR(o, 0.8),
  linear_default: (o) => new optim.LinearLR(o),
  linear_down: (o) => new optim.LinearLR(o, { startFactor: 1, endFactor: 0.1, totalIters: 4 }),
  sequential_warmup_cosine: (o) =>
    new optim.SequentialLR(o, [new optim.LinearLR(o, { startFactor: 0.1, totalIters: 3 }), new optim.CosineAnnealingLR(o, 6, { etaMin: 0.001 })], [3]),
  sequential_three: (o) =>
    new optim.SequentialLR(o, [new optim.ExponentialLR(o, 0.9), new optim.StepLR(o, 2, { gamma: 0.5 }), new optim.MultiStepLR(o, [1, 3], { gamma: 0.3 })], [3, 7]),
};

describe("schedulers against PyTorch's lr sequences", () => {
  for (const c of fixture.schedulers) {
    it(c.name, () => {
      const o = opt();
      const sched = builders[c.name](o);
      const lrs = [o.paramGroups[0].lr];
      for (let i = 1; i < c.lrs.length; i++) {
        o.step();
        sched.step();
        lrs.push(o.paramGroups[0].lr);
      }
      c.lrs.forEach((e, i) => assert.ok(Math.abs(lrs[i] - e) <= 1e-12 + 1e-9 * Math.abs(e), `${c.name}: lr after ${i} steps is ${lrs[i]}, PyTorch has ${e}`));
      assert.equal(sched.getLastLr()[0], lrs[lrs.length - 1]);
    });
  }

  for (const c of fixture.plateau) {
    it(`ReduceLROnPlateau ${c.name}`, () => {
      const o = new optim.SGD([new nn.Parameter(ones([2]))], { lr: 0.1 });
      const sched = new optim.ReduceLROnPlateau(o, camel(c.options));
      c.metrics.forEach((m, i) => {
        sched.step(i % 2 === 0 ? m : tensor([m], { dtype: "float64" }).reshape([]));
        assert.ok(Math.abs(o.paramGroups[0].lr - c.lrs[i]) <= 1e-12, `${c.name}: lr after metric ${i} is ${o.paramGroups[0].lr}, PyTorch has ${c.lrs[i]}`);
      });
    });
  }

  it("a SequentialLR resumes from its state dict", () => {
    const make = (o: optim.SGD) => builders.sequential_warmup_cosine(o);
    const a = opt();
    const sa = make(a);
    for (let i = 0; i < 5; i++) sa.step();
    const b = opt();
    const sb = make(b);
    sb.loadStateDict(JSON.parse(JSON.stringify(sa.stateDict())));
    b.paramGroups[0].lr = a.paramGroups[0].lr;
    for (let i = 0; i < 4; i++) {
      sa.step();
      sb.step();
      assert.equal(b.paramGroups[0].lr, a.paramGroups[0].lr);
    }
  });
});
