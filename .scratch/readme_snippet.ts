// npx ringrun --standalone --nproc-per-node 2 train.ts
import * as rt from "ringtorch";
const { nn, optim, dist, fsdp, checkpoint } = rt;

await dist.initProcessGroup();
const net = new nn.Sequential(new nn.Linear(16, 64), new nn.ReLU(), new nn.Linear(64, 4));
for (const m of [...net.children()]) if (m instanceof nn.Linear) fsdp.fullyShard(m);  // a unit per layer (FSDP2)
fsdp.fullyShard(net);                                                                   // then the root
const opt = new optim.AdamW(net.parameters(), { lr: 1e-3 });  // this rank's shards
const x = rt.randn([8, 16]);
rt.crossEntropy(net.call(x), rt.randint(0, 4, [8])).backward();
fsdp.clipGradNorm(net, 1.0);                                  // global norm, one all-reduce
opt.step();
await checkpoint.save("runs/fsdp", { step: 1 }, { step: 1, sharded: fsdp.shardedStateDict(net, opt) });
dist.destroyProcessGroup();
