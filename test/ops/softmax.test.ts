// softmax, log_softmax and layer_norm against PyTorch fixtures, plus gradchecks.
import { layerNorm } from "../../src/ops/norm.js";
import { logSoftmax, softmax } from "../../src/ops/softmax.js";
import { describeFixture, num } from "./fixture_harness.js";

describeFixture("softmax", ({ x }, p) => softmax(x, p.dim));
describeFixture("log_softmax", ({ x }, p) => logSoftmax(x, p.dim));
describeFixture("layer_norm", ({ x, weight, bias }, p) => layerNorm(x, p.normalized_shape, weight ?? null, bias ?? null, num(p.eps)), {
  float32: { atol: 1e-5, rtol: 1e-5 },
});
