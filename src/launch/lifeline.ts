import { readFileSync } from "node:fs";
import { Socket } from "node:net";

/**
 * Ends this worker and its whole process group once ringrun (pid `agentPid`) is gone. Node has no
 * prctl(PR_SET_PDEATHSIG), so three signals stand in for it:
 *
 * - the lifeline pipe (`fd`, slot 3 of the worker's stdio): ringrun holds its other end and never
 *   writes, so the pipe reaches end-of-file the moment ringrun's end closes, whatever ends ringrun.
 *   A pipe that ringrun already left before this code ran reads end-of-file at once, so the watch
 *   is armed whatever the worker's parent is by now;
 * - the parent pid: a worker whose parent is no longer ringrun and whose ringrun no longer
 *   exists was orphaned while it loaded, and exits before the training script starts; later a
 *   1 s poll covers a pipe that could not be read;
 * - on its way out (an EPIPE on stdout once ringrun is gone, say), the worker still takes its
 *   process group down when ringrun is gone, so no child it started is left behind.
 *
 * Between ringrun's death and the worker noticing there is at most the time the worker takes to
 * reach this code (its loader), or one turn of its event loop after that.
 */
export function watchAgent(agentPid: number, fd: number): void {
  const startedAsChild = process.ppid === agentPid;
  const agentIsGone = (): boolean => (startedAsChild && process.ppid !== agentPid) || !pidExists(agentPid);
  let gone = false;
  const leave = (why: string): void => {
    if (gone) return;
    gone = true;
    process.stderr.write(`ringtorch worker ${process.env.RANK ?? ""} (pid ${process.pid}): ringrun (pid ${agentPid}) is gone (${why}), exiting\n`);
    killOwnGroup();
    process.exit(1);
  };
  if (!startedAsChild && !pidExists(agentPid)) {
    leave("it ended before this worker finished starting");
    return;
  }
  try {
    const lifeline = new Socket({ fd, readable: true, writable: false });
    lifeline.on("data", () => {});
    lifeline.on("end", () => leave("its lifeline pipe closed"));
    lifeline.on("error", (error) => leave(`its lifeline pipe failed: ${error.message}`));
    lifeline.unref();
  } catch {
    // No usable pipe (the fd was closed or is not a pipe): the poll below still notices.
  }
  setInterval(() => {
    if (agentIsGone()) leave("its pid is no longer this worker's parent");
  }, 1000).unref();
  process.on("exit", () => {
    if (!gone && agentIsGone()) killOwnGroup();
  });
}

function killOwnGroup(): void {
  try {
    process.kill(-process.pid, "SIGKILL");
  } catch {
    // Not a process-group leader (started by hand, not by ringrun): only this process ends.
  }
}

/** Whether `pid` is a live process: a zombie (dead, not yet reaped by its own parent) is gone. */
function pidExists(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    // No /proc (not Linux) or no such process: ask the kernel directly.
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists and belongs to someone else (a reused pid): the pipe decides then.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
