import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../src/index.js";

const { nn, optim, checkpoint, data } = rt;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "ringtorch-ckpt-"));
}

function setup(seed = 0) {
  rt.manualSeed(seed);
  const model = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 2));
  const optimizer = new optim.Adam(model.parameters(), { lr: 0.01 });
  const scheduler = new optim.StepLR(optimizer, 2, { gamma: 0.5 });
  const sampler = new data.DistributedSampler(40, { numReplicas: 1, rank: 0, seed: 3 });
  return { model, optimizer, scheduler, sampler };
}

function trainSteps(s: ReturnType<typeof setup>, n: number): number[] {
  const losses: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = rt.randn([5, 4]);
    const loss = s.model.call(x).square().mean();
    loss.backward();
    s.optimizer.step();
    s.optimizer.zeroGrad();
    s.scheduler.step();
    losses.push(loss.item());
  }
  return losses;
}

const paramsOf = (m: rt.nn.Module) => m.parameters().map((p) => Array.from(p.data()));

test("a resumed run continues exactly as the uninterrupted one", async () => {
  const dir = tempDir();
  try {
    const straight = setup();
    trainSteps(straight, 3);
    const straightRest = trainSteps(straight, 4);

    const first = setup();
    trainSteps(first, 3);
    await checkpoint.save(dir, { ...first, epoch: 1, batch: 2, extras: { note: "hello", big: 2n ** 70n } }, { step: 3 });

    const resumed = setup(99);
    const start = await checkpoint.resume(dir, { ...resumed, batchSize: 4 });
    assert.equal(start.step, 3);
    assert.equal(start.epoch, 1);
    assert.equal(start.batch, 2);
    assert.deepEqual(start.state.extras, { note: "hello", big: 2n ** 70n });
    assert.deepEqual(resumed.sampler.indices(), (() => {
      const s = new data.DistributedSampler(40, { numReplicas: 1, rank: 0, seed: 3 });
      s.setEpoch(1);
      return s.indices().slice(8);
    })());
    assert.deepEqual(trainSteps(resumed, 4), straightRest, "losses after resume (RNG, optimizer, scheduler restored)");
    assert.deepEqual(paramsOf(resumed.model), paramsOf(straight.model));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the model file carries PyTorch's parameter names; the manifest comes last and lists checksums", async () => {
  const dir = tempDir();
  try {
    const s = setup();
    const manifest = (await checkpoint.save(dir, { model: s.model }, { step: 7 }))!;
    const stepDir = join(dir, "step_00000007");
    assert.deepEqual(manifest.files.map((f) => f.name).sort(), ["model.safetensors", "state.json"]);
    const names = Object.keys(rt.serialization.load(join(stepDir, "model.safetensors"))).sort();
    assert.deepEqual(names, ["0.bias", "0.weight", "2.bias", "2.weight"]);
    assert.equal(checkpoint.verifyCheckpoint(stepDir).step, 7);
    assert.equal(readdirSync(stepDir).some((n) => n.includes(".tmp")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a truncated, corrupted or partial checkpoint is detected and latest() falls back", async () => {
  const dir = tempDir();
  try {
    const s = setup();
    for (const step of [1, 2, 3, 4]) await checkpoint.save(dir, { model: s.model }, { step });
    const file = (step: number, name: string) => join(dir, `step_0000000${step}`, name);
    truncateSync(file(4, "model.safetensors"), 20);
    const flipped = readFileSync(file(3, "model.safetensors"));
    flipped[flipped.length - 3] ^= 0x40;
    writeFileSync(file(3, "model.safetensors"), flipped);
    unlinkSync(file(2, "metadata.json"));
    assert.throws(() => checkpoint.verifyCheckpoint(join(dir, "step_00000004")), /model\.safetensors has 20 bytes.*truncated/);
    assert.throws(() => checkpoint.verifyCheckpoint(join(dir, "step_00000003")), /fails its checksum/);
    assert.throws(() => checkpoint.verifyCheckpoint(join(dir, "step_00000002")), /incomplete: it has no metadata\.json/);
    const skipped: string[] = [];
    const found = checkpoint.latest(dir, { onSkip: (p) => skipped.push(p) });
    assert.equal(found?.manifest.step, 1);
    assert.equal(skipped.length, 3);
    assert.throws(() => checkpoint.load(join(dir, "step_00000003")), /fails its checksum/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("keepLast keeps only the newest complete checkpoints", async () => {
  const dir = tempDir();
  try {
    const s = setup();
    for (const step of [10, 20, 30, 40]) await checkpoint.save(dir, { model: s.model }, { step, keepLast: 2 });
    assert.deepEqual(checkpoint.listCheckpoints(dir).map((c) => c.step), [40, 30]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an asynchronous save snapshots the tensors when called and completes in the background", async () => {
  const dir = tempDir();
  try {
    const s = setup();
    const before = paramsOf(s.model);
    const pending = checkpoint.save(dir, { model: s.model }, { step: 1, async: true });
    rt.noGrad(() => s.model.parameters().forEach((p) => p.add_(1)));
    await pending;
    await checkpoint.flush();
    const restored = setup(5);
    await checkpoint.resume(dir, { model: restored.model });
    assert.deepEqual(paramsOf(restored.model), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resume with no checkpoint starts fresh; bad state is a clear error", async () => {
  const dir = tempDir();
  try {
    assert.deepEqual(await checkpoint.resume(dir), { path: null, step: 0, epoch: 0, batch: 0, state: {} });
    const s = setup();
    await assert.rejects(checkpoint.save(dir, { model: s.model }, { step: -1 }), /step must be a non-negative integer/);
    await assert.rejects(checkpoint.save(dir, { fn: () => 1 }, { step: 1 }), /state at fn is function/);
    await checkpoint.save(dir, { model: s.model }, { step: 2 });
    await assert.rejects(checkpoint.resume(dir, { optimizer: s.optimizer }), /holds no optimizer state/);
    const other = new nn.Linear(3, 3);
    await assert.rejects(checkpoint.resume(dir, { model: other }), /missing|unexpected/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a tensor saved directly under a top-level key comes back under that key", async () => {
  const dir = tempDir();
  try {
    const weights = rt.tensor([[1, 2], [3, 4]]);
    await checkpoint.save(dir, { weights, note: "x" }, { step: 1 });
    const names = Object.keys(rt.serialization.load(join(dir, "step_00000001", "weights.safetensors")));
    assert.deepEqual(names, ["weights"]);
    const { state } = checkpoint.load(dir);
    assert.deepEqual(Array.from((state.weights as rt.Tensor).data()), [1, 2, 3, 4]);
    assert.equal(state.note, "x");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
