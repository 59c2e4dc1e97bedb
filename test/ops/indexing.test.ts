// embedding, index_select and gather against PyTorch fixtures, plus gradchecks.
import * as rt from "../../src/index.js";
import { embedding } from "../../src/ops/embedding.js";
import { gather, scatterAdd } from "../../src/ops/gather.js";
import { describeFixture } from "./fixture_harness.js";

// The padding row's gradient is zeroed by definition, so finite differences disagree there by design.
describeFixture("embedding", ({ weight, indices }, p) => embedding(indices, weight, { paddingIdx: p.padding_idx }), {
  noGradcheck: ["padding_idx", "negative_padding_idx"],
});
describeFixture("index_select", ({ x, index }, p) => rt.indexSelect(x, p.dim, index));
describeFixture("gather", ({ x, index }, p) => gather(x, p.dim, index));
describeFixture("scatter_add", ({ x, index, src }, p) => scatterAdd(x, p.dim, index, src));
