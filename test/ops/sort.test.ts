// sort, argsort and topk against PyTorch fixtures, plus gradchecks.
import { argsort, sort, topk } from "../../src/ops/sort.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("sort", ({ x }, p) => sort(x, p.dim, p.descending, { stable: p.stable }));
describeFixture("argsort", ({ x }, p) => argsort(x, p.dim, p.descending, { stable: p.stable }));
describeFixture("topk", ({ x }, p) => topk(x, p.k, p.dim, p.largest, p.sorted));
