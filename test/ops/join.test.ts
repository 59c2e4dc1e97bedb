// cat, stack, split and chunk against PyTorch fixtures, plus gradchecks.
import { cat, chunk, split, stack } from "../../src/ops/join.js";
import { describeFixture } from "./fixture_harness.js";

describeFixture("cat", ({ a, b, c }, p) => cat([a, b, c], p.dim));
describeFixture("stack", ({ a, b, c }, p) => stack([a, b, c], p.dim));
describeFixture("split", ({ x }, p) => split(x, p.split_size_or_sections, p.dim));
describeFixture("chunk", ({ x }, p) => chunk(x, p.chunks, p.dim));
