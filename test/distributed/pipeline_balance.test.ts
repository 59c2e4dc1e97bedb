import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { explain, launch } from "./harness.js";

const { nn, dist } = rt;
const { balanceByTime, balanceCost, pipeline } = dist.pipelining;

/** Every cut of n children into k non-empty consecutive stages, as children per stage. */
function* cuts(n: number, k: number): Generator<number[]> {
  if (k === 1) {
    yield [n];
    return;
  }
  for (let first = 1; first <= n - k + 1; first++) for (const rest of cuts(n - first, k - 1)) yield [first, ...rest];
}

const costliest = (costs: readonly number[], sizes: readonly number[]) => {
  let at = 0;
  return Math.max(...sizes.map((s) => costs.slice(at, (at += s)).reduce((a, b) => a + b, 0)));
};

/** The least costliest stage over every cut (the brute-force search balanceCost must match). */
const bruteForce = (costs: readonly number[], k: number) => Math.min(...[...cuts(costs.length, k)].map((s) => costliest(costs, s)));

describe("balanceCost (no processes)", () => {
  it("finds the cut whose costliest stage is cheapest, as a brute-force search over every cut", () => {
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 1; n <= 9; n++) {
      for (let k = 1; k <= n; k++) {
        for (let trial = 0; trial < 6; trial++) {
          // Integer costs make ties between cuts common, and the search must still reach the optimum.
          const costs = Array.from({ length: n }, () => Math.floor(random() * (trial < 3 ? 4 : 100)));
          const sizes = balanceCost(costs, k);
          assert.equal(sizes.length, k);
          assert.ok(sizes.every((s) => Number.isInteger(s) && s >= 1), `${costs} / ${k}: ${sizes}`);
          assert.equal(sizes.reduce((a, b) => a + b, 0), n);
          assert.equal(costliest(costs, sizes), bruteForce(costs, k), `costs ${costs}, ${k} stages: got ${sizes}`);
        }
      }
    }
  });

  it("refuses impossible requests with a sentence", () => {
    assert.throws(() => balanceCost([1, 2], 3), /stages must be an integer in 1..2 \(one cost per child\), got 3/);
    assert.throws(() => balanceCost([1, -2], 1), /costs must be finite and not negative/);
  });
});

describe("balanceByTime (one process)", () => {
  // One block does 256x the arithmetic of each small one, and at 256 rows several times what the five
  // small ones cost with their per-op overhead, so the only cut whose slower stage is fastest puts
  // it alone on the first stage, where the equal count of children (3 | 3) would not.
  const big = () => new nn.Sequential(new nn.Linear(16, 2048), new nn.ReLU(), new nn.Linear(2048, 16));
  const small = () => new nn.Sequential(new nn.Linear(16, 16), new nn.Tanh());

  it("times each child and picks the cut a brute-force search over those times picks; valid split points; gradients untouched", () => {
    rt.manualSeed(0);
    const model = new nn.Sequential(big(), small(), small(), small(), small(), small());
    const x = rt.randn([256, 16]);
    const y = rt.randn([256, 16]);
    const before = model.call(x) as rt.Tensor;
    nn.functional.mseLoss(before, y).backward();
    const grads = [...model.parameters()].map((p) => p.grad!.toArray());
    const b = balanceByTime(model, x, { stages: 2, lossFn: (o, t) => nn.functional.mseLoss(o, t), target: y, rounds: 3 });
    assert.equal(b.childMs.length, 6);
    assert.ok(b.childMs.every((t) => Number.isFinite(t) && t >= 0));
    assert.equal(costliest(b.childMs, b.sizes), bruteForce(b.childMs, 2));
    assert.deepEqual(b.splitPoints, ["1"]);
    assert.deepEqual(b.sizes, [1, 5]);
    assert.ok(Math.abs(b.stageMs[0]! - b.childMs[0]!) < 1e-9 && Math.abs(b.stageMs[1]! - b.childMs.slice(1).reduce((s, t) => s + t, 0)) < 1e-9);
    // The split points are pipeline()'s, and the parameters' gradients are as they were.
    const pipe = pipeline(model, { splitPoints: b.splitPoints });
    assert.equal(pipe.numStages, 2);
    assert.deepEqual([...model.parameters()].map((p) => p.grad!.toArray()), grads);
  });

  it("leaves batch norm's running statistics and the random generator as they were", () => {
    rt.manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(8, 16), new nn.BatchNorm1d(16), new nn.Dropout(0.5), new nn.Linear(16, 4));
    const x = rt.randn([32, 8]);
    const stats = model.buffers().map((b) => b.toArray());
    const state = rt.getRngState();
    const next = rt.randn([4]).toArray();
    rt.setRngState(state);
    balanceByTime(model, x, { stages: 2, rounds: 1, repeats: 1 });
    assert.deepEqual(model.buffers().map((b) => b.toArray()), stats);
    assert.deepEqual(rt.randn([4]).toArray(), next);
  });

  it("cuts into as many stages as asked, split points in the model's order", () => {
    rt.manualSeed(0);
    const model = new nn.Sequential(small(), big(), small(), small(), big(), small(), small());
    const b = balanceByTime(model, rt.randn([256, 16]), { stages: 3, rounds: 2, clock: "wall" });
    assert.equal(b.splitPoints.length, 2);
    const at = b.splitPoints.map(Number);
    assert.ok(at[0]! > 0 && at[0]! < at[1]! && at[1]! < 7, `${b.splitPoints}`);
    assert.equal(costliest(b.childMs, b.sizes), bruteForce(b.childMs, 3));
    assert.equal(pipeline(model, { splitPoints: b.splitPoints }).numStages, 3);
    // The two big blocks (children 1 and 4) land on different stages.
    const stageOf = (child: number) => at.filter((s) => s <= child).length;
    assert.notEqual(stageOf(1), stageOf(4), `${b.splitPoints}`);
  });

  it("refuses bad input with a sentence", () => {
    const model = new nn.Sequential(small(), small());
    const x = rt.randn([4, 16]);
    assert.throws(() => balanceByTime(model, x, { stages: 3 }), /stages must be an integer in 1..2 \(the model's children\), got 3/);
    assert.throws(() => balanceByTime(new nn.Linear(2, 2), x, { stages: 1 }), /the model must be an nn.Sequential/);
    assert.throws(() => balanceByTime(model, x, { stages: 2, lossFn: (o) => o.sum() }), /give lossFn and target together/);
    assert.throws(() => balanceByTime(model, x, { stages: 2, rounds: 0 }), /rounds must be a positive integer, got 0/);
    assert.throws(() => balanceByTime(model, x, { stages: 2, clock: "gpu" as "cpu" }), /clock must be "cpu" or "wall"/);
    assert.throws(() => balanceByTime(model, x, { stages: 2, splits: 1 } as never), /splits/);
  });
});

describe("balanceByTime over a group (2 ranks)", () => {
  it("every rank gets rank 0's times and split, and 1F1B over it matches the unsplit model", async () => {
    const results = await launch({ world: 2, script: "pipeline_balance.ts", timeoutMs: 120_000 });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const [a, b] = results.map((r) => r.result as { splitPoints: string[]; childMs: number[]; outputMatches: boolean | null });
    assert.deepEqual(a!.childMs, b!.childMs);
    assert.deepEqual(a!.splitPoints, b!.splitPoints);
    assert.equal(a!.splitPoints.length, 1);
    assert.equal(b!.outputMatches, true);
  });
});
