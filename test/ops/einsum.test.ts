// einsum against PyTorch fixtures (contractions, diagonals, ellipses, implicit outputs), plus gradchecks.
import { einsum } from "../../src/ops/einsum.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture(
  "einsum",
  (inputs, p) =>
    einsum(
      p.equation,
      Object.keys(inputs)
        .sort()
        .map((k) => inputs[k]),
    ),
  { float32: { atol: 1e-5, rtol: 1e-5 } },
);
