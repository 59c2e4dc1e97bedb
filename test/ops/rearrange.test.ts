// flip, roll, repeat, pad and oneHot against PyTorch fixtures, plus gradchecks.
import { flip, roll } from "../../src/ops/flip_roll.js";
import { oneHot } from "../../src/ops/one_hot.js";
import { pad } from "../../src/ops/pad.js";
import { repeat } from "../../src/ops/repeat.js";
import { describeFixture, num } from "./fixture_harness.js";

describeFixture("flip", ({ x }, p) => flip(x, p.dims));
describeFixture("roll", ({ x }, p) => roll(x, p.shifts, p.dims));
describeFixture("repeat", ({ x }, p) => repeat(x, p.sizes));
describeFixture("pad", ({ x }, p) => pad(x, p.pad, p.mode, p.value === undefined || p.value === null ? undefined : num(p.value)));
describeFixture("one_hot", ({ x }, p) => oneHot(x, p.num_classes));
