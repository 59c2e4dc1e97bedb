// npx ringrun --standalone --nproc-per-node 2 examples/ddp_mlp.ts [totalEpochs=10] [saveEvery=2] [--batch-size 32]
//
// The seed's "single-GPU trainer made distributed": a small MLP on synthetic regression data,
// one process per rank under ringrun, gradients averaged by DistributedDataParallel, a
// DistributedSampler giving each rank its share, and a checkpoint written by rank 0 every
// `saveEvery` epochs. If a rank dies, ringrun restarts the group (with --max-restarts) and the
// job resumes from the last checkpoint. Without ringrun (no RANK in the environment) the same
// script trains as one process.
//
// Tracking: local rank 0 shows a progress bar per epoch; every rank logs to its own run under
// runs/ddp_mlp/<run id>/rank-<r> (JSONL, a TensorBoard event file, system metrics). The run id
// travels in the checkpoints, so a restarted job appends to the same runs. Afterwards:
//   npx ringtorch report runs/ddp_mlp/<run id>        (an HTML report; the last line printed says where)
// Timeline: add `--trace traces/ddp_mlp` to ringrun's flags; it merges every rank's into
// traces/ddp_mlp/trace.json at the end, for https://ui.perfetto.dev (without ringrun,
// RINGTORCH_TRACE=<dir> writes <dir>/rank-<r>.json per rank).
import { join } from "node:path";
import * as rt from "ringtorch";

const { nn, optim, data, dist, checkpoint, parallel, track } = rt;

function parseArgs(argv: string[]) {
  const positional = argv.filter((a, i) => !a.startsWith("--") && !argv[i - 1]?.startsWith("--"));
  const flag = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const args = { totalEpochs: Number(positional[0] ?? 10), saveEvery: Number(positional[1] ?? 2), batchSize: flag("--batch-size", 32) };
  for (const [k, v] of Object.entries(args)) if (!Number.isInteger(v) || v <= 0) throw new Error(`ddp_mlp: ${k} must be a positive integer, got ${v}`);
  return args;
}

/** y = 2·tanh(x·a) + x·b + noise: learnable, but not by a linear model alone. */
function syntheticDataset(n: number, seed: number): rt.data.TensorDataset {
  const g = new rt.Generator(seed);
  const teacher = new rt.Generator(1234);
  const a = rt.randn([20, 1], { generator: teacher });
  const b = rt.randn([20, 1], { generator: teacher }).mul(0.3);
  const x = rt.randn([n, 20], { generator: g });
  const y = x.matmul(a).tanh().mul(2).add(x.matmul(b)).add(rt.randn([n, 1], { generator: g }).mul(0.05));
  return new data.TensorDataset(x, y);
}

class Trainer {
  private readonly rank = dist.getRank();
  private readonly ddp: rt.DistributedDataParallel;
  private run: rt.track.Run | null = null;

  constructor(
    model: rt.nn.Module,
    private readonly loader: rt.data.DataLoader<rt.Tensor[], rt.Tensor[]>,
    private readonly sampler: rt.data.DistributedSampler,
    private readonly optimizer: rt.optim.Adam,
    private readonly saveEvery: number,
    private readonly checkpointDir: string,
  ) {
    this.ddp = new rt.DDP(model);
  }

  private runBatch(source: rt.Tensor, targets: rt.Tensor): number {
    this.optimizer.zeroGrad();
    const loss = rt.mseLoss(this.ddp.call(source), targets);
    loss.backward();
    this.optimizer.step();
    return loss.item();
  }

  /** Steps count batches done: a checkpoint's step is the last step logged before it. */
  private runEpoch(epoch: number): number {
    this.sampler.setEpoch(epoch);
    let sum = 0;
    let steps = 0;
    const bar = track.progress(this.loader, { desc: `epoch ${epoch}`, unit: "batch" });
    for (const [source, targets] of bar) {
      const loss = this.runBatch(source, targets);
      sum += loss;
      steps++;
      this.run!.log({ "train/loss": loss }, { step: epoch * this.loader.length + steps });
      bar.setPostfix({ loss });
    }
    return parallel.allReduceMean(sum / steps, steps);
  }

