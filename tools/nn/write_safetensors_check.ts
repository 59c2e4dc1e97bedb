// Writes a ringtorch model's state dict, and its output on a fixed input, as safetensors files for
// tools/nn/check_safetensors.py to read with PyTorch:
//
//   node --import tsx --conditions=source tools/nn/write_safetensors_check.ts /tmp/gpt.safetensors
//   /usr/bin/python3 tools/nn/check_safetensors.py /tmp/gpt.safetensors
import * as nn from "../../src/nn/index.js";
import { arange, manualSeed, randint } from "../../src/index.js";
import { save } from "../../src/serialization/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";

/** tools/nn/common.py's GPT (../shared/peers/torch/gpt.py at small sizes). */
class GPT extends nn.Module {
  tok = new nn.Embedding(50, 16);
  pos = new nn.Embedding(8, 16);
  blocks = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(16, 2, { dimFeedforward: 64, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true }), 2);
  ln = new nn.LayerNorm(16);
  head = new nn.Linear(16, 50, { bias: false });
  declare mask: Tensor;

  constructor() {
    super();
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(8));
  }

  override forward(idx: Tensor): Tensor {
    const x = this.tok.call(idx).add(this.pos.call(arange(idx.shape[1])));
    return this.head.call(this.ln.call(this.blocks.call(x, { mask: this.mask })));
  }
}

const path = process.argv[2];
if (!path) {
  console.error("usage: write_safetensors_check.ts OUT.safetensors (also writes OUT.expected.safetensors)");
  process.exit(2);
}
manualSeed(1234);
const model = new GPT();
const idx = randint(0, 50, [2, 8]);
save(model.stateDict(), path, { metadata: { writer: "ringtorch" } });
save({ input: idx, logits: model.call(idx) }, path.replace(/\.safetensors$/, "") + ".expected.safetensors");
console.log(`wrote ${path} (${Object.keys(model.stateDict()).length} tensors) and its expected output`);
