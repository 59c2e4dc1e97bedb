import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { TypedArray } from "../dtypes.js";
import type { Request } from "./messages.js";

/** Bytes of buffers new to this thread after which it collects the handles of dead ones. */
const COLLECT_AFTER_BYTES = 64 * 1024 * 1024;
/** Every this many collections is a full one, for handles that lived long enough to be promoted. */
const FULL_EVERY = 8;

type Collect = (options: { type: "minor" | "major" }) => void;

/**
 * The comm worker's part in freeing tensor memory. A collective's tensors reach this thread as
 * SharedArrayBuffers, and their memory is freed only after every thread that received one has
 * garbage-collected its handle. This thread allocates so little that V8 would collect it only
 * every gigabyte or two of fresh tensors (DDP reduces each step's new gradients where they lie),
 * so it collects itself once it has seen COLLECT_AFTER_BYTES of buffers it had not seen before.
 * Training on the same buffers every step (bucket views, reused tensors) never triggers it.
 */
export class SeenBuffers {
  private seen = new WeakSet<ArrayBufferLike>();
  private freshBytes = 0;
  private collections = 0;

  constructor(private readonly collect: Collect | null = exposeCollector()) {}

  /** Counts the request's buffers this thread has not seen before. */
  note(req: Request): void {
    for (const data of buffersOf(req)) {
      if (this.seen.has(data.buffer)) continue;
      this.seen.add(data.buffer);
      this.freshBytes += data.buffer.byteLength;
    }
  }

  /** After an operation, once its buffers are dropped: collects if enough fresh memory went by. */
  afterOperation(): void {
    if (this.freshBytes < COLLECT_AFTER_BYTES || !this.collect) return;
    this.freshBytes = 0;
    this.collect({ type: ++this.collections % FULL_EVERY === 0 ? "major" : "minor" });
  }
}

function buffersOf(req: Request): TypedArray[] {
  switch (req.kind) {
    case "allReduce":
      return req.bufs.flatMap((b) => ("data" in b ? [b.data] : []));
    case "send":
    case "recv":
      return "data" in req.buf ? [req.buf.data] : [];
    case "broadcast":
    case "reduce":
      return [req.buf.data];
    case "allGather":
      return [req.input.data, ...req.outputs.map((b) => b.data)];
    case "reduceScatter":
      return [...req.inputs.map((b) => b.data), req.output.data];
    case "scatter":
      return [...(req.inputs ?? []).map((b) => b.data), req.output.data];
    case "gather":
      return [req.input.data, ...(req.outputs ?? []).map((b) => b.data)];
    case "allToAll":
      return [...req.inputs.map((b) => b.data), ...req.outputs.map((b) => b.data)];
    case "barrier":
      return [];
  }
}

/** V8's collector as a function of this thread (the flag only adds `gc` to contexts made after it). */
function exposeCollector(): Collect | null {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as Collect;
  } catch {
    return null;
  }
}
