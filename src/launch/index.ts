/** What a training script may use from the launch layer: recording its own errors for ringrun. */
export { record, recordError, readErrorFile, type ErrorRecord } from "./error_file.js";
