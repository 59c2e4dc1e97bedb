/**
 * Loaded into every worker with `node --import` before the training script:
 * - records an uncaught exception or unhandled rejection in RINGTORCH_ERROR_FILE. It listens on
 *   'uncaughtExceptionMonitor', so Node still prints the error and exits with code 1 as usual,
 *   and a script's own 'uncaughtException' handler keeps working;
 * - ends the worker, and its whole process group, when ringrun disappears, even by SIGKILL, and
 *   whenever that happens: before this preload ran (ringrun was killed while the worker was still
 *   loading), while it runs, or later. See lifeline.ts.
 */
import { recordError } from "./error_file.js";
import { watchAgent } from "./lifeline.js";

process.on("uncaughtExceptionMonitor", (error) => {
  recordError(error);
});

const agentPid = Number(process.env.RINGTORCH_AGENT_PID);
const lifelineFd = Number(process.env.RINGTORCH_LIFELINE_FD);
// Processes this worker starts must not mistake themselves for ringrun's workers: the pipe is
// this process's alone (its descendants may hold the fd, but not the promise that it is ours).
delete process.env.RINGTORCH_LIFELINE_FD;

if (Number.isInteger(agentPid) && agentPid > 0 && Number.isInteger(lifelineFd) && lifelineFd > 2) {
  watchAgent(agentPid, lifelineFd);
}
