// npx ringrun --standalone --nproc-per-node 2 examples/model_parallel.ts [steps=200]
//
// Model parallelism by hand: a model too big for one device, split layer by layer. Rank 0 holds
// the first half of an MLP, rank 1 the second half and the loss. The activations go forward with
// dist.nn.functional.send/recv, whose backward passes carry the gradient back: rank 1's
// loss.backward() sends d(loss)/d(activations) to rank 0, whose token.backward() receives it and
// finishes the backward pass through its own layers. Each rank steps its own optimizer.
// (Only one rank computes at a time here; examples/pipeline_gpt.ts fills that bubble with micro-batches.)
import * as rt from "ringtorch";

const { nn, optim, dist } = rt;
const F = dist.nn.functional;
const steps = Number(process.argv[2] ?? 200);

await dist.initProcessGroup();
const rank = dist.getRank();
if (dist.getWorldSize() !== 2) throw new Error(`this example splits the model over exactly 2 ranks, got ${dist.getWorldSize()}`);

// Every rank builds the same layers from the same seed and keeps its half.
rt.manualSeed(0);
const layers = [new nn.Linear(4, 64), new nn.Tanh(), new nn.Linear(64, 64), new nn.Tanh(), new nn.Linear(64, 1)];
const mine = new nn.Sequential(...(rank === 0 ? layers.slice(0, 2) : layers.slice(2)));
const opt = new optim.Adam(mine.parameters(), { lr: 3e-3 });

// A target only the whole model can fit: y = sin(x0) + x1*x2 - x3^2 / 2.
const data = (n: number) => {
  const x = rt.randn([n, 4]);
  const [a, b, c, d] = [0, 1, 2, 3].map((i) => x.narrow(1, i, 1));
  return { x, y: a!.sin().add(b!.mul(c!)).sub(d!.mul(d!).div(2)) };
};

for (let step = 1; step <= steps; step++) {
  const { x, y } = data(64); // the same batch on both ranks (same seed); rank 0 uses x, rank 1 uses y
  opt.zeroGrad();
  if (rank === 0) {
    F.send(mine.call(x) as rt.Tensor, 1).backward(); // waits for d(loss)/d(h) from rank 1
  } else {
    const h = F.recv([64, 64], 0);
    const loss = nn.functional.mseLoss(mine.call(h) as rt.Tensor, y);
    loss.backward(); // sends d(loss)/d(h) to rank 0
    if (step % 50 === 0 || step === 1) console.log(`step ${step}: loss ${loss.item().toFixed(4)}`);
  }
  opt.step();
}
await dist.destroyProcessGroup();
