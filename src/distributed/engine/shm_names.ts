import { randomBytes } from "node:crypto";
import { readdirSync, unlinkSync } from "node:fs";
import { pidNamespaceId } from "./host_id.js";

const PREFIX = "ringtorch-";

/**
 * Segment names carry the creator's pid namespace and pid, so that a later job can remove the
 * segments of a process that was killed before it could unlink its own (normally a segment is
 * unlinked as soon as every peer has mapped it, a fraction of a second after it was created).
 */
export function segmentName(rank: number): string {
  return `/${PREFIX}${pidNamespaceId()}-${process.pid}-${rank}-${randomBytes(6).toString("hex")}`;
}

/** Removes segments left by dead processes of this pid namespace. Returns how many it removed. */
export function removeStaleSegments(dir = "/dev/shm"): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  const ns = pidNamespaceId();
  let removed = 0;
  for (const name of names) {
    const m = /^ringtorch-(\d+)-(\d+)-\d+-[0-9a-f]+$/.exec(name);
    if (!m || m[1] !== ns || isAlive(Number(m[2]))) continue;
    try {
      unlinkSync(`${dir}/${name}`);
      removed++;
    } catch {
      // Another process cleaned it first.
    }
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
