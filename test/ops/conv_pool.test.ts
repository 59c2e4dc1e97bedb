// Convolution, pooling and batch/group norm three ways beyond the PyTorch fixtures
// (test/nn/cnn_layers.test.ts): the native `cpu` kernels against the `reference` loops over random
// geometries (1 and 2 threads, non-contiguous inputs), float64 finite-difference gradients of first
// and second order, and the errors a porter meets.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as rt from "../../src/index.js";
import { nativeUnavailableReason } from "../../src/backend/index.js";
import { gradcheck } from "../../src/autograd/gradcheck.js";
import { firstDerivative } from "./double_backward_support.js";
import { assertClose } from "../helpers.js";

const F = rt.nn.functional;
const skip = nativeUnavailableReason() ? `native addon unavailable: ${nativeUnavailableReason()}` : false;
const g = new rt.Generator(1515);

/** Forward and every input gradient of fn on cpu against reference. */
function compare(name: string, inputs: rt.Tensor[], fn: (...xs: rt.Tensor[]) => rt.Tensor, tol = 2e-4): void {
  const run = (backend: "cpu" | "reference") =>
    rt.withBackend(backend, () => {
      const xs = inputs.map((x) => x.detach().requiresGrad_());
      const y = fn(...xs);
      y.mul(rt.randn(y.shape, { generator: new rt.Generator(5) })).sum().backward();
      return { y, grads: xs.map((x) => x.grad!) };
    });
  const ref = run("reference");
  const cpu = run("cpu");
  assertClose(cpu.y, ref.y, tol, tol, `${name} output`);
  cpu.grads.forEach((gr, i) => assertClose(gr, ref.grads[i], tol, tol, `${name} gradient of input ${i}`));
}

const pick = (lo: number, hi: number) => g.randint(lo, hi + 1);

function randomConv(): { x: rt.Tensor; w: rt.Tensor; b: rt.Tensor; options: rt.ConvOptions; label: string } {
  const groups = pick(1, 3);
  const cpg = pick(1, 3);
  const ocpg = pick(1, 3);
  const [kh, kw] = [pick(1, 4), pick(1, 4)];
  const [dh, dw] = [pick(1, 2), pick(1, 2)];
  const [ph, pw] = [pick(0, 3), pick(0, 3)];
  const [sh, sw] = [pick(1, 3), pick(1, 3)];
  const h = Math.max(1, dh * (kh - 1) + 1 - 2 * ph) + pick(0, 6);
  const w = Math.max(1, dw * (kw - 1) + 1 - 2 * pw) + pick(0, 6);
  const n = pick(1, 5);
  // Half the inputs are transposed views, so the kernels also see non-contiguous memory.
  const x = g.random() < 0.5 ? rt.randn([n, groups * cpg, h, w], { generator: g }) : rt.randn([n, groups * cpg, w, h], { generator: g }).transpose(2, 3);
  const wt = rt.randn([groups * ocpg, cpg, kh, kw], { generator: g });
  const options = { stride: [sh, sw], padding: [ph, pw], dilation: [dh, dw], groups };
  return { x, w: wt, b: rt.randn([groups * ocpg], { generator: g }), options, label: JSON.stringify({ shape: x.shape, weight: wt.shape, ...options }) };
}

test("conv2d and conv1d agree between cpu and reference over random geometries, on 1 and 2 threads", { skip }, () => {
  const threads = rt.getNumThreads();
  try {
    for (const nt of [1, 2]) {
      rt.setNumThreads(nt);
      for (let trial = 0; trial < 12; trial++) {
        const { x, w, b, options, label } = randomConv();
        compare(`conv2d ${label}`, [x, w, b], (xx, ww, bb) => F.conv2d(xx, ww, bb, options));
      }
      compare("conv1d", [rt.randn([3, 4, 13], { generator: g }), rt.randn([6, 2, 3], { generator: g })], (x, w) => F.conv1d(x, w, null, { stride: 2, padding: 2, dilation: 3, groups: 2 }));
      compare("conv2d 1x1", [rt.randn([4, 6, 5, 3], { generator: g }), rt.randn([4, 3, 1, 1], { generator: g })], (x, w) => F.conv2d(x, w, null, { groups: 2 }));
    }
  } finally {
    rt.setNumThreads(threads);
  }
});