  async train(maxEpochs: number, experimentDir: string): Promise<void> {
    const start = await checkpoint.resume(this.checkpointDir, { model: this.ddp.module, optimizer: this.optimizer, sampler: this.sampler });
    if (start.path && this.rank === 0) console.log(`resumed from ${start.path} at epoch ${start.epoch}`);
    // The checkpoint names the runs it was saved from: continue them, dropping steps logged after it.
    this.run = track.init({
      project: "ddp_mlp",
      id: start.runId,
      dir: experimentDir,
      resume: "allow",
      resumeFrom: start.path ? start.step : undefined,
      config: { batchSize: this.loader.batchSize, worldSize: dist.getWorldSize(), lr: 1e-3, maxEpochs },
      systemMetrics: { samplesPerStep: this.loader.batchSize ?? undefined },
    });
    this.run.defineMetric("epoch/*", { stepMetric: "epoch" });
    this.run.defineMetric("train/loss", { summary: "min" });
    for (let epoch = start.epoch; epoch < maxEpochs; epoch++) {
      const t0 = performance.now();
      const loss = this.runEpoch(epoch);
      this.run.log({ "epoch/loss": loss, epoch }, { step: (epoch + 1) * this.loader.length });
      if (this.rank === 0) {
        console.log(`epoch ${epoch} | loss ${loss.toFixed(4)} | ${this.loader.length} steps of ${this.loader.batchSize} per rank × ${dist.getWorldSize()} ranks | ${(performance.now() - t0).toFixed(0)} ms`);
      }
      if ((epoch + 1) % this.saveEvery === 0 || epoch + 1 === maxEpochs) {
        const step = (epoch + 1) * this.loader.length;
        await checkpoint.save(this.checkpointDir, { model: this.ddp.module, optimizer: this.optimizer, epoch: epoch + 1 }, { step, keepLast: 2 });
        if (this.rank === 0) console.log(`epoch ${epoch} | checkpoint saved in ${this.checkpointDir}`);
      }
    }
  }

  /** Mean squared error on held-out data, every sample counted once across ranks. */
  evaluate(dataset: rt.data.TensorDataset): number {
    const sampler = new data.DistributedSampler(dataset, { evaluation: true });
    let sum = 0;
    let count = 0;
    rt.noGrad(() => {
      for (const [x, y] of new data.DataLoader(dataset, { batchSize: 256, sampler })) {
        sum += rt.mseLoss(this.ddp.module.call(x), y, { reduction: "sum" }).item();
        count += x.shape[0];
      }
    });
    const [total, n] = parallel.allReduceSum([sum, count]);
    return total / n;
  }

  finish(testMse: number): void {
    this.run!.summary["test/mse"] = testMse;
    this.run!.finish();
  }
}

async function main(): Promise<void> {
  const { totalEpochs, saveEvery, batchSize } = parseArgs(process.argv.slice(2));
  await dist.initProcessGroup();
  rt.manualSeed(0);
  const train = syntheticDataset(4096, 1);
  const test = syntheticDataset(1024, 2);
  const model = new nn.Sequential(new nn.Linear(20, 64), new nn.ReLU(), new nn.Linear(64, 64), new nn.ReLU(), new nn.Linear(64, 1));
  const sampler = new data.DistributedSampler(train, { seed: 0 });
  const loader = new data.DataLoader(train, { batchSize, sampler });
  const optimizer = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const runId = process.env.RINGTORCH_RUN_ID ?? "local";
  const experimentDir = join("runs", "ddp_mlp", runId);
  const trainer = new Trainer(model, loader, sampler, optimizer, saveEvery, join(experimentDir, "checkpoints"));
  const before = trainer.evaluate(test);
  await trainer.train(totalEpochs, experimentDir);
  const after = trainer.evaluate(test);
  trainer.finish(after);
  if (dist.getRank() === 0) {
    console.log(`test MSE ${before.toFixed(4)} → ${after.toFixed(4)} (${test.length} held-out samples over ${dist.getWorldSize()} ranks)`);
    console.log(`runs in ${experimentDir}: npx ringtorch report ${experimentDir}  (or tensorboard --logdir ${experimentDir})`);
  }
  const trace = track.traceInfo();
  if (trace && (trace.merged === null || dist.getRank() === 0)) {
    console.log(`timeline: ${trace.merged ?? trace.file}${trace.merged ? " once ringrun has merged the ranks' files" : ""}; open it in https://ui.perfetto.dev`);
  }
  dist.destroyProcessGroup();
}

await main();
