import type { CommNative } from "./native.js";
import { Executor } from "./engine/executor.js";
import type { Algorithm, OpMessage, WorkerConfig } from "./engine/messages.js";
import type { CommClient } from "./comm_client.js";
import type { TCPStore } from "./store/tcp_store.js";

/**
 * Lets `client` run synchronous collectives on the calling thread (unless RINGTORCH_INLINE=0),
 * publishing where this rank is under `${prefix}/arrive/<group>/<rank>` in `store`, where the comm
 * worker's stall reports read it. The default backend's join and the mpi backend's shared-memory
 * all-reduce (mpi/local_shm.ts) attach it alike.
 */
export function attachInlineRunner(native: CommNative, client: CommClient, config: WorkerConfig, store: TCPStore, prefix: string): void {
  if (process.env.RINGTORCH_INLINE === "0") return;
  client.inline = new InlineRunner(native, client.handle, config, (group, seq) => store.setQuiet(`${prefix}/arrive/${group}/${config.rank}`, String(seq)));
}

/**
 * Runs a synchronous collective on the calling (main) thread when nothing is queued for the comm
 * worker: the caller blocks either way, and this saves two thread hand-offs per call (tens of
 * microseconds, far more on a busy machine). Asynchronous work, point-to-point operations, and
 * anything issued while the worker has work still go through the worker, in order.
 *
 * Only one thread uses the native communicator at a time: the main thread runs here only while no
 * request is pending with the worker, and the worker touches the communicator only for requests.
 */
export class InlineRunner {
  private readonly executor: Executor;
  private current: { group: number; seq: number } = { group: 0, seq: 0 };

  constructor(
    native: CommNative,
    handle: number,
    config: WorkerConfig,
    /** Publishes "this rank is in collective seq of group" (see OpLoop.publishMarks). */
    private readonly publish: (group: number, seq: number) => void,
  ) {
    this.executor = new Executor(native, handle, config.rank, config.world, config.pipelineBytes, config.algorithm);
    this.executor.link.onStall = () => this.publish(this.current.group, this.current.seq);
  }

  /** The algorithm of the last collective run here, for the trace. */
  get lastAlgorithm(): Algorithm | "direct" {
    return this.executor.lastAlgorithm;
  }

  addGroup(id: number, ranks: number[]): void {
    this.executor.addGroup(id, ranks);
  }

  /** Runs the collective to completion; returns what it threw, or null. */
  run(msg: OpMessage): unknown {
    this.current = { group: msg.group, seq: msg.seq };
    this.executor.link.stallMs = Math.max(1, Math.min(500, msg.timeoutMs / 4));
    try {
      this.executor.run(msg);
      return null;
    } catch (err) {
      return err;
    } finally {
      this.executor.trimScratch();
    }
  }
}
