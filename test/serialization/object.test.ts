// rt.save / rt.load of nested state (torch.save without pickle). The file is checked with the
// spec-written safetensors reader (loadFile) for its tensors and structure, independently of rt.load.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as rt from "../../src/index.js";
import { loadFile } from "../../src/serialization/io.js";

const dir = mkdtempSync(join(tmpdir(), "rt-save-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("rt.save / rt.load", () => {
  it("round-trips dicts, lists, numbers, strings, booleans, null, bigints and tensors", () => {
    const model = new rt.nn.Linear(3, 2);
    const opt = new rt.optim.Adam(model.parameters(), { lr: 0.01 });
    model.call(rt.ones([1, 3])).sum().backward();
    opt.step();
    const obj = {
      model: model.stateDict(),
      optimizer: opt.stateDict(),
      epoch: 3,
      best: Infinity,
      name: "run-1",
      flags: [true, false, null],
      seed: 2n ** 63n + 5n,
      history: [{ loss: 0.5, t: rt.tensor([1, 2, 3], { dtype: "int32" }) }],
    };
    const path = join(dir, "state.safetensors");
    rt.save(obj, path);
    // Any safetensors reader sees the tensors under their paths.
    const raw = loadFile(path);
    assert.deepEqual(Object.keys(raw.tensors).sort(), ["history.0.t", "model.bias", "model.weight", "optimizer.state.0.exp_avg", "optimizer.state.0.exp_avg_sq", "optimizer.state.1.exp_avg", "optimizer.state.1.exp_avg_sq"]);
    assert.ok(raw.metadata["ringtorch.tree"].includes('"name":"run-1"'));
    const back = rt.load(path);
    assert.equal(back.epoch, 3);
    assert.equal(back.best, Infinity);
    assert.equal(back.name, "run-1");
    assert.deepEqual(back.flags, [true, false, null]);
    assert.equal(back.seed, 2n ** 63n + 5n);
    assert.deepEqual(Array.from(back.history[0].t.data()), [1, 2, 3]);
    assert.equal(back.history[0].t.dtype, "int32");
    assert.deepEqual(Array.from(back.model.weight.data()), Array.from(model.weight.data()));
    const fresh = new rt.nn.Linear(3, 2);
    fresh.loadStateDict(back.model);
    const opt2 = new rt.optim.Adam(fresh.parameters(), { lr: 0.5 });
    opt2.loadStateDict(back.optimizer);
    assert.equal(opt2.paramGroups[0].lr, 0.01);
  });

  it("modules and optimizers are saved through stateDict(); a shared tensor is stored once", () => {
    const m = new rt.nn.Linear(2, 2);
    const path = join(dir, "m.safetensors");
    rt.save({ net: m, tied: [m.weight, m.weight] }, path);
    const back = rt.load(path);
    assert.deepEqual(Object.keys(back.net), ["weight", "bias"]);
    assert.equal(back.tied[0], back.tied[1]);
  });

  it("a plain safetensors file loads as its tensors by name; what has no file form is refused", () => {
    const path = join(dir, "plain.safetensors");
    rt.serialization.save({ a: rt.ones([2]) }, path);
    assert.deepEqual(Object.keys(rt.load(path)), ["a"]);
    assert.throws(() => rt.save({ f: () => 1 }, join(dir, "x")), /save: f is function, which has no file form/);
    assert.throws(() => rt.save({ m: new Map() }, join(dir, "x")), /m is a Map/);
    assert.throws(() => rt.save(join(dir, "x") as never, { a: 1 } as never), /expected a file path as the second argument/);
    assert.throws(() => rt.load(path, { map_location: "cpu" } as never), /did you mean mapLocation\?/);
    assert.throws(() => rt.load(path, { mapLocation: "cuda:0" }), /not a device here/);
  });
});

describe("inferenceMode and thread count", () => {
  it("inferenceMode records no graph and restores the mode after", async () => {
    const w = rt.ones([2]).requiresGrad_();
    const y = rt.inferenceMode(() => {
      assert.equal(rt.isInferenceModeEnabled(), true);
      return w.mul(2);
    });
    assert.equal(y.requiresGrad, false);
    assert.equal(rt.isInferenceModeEnabled(), false);
    assert.equal(rt.isGradEnabled(), true);
    assert.equal(rt.inferenceMode(false, () => w.mul(2)).requiresGrad, true);
    await rt.inferenceMode(async () => assert.equal(rt.isGradEnabled(), false));
    assert.equal(rt.isGradEnabled(), true);
  });

  it("setNumThreads / getNumThreads", () => {
    const before = rt.getNumThreads();
    assert.ok(before >= 1);
    rt.setNumThreads(1);
    assert.equal(rt.getNumThreads(), 1);
    rt.setNumThreads(before);
    assert.throws(() => rt.setNumThreads(0), /from 1 to 256/);
  });
});
