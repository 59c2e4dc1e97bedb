import * as rt from "../src/index.js";
import { build, trainer } from "./gpt2_workload.js";
const mb = () => `rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} max ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} heap ${(process.memoryUsage().heapUsed/1048576).toFixed(0)} ext ${(process.memoryUsage().external/1048576).toFixed(0)} ab ${(process.memoryUsage().arrayBuffers/1048576).toFixed(0)}`;
rt.setNumThreads(1);
console.log("import", mb());
const which = (process.argv[2] ?? "bert") as "bert" | "gpt2";
const { model, loss } = build(which);
console.log("built", mb());
const step = trainer(model, model, loss);
for (let i = 0; i < 8; i++) { step(); console.log("step", i, mb(), JSON.stringify(Object.fromEntries(Object.entries(rt.memoryPool.stats() ?? {}).map(([k, v]) => [k, Math.round(Number(v) / 1048576)])))); }