test("pooling and batch/group norm agree between cpu and reference", { skip }, () => {
  for (let trial = 0; trial < 6; trial++) {
    const [kh, kw, dw] = [pick(1, 4), pick(1, 4), pick(1, 2)];
    const x = rt.randn([pick(1, 3), pick(1, 4), kh + pick(1, 7), dw * (kw - 1) + 1 + pick(1, 7)], { generator: g });
    const pad = [pick(0, Math.floor(kh / 2)), pick(0, Math.floor(kw / 2))];
    const ceilMode = g.random() < 0.5;
    // Options drawn once, outside the functions that both backends run.
    const maxOptions = { stride: [pick(1, 3), pick(1, 3)], padding: pad, dilation: [1, dw], ceilMode };
    const avgOptions = { stride: pick(1, 3), padding: pad, ceilMode, countIncludePad: g.random() < 0.5 };
    const adaptive = [pick(1, 6), pick(1, 6)];
    compare("maxPool2d", [x], (t) => F.maxPool2d(t, [kh, kw], maxOptions));
    compare("avgPool2d", [x], (t) => F.avgPool2d(t, [kh, kw], avgOptions));
    compare("adaptiveAvgPool2d", [x], (t) => F.adaptiveAvgPool2d(t, adaptive));
    const c = x.shape[1];
    const [w, b] = [rt.randn([c], { generator: g }), rt.randn([c], { generator: g })];
    compare("batchNorm train", [x, w, b], (t, ww, bb) => F.batchNorm(t, null, null, { weight: ww, bias: bb, training: true }));
    const [rm, rv] = [rt.randn([c], { generator: g }), rt.rand([c], { generator: g }).add(0.5)];
    compare("batchNorm eval", [x, w, b], (t, ww, bb) => F.batchNorm(t, rm, rv, { weight: ww, bias: bb }));
  }
});

test("float64 gradients match finite differences, to the second order", () => {
  const d = { dtype: "float64" as const, generator: g };
  const x = rt.randn([2, 4, 5, 6], d).requiresGrad_();
  const w = rt.randn([6, 2, 3, 2], d).requiresGrad_();
  const b = rt.randn([6], d).requiresGrad_();
  const conv = (xx: rt.Tensor, ww: rt.Tensor, bb: rt.Tensor) => F.conv2d(xx, ww, bb, { stride: [2, 1], padding: [1, 2], dilation: [1, 2], groups: 2 });
  gradcheck(conv, [x, w, b]);
  // Second order: the gradients of ⟨conv(x, w)², v⟩ (which depend on x and w) checked the same way.
  gradcheck(firstDerivative((xx, ww, bb) => conv(xx, ww, bb).square(), (xx, ww, bb) => conv(xx, ww, bb).shape, g), [x, w, b]);

  const p = rt.randn([2, 3, 7, 6], d).requiresGrad_();
  gradcheck((t) => F.maxPool2d(t, 3, { stride: 2, padding: 1, ceilMode: true }), [p]);
  gradcheck((t) => F.avgPool2d(t, [3, 2], { stride: 2, padding: 1, countIncludePad: false, ceilMode: true }), [p]);
  gradcheck((t) => F.adaptiveAvgPool2d(t, [4, 4]), [p]);
  gradcheck(firstDerivative((t) => F.avgPool2d(t, 2).square(), () => [2, 3, 3, 3], g), [p]);
  gradcheck(firstDerivative((t) => F.maxPool2d(t, 2, { stride: 1 }).square(), () => [2, 3, 6, 5], g), [p]);

  const [bw, bb] = [rt.randn([3], d).requiresGrad_(), rt.randn([3], d).requiresGrad_()];
  const bn = (t: rt.Tensor, ww: rt.Tensor, b2: rt.Tensor) => F.batchNorm(t, null, null, { weight: ww, bias: b2, training: true });
  gradcheck(bn, [p, bw, bb]);
  gradcheck(firstDerivative(bn, () => p.shape, g), [p, bw, bb]);
  gradcheck((t, ww, b2) => F.groupNorm(t, 3, ww, b2), [p, bw, bb]);
});

