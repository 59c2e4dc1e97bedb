// One rank of test/checkpoint/rank0_save.test.ts: the PyTorch habit of saving replicated state
// on rank 0 only (`if rank == 0: torch.save(...)`, then `dist.barrier()`), in the middle of DDP
// training, must neither hang nor shift the collectives of the next backward.
import * as rt from "../../../src/index.js";

const { nn, optim, dist, checkpoint } = rt;
const dir = process.env.CKPT_DIR!;
await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
rt.manualSeed(1);
const first = new nn.Linear(4, 8);
const net = new nn.Sequential(first, new nn.Tanh(), new nn.Linear(8, 1));
const model = new rt.DDP(net);
const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
const g = new rt.Generator(100 + rank);
const step = () => {
  opt.zeroGrad();
  rt.mseLoss(model.call(rt.randn([6, 4], { generator: g })), rt.randn([6, 1], { generator: g })).backward();
  opt.step();
};
const weights = (m: rt.nn.Linear) => Array.from(m.weight.data() as Float32Array);

step();
let savedWeight: number[] = [];
if (rank === 0) {
  await checkpoint.save(dir, { model: net, optimizer: opt, epoch: 1 }, { step: 1 });
  savedWeight = weights(first);
}
dist.barrier();
step();
step();
// The every-rank form still works, and no rank returns before rank 0's files are complete.
await checkpoint.save(dir, { model: net, epoch: 2 }, { step: 2 });
const newestAfterSave = checkpoint.latest(dir)?.manifest.step ?? -1;
step();

// Replicas stay identical: the rank-0-only save shifted no collective.
const mine = new Float64Array([weights(first).reduce((a, b) => a + b, 0)]);
const sums = Array.from({ length: dist.getWorldSize() }, () => new Float64Array(1));
dist.allGather(sums, mine);

const fresh = new nn.Linear(4, 8);
const restored = new nn.Sequential(fresh, new nn.Tanh(), new nn.Linear(8, 1));
const start = await checkpoint.resume(dir, { model: restored, step: 1 });
console.log("RESULT " + JSON.stringify({ resumedStep: start.step, resumedWeight: weights(fresh), savedWeight, newestAfterSave, sums: sums.map((s) => s[0]) }));
await dist.destroyProcessGroup();
