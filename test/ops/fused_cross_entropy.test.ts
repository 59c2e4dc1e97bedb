// The fused cross-entropy kernel and linearCrossEntropy (the LM head and its loss, backward in
// row blocks) against the composed path: crossEntropy with an all-ones class weight takes
// logSoftmax + gather (an independent formula), on the cpu and reference backends, plus float64
// gradchecks and double backward.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { grad, gradcheck } from "../../src/autograd/index.js";
import { loadAddon, withBackend, type BackendName } from "../../src/backend/index.js";
import * as rt from "../../src/index.js";
import { linearCrossEntropy } from "../../src/ops/linear_cross_entropy.js";
import { crossEntropy } from "../../src/ops/loss.js";
import { assertClose } from "../helpers.js";

const backends: BackendName[] = loadAddon() ? ["cpu", "reference"] : ["reference"];
const int = (v: number[]) => rt.tensor(v, { dtype: "int32" });

/** Targets for n rows of c classes, with -100 at every `ignoreEvery`-th row. */
function targets(n: number, c: number, ignoreEvery: number): rt.Tensor {
  return int(Array.from({ length: n }, (_, i) => (i % ignoreEvery === ignoreEvery - 1 ? -100 : (i * 7 + 3) % c)));
}

for (const backend of backends) {
  describe(`fused cross-entropy on ${backend}`, () => {
    for (const reduction of ["mean", "sum", "none"] as const) {
      for (const labelSmoothing of [0, 0.1]) {
        it(`equals the composed path (${reduction}, smoothing ${labelSmoothing}, 37 classes)`, () =>
          withBackend(backend, () => {
            rt.manualSeed(1);
            const x = rt.mul(rt.randn([9, 37]), 4).requiresGrad_();
            const t = targets(9, 37, 4);
            const opts = { reduction, labelSmoothing };
            const fused = crossEntropy(x, t, opts);
            const composed = crossEntropy(x, t, { ...opts, weight: rt.ones([37]) });
            assertClose(fused, composed, 1e-5, 1e-5, "loss");
            const up = reduction === "none" ? rt.randn([9]) : rt.tensor(1.5);
            const [gf] = grad([fused], [x], [up]);
            const [gc] = grad([composed], [x], [up]);
            assertClose(gf!, gc, 1e-6, 1e-5, "grad");
          }));
      }
    }

    it("gives NaN for a mean over only ignored targets, as PyTorch", () =>
      withBackend(backend, () => assert.ok(Number.isNaN(crossEntropy(rt.randn([2, 5]), int([-100, -100])).item() as number))));

    it("linearCrossEntropy: logits, loss and dh, dW equal linear + crossEntropy, block by block", () =>
      withBackend(backend, () => {
        rt.manualSeed(2);
        const h = rt.randn([11, 6]).requiresGrad_();
        const w = rt.randn([29, 6]).requiresGrad_();
        // Rows 4..7 are all ignored, so one block of 4 rows carries no loss at all.
        const t = int([3, 0, 28, 5, -100, -100, -100, -100, 7, 1, 2]);
        for (const blockRows of [1, 4, 11, undefined]) {
          const { logits, loss } = linearCrossEntropy(h, w, t, { labelSmoothing: 0.05, blockRows });
          const ref = crossEntropy(rt.nn.functional.linear(h, w), t, { labelSmoothing: 0.05, weight: rt.ones([29]) });
          assertClose(logits, rt.nn.functional.linear(h, w), 1e-6, 1e-6, "logits");
          assertClose(loss, ref, 1e-5, 1e-5, "loss");
          const got = grad([loss], [h, w]);
          const want = grad([ref], [h, w]);
          assertClose(got[0]!, want[0], 1e-5, 1e-4, `dh (blockRows ${blockRows})`);
          assertClose(got[1]!, want[1], 1e-5, 1e-4, `dW (blockRows ${blockRows})`);
        }
      }));
  });
}

describe("fused cross-entropy gradients (float64, reference)", () => {
  it("gradchecks crossEntropy and linearCrossEntropy", () =>
    withBackend("reference", () => {
      rt.manualSeed(3);
      const x = rt.randn([5, 7], { dtype: "float64" }).requiresGrad_();
      const t = int([1, -100, 6, 0, 3]);
      gradcheck((a) => crossEntropy(a, t, { labelSmoothing: 0.2 }), [x]);
      gradcheck((a) => crossEntropy(a, t, { reduction: "none" }), [x]);
      const h = rt.randn([5, 3], { dtype: "float64" }).requiresGrad_();
      const w = rt.randn([7, 3], { dtype: "float64" }).requiresGrad_();
      gradcheck((a, b) => linearCrossEntropy(a, b, t, { blockRows: 2 }).loss, [h, w]);
    }));

  it("double backward through linearCrossEntropy matches the composed path", () =>
    withBackend("reference", () => {
      rt.manualSeed(4);
      const h = rt.randn([4, 3], { dtype: "float64" }).requiresGrad_();
      const w = rt.randn([6, 3], { dtype: "float64" }).requiresGrad_();
      const t = int([5, 0, -100, 2]);
      const second = (loss: (a: rt.Tensor, b: rt.Tensor) => rt.Tensor) => {
        const [dh] = grad([loss(h, w)], [h], null, { createGraph: true });
        return grad([rt.sum(rt.mul(dh!, dh!))], [w])[0]!;
      };
      const fused = second((a, b) => linearCrossEntropy(a, b, t).loss);
      const composed = second((a, b) => crossEntropy(rt.nn.functional.linear(a, b), t, { weight: rt.ones([6], { dtype: "float64" }) }));
      assertClose(fused, composed, 1e-10, 1e-8, "d(|dh|²)/dW");
    }));
});
