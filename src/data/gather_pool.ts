import { Worker } from "node:worker_threads";
import { itemSize } from "../tensor/dtype.js";
import type { Tensor } from "../tensor/tensor.js";
import { emptyTensor } from "../ops/util.js";
import type { GatherPlan } from "./dataset.js";

/**
 * The worker's whole program: copy rows between shared buffers. It is plain JavaScript run with
 * `eval`, so the worker starts without the TypeScript loader and shares no module state.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (job) => {
  try {
    const rows = job.rows;
    for (const part of job.parts) {
      const rb = part.rowBytes;
      const src = new Uint8Array(part.src, part.srcOffset, part.srcBytes);
      const dst = new Uint8Array(part.dst, part.dstOffset, rb * rows.length);
      for (let j = 0; j < rows.length; j++) dst.set(src.subarray(rows[j] * rb, rows[j] * rb + rb), j * rb);
    }
    parentPort.postMessage({ id: job.id });
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String((err && err.stack) || err) });
  }
});
`;

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Worker threads that gather dataset rows into batch tensors. Tensor memory is a
 * SharedArrayBuffer, so a worker writes the batch in place while the main thread trains on the
 * previous one; only the row indices travel in the message. Workers are unref'd (they never keep
 * the process alive). A batch's timeout runs from when the loop starts waiting for it (see
 * `wait`), not from when it was requested: a training step longer than the timeout must not count
 * against batches that were ready long before.
 */
export class GatherPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;

  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
      w.unref();
      w.on("message", (msg: { id: number; error?: string }) => this.settle(msg.id, msg.error ? new Error(`DataLoader worker ${i}: ${msg.error}`) : null));
      w.on("error", (err) => this.failAll(new Error(`DataLoader worker ${i} failed: ${err.message}`)));
      w.on("exit", (code) => {
        if (code !== 0) this.failAll(new Error(`DataLoader worker ${i} exited unexpectedly with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  /** The batch tensors for a plan: allocated here, filled by a worker. */
  gather(plan: GatherPlan): Promise<Tensor[]> {
    if (this.failure) return Promise.reject(this.failure);
    const n = plan.rows.length;
    const outs = plan.tensors.map((t) => emptyTensor(t.dtype, [n, ...t.shape.slice(1)]));
    const parts = plan.tensors.map((t, k) => {
      const bytes = itemSize(t.dtype);
      const rowBytes = (t.numel / t.shape[0]) * bytes;
      const src = t.storage.data;
      const dst = outs[k].storage.data;
      return {
        src: src.buffer,
        srcOffset: src.byteOffset + t.offset * bytes,
        srcBytes: t.numel * bytes,
        dst: dst.buffer,
        dstOffset: dst.byteOffset,
        rowBytes,
      };
    });
    const id = this.nextId++;
    const worker = this.workers[id % this.workers.length];
    return new Promise<Tensor[]>((resolve, reject) => {
      this.pending.set(id, { resolve: () => resolve(outs), reject });
      worker.postMessage({ id, rows: plan.rows, parts });
    });
  }

  /** Awaits a batch for at most timeoutMs from now. */
  wait<T>(batch: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`DataLoader: the workers did not deliver ${what} within ${timeoutMs} ms; raise the DataLoader's timeoutMs if batches are this slow`)), timeoutMs);
    });
    return Promise.race([batch, timeout]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    this.failAll(new Error("DataLoader: the iteration ended while a batch was still being gathered"));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private settle(id: number, error: Error | null): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (error) p.reject(error);
    else p.resolve();
  }

  private failAll(error: Error): void {
    this.failure ??= error;
    for (const id of [...this.pending.keys()]) this.settle(id, error);
  }
}
