// Issue 15's silent traps, each written the way a porter transliterates the PyTorch line; every
// one must give PyTorch's behaviour or an error that names the fix.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as rt from "../../src/index.js";

const { nn, optim, data, dist, checkpoint } = rt;
const params = () => [new nn.Parameter(rt.ones([2]))];

describe("options objects and positional arguments", () => {
  it("nn.CrossEntropyLoss({ ignore_index, label_smoothing }) names the camelCase keys", () => {
    assert.throws(() => new nn.CrossEntropyLoss({ ignore_index: 0, label_smoothing: 0.1 } as never), /CrossEntropyLoss: unknown option "ignore_index"; did you mean ignoreIndex\?/);
    assert.throws(() => new nn.CrossEntropyLoss({ label_smoothing: 0.1 } as never), /did you mean labelSmoothing\?/);
    assert.throws(() => rt.crossEntropy(rt.zeros([2, 3]), rt.tensor([0, 1], { dtype: "int32" }), { ignore_index: 0 } as never), /crossEntropy: unknown option "ignore_index"/);
  });

  it("new DDP(m, { bucket_cap_mb: 25 }) names bucketCapMb before touching any process group", () => {
    assert.throws(() => new rt.DDP(new nn.Linear(2, 2), { bucket_cap_mb: 25 } as never), /DistributedDataParallel: unknown option "bucket_cap_mb"; did you mean bucketCapMb\?/);
    assert.throws(() => new rt.DDP(new nn.Linear(2, 2), { deviceIds: [0] } as never), /unknown option "deviceIds"/);
  });

  it("new optim.StepLR(opt, 10, 0.5) is refused: gamma goes in the options (it would otherwise run with 0.1)", () => {
    const opt = new optim.SGD(params(), { lr: 1 });
    assert.throws(() => new optim.StepLR(opt, 10, 0.5 as never), /StepLR: options must be an object such as \{ gamma, lastEpoch \}, got number 0.5/);
    assert.throws(() => new (optim.StepLR as unknown as new (...a: unknown[]) => unknown)(opt, 10, { gamma: 0.5 }, 3), /StepLR: too many arguments/);
    const s = new optim.StepLR(opt, 1, { gamma: 0.5 });
    s.step();
    assert.equal(opt.paramGroups[0].lr, 0.5);
  });

  it("optimizers: new SGD(params, 0.1) and snake_case keys, also inside parameter groups", () => {
    assert.throws(() => new optim.SGD(params(), 0.1 as never), /SGD: options must be an object such as \{ lr, momentum \}, got number 0.1/);
    assert.throws(() => new optim.Adam(params(), { lr: 1e-3, weight_decay: 0.1 } as never), /did you mean weightDecay\?/);
    assert.throws(() => new optim.AdamW(params(), { betas: [0.9, 0.99], amsGrad: true } as never), /did you mean amsgrad\?/);
    assert.throws(() => new optim.SGD([{ params: params(), weight_decay: 0.1 }], { lr: 0.1 }), /SGD parameter group: unknown option "weight_decay"; did you mean weightDecay\?/);
    assert.throws(() => new optim.RMSprop(params(), { lr: 1e-3, momentun: 0.9 } as never), /did you mean momentum\?/);
  });

  it("schedulers, DataLoader, samplers, modules, checkpoint and collectives check theirs", () => {
    const opt = new optim.SGD(params(), { lr: 1 });
    assert.throws(() => new optim.CosineAnnealingLR(opt, 10, { eta_min: 0 } as never), /did you mean etaMin\?/);
    assert.throws(() => new optim.OneCycleLR(opt, 0.1, { total_steps: 10 } as never), /did you mean totalSteps\?/);
    assert.throws(() => new optim.LinearLR(opt, { start_factor: 0.5 } as never), /did you mean startFactor\?/);
    assert.throws(() => new optim.ReduceLROnPlateau(opt, { threshold_mode: "abs" } as never), /did you mean thresholdMode\?/);
    const ds = new data.TensorDataset(rt.zeros([4, 2]));
    assert.throws(() => new data.DataLoader(ds, { batch_size: 2 } as never), /DataLoader: unknown option "batch_size"; did you mean batchSize\?/);
    assert.throws(() => new data.DataLoader(ds, { batchSize: 2, num_workers: 2 } as never), /did you mean numWorkers\?/);
    assert.throws(() => new data.DistributedSampler(ds, { num_replicas: 2, rank: 0 } as never), /did you mean numReplicas\?/);
    assert.throws(() => new data.RandomSampler(ds, { num_samples: 2 } as never), /did you mean numSamples\?/);
    assert.throws(() => new nn.Linear(2, 3, false as never), /Linear: options must be an object/);
    assert.throws(() => new nn.LayerNorm(4, { elementwise_affine: false } as never), /did you mean elementwiseAffine\?/);
    assert.throws(() => new nn.Embedding(4, 2, { padding_idx: 0 } as never), /did you mean paddingIdx\?/);
    assert.throws(() => new nn.MultiheadAttention(8, 2, { batch_first: true } as never), /did you mean batchFirst\?/);
    assert.throws(() => new nn.TransformerEncoderLayer(8, 2, { dim_feedforward: 16 } as never), /did you mean dimFeedforward\?/);
    assert.throws(() => new nn.Transformer({ d_model: 8 } as never), /did you mean dModel\?/);
    assert.throws(() => new nn.ReLU(true as never), /ReLU: too many arguments/);
    assert.throws(() => new nn.Dropout(0.1, { inplace: true } as never), /Dropout: unknown option "inplace"/);
    assert.throws(() => nn.utils.clipGradNorm(params(), 1, 2 as never), /clipGradNorm: options must be an object/);
    assert.throws(() => nn.init.kaimingUniform_(rt.zeros([2, 2]), { nonlinearity: "relu", mode: "fan_in", A: 1 } as never), /did you mean a\?/);
  });

  it("checkpoint and initProcessGroup check theirs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "traps-"));
    try {
      await assert.rejects(checkpoint.save(dir, {}, { step: 1, keep_last: 2 } as never), /checkpoint.save: unknown option "keep_last"; did you mean keepLast\?/);
      await assert.rejects(checkpoint.resume(dir, { model: new nn.Linear(1, 1), batch_size: 2 } as never), /did you mean batchSize\?/);
      await assert.rejects(dist.initProcessGroup({ init_method: "env://" } as never), /initProcessGroup: unknown option "init_method"; did you mean initMethod\?/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("tensor creation, backward, autograd.grad and functional ops check theirs", () => {
    assert.throws(() => rt.zeros([2], { requires_grad: true } as never), /zeros: unknown option "requires_grad"; did you mean requiresGrad\?/);
    assert.throws(() => rt.randn([2], { device: "cuda" } as never), /randn: device "cuda" does not exist/);
    assert.equal(rt.ones([2], { device: "cpu" }).dtype, "float32");
    assert.throws(() => rt.tensor([1, 2], { dtype: "int32", requires_grad: false } as never), /did you mean requiresGrad\?/);
    const w = rt.ones([2]).requiresGrad_();
    assert.throws(() => w.mul(2).sum().backward({ retain_graph: true } as never), /backward: unknown option "retain_graph"; did you mean retainGraph\?/);
    assert.throws(() => rt.autograd.grad(w.mul(2).sum(), w, null, { create_graph: true } as never), /did you mean createGraph\?/);
    assert.throws(() => rt.dropout(w, 0.5, { train: false } as never), /dropout: unknown option "train"; known options: training, generator/);
    assert.throws(() => rt.std(w, 0, { unbiased: false, keepDim: true } as never), /did you mean keepdim\?/);
  });

  it("module.loadStateDict(sd, { strict: false }) means strict = false, not a truthy object", () => {
    const m = new nn.Linear(2, 2);
    const r = m.loadStateDict({ weight: rt.zeros([2, 2]) }, { strict: false });
    assert.deepEqual(r.missingKeys, ["bias"]);
    assert.throws(() => m.loadStateDict({ weight: rt.zeros([2, 2]) }, { stict: false } as never), /did you mean strict\?/);
  });
});

describe("the default generator and seeds", () => {
  it("is seeded fixed, as PyTorch's (67280421310721), not from the clock", () => {
    assert.equal(rt.defaultGenerator.initialSeed(), 67280421310721);
    const fresh = new rt.Generator(67280421310721);
    // Two processes that never seed draw the same split: compare against a generator given the default seed.
    const ds = new data.TensorDataset(rt.arange(0, 10));
    const state = rt.getRngState();
    rt.setRngState(new rt.Generator(67280421310721).getState());
    const [a] = data.randomSplit(ds, [5, 5]);
    const [b] = data.randomSplit(ds, [5, 5], fresh);
    rt.setRngState(state);
    assert.deepEqual(a.indices, b.indices);
  });

  it("takes 64-bit seeds as numbers or bigints; seeds differing only above bit 32 differ", () => {
    const draw = (seed: number | bigint) => new rt.Generator(seed).nextUint32();
    assert.notEqual(draw(2n ** 32n + 5n), draw(5));
    assert.equal(draw(2 ** 40 + 3), draw(2n ** 40n + 3n));
    assert.equal(draw(-1), draw(2n ** 64n - 1n), "negatives wrap to 64 bits, as torch.manual_seed does");
    assert.equal(new rt.Generator(2n ** 63n + 1n).initialSeed(), 2n ** 63n + 1n);
    assert.equal(rt.manualSeed(18446744073709551615n).initialSeed(), 18446744073709551615n);
    assert.throws(() => rt.manualSeed(2 ** 60), /beyond 2\^53.*pass it as a bigint/);
    assert.throws(() => rt.manualSeed(2n ** 64n), /must fit in 64 bits/);
    assert.throws(() => rt.manualSeed(1.5), /a seed is an integer/);
    const g = new rt.Generator(2n ** 50n + 7n);
    const restored = new rt.Generator().setState(JSON.parse(JSON.stringify(g.getState())));
    assert.equal(restored.nextUint32(), g.nextUint32());
    rt.manualSeed(0);
  });
});

describe("porting slips that name their fix", () => {
  it("p.grad.data (a method here) passed to a collective says to call .data() or pass the tensor", async () => {
    const p = new nn.Parameter(rt.ones([3]));
    rt.sum(p).backward();
    await dist.initProcessGroup({ rank: 0, worldSize: 1 });
    try {
      assert.throws(() => dist.allReduce(p.grad!.data as never), /allReduce: expected a Tensor or a typed array, got a function.*call \.data\(\) or pass the tensor itself/);
      assert.throws(() => dist.broadcast(p.grad!.data as never, 0), /broadcast: .*got a function/);
      assert.throws(() => dist.allReduce(rt.ones([2]), dist.ReduceOp.SUM as never), /allReduce: the reduce op goes in the options/);
      assert.throws(() => dist.broadcast(rt.ones([2]), 0, dist.newGroup([0]) as never), /broadcast: the process group goes in the options/);
      assert.throws(() => dist.allReduce(rt.ones([2]), { async_op: true } as never), /allReduce: unknown option "async_op"/);
      dist.allReduce(p.grad!);
      assert.deepEqual(Array.from(p.grad!.data()), [1, 1, 1]);
    } finally {
      await dist.destroyProcessGroup();
    }
  });

  it("float class labels to crossEntropy say index targets are int32", () => {
    const labels = rt.tensor([0, 2, 1]);
    assert.equal(labels.dtype, "float32");
    assert.throws(() => rt.crossEntropy(rt.zeros([3, 4]), labels), /index targets must be int32.*tensor\(labels, \{ dtype: "int32" \}\).*\.int\(\)/);
    assert.throws(() => new nn.CrossEntropyLoss().call(rt.zeros([3, 4]), labels), /index targets must be int32/);
  });

  it('Module.to("cpu") and Tensor.to("cpu") agree; to(0), "cuda" and "mps" are devices that do not exist', () => {
    const m = new nn.Linear(2, 2);
    const w = m.weight;
    assert.equal(m.to("cpu"), m);
    assert.equal(m.weight, w);
    assert.equal(m.to({ device: "cpu", dtype: "float64" }).weight.dtype, "float64");
    m.to("cpu", "float32");
    assert.equal(m.weight.dtype, "float32");
    const t = rt.ones([2]);
    assert.equal(t.to("cpu"), t);
    assert.equal(t.to("cpu:0", "float64").dtype, "float64");
    assert.equal(t.to({ dtype: "int32" }).dtype, "int32");
    for (const bad of [0, "cuda", "cuda:0", "mps"]) {
      assert.throws(() => m.to(bad as never), /Linear\.to: device .* does not exist; ringtorch computes on the CPU/);
      assert.throws(() => t.to(bad as never), /Tensor\.to: device .* does not exist; ringtorch computes on the CPU/);
    }
    assert.throws(() => t.to(0 as never), /PyTorch reads a number as cuda:0/);
  });

  it("dist.initProcessGroup(\"gloo\") ports as it is: the backend may come positionally", async () => {
    await assert.rejects(dist.initProcessGroup("nccl"), /backend "nccl" is not available/);
  });

});
