// One rank of test/distributed/pipeline_trace.test.ts (2 ranks): traces one step of 1F1B and then
// one of GPipe, each over 4 micro-batches of a 2-stage pipeline, into TRACE_DIR.
import * as rt from "../../../src/index.js";

const { nn, dist, track } = rt;
track.startTrace(process.env.TRACE_DIR!);
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
rt.manualSeed(0);
const model = new nn.Sequential(new nn.Linear(6, 8), new nn.Tanh(), new nn.Linear(8, 3));
const stage = dist.pipelining.pipeline(model, { splitPoints: ["2"] }).buildStage(rank);
const x = rt.randn([8, 6]);
const y = rt.randn([8, 3]);
for (const Schedule of [dist.pipelining.Schedule1F1B, dist.pipelining.ScheduleGPipe]) {
  const schedule = new Schedule(stage, { nMicrobatches: 4, lossFn: (o, t) => nn.functional.mseLoss(o, t), lossScaling: "mean" });
  if (rank === 0) schedule.step(x);
  else schedule.step({ target: y });
}
track.stopTrace();
await dist.destroyProcessGroup();
console.log("RESULT {}");
