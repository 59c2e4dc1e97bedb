// A node:test reporter that records how long each test file took, for run-tests.js's
// `RINGTORCH_TEST_TIMES=<file>`: one JSON line per file with its wall time and, for a file that
// ran in its own process, the CPU time of that process and every process it started and waited
// for. Wall time on a shared machine says more about the neighbours than about the file; CPU
// time is the steadier figure to compare runs by.
//
// The CPU time is read from the runner's own /proc/self/stat: the kernel adds a child's CPU
// time (with its waited-for descendants') to the parent's cutime/cstime when the child is
// reaped, and the runner reaps a file's process just before it reports the file complete, so
// the growth between two such reports is that file's. Two files reaped in the same instant
// would be credited to the first; null where /proc is missing (not Linux).
import { readFileSync } from "node:fs";
import { basename, relative } from "node:path";

const ticksPerSecond = 100; // USER_HZ, fixed at 100 on Linux whatever the kernel's HZ

function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces) start at field 3; cutime and
    // cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}

export default async function* testTimes(source) {
  let lastCpu = childrenCpuMs();
  for await (const event of source) {
    if (event.type !== "test:complete" || event.data.nesting !== 0) continue;
    const { name, file, details } = event.data;
    const wallMs = Math.round(details.duration_ms);
    if (file !== undefined && name === file) {
      // A whole process: a file on its own, or a group of shared files.
      const cpu = childrenCpuMs();
      const cpuMs = cpu === null || lastCpu === null ? null : Math.round(cpu - lastCpu);
      lastCpu = cpu;
      const name = relative(process.cwd(), file);
      yield JSON.stringify({ file: name.startsWith("..") ? basename(file) : name, wallMs, cpuMs, process: true }) + "\n";
    } else if (typeof name === "string" && name.startsWith("test/") && name.endsWith(".test.ts")) {
      // A file inside a shared process: the suite run-tests.js named after it.
      yield JSON.stringify({ file: name, wallMs, cpuMs: null, process: false }) + "\n";
    }
  }
}
