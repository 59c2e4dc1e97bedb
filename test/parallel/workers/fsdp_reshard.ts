// One rank of test/parallel/fsdp.test.ts's resharding test. PHASE=save (4 ranks): train, save a
// sharded checkpoint and the gathered full state, train on. PHASE=load (2 or 3 ranks): load the
// 4-rank checkpoint, gather the full state, train the same steps. Full states go to DIR as safetensors,
// which the test reads with its own reader and compares.
import * as rt from "../../../src/index.js";

const { nn, optim, dist, fsdp, checkpoint, serialization } = rt;
await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const DIR = process.env.DIR!;
const PHASE = process.env.PHASE!;
const B = 12;

class Net extends nn.Module {
  a = new nn.Linear(3, 15);
  b = new nn.Linear(15, 7);
  c = new nn.Linear(7, 3);
  override forward(x: rt.Tensor): rt.Tensor {
    return this.c.call(this.b.call(this.a.call(x).tanh()).tanh());
  }
}
rt.manualSeed(PHASE === "save" ? 0 : 1);
const net = new Net();
const model = new rt.FSDP(net, { autoWrapPolicy: fsdp.moduleWrapPolicy([nn.Linear]) });
const opt = new optim.AdamW(model.parameters(), { lr: 0.01, weightDecay: 0.1 });

function train(from: number, to: number): void {
  for (let step = from; step < to; step++) {
    const g = new rt.Generator(500 + step);
    const x = rt.randn([B, 3], { generator: g });
    const y = rt.randint(0, 3, [B], { generator: g });
    const n = B / world;
    rt.crossEntropy(model.call(x.narrow(0, rank * n, n)) as rt.Tensor, y.narrow(0, rank * n, n)).backward();
    opt.step();
    opt.zeroGrad();
  }
}

function exportFull(name: string): void {
  const full = fsdp.fullStateDict(net);
  if (rank === 0) serialization.save(full, `${DIR}/${name}.safetensors`);
}

if (PHASE === "save") {
  train(0, 3);
  await checkpoint.save(`${DIR}/ckpt`, { step: 3 }, { step: 3, sharded: fsdp.shardedStateDict(net, opt) });
  exportFull("at_save");
  train(3, 6);
  exportFull("after_save");
} else {
  fsdp.loadShardedStateDict(net, `${DIR}/ckpt/step_00000003`, { optimizer: opt });
  exportFull(`loaded_${world}`);
  train(3, 6);
  exportFull(`after_load_${world}`);
}
dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify({ ok: true }));
