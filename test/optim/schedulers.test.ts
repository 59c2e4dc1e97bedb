// Learning-rate schedulers against PyTorch 1.13's values, step by step (test/fixtures/nn/optim.json).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { ones } from "../../src/ops/index.js";
import { readFixture } from "../nn/fixture.js";

interface SchedulerCase {
  name: string;
  lrs: number[];
  momentum?: number[];
  stateDictKeys: string[];
}
const cases = readFixture<{ schedulers: SchedulerCase[] }>("optim.json").schedulers;

const params = () => [new nn.Parameter(ones([2]))];
const sgd = () => new optim.SGD(params(), { lr: 0.1, momentum: 0.9 });
const adam = () => new optim.Adam(params(), { lr: 0.1 });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const builders: Record<string, () => [optim.Optimizer<any>, optim.LRScheduler]> = {
  step_lr: () => {
    const o = sgd();
    return [o, new optim.StepLR(o, 3, { gamma: 0.5 })];
  },
  cosine_annealing: () => {
    const o = sgd();
    return [o, new optim.CosineAnnealingLR(o, 5, { etaMin: 0.01 })];
  },
  lambda_lr: () => {
    const o = sgd();
    return [o, new optim.LambdaLR(o, (e) => 0.95 ** e)];
  },
  warmup_cosine: () => {
    const o = adam();
    return [o, optim.getCosineScheduleWithWarmup(o, 3, 12)];
  },
  one_cycle_cos_sgd: () => {
    const o = sgd();
    return [o, new optim.OneCycleLR(o, 0.1, { totalSteps: 20 })];
  },
  one_cycle_linear_three_phase_adam: () => {
    const o = adam();
    return [o, new optim.OneCycleLR(o, 0.05, { epochs: 4, stepsPerEpoch: 5, annealStrategy: "linear", threePhase: true, pctStart: 0.25 })];
  },
};

const close = (a: number, e: number) => Math.abs(a - e) <= 1e-12 + 1e-12 * Math.abs(e);

describe("schedulers against PyTorch", () => {
  for (const c of cases) {
    it(c.name, () => {
      const [opt, sched] = builders[c.name]();
      const group = opt.paramGroups[0] as Record<string, unknown>;
      const momentum = () => (Array.isArray(group.betas) ? (group.betas as number[])[0] : (group.momentum as number));
      const lrs = [group.lr as number];
      const moms = [momentum()];
      for (let i = 1; i < c.lrs.length; i++) {
        opt.step();
        sched.step();
        lrs.push(group.lr as number);
        moms.push(momentum());
      }
      c.lrs.forEach((e, i) => assert.ok(close(lrs[i], e), `lr after ${i} steps is ${lrs[i]}, PyTorch has ${e}`));
      c.momentum?.forEach((e, i) => assert.ok(close(moms[i], e), `momentum after ${i} steps is ${moms[i]}, PyTorch has ${e}`));
      assert.deepEqual(sched.getLastLr(), [lrs[lrs.length - 1]]);
      const ours = Object.keys(sched.stateDict());
      for (const key of ["last_epoch", "base_lrs", "_last_lr", "_step_count"]) assert.ok(c.stateDictKeys.includes(key) && ours.includes(key), key);
    });
  }

  it("a scheduler restored from its state dict continues where the original was", () => {
    const [optA, a] = builders.cosine_annealing();
    for (let i = 0; i < 7; i++) a.step();
    const [optB, b] = builders.cosine_annealing();
    b.loadStateDict(a.stateDict());
    optB.paramGroups[0].lr = optA.paramGroups[0].lr;
    for (let i = 0; i < 5; i++) {
      a.step();
      b.step();
      assert.equal(optB.paramGroups[0].lr, optA.paramGroups[0].lr);
    }
  });

  it("OneCycleLR refuses to step past totalSteps, as PyTorch does", () => {
    const o = sgd();
    const s = new optim.OneCycleLR(o, 0.1, { totalSteps: 2 });
    s.step();
    s.step();
    assert.throws(() => s.step(), /tried to step 3 times, but the schedule has totalSteps = 2/);
  });
});
