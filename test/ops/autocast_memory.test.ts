// An autocast training loop keeps no memory from step to step: once the dead tensors are
// collected, what the arena holds (weights, gradients, AdamW's moments) is the same after many
// bfloat16 steps as after the first few. A cache of bfloat16 weight copies, packed operands kept by
// the graph or a per-step cast that outlives its step would grow it by at least a weight's size per
// step. Issue 16 asked whether such growth slowed bench/bf16_gpt.ts over 300 steps (it did not: the
// process CPU per step stayed flat); this keeps it from starting. Held bytes, not timings.
// run-tests: own process (it reads what the whole thread holds).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { autocast, crossEntropy, manualSeed, memoryPool, randint, type Tensor } from "../../src/index.js";
import * as nn from "../../src/nn/index.js";
import * as optim from "../../src/optim/index.js";
import { cpuBackend, skipWithoutNative } from "../backend/cpu_support.js";
import { heldBytes } from "../parallel/workers/held_memory.js";

const [V, D, H, T, B] = [512, 64, 4, 32, 4];

class TinyGpt extends nn.Module {
  tok = new nn.Embedding(V, D);
  blocks = new nn.TransformerEncoder(
    new nn.TransformerEncoderLayer(D, H, { dimFeedforward: 2 * D, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true }),
    2,
  );
  head = new nn.Linear(D, V, { bias: false });
  declare mask: Tensor;

  constructor() {
    super();
    this.registerBuffer("mask", nn.generateSquareSubsequentMask(T));
  }

  override forward(idx: Tensor): Tensor {
    return this.head.call(this.blocks.call(this.tok.call(idx), { mask: this.mask }));
  }
}

/** What the arena holds for live tensors after each of `steps` autocast steps. */
function heldAfterSteps(steps: number): number[] {
  manualSeed(3);
  const model = new TinyGpt();
  const opt = new optim.AdamW(model.parameters(), { lr: 1e-3 });
  const idx = randint(0, V, [B, T]);
  const tgt = randint(0, V, [B * T]);
  const held: number[] = [];
  for (let i = 0; i < steps; i++) {
    opt.zeroGrad();
    const logits = autocast("bfloat16", () => model.call(idx).reshape([-1, V]));
    crossEntropy(logits, tgt).backward();
    opt.step();
    held.push(heldBytes());
  }
  return held;
}

const skip = skipWithoutNative() || (memoryPool.stats() === null && "no native arena");
const cpu = skip ? null : cpuBackend();
const paths = ["avx512bf16", "portable"].filter((p) => {
  const ok = cpu?.setBf16GemmPath(p) ?? false;
  cpu?.setBf16GemmPath("auto");
  return ok;
});

describe("autocast training memory", () => {
  for (const path of paths.length ? paths : ["auto"]) {
    it(`holds no more after 30 steps than after 4 (${path} GEMM path)`, { skip }, () => {
      assert.ok(cpu!.setBf16GemmPath(path));
      try {
        const held = heldAfterSteps(30);
        const grown = held[held.length - 1] - held[3];
        // Less than one copy of the head's weight (V x D float32, 128 KiB), let alone one per step.
        assert.ok(grown <= 64 * 1024, `the arena held ${grown} more bytes after step 30 than after step 4 (per step: ${held.join(", ")})`);
      } finally {
        cpu!.setBf16GemmPath("auto");
      }
    });
  }
});
