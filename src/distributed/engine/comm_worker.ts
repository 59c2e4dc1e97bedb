/**
 * The communication worker: one per process, started by initProcessGroup. It owns the
 * transports and runs collectives on the tensors' shared memory, so that a collective started
 * asynchronously makes progress while the main thread computes.
 */
import { type MessagePort, workerData } from "node:worker_threads";
import { loadCommNative } from "../native.js";
import { PrefixStore } from "../store/prefix_store.js";
import { TCPStore } from "../store/tcp_store.js";
import { Executor } from "./executor.js";
import { buildMesh } from "./mesh.js";
import { CTL_DONE_POSTED, type FromWorker, type WorkerConfig } from "./messages.js";
import { OpLoop } from "./op_loop.js";
import { CommTraceRing } from "./trace_ring.js";

const { config, port, ctl: ctlBuffer, traceRing } = workerData as { config: WorkerConfig; port: MessagePort; ctl: SharedArrayBuffer; traceRing: SharedArrayBuffer };
const ctl = new Int32Array(ctlBuffer);

function post(msg: FromWorker): void {
  port.postMessage(msg);
  Atomics.add(ctl, CTL_DONE_POSTED, 1);
  Atomics.notify(ctl, CTL_DONE_POSTED);
}

function log(message: string): void {
  process.stderr.write(`ringtorch.distributed rank ${config.rank}: ${message}\n`);
}

// A bug in the worker must fail the operations waiting on it, not leave the main thread blocked.
const onFatal = (err: unknown) => {
  post({ type: "fatal", message: `the communication worker of rank ${config.rank} crashed: ${(err as Error)?.stack ?? String(err)}` });
  process.exit(1);
};
process.on("uncaughtException", onFatal);
process.on("unhandledRejection", onFatal);

async function main(): Promise<void> {
  const native = loadCommNative();
  let store: TCPStore | null = null;
  let loop: OpLoop | null = null;
  try {
    store = await TCPStore.connect({ host: config.storeHost, port: config.storePort, token: config.token, timeoutMs: config.timeoutMs });
    const listenHost = config.listenHost ?? stripMapped(store.localAddress) ?? config.storeHost;
    const onSegment = (name: string, linked: boolean) => post({ type: "segment", name, linked });
    const mesh = await buildMesh(native, config, listenHost, new PrefixStore(config.prefix, store), onSegment, log);
    const executor = new Executor(native, mesh.handle, config.rank, config.world, config.pipelineBytes, config.algorithm);
    loop = new OpLoop(port, ctl, executor, native, mesh.handle, store, config.prefix, post, new CommTraceRing(traceRing));
    post({ type: "ready", handle: mesh.handle, transports: mesh.transports });
  } catch (err) {
    post({ type: "setupError", message: (err as Error).message });
    await store?.close();
    return;
  }
  try {
    await loop.run();
  } finally {
    loop.close();
    await store.close();
    post({ type: "closed" });
  }
}

/** A store reached over IPv4 from a dual-stack socket reports ::ffff:a.b.c.d. */
function stripMapped(addr: string | undefined): string | undefined {
  return addr?.startsWith("::ffff:") ? addr.slice(7) : addr;
}

void main();
