// node --import tsx --conditions=source examples/fashion_mnist.ts
//
// Trains an MLP on Fashion-MNIST and prints its test accuracy (it reaches about 89%; the script
// exits with status 1 below --min-accuracy, 0.88 by default). Options: --epochs N, --batch-size N,
// --train-limit N / --test-limit N (use only the first N images), --data DIR, --seed N.
//
// With tracking on (the command line turns it on; --no-track turns it off), a progress bar shows each
// epoch and the run is logged under runs/fashion_mnist/<id>: `npx ringtorch report runs/fashion_mnist/<id>`.
// With RINGTORCH_TRACE=<dir> in the environment its timeline goes to <dir>/rank-0.json (the last line
// says where): open it in https://ui.perfetto.dev.
//
// The data is Debian's dataset-fashion-mnist package (`apt-get install dataset-fashion-mnist`):
// gzip'd IDX files in /usr/share/datasets/fashion-mnist.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { argmax, manualSeed, noGrad, tensor, track, type Tensor } from "../src/index.js";
import * as nn from "../src/nn/index.js";
import * as optim from "../src/optim/index.js";
import { DataLoader, TensorDataset, readIdx } from "../src/data/index.js";

export interface FashionOptions {
  dataDir?: string;
  epochs?: number;
  batchSize?: number;
  trainLimit?: number;
  testLimit?: number;
  seed?: number;
  log?: (line: string) => void;
  /** Log to a run in this experiment folder and show a progress bar (default: neither). */
  trackDir?: string;
}

export const DEFAULT_DIR = "/usr/share/datasets/fashion-mnist";
// Mean and standard deviation of the training images' pixels, scaled to [0, 1].
const MEAN = 0.286;
const STD = 0.353;

/** Images as normalised float32 rows [n, 784] and labels as int32 [n]. */
export function loadSplit(dir: string, prefix: "train" | "t10k", limit?: number): [Tensor, Tensor] {
  const files = [`${prefix}-images-idx3-ubyte.gz`, `${prefix}-labels-idx1-ubyte.gz`].map((f) => join(dir, f));
  for (const f of files) {
    if (!existsSync(f)) {
      throw new Error(`Fashion-MNIST file ${f} is missing. Install Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist) or pass --data DIR.`);
    }
  }
  const images = readIdx(files[0]);
  const labels = readIdx(files[1]);
  const n = Math.min(images.shape[0], limit ?? Infinity);
  const pixels = images.shape.slice(1).reduce((a, b) => a * b, 1);
  const x = new Float32Array(n * pixels);
  for (let i = 0; i < x.length; i++) x[i] = (images.data[i] / 255 - MEAN) / STD;
  return [tensor(x, { shape: [n, pixels] }), tensor(Int32Array.from(labels.data.subarray(0, n)), { shape: [n] })];
}

function accuracy(model: nn.Module, x: Tensor, y: Tensor): number {
  model.eval();
  let correct = 0;
  noGrad(() => {
    for (let start = 0; start < x.shape[0]; start += 1000) {
      const len = Math.min(1000, x.shape[0] - start);
      const predicted = argmax(model.call(x.narrow(0, start, len)) as Tensor, 1).data();
      const truth = y.narrow(0, start, len).data();
      for (let i = 0; i < len; i++) if (predicted[i] === truth[i]) correct++;
    }
  });
  model.train();
  return correct / x.shape[0];
}

/** Trains the MLP and returns its accuracy on the test images (all 10,000 unless testLimit). */
export async function trainFashionMnist(options: FashionOptions = {}): Promise<number> {
  const log = options.log ?? console.log;
  const dir = options.dataDir ?? DEFAULT_DIR;
  const epochs = options.epochs ?? 8;
  manualSeed(options.seed ?? 0);
  const [trainX, trainY] = loadSplit(dir, "train", options.trainLimit);
  const [testX, testY] = loadSplit(dir, "t10k", options.testLimit);
  const model = new nn.Sequential(new nn.Linear(784, 512), new nn.ReLU(), new nn.Dropout(0.2), new nn.Linear(512, 256), new nn.ReLU(), new nn.Linear(256, 10));
  const loader = new DataLoader(new TensorDataset(trainX, trainY), { batchSize: options.batchSize ?? 128, shuffle: true, numWorkers: 1 });
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const schedule = new optim.CosineAnnealingLR(opt, epochs * loader.length);
  const lossFn = new nn.CrossEntropyLoss();
  const run = options.trackDir
    ? track.init({ project: "fashion_mnist", dir: options.trackDir, config: { epochs, batchSize: loader.batchSize, lr: 1e-3, seed: options.seed ?? 0 }, systemMetrics: { samplesPerStep: loader.batchSize ?? undefined } })
    : null;
  run?.defineMetric("test/*", { stepMetric: "epoch", summary: "max" });
  let testAccuracy = 0;
  let step = 0;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const started = performance.now();
    let total = 0;
    const bar = track.progress(loader, { desc: `epoch ${epoch}/${epochs}`, unit: "batch", disable: !run });
    for await (const [x, y] of bar) {
      opt.zeroGrad();
      const loss = lossFn.call(model.call(x), y);
      loss.backward();
      opt.step();
      schedule.step();
      const value = loss.item();
      total += value;
      run?.log({ "train/loss": value, lr: schedule.getLastLr()[0] }, { step: ++step });
      if (step % 20 === 0) bar.setPostfix({ loss: value });
    }
    const seconds = (performance.now() - started) / 1000;
    testAccuracy = accuracy(model, testX, testY);
    run?.log({ "test/accuracy": testAccuracy, epoch }, { step });
    log(`epoch ${epoch}/${epochs}: train loss ${(total / loader.length).toFixed(4)}, test accuracy ${(100 * testAccuracy).toFixed(2)}% (${seconds.toFixed(1)} s training)`);
  }
  run?.finish();
  if (run) log(`run logged in ${options.trackDir}: npx ringtorch report ${options.trackDir}`);
  const trace = track.traceInfo();
  if (trace) log(`timeline traced into ${trace.file} (complete when the process exits): open it in https://ui.perfetto.dev`);
  return testAccuracy;
}

function parseArgs(argv: string[]): FashionOptions & { minAccuracy: number } {
  const out: FashionOptions & { minAccuracy: number } = { minAccuracy: 0.88, trackDir: join("runs", "fashion_mnist", new Date().toISOString().replace(/[:.]/g, "-")) };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--no-track") {
      out.trackDir = undefined;
      i--;
      continue;
    }
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--epochs") out.epochs = Number(value);
    else if (flag === "--batch-size") out.batchSize = Number(value);
    else if (flag === "--train-limit") out.trainLimit = Number(value);
    else if (flag === "--test-limit") out.testLimit = Number(value);
    else if (flag === "--data") out.dataDir = value;
    else if (flag === "--seed") out.seed = Number(value);
    else if (flag === "--min-accuracy") out.minAccuracy = Number(value);
    else throw new Error(`unknown option ${flag} (expected --epochs, --batch-size, --train-limit, --test-limit, --data, --seed, --min-accuracy, --no-track)`);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = parseArgs(process.argv.slice(2));
  const acc = await trainFashionMnist(args);
  console.log(`test accuracy: ${(100 * acc).toFixed(2)}%`);
  if (acc < args.minAccuracy) {
    console.error(`below the expected ${(100 * args.minAccuracy).toFixed(0)}%`);
    process.exit(1);
  }
}
