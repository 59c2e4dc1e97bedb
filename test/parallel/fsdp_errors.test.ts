import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../src/index.js";

const { nn, fsdp, dist, checkpoint } = rt;

// One process (no RANK): fullyShard keeps whole parameters, and every check at construction runs.
await dist.initProcessGroup();

class Tied extends nn.Module {
  emb = new nn.Embedding(10, 4);
  head = new nn.Linear(4, 10, { bias: false });
  constructor() {
    super();
    this.head.weight = this.emb.weight;
  }
}

test("a parameter shared across units is refused, naming it and the unit that has it", () => {
  const m = new Tied();
  fsdp.fullyShard(m.head);
  assert.throws(() => fsdp.fullyShard(m), /parameter emb\.weight of Tied is already sharded by unit 'Linear'.*tied weights/);
});

test("a mixed-precision policy that cannot apply names the parameter; unknown keys are refused", () => {
  const m = new nn.Sequential(new nn.Linear(2, 2), new nn.Linear(2, 2).double());
  assert.throws(() => fsdp.fullyShard(m, { mixedPrecision: { paramDtype: "bfloat16" } }), /parameter 1\.weight is float64/);
  assert.throws(() => fsdp.fullyShard(new nn.Linear(2, 2), { mixedPrecision: { bufferDtype: "bfloat16" as "float32" } }), /bufferDtype "bfloat16" cannot apply: ringtorch computes in float32/);
  assert.throws(() => fsdp.fullyShard(new nn.Linear(2, 2), { mixedPrecision: { param_dtype: "bfloat16" } as never }), /unknown option "param_dtype"; did you mean paramDtype/);
  assert.throws(() => new rt.FSDP(new nn.Linear(2, 2), { shardingStrategy: "ZERO3" as never }), /shardingStrategy must be one of FULL_SHARD/);
});

test("prefetch options are checked: limitAllGathers at least 1, ZeRO-2's kept parameters only without resharding after forward and without a lowered paramDtype", () => {
  assert.throws(() => fsdp.fullyShard(new nn.Linear(2, 2), { limitAllGathers: 0 }), /limitAllGathers must be an integer of at least 1 .* got 0/);
  assert.throws(() => fsdp.fullyShard(new nn.Linear(2, 2), { forwardPrefetch: "yes" as never }), /forwardPrefetch must be a boolean, got string/);
  assert.throws(() => fsdp.fullyShard(new nn.Linear(2, 2), { reshardAfterBackward: false }), /needs reshardAfterForward false too/);
  assert.throws(
    () => fsdp.fullyShard(new nn.Linear(2, 2), { reshardAfterForward: false, reshardAfterBackward: false, mixedPrecision: { paramDtype: "bfloat16" } }),
    /paramDtype bfloat16 would round/,
  );
  assert.throws(() => new rt.FSDP(new nn.Linear(2, 2), { backwardPrefetch: "BACKWARD_POST" as never }), /backwardPrefetch must be "BACKWARD_PRE" or null/);
});

test("a sharded checkpoint whose shards do not cover a parameter is an error naming it and the rows", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fsdp-cover-"));
  try {
    const m = fsdp.fullyShard(new nn.Linear(3, 5));
    const state = fsdp.shardedStateDict(m);
    // A writer that lost rows 3 and 4 of the weight.
    state.meta.weight = { ...state.meta.weight, rows: 3 };
    state.model.weight = state.model.weight.narrow(0, 0, 3);
    await checkpoint.save(dir, { step: 1 }, { step: 1, sharded: state });
    const fresh = fsdp.fullyShard(new nn.Linear(3, 5));
    assert.throws(() => fsdp.loadShardedStateDict(fresh, join(dir, "step_00000001")), /do not cover weight: row 3 .*incomplete/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the wrap policies pick modules by class, by size and by a function, innermost first", () => {
  const seq = () => new nn.Sequential(new nn.Linear(4, 4), new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU()), new nn.Linear(8, 2));
  const units = (model: rt.nn.Module) => [...model.modules()].filter((m) => fsdp.fsdpStateOf(m)).map((m) => m.constructor.name);
  const byClass = new rt.FSDP(seq(), { autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]) });
  assert.deepEqual(units(byClass.module), ["Sequential", "Linear", "Linear", "Linear"]);
  // Parameter counts: 20, 40 (inside a Sequential of 40), 18; at least 30 takes the inner Linear only.
  const bySize = new rt.FSDP(seq(), { autoWrapPolicy: fsdp.sizeBasedAutoWrapPolicy({ minNumParams: 30 }) });
  assert.deepEqual(units(bySize.module), ["Sequential", "Linear"]);
  const byFn = new rt.FSDP(seq(), { autoWrapPolicy: fsdp.lambdaAutoWrapPolicy((m) => m instanceof nn.Sequential) });
  assert.deepEqual(units(byFn.module), ["Sequential", "Sequential"]);
});
