/**
 * Loaded into every worker with `node --import` before the training script:
 * - records an uncaught exception or unhandled rejection in RINGTORCH_ERROR_FILE. It listens on
 *   'uncaughtExceptionMonitor', so Node still prints the error and exits with code 1 as usual,
 *   and a script's own 'uncaughtException' handler keeps working;
 * - ends the worker, and its whole process group, when ringrun disappears, even by SIGKILL: the
 *   lifeline pipe from ringrun reaches end-of-file the moment ringrun's end closes, and a slow
 *   poll of the parent pid covers the case where the pipe is not there.
 */
import { Socket } from "node:net";
import { recordError } from "./error_file.js";

process.on("uncaughtExceptionMonitor", (error) => {
  recordError(error);
});

const agentPid = Number(process.env.RINGTORCH_AGENT_PID);
const lifelineFd = Number(process.env.RINGTORCH_LIFELINE_FD);
// Processes this worker starts must not mistake themselves for ringrun's workers.
delete process.env.RINGTORCH_LIFELINE_FD;

if (Number.isInteger(agentPid) && agentPid > 0 && process.ppid === agentPid) {
  let gone = false;
  const agentGone = (): void => {
    if (gone) return;
    gone = true;
    process.stderr.write(`ringtorch worker ${process.env.RANK ?? ""} (pid ${process.pid}): ringrun (pid ${agentPid}) is gone, exiting\n`);
    try {
      process.kill(-process.pid, "SIGKILL");
    } catch {
      // Not a process-group leader: only this process can be ended.
    }
    process.exit(1);
  };
  if (Number.isInteger(lifelineFd) && lifelineFd > 2) {
    try {
      const lifeline = new Socket({ fd: lifelineFd, readable: true, writable: false });
      lifeline.on("data", () => {});
      lifeline.on("end", agentGone);
      lifeline.on("error", agentGone);
      lifeline.unref();
    } catch {
      // No usable pipe: the poll below still notices.
    }
  }
  setInterval(() => {
    if (process.ppid !== agentPid) agentGone();
  }, 1000).unref();
}
