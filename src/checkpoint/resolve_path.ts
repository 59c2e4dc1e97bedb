import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { latest, listCheckpoints, stepDirName } from "./directory.js";
import { MANIFEST } from "./manifest.js";

/** Which checkpoint to resume: a step number, or "latest" (the newest complete one, required to exist). */
export type StepChoice = number | "latest";

/**
 * The checkpoint directory that `resume(path, { step })` means, or null to start fresh.
 *
 * - a checkpoint root (holding step_… directories): the newest complete checkpoint, or the one of
 *   `step`; with no checkpoint yet it starts fresh, unless a step ("latest" included) was asked for;
 * - a step directory itself (`…/step_00000003`, or `…/3` under a root, as a `preload = "3"`
 *   setting is written): that checkpoint;
 * - a path that does not exist: fresh only when it is a root not created yet AND no step was
 *   asked for; the caller prints where it looked, so a mistyped path does not go unseen.
 * Anything else is an error that says what was found.
 */
export function resolveResumePath(path: string, step: StepChoice | undefined): { dir: string | null; missing: boolean } {
  const where = "checkpoint.resume";
  if (typeof path !== "string" || path === "") throw new TypeError(`${where}: expected the checkpoint directory as a string, got ${typeof path}`);
  if (step !== undefined && step !== "latest" && (!Number.isInteger(step) || (step as number) < 0)) {
    throw new TypeError(`${where}: step must be a non-negative integer or "latest", got ${JSON.stringify(step)}`);
  }
  if (!existsSync(path)) {
    // `…/3` or `…/step_3` under an existing root names step 3 of that root.
    const parent = dirname(path);
    const m = /^(?:step_)?(\d+)$/.exec(basename(path));
    if (m && existsSync(parent) && listCheckpoints(parent).length > 0) return { dir: stepOf(parent, Number(m[1])), missing: false };
    if (step !== undefined) throw new Error(`${where}: ${resolve(path)} does not exist, so there is no checkpoint${step === "latest" ? "" : ` of step ${step}`} to resume`);
    return { dir: null, missing: true };
  }
  if (!statSync(path).isDirectory()) throw new Error(`${where}: ${resolve(path)} is a file; pass the directory checkpoint.save wrote (its root, or one step_… directory)`);
  if (existsSync(join(path, MANIFEST)) || /^step_\d+$/.test(basename(path))) {
    if (typeof step === "number") throw new Error(`${where}: ${resolve(path)} is already one checkpoint (a step directory); pass its root to choose { step: ${step} }`);
    return { dir: path, missing: false };
  }
  const steps = listCheckpoints(path);
  if (typeof step === "number") return { dir: stepOf(path, step), missing: false };
  if (steps.length === 0) {
    if (step === "latest") throw new Error(`${where}: ${resolve(path)} holds no checkpoints (no step_… directories)`);
    return { dir: null, missing: false };
  }
  const found = latest(path);
  if (!found) throw new Error(`${where}: none of the ${steps.length} checkpoint(s) under ${resolve(path)} is complete and intact`);
  return { dir: found.path, missing: false };
}

function stepOf(root: string, step: number): string {
  const dir = join(root, stepDirName(step));
  if (!existsSync(dir)) {
    const have = listCheckpoints(root).map((c) => c.step).reverse();
    throw new Error(`checkpoint.resume: ${resolve(root)} has no checkpoint of step ${step}; it has step(s) ${have.join(", ") || "none"}`);
  }
  return dir;
}
