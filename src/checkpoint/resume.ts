import { setRngState, type GeneratorState } from "../tensor/random.js";
import { resolve } from "node:path";
import { checkArity, checkOptions } from "../util/options.js";
import { load } from "./load.js";
import { resolveResumePath, type StepChoice } from "./resolve_path.js";
import { distributedContext } from "./world.js";

interface Loadable {
  loadStateDict(state: never, ...rest: never[]): unknown;
}

interface SamplerLike {
  setEpoch(epoch: number): void;
  setStartIndex(n: number): void;
  readonly numSamples: number;
}

export interface ResumeTargets {
  model?: Loadable;
  optimizer?: Loadable;
  scheduler?: Loadable;
  /** A DistributedSampler: its epoch is restored and it skips the batches already trained on. */
  sampler?: SamplerLike;
  /** Samples per batch on each rank, to turn the saved batch position into a sampler offset. */
  batchSize?: number;
  /** Resume this step's checkpoint, or "latest" (required to exist); default: the newest if there is one. */
  step?: StepChoice;
}

export interface ResumePoint {
  /** The checkpoint loaded, or null when training starts fresh. */
  path: string | null;
  step: number;
  epoch: number;
  /** The next batch to train within `epoch`. */
  batch: number;
  /** The tracking run that was logging when the checkpoint was saved (pass it to `track.init` as `id`). */
  runId?: string;
  /** Whatever else was saved, under its own key. */
  state: Record<string, unknown>;
}

/**
 * Restores the newest complete checkpoint under `root` into the given objects and says where to
 * continue; with no checkpoint it returns step 0. Save what it needs with
 * `checkpoint.save(root, { model, optimizer, scheduler, epoch, batch, … }, { step })`.
 *
 *   const start = await checkpoint.resume(dir, { model, optimizer, scheduler, sampler, batchSize });
 *   for (let epoch = start.epoch; epoch < epochs; epoch++) { sampler.setEpoch(epoch); … }
 *
 * The RNG state is restored too, so that dropout and shuffling continue exactly as they would
 * have. When the world size changed since the save, the data position is converted through the
 * number of samples all ranks had consumed together (exact when it divides evenly).
 */
export async function resume(root: string, targets: ResumeTargets = {}): Promise<ResumePoint> {
  checkArity("checkpoint.resume", arguments, 2, "checkpoint.resume(dir, { model, optimizer, scheduler, sampler, batchSize, step })");
  checkOptions("checkpoint.resume", targets, ["model", "optimizer", "scheduler", "sampler", "batchSize", "step"]);
  const world = distributedContext();
  const { dir, missing } = resolveResumePath(root, targets.step);
  if (!dir) {
    // Starting fresh is right on a first run, but a mistyped path must not pass unseen.
    if (world.rank === 0) console.warn(`ringtorch checkpoint: no checkpoint ${missing ? `at ${resolve(root)} (it does not exist yet)` : `under ${resolve(root)}`}; starting from step 0`);
    return { path: null, step: 0, epoch: 0, batch: 0, state: {} };
  }
  const { path, manifest, state } = load(dir, { rank: world.rank });
  const apply = (name: keyof ResumeTargets, target: Loadable | undefined) => {
    if (!target) return;
    if (!(name in state)) throw new Error(`checkpoint.resume: ${path} holds no ${name} state to load`);
    target.loadStateDict(state[name] as never);
  };
  apply("model", targets.model);
  apply("optimizer", targets.optimizer);
  apply("scheduler", targets.scheduler);
  if (state.rng) setRngState(state.rng as GeneratorState);
  const epoch = typeof state.epoch === "number" ? state.epoch : 0;
  let batch = typeof state.batch === "number" ? state.batch : 0;
  if (manifest.worldSize !== world.worldSize && batch > 0) {
    const samples = batch * manifest.worldSize;
    batch = Math.floor(samples / world.worldSize);
    if (samples % world.worldSize !== 0) {
      console.warn(`ringtorch checkpoint: resuming ${manifest.worldSize} ranks' position on ${world.worldSize} ranks rounds down to batch ${batch}`);
    }
  }
  if (targets.sampler) {
    targets.sampler.setEpoch(epoch);
    if (batch > 0) {
      if (!targets.batchSize) throw new Error("checkpoint.resume: pass batchSize with the sampler, so that it can skip the batches already trained on");
      targets.sampler.setStartIndex(Math.min(batch * targets.batchSize, targets.sampler.numSamples));
    }
  }
  return { path, step: manifest.step, epoch, batch, ...(typeof state.runId === "string" ? { runId: state.runId } : {}), state };
}