test("bad input gets an error that names what was expected and what came", () => {
  const x = rt.zeros([2, 3, 5, 5]);
  const conv = new rt.nn.Conv2d(3, 4, 3);
  assert.throws(() => conv.call(rt.zeros([2, 3, 5])), /conv2d: the weight \[4, 3, 3, 3\] with groups=1 expects 3 input channels, but the input \[2, 3, 5\] has 2/);
  assert.throws(() => conv.call(rt.zeros([3, 5])), /conv2d: expected a 3-d \(unbatched\) or 4-d \(batched\) input, got shape \[3, 5\]/);
  assert.throws(() => conv.call(rt.zeros([2, 4, 5, 5])), /expects 3 input channels, but the input \[2, 4, 5, 5\] has 4/);
  assert.throws(() => conv.call(rt.zeros([1, 3, 2, 5])), /the kernel \(size 3, dilation 1: extent 3\) is larger than the padded input height \(2 \+ padding 0 = 2\)/);
  assert.throws(() => F.conv2d(x, rt.zeros([4, 3, 3, 3]), null, { stride: 2, padding: "same" }), /padding "same" is not supported for strided convolutions/);
  assert.throws(() => F.conv2d(x, rt.zeros([4, 3, 3, 3]), null, { padding: "full" as never }), /padding must be a number, an array, "same" or "valid"/);
  assert.throws(() => F.conv2d(x, rt.zeros([4, 3, 3, 3]), rt.zeros([3])), /the bias must have shape \[4\], got \[3\]/);
  assert.throws(() => F.conv2d(x, rt.zeros([4, 3, 3, 3]), null, { padding_mode: "zeros" } as never), /unknown option "padding_mode"/);
  assert.throws(() => new rt.nn.Conv2d(3, 4, 3, { padding_mode: "reflect" } as never), /unknown option "padding_mode"; did you mean paddingMode\?/);
  assert.throws(() => new rt.nn.Conv2d(3, 4, 3, { groups: 2 }), /inChannels \(3\) must be divisible by groups \(2\)/);
  assert.throws(() => new rt.nn.Conv1d(2, 2, 3, { stride: 2, padding: "same" }), /padding "same" is not supported for strided/);
  assert.throws(() => new rt.nn.Conv2d(3, 4, 3, 1 as never), /too many arguments|options must be an object/);
  assert.throws(() => F.maxPool2d(rt.zeros([1, 1, 2, 2]), 3), /maxPool2d: the kernel \(size 3, dilation 1\) does not fit the padded input 2/);
  assert.throws(() => F.maxPool2d(x, 2, { padding: 2 }), /padding should be at most half of the kernel size/);
  assert.throws(() => F.avgPool2d(rt.zeros([5, 5]), 2), /expected a 3-d \(unbatched\) or 4-d \(batched\) input, got shape \[5, 5\]/);
  assert.throws(() => new rt.nn.BatchNorm2d(3).call(rt.zeros([2, 3, 4])), /BatchNorm2d: expected a 4-d input \[N, C, H, W\], got shape \[2, 3, 4\]/);
  assert.throws(() => new rt.nn.BatchNorm2d(4).call(x), /BatchNorm2d: expected 4 channels \(dim 1\), got shape \[2, 3, 5, 5\]/);
  assert.throws(() => new rt.nn.BatchNorm1d(3).call(rt.zeros([1, 3])), /expected more than 1 value per channel when training, got input of shape \[1, 3\]/);
  assert.throws(() => new rt.nn.BatchNorm2d(3, { track_running_stats: false } as never), /did you mean trackRunningStats\?/);
  assert.throws(() => new rt.nn.GroupNorm(4, 6), /numChannels \(6\) must be divisible by numGroups \(4\)/);
  assert.throws(() => F.conv2d(x.to("bool"), rt.zeros([4, 3, 3, 3], { dtype: "bool" })), /conv2d: expected a float32 or float64 tensor/);
});

