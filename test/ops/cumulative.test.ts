// cumsum and cumprod (with zeros) against PyTorch fixtures, plus gradchecks.
import { cumprod, cumsum } from "../../src/ops/cumulative.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("cumsum", ({ x }, p) => cumsum(x, p.dim));
describeFixture("cumprod", ({ x }, p) => cumprod(x, p.dim), { float32: { atol: 1e-5, rtol: 1e-5 } });
