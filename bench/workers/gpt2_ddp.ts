// One rank of `bench/gpt2.ts --ddp` (started by ringrun, one thread per rank): GPT-2 and BERT-mini
// trained under DistributedDataParallel, each rank on its own batch; rank 0 prints total tokens/s.
import * as rt from "../../src/index.js";
import { build, measurement, timed, trainer, type Which } from "../gpt2_workload.js";

await rt.dist.initProcessGroup();
const world = rt.dist.getWorldSize();
for (const which of (process.env.WHICH ?? "gpt2,bert").split(",") as Which[]) {
  const { model, loss, tokens } = build(which);
  const ddp = new rt.DDP(model);
  const runs = timed(trainer(model, ddp, loss), tokens);
  // Each rank times its own steps in lockstep with the other: the total is world × one rank's rate.
  if (rt.dist.getRank() === 0) console.log(`RESULT ${JSON.stringify(measurement(`ddp ${which}`, runs, world))}`);
}
rt.dist.destroyProcessGroup();
