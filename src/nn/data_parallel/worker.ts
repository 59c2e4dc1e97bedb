/**
 * One replica of a DataParallel module, on its own thread. It answers each request on its port
 * and then raises its flag, so that the main thread, blocked in Atomics.wait, knows to read the
 * answer with receiveMessageOnPort (a forward or backward call is synchronous on the main thread).
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { workerData, type MessagePort } from "node:worker_threads";
import * as rt from "../../index.js";
import { decodeModule, describeTensor, tensorOf, type TensorDesc } from "./replica_codec.js";
import type { Module } from "../module.js";

interface Setup {
  port: MessagePort;
  flags: Int32Array;
  slot: number;
  module: Parameters<typeof decodeModule>[0];
  classes: string[];
}

type Request = { op: "forward"; input: TensorDesc; training: boolean; grad: boolean } | { op: "backward"; grad: TensorDesc } | { op: "module"; module: Setup["module"] };

const setup = workerData as Setup;
const { port, flags, slot } = setup;
// One compute thread per replica: the replicas are the parallelism.
rt.setNumThreads(1);

function reply(message: object): void {
  port.postMessage(message);
  Atomics.store(flags, slot, 1);
  Atomics.notify(flags, slot);
}

function fail(error: unknown): void {
  const e = error as Error;
  reply({ error: { message: e?.message ?? String(error), stack: e?.stack } });
}

async function classRegistry(): Promise<Map<string, typeof rt.nn.Module>> {
  const classes = new Map<string, typeof rt.nn.Module>();
  const add = (ns: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(ns)) {
      if (typeof value === "function" && value.prototype instanceof rt.nn.Module) classes.set(name, value as typeof rt.nn.Module);
    }
  };
  add(rt.nn as unknown as Record<string, unknown>);
  for (const url of setup.classes) {
    // Run from TypeScript sources, this thread has tsx's require hook but not its ESM loader.
    const ns = url.endsWith(".ts") ? (createRequire(import.meta.url)(fileURLToPath(url)) as Record<string, unknown>) : ((await import(url)) as Record<string, unknown>);
    add(ns);
  }
  return classes;
}

let replica: Module;
let output: rt.Tensor | null = null;
// A failure anywhere is answered, so the main thread never waits out its timeout for a dead replica.
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
// No top-level await: from sources this file is loaded through tsx's CommonJS hook.
void classRegistry().then((classes) => {
  replica = decodeModule(setup.module, classes);
  port.on("message", (request: Request) => {
    try {
      if (request.op === "module") {
        replica = decodeModule(request.module, classes);
        reply({});
      } else if (request.op === "forward") {
        replica.train(request.training);
        output = null;
        const input = tensorOf(request.input);
        const out = request.grad ? (replica.call(input) as unknown) : rt.noGrad(() => replica.call(input) as unknown);
        if (!(out instanceof rt.Tensor)) throw new Error(`DataParallel: the module must return one tensor, got ${typeof out}`);
        output = out.requiresGrad ? out : null;
        reply({ output: describeTensor(out.contiguous()) });
      } else {
        if (!output) throw new Error("DataParallel: backward reached a replica without a recorded forward");
        const params = [...replica.parameters()];
        for (const p of params) p.grad = null;
        output.backward(tensorOf(request.grad));
        output = null;
        reply({ grads: params.map((p) => (p.grad ? describeTensor(p.grad.contiguous()) : null)) });
      }
    } catch (error) {
      fail(error);
    }
  });
  reply({ ready: true });
}).catch(fail);
