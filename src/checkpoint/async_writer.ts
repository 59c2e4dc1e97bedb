import type { Worker } from "node:worker_threads";
import { siblingModule, spawnWorker } from "../util/spawn_worker.js";
import type { Manifest } from "./manifest.js";
import type { WriteJob } from "./write_dir.js";

/**
 * Sends checkpoint writes to a worker thread, so that the training thread only pays for the
 * snapshot copy. Jobs complete in order. The worker does not keep the process alive while idle.
 */
export class AsyncCheckpointWriter {
  private worker: Worker | null = null;
  private nextId = 0;
  private pending = new Map<number, { resolve: (m: Manifest | null) => void; reject: (e: Error) => void }>();
  private last: Promise<unknown> = Promise.resolve();

  write(job: WriteJob): Promise<Manifest | null> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    const done = new Promise<Manifest | null>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.last = done.catch(() => undefined);
    worker.ref();
    worker.postMessage({ id, job });
    return done;
  }

  /** Resolves when every write sent so far has finished (jobs complete in order). */
  flush(): Promise<void> {
    return this.last.then(() => undefined);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnWorker(siblingModule(import.meta.url, "./writer_worker"), {});
    worker.on("message", (msg: { id: number; manifest?: Manifest | null; error?: string }) => {
      const entry = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error !== undefined) entry?.reject(new Error(`checkpoint: the asynchronous save failed: ${msg.error}`));
      else entry?.resolve(msg.manifest ?? null);
      if (this.pending.size === 0) worker.unref();
    });
    worker.on("error", (err) => this.failAll(err));
    worker.on("exit", (code) => {
      this.worker = null;
      if (this.pending.size > 0) this.failAll(new Error(`checkpoint writer thread exited with code ${code}`));
    });
    worker.unref();
    return (this.worker = worker);
  }

  private failAll(err: Error): void {
    for (const entry of this.pending.values()) entry.reject(err);
    this.pending.clear();
  }
}
