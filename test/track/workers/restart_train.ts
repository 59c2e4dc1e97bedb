// Two ranks under ringrun for test/track/restart.test.ts: each logs loss = step·10 + rank to its
// run every step, checkpoints every SAVE_EVERY steps, and on the first attempt rank 1 SIGKILLs
// itself right after logging KILL_STEP (past the last checkpoint, so steps must be rewound).
import * as rt from "../../../src/index.js";

const { dist, checkpoint, track } = rt;
const env = (k: string, d = "") => process.env[k] ?? d;
const CKPT = env("CKPT_DIR");
const EXP = env("EXP_DIR");
const STEPS = Number(env("STEPS", "12"));
const SAVE_EVERY = Number(env("SAVE_EVERY", "4"));
const KILL_STEP = Number(env("KILL_STEP", "10"));

await dist.initProcessGroup({ timeoutMs: 20_000 });
const rank = dist.getRank();
const start = await checkpoint.resume(CKPT);
const run = track.init({
  project: "restart-test",
  id: start.runId,
  dir: EXP,
  resume: "allow",
  resumeFrom: start.path ? start.step : undefined,
  config: { steps: STEPS },
  systemMetrics: { intervalMs: 50, samplesPerStep: 8 },
});
for (let step = start.step + 1; step <= STEPS; step++) {
  const x = rt.tensor([step + rank]);
  dist.allReduce(x);
  run.log({ loss: step * 10 + rank, sum: x.item() }, { step });
  if (env("RINGTORCH_RESTART_COUNT") === "0" && rank === 1 && step === KILL_STEP) process.kill(process.pid, "SIGKILL");
  if (step % SAVE_EVERY === 0) await checkpoint.save(CKPT, { note: "restart test" }, { step });
}
run.finish();
await dist.destroyProcessGroup();
