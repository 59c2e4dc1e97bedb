// matmul (1-D, 2-D, batched, broadcast) and linear against PyTorch fixtures, plus gradchecks.
import * as rt from "../../src/index.js";
import { describeFixture } from "./fixture_harness.js";

// A sum of k float32 products rounds differently in every GEMM; 4 ulps of the result is ample.
const GEMM = { atol: 1e-6, rtol: 5e-6 };

describeFixture("matmul", ({ a, b }) => rt.matmul(a, b), { float32: GEMM });
describeFixture("linear", ({ x, weight, bias }) => rt.linear(x, weight, bias ?? null), { float32: GEMM });
