// Trigonometric and hyperbolic functions, log1p/expm1 and atan2 against PyTorch fixtures, plus gradchecks.
import { acos, acosh, asin, asinh, atan, atan2, atanh, cos, cosh, expm1, log1p, sin, sinh, tan } from "../../src/ops/trigonometry.js";
import { describeFixture } from "./fixture_harness.js";

const ops = { sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log1p, expm1 };
for (const [name, fn] of Object.entries(ops)) describeFixture(name, ({ x }) => fn(x));
describeFixture("atan2", ({ a, b }) => atan2(a, b));
