import * as rt from "../src/index.js";
import { exposeCollector } from "../src/tensor/arena.js";
const { nn, optim, dist, fsdp } = rt;
rt.getBackend();
await dist.initProcessGroup({ timeoutMs: 20_000 });
const gc = exposeCollector()!;
const held = () => { rt.memoryPool.clear(); gc({ type: "major" }); return rt.memoryPool.stats()!.held; };
const D = 256;
const base = held();
const log = (w: string) => dist.getRank() === 0 && console.log(w, held() - base);
rt.manualSeed(0);
const model = new nn.Sequential(...Array.from({ length: 4 }, () => new nn.Linear(D, D, { bias: false })));
log("built");
const f = new rt.FSDP(model, { autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]) });
log("fsdp");
const opt = new optim.AdamW(f.parameters(), { lr: 1e-3 });
for (let s = 0; s < 2; s++) {
  const x = rt.randn([4, D]);
  const out = f.call(x) as rt.Tensor;
  log("fwd");
  out.square().mean().backward();
  log("bwd");
  opt.step();
  log("step");
}
process.exit(0);
