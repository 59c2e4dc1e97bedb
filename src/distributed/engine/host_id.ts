import { readFileSync, readlinkSync, statSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Two processes can share memory when they run on one kernel (boot id), see the same /dev/shm
 * (device number: a container or `ip netns exec` with its own tmpfs has another) and the same pid
 * namespace (peers watch each other's pids to notice a crash). Hostnames alone are not enough:
 * containers on one machine may share a hostname and not /dev/shm, or the reverse.
 */
export function hostIdentity(): string {
  const parts = [hostname()];
  try {
    parts.push(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  } catch {
    parts.push("no-boot-id");
  }
  try {
    parts.push(String(statSync("/dev/shm").dev));
  } catch {
    parts.push("no-dev-shm");
  }
  try {
    parts.push(readlinkSync("/proc/self/ns/pid"));
  } catch {
    parts.push("no-pid-ns");
  }
  return parts.join("|");
}

export function pidNamespaceId(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {
    return "0";
  }
}
