import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { checkOptions } from "../util/options.js";
import { MANIFEST, verifyCheckpoint, verifyCheckpointOnce, type Manifest } from "./manifest.js";

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
 * Deletes all but the newest `keepLast` complete checkpoints, and incomplete ones (no manifest:
 * a save that crashed) older than the newest complete one; a newer incomplete one may be a save
 * still in progress. Complete means verified: every listed file present with its size and
 * checksum (read once per process, see verifyCheckpointOnce). A checkpoint with a manifest that
 * does not verify neither counts towards `keepLast` nor is deleted: an unreadable or damaged
 * newest checkpoint never costs the good ones before it, and nothing is deleted on a read error.
 */
export function prune(root: string, keepLast: number, options: { onUnverified?: (path: string, reason: string) => void } = {}): void {
  checkOptions("checkpoint.prune", options, ["onUnverified"]);
  if (!Number.isInteger(keepLast) || keepLast < 1) throw new RangeError(`checkpoint: keepLast must be a positive integer, got ${keepLast}`);
  const onUnverified = options.onUnverified ?? ((path, reason) => console.warn(`ringtorch checkpoint: keeping ${path}, which does not verify (${reason}); it does not count towards keepLast`));
  let kept = 0;
  let newestCompleteStep = -1;
  for (const { step, path } of listCheckpoints(root)) {
    if (!existsSync(join(path, MANIFEST))) {
      if (newestCompleteStep >= 0 && step < newestCompleteStep) rmSync(path, { recursive: true, force: true });
      continue;
    }
    try {
      verifyCheckpointOnce(path);
    } catch (err) {
      onUnverified(path, (err as Error).message);
      continue;
    }
    if (kept < keepLast) {
      kept++;
      newestCompleteStep = Math.max(newestCompleteStep, step);
    } else rmSync(path, { recursive: true, force: true });
  }
}
