import * as rt from "../src/index.js";
import { GPT2 } from "./gpt2_workload.js";
rt.setNumThreads(1);
rt.manualSeed(0);
const model = new rt.models.GPT2LMHeadModel(GPT2).eval();
const prompt = rt.tensor(Array.from({ length: 32 }, (_, i) => (i * 1009) % GPT2.vocab_size), { dtype: "int32", shape: [1, 32] });
for (const useCache of (process.argv[2] ?? "on,off").split(",").map((x) => x === "on")) {
  rt.models.generate(model, prompt, { maxNewTokens: 64, useCache });
  const c: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = process.cpuUsage();
    rt.models.generate(model, prompt, { maxNewTokens: 64, useCache });
    const t = process.cpuUsage(t0);
    c.push((t.user + t.system) / 1e6);
  }
  console.log(`cache=${useCache} cpu s per generate: ${c.map((x) => x.toFixed(3)).join(" ")} -> ${(64 / Math.min(...c)).toFixed(1)} tok/cpu-s`);
}
