// where, masked_fill, comparisons and tril/triu against PyTorch fixtures, plus gradchecks.
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { tril, triu } from "../../src/ops/triangle.js";
import { describeFixture, num } from "./fixture_harness.js";

describeFixture("where", ({ condition, x, y }) => rt.where(condition, x, y));
// Filling with -inf makes finite differences of the filled elements inf − inf.
describeFixture("masked_fill", ({ x, mask }, p) => rt.maskedFill(x, mask, num(p.value)), { noGradcheck: ["broadcast_mask_neg_inf"] });

const comparisons: [string, (a: Tensor, b: Tensor | number) => Tensor][] = [
  ["eq", rt.eq],
  ["ne", rt.ne],
  ["lt", rt.lt],
  ["le", rt.le],
  ["gt", rt.gt],
  ["ge", rt.ge],
];
for (const [op, fn] of comparisons) describeFixture(op, ({ a, b }, p) => fn(a, p.other !== undefined ? num(p.other) : b));

describeFixture("tril", ({ x }, p) => tril(x, p.diagonal ?? 0));
describeFixture("triu", ({ x }, p) => triu(x, p.diagonal ?? 0));
