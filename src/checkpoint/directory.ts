import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MANIFEST, verifyCheckpoint, type Manifest } from "./manifest.js";

const STEP_DIR = /^step_(\d+)$/;

export function stepDirName(step: number): string {
  return `step_${String(step).padStart(8, "0")}`;
}

/** Checkpoint directories under root, newest step first. */
export function listCheckpoints(root: string): { step: number; path: string }[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && STEP_DIR.test(e.name))
    .map((e) => ({ step: Number(STEP_DIR.exec(e.name)![1]), path: join(root, e.name) }))
    .sort((a, b) => b.step - a.step);
}

export interface LatestOptions {
  /** Called for each newer checkpoint that was skipped, with the reason (default: a console warning). */
  onSkip?: (path: string, reason: string) => void;
}

/**
 * The newest complete checkpoint whose files all verify, or null. A partial or corrupt one (a
 * crash mid-save, a truncated file, a flipped byte) is skipped with a warning and the previous
 * one is used.
 */
export function latest(root: string, options: LatestOptions = {}): { path: string; manifest: Manifest } | null {
  const onSkip = options.onSkip ?? ((path, reason) => console.warn(`ringtorch checkpoint: skipping ${path}: ${reason}`));
  for (const { path } of listCheckpoints(root)) {
    try {
      return { path, manifest: verifyCheckpoint(path) };
    } catch (err) {
      onSkip(path, (err as Error).message);
    }
  }
  return null;
}

/**
 * Deletes all but the newest `keepLast` complete checkpoints, and incomplete ones older than the
 * newest complete one (a newer incomplete one may be a save still in progress). Completeness here
 * is the manifest's presence; checksums are verified when a checkpoint is loaded.
 */
export function prune(root: string, keepLast: number): void {
  let kept = 0;
  let newestCompleteStep = -1;
  for (const { step, path } of listCheckpoints(root)) {
    const complete = existsSync(join(path, MANIFEST));
    if (complete && kept < keepLast) {
      kept++;
      newestCompleteStep = Math.max(newestCompleteStep, step);
      continue;
    }
    if (complete || (newestCompleteStep >= 0 && step < newestCompleteStep)) rmSync(path, { recursive: true, force: true });
  }
}
