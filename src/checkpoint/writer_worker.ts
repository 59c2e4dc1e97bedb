import { parentPort } from "node:worker_threads";
import { runWriteJob, type WriteJob } from "./write_dir.js";

/** The background writer of asynchronous saves: one job at a time, in the order they were sent. */
parentPort!.on("message", (msg: { id: number; job: WriteJob }) => {
  try {
    parentPort!.postMessage({ id: msg.id, manifest: runWriteJob(msg.job) });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
