/** What a training script may use from the launch layer: recording its own errors for ringrun. */
export { record, recordError, readErrorFile, type ErrorRecord } from "./error_file.js";
export { spawn, multiprocessing, type SpawnOptions } from "./spawn.js";
export { SpawnContext } from "./spawn_context.js";
export { ProcessException, ProcessRaisedException, ProcessExitedException } from "./spawn_errors.js";
