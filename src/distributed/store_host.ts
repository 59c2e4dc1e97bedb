import type { Worker } from "node:worker_threads";
import { siblingModule, spawnWorker } from "../util/spawn_worker.js";
import { DistributedError } from "./work.js";

/**
 * The job's TCP store when rank 0 hosts it (no launcher). It runs on its own thread: rank 0's
 * main thread may block in a synchronous collective while other ranks still need the store.
 * The thread does not keep the process alive.
 */
export class StoreHost {
  private constructor(
    private readonly worker: Worker,
    readonly host: string,
    readonly port: number,
  ) {}

  static start(opts: { host: string; port: number; token: string }): Promise<StoreHost> {
    const worker = spawnWorker(siblingModule(import.meta.url, "./store_host_worker"), { workerData: opts });
    return new Promise((resolve, reject) => {
      worker.once("message", (m: { port?: number; error?: string }) => {
        if (m.error !== undefined) {
          void worker.terminate();
          reject(new DistributedError(m.error));
          return;
        }
        worker.unref();
        resolve(new StoreHost(worker, opts.host, m.port!));
      });
      worker.once("error", (err) => reject(new DistributedError(`the store thread failed to start: ${err.message}`)));
    });
  }

  async close(): Promise<void> {
    this.worker.ref();
    this.worker.postMessage("close");
    await new Promise<void>((resolve) => {
      this.worker.once("exit", () => resolve());
      setTimeout(() => void this.worker.terminate().then(() => resolve()), 2000).unref();
    });
  }
}
