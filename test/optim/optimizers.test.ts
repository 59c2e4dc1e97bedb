// SGD, Adam and AdamW against PyTorch 1.13 (test/fixtures/nn/optim.json, tools/nn/gen_optim_fixtures.py):
// the same tiny model from identical weights on identical batches, step for step.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { crossEntropy, ones, tensor } from "../../src/ops/index.js";
import { Tensor } from "../../src/tensor/tensor.js";
import { detInit, hashLabels, hashTensor } from "../nn/det.js";
import { assertClose, decode, readFixture, type Encoded } from "../nn/fixture.js";

interface OptimizerCase {
  name: string;
  optimizer: "SGD" | "Adam" | "AdamW";
  options: Record<string, unknown>;
  groups?: Record<string, unknown>[];
  clip: number | null;
  losses: number[];
  params: Record<string, Encoded>;
}
interface Fixture {
  optimizers: OptimizerCase[];
  resume: {
    state: Record<string, Record<string, Encoded | number>>;
    param_groups: Record<string, unknown>[];
    paramsAfter5: Record<string, Encoded>;
    losses: number[];
    paramsAfter10: Record<string, Encoded>;
  };
}
const fixture = readFixture<Fixture>("optim.json");

const camel = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));

function tiny(): nn.Sequential {
  return detInit(new nn.Sequential(new nn.Linear(4, 5), new nn.Tanh(), new nn.Linear(5, 3))) as nn.Sequential;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function makeOptimizer(kind: string, params: any, options: Record<string, unknown>): optim.Optimizer<any> {
  if (kind === "SGD") return new optim.SGD(params, options as { lr: number });
  if (kind === "Adam") return new optim.Adam(params, options);
  return new optim.AdamW(params, options);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function train(model: nn.Module, opt: optim.Optimizer<any>, steps: number, clip: number | null = null, start = 0): number[] {
  const losses: number[] = [];
  for (let s = start; s < start + steps; s++) {
    opt.zeroGrad();
    const loss = crossEntropy(model.call(hashTensor([8, 4], 100 + s)) as Tensor, hashLabels([8], 200 + s, 3));
    loss.backward();
    if (clip !== null) nn.utils.clipGradNorm(model.parameters(), clip);
    opt.step();
    losses.push(loss.item());
  }
  return losses;
}

function assertLosses(actual: number[], expected: number[], what: string): void {
  expected.forEach((e, i) => assert.ok(Math.abs(actual[i] - e) <= 1e-5 * Math.abs(e) + 1e-6, `${what}: loss at step ${i} is ${actual[i]}, PyTorch has ${e}`));
}

describe("optimizers against PyTorch", () => {
  for (const c of fixture.optimizers) {
    it(c.name, () => {
      const model = tiny();
      const params = model.parameters();
      const groups = c.groups?.map((g) => ({ ...camel(g), params: (g.params as number[]).map((i) => params[i]) }));
      const opt = makeOptimizer(c.optimizer, groups ?? params, camel(c.options));
      assertLosses(train(model, opt, 10, c.clip), c.losses, c.name);
      for (const [name, p] of model.namedParameters()) assertClose(p, c.params[name], `${c.name}: ${name}`, 1e-5, 1e-6);
    });
  }
});

describe("optimizer state dicts", () => {
  it("loads PyTorch's Adam state dict and continues exactly as PyTorch does", () => {
    const r = fixture.resume;
    const model = tiny();
    const sd = model.stateDict();
    for (const [name, enc] of Object.entries(r.paramsAfter5)) sd[name].copy_(decode(enc));
    const opt = new optim.Adam(model.parameters(), { lr: 1 });
    const state: Record<number, Record<string, Tensor | number>> = {};
    for (const [k, s] of Object.entries(r.state)) {
      state[Number(k)] = Object.fromEntries(Object.entries(s).map(([n, v]) => [n, typeof v === "number" ? tensor([v]).reshape([]) : decode(v)]));
    }
    opt.loadStateDict({ state, param_groups: r.param_groups });
    assert.equal(opt.paramGroups[0].lr, 0.01);
    assert.equal(opt.paramGroups[0].weightDecay, 0.01);
    assertLosses(train(model, opt, 5, null, 5), r.losses, "resumed");
    for (const [name, p] of model.namedParameters()) assertClose(p, r.paramsAfter10[name], `resumed: ${name}`, 1e-5, 1e-6);
  });

  it("round-trips its own state dict in PyTorch's structure", () => {
    const a = tiny();
    const optA = new optim.AdamW(a.parameters(), { lr: 1e-2, amsgrad: true });
    train(a, optA, 3);
    const sd = optA.stateDict();
    assert.deepEqual(Object.keys(sd.state[0]).sort(), ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]);
    assert.deepEqual(Object.keys(sd.param_groups[0]).sort(), ["amsgrad", "betas", "eps", "lr", "maximize", "params", "weight_decay"]);
    const b = tiny();
    b.loadStateDict(a.stateDict());
    const optB = new optim.AdamW(b.parameters(), { lr: 5 });
    optB.loadStateDict(sd);
    const la = train(a, optA, 3, null, 3);
    const lb = train(b, optB, 3, null, 3);
    assert.deepEqual(lb, la);
  });

  it("refuses a state dict whose groups or shapes do not fit, changing nothing", () => {
    const model = tiny();
    const opt = new optim.Adam(model.parameters(), { lr: 1e-2 });
    train(model, opt, 1);
    const good = opt.stateDict();
    const wrongGroups = { ...good, param_groups: [...good.param_groups, good.param_groups[0]] };
    assert.throws(() => opt.loadStateDict(wrongGroups), /2 parameter group\(s\), this optimizer has 1/);
    const wrongShape = { ...good, state: { ...good.state, 0: { ...good.state[0], exp_avg: ones([2]) } } };
    assert.throws(() => opt.loadStateDict(wrongShape), /"exp_avg" of parameter 0 has shape \[2\] but the parameter has \[5, 4\]/);
    assert.equal(opt.state.get(model.parameters()[0])!.exp_avg, good.state[0].exp_avg);
  });
});

describe("optimizer arguments", () => {
  it("reject bad hyperparameters and parameters with messages naming them", () => {
    const p = [new nn.Parameter(ones([2]))];
    assert.throws(() => new optim.SGD(p, {} as { lr: number }), /learning rate is required/);
    assert.throws(() => new optim.Adam(p, { lr: -1 }), /invalid learning rate -1/);
    assert.throws(() => new optim.Adam(p, { betas: [0.9, 1] }), /invalid beta at index 1/);
    assert.throws(() => new optim.SGD(p, { lr: 0.1, nesterov: true }), /Nesterov/);
    assert.throws(() => new optim.Adam([]), /empty parameter list/);
    assert.throws(() => new optim.Adam([p[0], p[0]]), /more than one parameter group/);
    assert.throws(() => new optim.Adam([ones([2]).requiresGrad_().mul(2)]), /leaf tensors/);
  });

  it("addParamGroup fills unspecified options from the defaults", () => {
    const a = new nn.Parameter(ones([2]));
    const b = new nn.Parameter(ones([3]));
    const opt = new optim.SGD([a], { lr: 0.1, momentum: 0.9 });
    opt.addParamGroup({ params: [b], lr: 0.01 });
    assert.equal(opt.paramGroups[1].lr, 0.01);
    assert.equal(opt.paramGroups[1].momentum, 0.9);
  });

  it("zeroGrad drops gradients by default and zeroes them with setToNone = false", () => {
    const p = new nn.Parameter(ones([2]));
    const opt = new optim.SGD([p], { lr: 0.1 });
    p.mul(3).sum().backward();
    opt.zeroGrad(false);
    assert.deepEqual(p.grad!.toArray(), [0, 0]);
    opt.zeroGrad();
    assert.equal(p.grad, null);
  });

  it("step(closure) returns the closure's loss", () => {
    const p = new nn.Parameter(tensor([2]));
    const opt = new optim.SGD([p], { lr: 0.25 });
    const loss = opt.step(() => {
      opt.zeroGrad();
      const l = p.mul(p).sum();
      l.backward();
      return l;
    });
    assert.equal(loss, 4);
    assert.deepEqual(p.toArray(), [1]);
  });
});