test("BatchNorm state dict, eval mode, and a cumulative average with momentum null", () => {
  const bn = new rt.nn.BatchNorm2d(2, { momentum: null });
  assert.deepEqual(Object.keys(bn.stateDict()), ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
  const batches = [rt.randn([3, 2, 2, 2], { generator: g }), rt.randn([3, 2, 2, 2], { generator: g }).add(1)];
  for (const b of batches) bn.call(b);
  assert.equal(bn.numBatchesTracked!.item(), 2);
  // The cumulative average is the plain mean of each batch's mean and unbiased variance.
  const means = batches.map((b) => b.mean([0, 2, 3]));
  const vars = batches.map((b) => b.transpose(0, 1).reshape([2, -1]).var(1));
  assertClose(bn.runningMean!, means[0].add(means[1]).div(2), 1e-5, 1e-5, "running mean");
  assertClose(bn.runningVar!, vars[0].add(vars[1]).div(2), 1e-5, 1e-5, "running var");
  bn.eval();
  const x = rt.randn([1, 2, 3, 3], { generator: g });
  const expected = x.sub(bn.runningMean!.view([1, 2, 1, 1])).div(bn.runningVar!.add(1e-5).sqrt().view([1, 2, 1, 1]));
  assertClose(bn.call(x), expected, 1e-5, 1e-5, "eval output");
  const restored = new rt.nn.BatchNorm2d(2);
  restored.loadStateDict(bn.stateDict());
  assert.equal(restored.numBatchesTracked!.item(), 2);
});

test("a max-pool window wholly in the padding gives -inf at index -1 and its gradient goes nowhere", () => {
  // 2×1 input, kernel 3, padding 1, dilation 2, ceil mode: the one output column's taps sit at
  // columns -1, 1 and 3, all outside a width of 1 (PyTorch writes this gradient past the plane).
  const x = rt.tensor([0.5, 2, 4, 1], { shape: [2, 1, 2, 1], dtype: "float64" }).requiresGrad_();
  const [y, indices] = F.maxPool2d(x, 3, { padding: 1, dilation: 2, ceilMode: true, returnIndices: true });
  assert.deepEqual(y.shape, [2, 1, 1, 1]);
  assert.deepEqual(Array.from(y.detach().data()), [-Infinity, -Infinity]);
  assert.deepEqual(Array.from(indices.data()), [-1, -1]);
  y.backward(rt.tensor([1.5, 2.5], { shape: [2, 1, 1, 1], dtype: "float64" }));
  assert.deepEqual(Array.from(x.grad!.data()), [0, 0, 0, 0]);
  // Beside windows that do see the input, only those get gradient (the same as without the empty ones).
  const z = rt.tensor([1, 5, 3, 2, 7, 4], { shape: [1, 1, 2, 3], dtype: "float64" }).requiresGrad_();
  const out = F.maxPool2d(z, [1, 3], { padding: [0, 1], dilation: 2, ceilMode: true });
  out.sum().backward();
  const expected = rt.withBackend("reference", () => {
    const r = z.detach().requiresGrad_();
    F.maxPool2d(r, [1, 3], { padding: [0, 1], dilation: 2, ceilMode: true }).sum().backward();
    return r.grad!;
  });
  assertClose(z.grad!, expected, 0, 0, "max-pool gradient beside empty windows");
});

test("int32 convolution and max pooling compute exactly, as PyTorch's integer paths", () => {
  const x = rt.arange(0, 24, 1, { dtype: "int32" }).reshape([1, 2, 3, 4]);
  const w = rt.ones([1, 2, 2, 2], { dtype: "int32" });
  // PyTorch 2.13: F.conv2d(arange(24).int().reshape(1,2,3,4), ones(1,2,2,2).int()) and F.max_pool2d(x, 2).
  const y = F.conv2d(x, w);
  assert.equal(y.dtype, "int32");
  assert.deepEqual(Array.from(y.data()), [68, 76, 84, 100, 108, 116]);
  const p = F.maxPool2d(x, 2);
  assert.equal(p.dtype, "int32");
  assert.deepEqual(Array.from(p.data()), [5, 7, 17, 19]);
  assert.throws(() => F.conv2d(x, w, null, { dilation: 2 }), /dilated convolution of int32/);
  assert.throws(() => F.avgPool2d(x, 2), /float32 or float64/);
});

test("bfloat16 convolution, pooling and norms compute in float32 and round once", () => {
  const gen = new rt.Generator(7);
  const x32 = rt.randn([2, 4, 5, 5], { generator: gen });
  const w32 = rt.randn([4, 2, 3, 3], { generator: gen });
  const round = (t: rt.Tensor) => rt.to(rt.to(t, "bfloat16"), "float32");
  const [xb, wb] = [rt.to(x32, "bfloat16"), rt.to(w32, "bfloat16")];
  const cases: [string, rt.Tensor, rt.Tensor][] = [
    ["conv2d", F.conv2d(xb, wb, null, { groups: 2, padding: 1 }), round(F.conv2d(round(x32), round(w32), null, { groups: 2, padding: 1 }))],
    ["maxPool2d", F.maxPool2d(xb, 2), round(F.maxPool2d(round(x32), 2))],
    ["avgPool2d", F.avgPool2d(xb, 3, { stride: 2 }), round(F.avgPool2d(round(x32), 3, { stride: 2 }))],
    ["adaptiveAvgPool2d", F.adaptiveAvgPool2d(xb, 2), round(F.adaptiveAvgPool2d(round(x32), 2))],
    ["groupNorm", F.groupNorm(xb, 2), round(F.groupNorm(round(x32), 2))],
    ["batchNorm", F.batchNorm(xb, null, null, { training: true }), round(F.batchNorm(round(x32), null, null, { training: true }))],
  ];
  for (const [name, got, expected] of cases) {
    assert.equal(got.dtype, "bfloat16", name);
    assertClose(rt.to(got, "float32"), expected, 0, 0, name);
  }
  // bfloat16 running statistics are updated in place (through float32), as PyTorch's.
  const rm = rt.zeros([4], { dtype: "bfloat16" });
  const rv = rt.ones([4], { dtype: "bfloat16" });
  F.batchNorm(xb, rm, rv, { training: true, momentum: 0.5 });
  const [rm32, rv32] = [rt.zeros([4]), rt.ones([4])];
  F.batchNorm(round(x32), rm32, rv32, { training: true, momentum: 0.5 });
  assertClose(rt.to(rm, "float32"), round(rm32), 0, 0, "running mean");
  assertClose(rt.to(rv, "float32"), round(rv32), 0, 0, "running var");
  assert.throws(() => F.conv2d(xb, w32), /same dtype/);
});
