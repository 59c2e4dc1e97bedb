import * as ops from "../../ops/index.js";
import { Generator } from "../../tensor/random.js";
import { storageFrom } from "../../tensor/storage.js";
import { Tensor } from "../../tensor/tensor.js";
import { arrayTypeOf, type DType } from "../../tensor/dtype.js";
import { Module } from "../module.js";
import { Parameter } from "../parameter.js";
import { geluActivation } from "../transformer_common.js";

/** A tensor's layout over its shared memory, sent to another thread without a copy. */
export interface TensorDesc {
  buffer: SharedArrayBuffer;
  dtype: DType;
  length: number;
  shape: number[];
  strides: number[];
  offset: number;
}

export function describeTensor(t: Tensor): TensorDesc {
  const buffer = t.storage.data.buffer;
  if (!(buffer instanceof SharedArrayBuffer)) throw new Error(`DataParallel: a tensor's memory is not shared (${t.describe()})`);
  return { buffer, dtype: t.dtype, length: t.storage.length, shape: [...t.shape], strides: [...t.strides], offset: t.offset };
}

/** A tensor over the same memory as the one described (never released to a pool: the other thread owns it). */
export function tensorOf(d: TensorDesc): Tensor {
  const Ctor = arrayTypeOf(d.dtype);
  return new Tensor(storageFrom(d.dtype, new Ctor(d.buffer, 0, d.length)), d.shape, d.strides, d.offset);
}

/**
 * A module tree as structured-clone data, for building a replica in a worker thread that shares
 * every parameter's and buffer's memory: modules by class name (ringtorch's nn classes, or classes
 * exported by the modules given in DataParallel's `classes`), functions by their name among
 * ringtorch's ops (an activation such as gelu), plain data as it is. Hooks are not replicated.
 */
type Encoded =
  | { k: "v"; v: unknown }
  | { k: "param"; t: TensorDesc; requiresGrad: boolean }
  | { k: "tensor"; t: TensorDesc }
  | { k: "fn"; name: string }
  | { k: "gen" }
  | { k: "arr"; items: Encoded[] }
  | { k: "obj"; entries: [string, Encoded][] }
  | { k: "ref"; id: number }
  | { k: "module"; id: number; cls: string; fields: [string, Encoded][]; buffers: [string, boolean][] };

const opsByFunction = new Map<unknown, string>();
const functionsByName = new Map<string, unknown>();
for (const [name, value] of [...Object.entries(ops), ["geluActivation", geluActivation] as const]) {
  if (typeof value !== "function" || opsByFunction.has(value)) continue;
  opsByFunction.set(value, name);
  functionsByName.set(name, value);
}

export function encodeModule(module: Module): Encoded {
  return encode(module, "module", new Map());
}

function encode(v: unknown, path: string, seen: Map<object, number>): Encoded {
  if (v === null || typeof v !== "object") {
    if (typeof v === "function") {
      const name = opsByFunction.get(v);
      if (name === undefined) {
        throw new Error(`DataParallel: ${path} holds a function (${v.name || "anonymous"}) that a worker thread cannot rebuild; use a ringtorch op or an nn module there`);
      }
      return { k: "fn", name };
    }
    return { k: "v", v };
  }
  if (v instanceof Parameter) return { k: "param", t: describeTensor(v), requiresGrad: v.requiresGrad };
  if (v instanceof Tensor) return { k: "tensor", t: describeTensor(v) };
  // Each replica draws its own random numbers (dropout masks differ between threads anyway).
  if (v instanceof Generator) return { k: "gen" };
  if (Array.isArray(v)) return { k: "arr", items: v.map((x, i) => encode(x, `${path}[${i}]`, seen)) };
  if (v instanceof Module) {
    const known = seen.get(v);
    if (known !== undefined) return { k: "ref", id: known };
    const id = seen.size;
    seen.set(v, id);
    const persistent = new Set(v.localBuffers(true).map(([n]) => n));
    const bufferList: [string, boolean][] = v.localBuffers(false).map(([n]) => [n, persistent.has(n)]);
    const isBuffer = new Set(bufferList.map(([n]) => n));
    const fields: [string, Encoded][] = [];
    for (const key of Object.keys(v)) {
      const value = (v as unknown as Record<string, unknown>)[key];
      fields.push([isBuffer.has(key) ? `\0buffer:${key}` : key, encode(value, `${path}.${key}`, seen)]);
    }
    return { k: "module", id, cls: v.constructor.name, fields, buffers: bufferList };
  }
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) {
    return { k: "obj", entries: Object.entries(v).map(([key, x]) => [key, encode(x, `${path}.${key}`, seen)]) };
  }
  throw new Error(`DataParallel: ${path} holds a ${proto?.constructor?.name ?? "object"}, which a worker thread cannot rebuild`);
}

/** Rebuilds the tree in this thread: classes come from `classes` (name → constructor). */
export function decodeModule(e: Encoded, classes: ReadonlyMap<string, typeof Module>): Module {
  return decode(e, classes, new Map()) as Module;
}

function decode(e: Encoded, classes: ReadonlyMap<string, typeof Module>, made: Map<number, Module>): unknown {
  switch (e.k) {
    case "v":
      return e.v;
    case "param":
      return new Parameter(tensorOf(e.t), e.requiresGrad);
    case "tensor":
      return tensorOf(e.t);
    case "fn":
      return functionsByName.get(e.name);
    case "gen":
      return undefined;
    case "arr":
      return e.items.map((x) => decode(x, classes, made));
    case "obj":
      return Object.fromEntries(e.entries.map(([k, x]) => [k, decode(x, classes, made)]));
    case "ref":
      return made.get(e.id);
    case "module": {
      const Cls = classes.get(e.cls);
      if (!Cls) {
        throw new Error(
          `DataParallel: the worker thread does not know the module class ${e.cls}; export it from a file and name that file in DataParallel's classes option ({ classes: [new URL("./model.ts", import.meta.url).href] })`,
        );
      }
      // Module's own constructor (its bookkeeping) without the subclass's: the fields come from the original.
      const m = Reflect.construct(Module, [], Cls) as Module;
      made.set(e.id, m);
      const persistent = new Map(e.buffers);
      for (const [key, x] of e.fields) {
        const value = decode(x, classes, made);
        if (key.startsWith("\0buffer:")) {
          const name = key.slice(8);
          m.registerBuffer(name, value as Tensor | null, persistent.get(name));
        } else (m as unknown as Record<string, unknown>)[key] = value;
      }
      return m;
    }
  }
}
