// scatter and scatterReduce against PyTorch fixtures, plus gradchecks.
import { scatter, scatterReduce } from "../../src/ops/scatter.js";
import { describeFixture, num } from "./fixture_harness.js";

describeFixture("scatter", ({ input, index, src }, p) =>
  scatter(input, p.dim, index, src ?? num(p.value), p.reduce ? { reduce: p.reduce } : {}),
);
describeFixture("scatter_reduce", ({ input, index, src }, p) => scatterReduce(input, p.dim, index, src, p.reduce, { includeSelf: p.include_self }), {
  // Ties in amax make the function non-differentiable there.
  noGradcheck: ["amax_ties"],
});
