import { autocast, crossEntropy, manualSeed, randint } from "./src/index.js";
import * as optim from "./src/optim/index.js";
import { GPT } from "./bench/gpt.js";
manualSeed(0);
const model = new GPT();
const opt = new optim.AdamW(model.parameters(), { lr: 3e-4 });
const idx = randint(0, 8192, [8, 128]), tgt = randint(0, 8192, [1024]);
const low = process.argv.includes("--bf16");
const t0 = performance.now();
for (let i = 0; i < 6; i++) {
  opt.zeroGrad();
  const loss = crossEntropy(autocast("bfloat16", { enabled: low }, () => model.call(idx).reshape([-1, 8192])), tgt);
  loss.backward();
  opt.step();
}
console.log("ms/step", (performance.now() - t0) / 6);
