// nllLoss, binaryCrossEntropy and binaryCrossEntropyWithLogits against PyTorch fixtures, plus gradchecks.
import { binaryCrossEntropy, binaryCrossEntropyWithLogits } from "../../src/ops/binary_cross_entropy.js";
import { nllLoss } from "../../src/ops/nll_loss.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("nll_loss", ({ input, target, weight }, p) =>
  nllLoss(input, target, { weight: weight ?? null, ignoreIndex: p.ignore_index ?? -100, reduction: p.reduction ?? "mean" }),
);
describeFixture("binary_cross_entropy", ({ input, target, weight }, p) => binaryCrossEntropy(input, target, { weight: weight ?? null, reduction: p.reduction ?? "mean" }), {
  float32: { atol: 1e-5, rtol: 1e-5 },
  // At 0 and 1 the log is clamped: finite differences step outside [0, 1].
  noGradcheck: ["edges"],
});
describeFixture(
  "binary_cross_entropy_with_logits",
  ({ input, target, weight, pos_weight }, p) =>
    binaryCrossEntropyWithLogits(input, target, { weight: weight ?? null, posWeight: pos_weight ?? null, reduction: p.reduction ?? "mean" }),
  { float32: { atol: 1e-5, rtol: 1e-5 } },
);
