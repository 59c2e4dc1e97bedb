// A 2-rank DDP training job for test/checkpoint/fault_tolerance.test.ts, run under ringrun with
// restarts. It resumes from the newest checkpoint, trains with dropout (RNG state matters) through
// a DistributedSampler (data position matters), checkpoints every SAVE_EVERY steps, and on its
// first attempt can die at a chosen step: FAULT=kill (SIGKILL itself) or FAULT=mid-save (rank 0
// leaves a checkpoint with its files but no manifest, as a crash during the save would, then dies).
// At the end rank 0 writes the final parameters to OUT.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "../../../src/index.js";
import { stepDirName } from "../../../src/checkpoint/directory.js";
import { writeFiles } from "../../../src/checkpoint/write_dir.js";

const { nn, optim, data, dist, checkpoint } = rt;
const env = (k: string, d = "") => process.env[k] ?? d;
const DIR = env("CKPT_DIR");
const OUT = env("OUT");
const EPOCHS = Number(env("EPOCHS", "2"));
const SAVE_EVERY = Number(env("SAVE_EVERY", "5"));
const FAULT = env("FAULT", "none");
const FAULT_STEP = Number(env("FAULT_STEP", "-1"));
const FAULT_RANK = Number(env("FAULT_RANK", "0"));
const ASYNC = env("ASYNC_SAVE") === "1";
const B = 8;

await dist.initProcessGroup({ timeoutMs: 20_000 });
const rank = dist.getRank();
const firstAttempt = env("RINGTORCH_RESTART_COUNT", "0") === "0";
rt.manualSeed(0);
const g = new rt.Generator(42);
const dataset = new data.TensorDataset(rt.randn([96, 6], { generator: g }), rt.randint(0, 3, [96], { generator: g }));
const model = new nn.Sequential(new nn.Linear(6, 16), new nn.ReLU(), new nn.Dropout(0.2), new nn.Linear(16, 3));
const ddp = new rt.DDP(model);
const optimizer = new optim.Adam(ddp.parameters(), { lr: 0.01 });
const scheduler = new optim.StepLR(optimizer, 4, { gamma: 0.7 });
const sampler = new data.DistributedSampler(dataset, { seed: 1 });
const loader = new data.DataLoader(dataset, { batchSize: B, sampler });

const start = await checkpoint.resume(DIR, { model, optimizer, scheduler, sampler, batchSize: B });
if (start.path) {
  const saved = checkpoint.load(start.path).state.model as Record<string, rt.Tensor>;
  for (const [name, p] of model.namedParameters()) {
    if (Buffer.compare(Buffer.from(p.data().buffer, p.data().byteOffset, p.data().byteLength), Buffer.from(saved[name].data().buffer, saved[name].data().byteOffset, saved[name].data().byteLength)) !== 0) {
      throw new Error(`after resume, ${name} differs from the checkpoint`);
    }
  }
}
let step = start.step;
for (let epoch = start.epoch; epoch < EPOCHS; epoch++) {
  sampler.setEpoch(epoch);
  let batch = epoch === start.epoch ? start.batch : 0;
  for (const [x, y] of loader) {
    optimizer.zeroGrad();
    rt.crossEntropy(ddp.call(x), y).backward();
    optimizer.step();
    scheduler.step();
    step++;
    batch++;
    if (firstAttempt && step === FAULT_STEP && rank === FAULT_RANK) {
      if (FAULT === "mid-save") {
        // What a crash between the data files and the manifest leaves behind.
        writeFiles(join(DIR, stepDirName(step)), [{ name: "model.safetensors", chunks: [new Uint8Array(64)] }]);
      }
      process.kill(process.pid, "SIGKILL");
    }
    if (step % SAVE_EVERY === 0) {
      const saving = checkpoint.save(DIR, { model, optimizer, scheduler, epoch, batch }, { step, async: ASYNC, keepLast: 3 });
      if (ASYNC && firstAttempt && step === FAULT_STEP + 1 && rank === 0 && FAULT === "kill-async") process.kill(process.pid, "SIGKILL");
      await saving;
    }
  }
}
await checkpoint.flush();
if (rank === 0 && OUT) writeFileSync(OUT, JSON.stringify({ step, resumedFrom: start.step, params: model.parameters().map((p) => Buffer.from(p.data().buffer, p.data().byteOffset, p.data().byteLength).toString("base64")) }));
dist.destroyProcessGroup();
