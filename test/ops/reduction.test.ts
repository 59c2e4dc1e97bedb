// Reductions (sum, mean, var, max/min with indices, argmax) against PyTorch fixtures, plus gradchecks.
import * as rt from "../../src/index.js";
import { argmax, max, min } from "../../src/ops/extrema.js";
import { variance } from "../../src/ops/statistics.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("sum", ({ x }, p) => rt.sum(x, p.dim, p.keepdim ?? false));
describeFixture("mean", ({ x }, p) => rt.mean(x, p.dim, p.keepdim ?? false));
describeFixture("var", ({ x }, p) => variance(x, p.dim, { correction: p.correction, unbiased: p.unbiased, keepdim: p.keepdim ?? false }));
describeFixture("max", ({ x }, p) => (p.dim === undefined ? max(x) : max(x, p.dim, p.keepdim ?? false)), { noGradcheck: ["ties_dim", "ties_all"] });
describeFixture("min", ({ x }, p) => (p.dim === undefined ? min(x) : min(x, p.dim, p.keepdim ?? false)), { noGradcheck: ["ties_dim", "ties_all"] });
describeFixture("argmax", ({ x }, p) => argmax(x, p.dim, p.keepdim ?? false));
