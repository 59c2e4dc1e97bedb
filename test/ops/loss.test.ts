// cross_entropy and mse_loss against PyTorch fixtures, plus gradchecks.
import { crossEntropy, mseLoss } from "../../src/ops/loss.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("cross_entropy", ({ logits, target }, p) =>
  crossEntropy(logits, target, { reduction: p.reduction, ignoreIndex: p.ignore_index, labelSmoothing: p.label_smoothing }),
);
describeFixture("mse_loss", ({ input, target }, p) => mseLoss(input, target, { reduction: p.reduction }));
