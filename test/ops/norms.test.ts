// logsumexp, vector and matrix-free norms, any/all and the non-finite checks against PyTorch fixtures.
import { all, any } from "../../src/ops/logical_reduction.js";
import { logsumexp } from "../../src/ops/logsumexp.js";
import { isfinite, isinf, isnan, nanToNum } from "../../src/ops/nonfinite.js";
import { norm, vectorNorm } from "../../src/ops/vector_norm.js";
import { describeFixture, num } from "./fixture_harness.js";

describeFixture("logsumexp", ({ x }, p) => logsumexp(x, p.dim, p.keepdim));
describeFixture("vector_norm", ({ x }, p) => vectorNorm(x, num(p.ord), p.dim, p.keepdim), {
  float32: { atol: 1e-5, rtol: 1e-5 },
  // |x| has a kink at 0 and the ±∞ norms at ties: finite differences there are meaningless.
  // ord 0 has no gradient in PyTorch (its fixture lists none), so there is nothing to check.
  noGradcheck: ["zero_row_ord_2", "zero_row_ord_1", "zero_row_ord_3", "zero_row_ord_inf", "inf_ties", "ord_0_all", "ord_0_dim1"],
});
describeFixture("norm", ({ x }, p) => (p.p === undefined ? norm(x) : norm(x, p.p === "fro" ? "fro" : num(p.p), p.dim, p.keepdim)), {
  float32: { atol: 1e-5, rtol: 1e-5 },
});
describeFixture("any", ({ x }, p) => any(x, p.dim, p.keepdim));
describeFixture("all", ({ x }, p) => all(x, p.dim, p.keepdim));
describeFixture("isnan", ({ x }) => isnan(x));
describeFixture("isinf", ({ x }) => isinf(x));
describeFixture("isfinite", ({ x }) => isfinite(x));
describeFixture(
  "nan_to_num",
  ({ x }, p) => nanToNum(x, p.nan === undefined ? 0 : num(p.nan), p.posinf === undefined ? null : num(p.posinf), p.neginf === undefined ? null : num(p.neginf)),
  { noGradcheck: ["defaults", "defaults_float64", "custom"] },
);
