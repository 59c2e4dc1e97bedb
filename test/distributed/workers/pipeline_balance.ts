// One rank of test/distributed/pipeline_balance.test.ts (2 ranks): each rank times the same model
// with balanceByTime over the world group (its own timings differ), then runs 1F1B over the split
// it got; prints the split, the times it took, and the last stage's output and loss of one step.
import * as rt from "../../../src/index.js";

const { nn, dist } = rt;
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
rt.manualSeed(0);
const model = new nn.Sequential(new nn.Linear(8, 64), new nn.Tanh(), new nn.Linear(64, 64), new nn.Tanh(), new nn.Linear(64, 3));
const x = rt.randn([8, 8]);
const y = rt.randn([8, 3]);
const lossFn = (o: rt.Tensor, t: rt.Tensor) => nn.functional.mseLoss(o, t);
const group = dist.newGroup([0, 1]);
const balance = dist.pipelining.balanceByTime(model, x.narrow(0, 0, 2), { stages: 2, lossFn, target: y.narrow(0, 0, 2), rounds: 2, group });
const stage = dist.pipelining.pipeline(model, { splitPoints: balance.splitPoints }).buildStage(rank);
const schedule = new dist.pipelining.Schedule1F1B(stage, { nMicrobatches: 4, lossFn, lossScaling: "mean" });
const losses: rt.Tensor[] = [];
const out = rank === 0 ? schedule.step(x) : schedule.step({ target: y, losses });
const want = model.call(x) as rt.Tensor;
const [a, b] = [(out?.toArray() as number[][] | undefined)?.flat(), (want.toArray() as number[][]).flat()];
const close = a ? a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) < 1e-5) : null;
await dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ splitPoints: balance.splitPoints, childMs: balance.childMs, outputMatches: close }));
