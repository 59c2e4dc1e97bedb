// safetensors files: round trips, a reader written here from the format's specification, and
// bad files (truncated, lying headers, unknown dtypes) that must fail whole.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as nn from "../../src/nn/index.js";
import { arange, ones, tensor } from "../../src/ops/index.js";
import { deserialize, load, loadFile, save, serialize } from "../../src/serialization/index.js";
import type { Tensor } from "../../src/tensor/tensor.js";
import { fileURLToPath } from "node:url";
import { assertClose, readFixture, type Encoded } from "../nn/fixture.js";

const dir = mkdtempSync(join(tmpdir(), "ringtorch-safetensors-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function sample(): Record<string, Tensor> {
  return {
    "layer.weight": tensor([[1.5, -2], [3.25, 4]]),
    "layer.double": tensor(Float64Array.from([Math.PI, -1e-300]), { shape: [2] }),
    counts: tensor(Int32Array.from([7, -8, 2147483647]), { shape: [3] }),
    half: tensor([1, -2.5, 3e38], { dtype: "bfloat16" }),
    flags: tensor([true, false, true]),
    scalar: tensor([42]).reshape([]),
    empty: ones([0, 3]),
    transposed: arange(6, undefined, 1, { dtype: "float32" }).reshape([2, 3]).t(),
  };
}

/**
 * A reader written from the specification alone: u64 little-endian header size, a JSON header of
 * {dtype, shape, data_offsets} entries (offsets relative to the byte buffer after the header), and
 * little-endian row-major data.
 */
function referenceRead(bytes: Uint8Array): { header: Record<string, unknown>; values: Record<string, number[]>; headerSize: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerSize = Number(view.getBigUint64(0, true));
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + headerSize)).toString("utf8")) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + headerSize;
  const values: Record<string, number[]> = {};
  for (const [name, e] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const [begin, end] = e.data_offsets;
    const out: number[] = [];
    const size = { F32: 4, F64: 8, I32: 4, BF16: 2, BOOL: 1 }[e.dtype]!;
    for (let at = base + begin; at < base + end; at += size) {
      if (e.dtype === "F32") out.push(view.getFloat32(at, true));
      else if (e.dtype === "F64") out.push(view.getFloat64(at, true));
      else if (e.dtype === "I32") out.push(view.getInt32(at, true));
      else if (e.dtype === "BF16") out.push(new Float32Array(new Uint32Array([view.getUint16(at, true) << 16]).buffer)[0]);
      else out.push(view.getUint8(at));
    }
    values[name] = out;
  }
  return { header, values, headerSize };
}

const flat = (t: Tensor) => (t.ndim === 0 ? [t.item()] : ((t.toArray() as unknown[]).flat(Infinity) as number[]));

describe("safetensors", () => {
  it("a file written by ringtorch reads back with a reader written from the specification", () => {
    const tensors = sample();
    const path = join(dir, "sample.safetensors");
    save(tensors, path, { metadata: { format: "pt", note: "ünïcode" } });
    const bytes = readFileSync(path);
    const { header, values, headerSize } = referenceRead(bytes);
    assert.equal((8 + headerSize) % 8, 0, "the data starts 8-byte aligned");
    assert.deepEqual(header.__metadata__, { format: "pt", note: "ünïcode" });
    const dtypes: Record<string, string> = { "layer.weight": "F32", "layer.double": "F64", counts: "I32", half: "BF16", flags: "BOOL", scalar: "F32", empty: "F32", transposed: "F32" };
    for (const [name, t] of Object.entries(tensors)) {
      const e = header[name] as { dtype: string; shape: number[] };
      assert.equal(e.dtype, dtypes[name], `${name} dtype`);
      assert.deepEqual(e.shape, [...t.shape], `${name} shape`);
      assert.deepEqual(values[name], flat(t), `${name} values`);
    }
    assert.deepEqual(readdirSync(dir), ["sample.safetensors"], "no temporary file is left behind");
  });

  it("round-trips every dtype, shape and the metadata", () => {
    const tensors = sample();
    const back = loadFile(join(dir, "sample.safetensors"));
    assert.deepEqual(Object.keys(back.tensors), Object.keys(tensors));
    for (const [name, t] of Object.entries(tensors)) {
      assert.equal(back.tensors[name].dtype, t.dtype, name);
      assert.deepEqual(back.tensors[name].shape, t.shape, name);
      assert.deepEqual(flat(back.tensors[name]), flat(t), name);
    }
    assert.equal(back.metadata.note, "ünïcode");
    const again = deserialize(serialize(tensors));
    assert.deepEqual(flat(again.tensors.transposed), flat(tensors.transposed));
  });

  it("saves a model's state dict under PyTorch's names and loads it into a fresh model", () => {
    const make = () => new nn.Sequential(new nn.Linear(4, 3), new nn.ReLU(), new nn.Linear(3, 2));
    const a = make();
    const path = join(dir, "model.safetensors");
    save(a.stateDict(), path);
    assert.deepEqual(Object.keys(referenceRead(readFileSync(path)).header), ["0.weight", "0.bias", "2.weight", "2.bias"]);
    const b = make();
    b.loadStateDict(load(path));
    const x = arange(8, undefined, 1, { dtype: "float32" }).reshape([2, 4]);
    assert.deepEqual(b.call(x).toArray(), a.call(x).toArray());
    rmSync(path);
  });

  it("reads a file PyTorch wrote (tools/nn/gen_safetensors_fixture.py), int64 and bfloat16 included", () => {
    const expected = readFixture<{ tensors: Record<string, Encoded> }>("torch_written.json").tensors;
    const { tensors, metadata } = loadFile(fileURLToPath(new URL("../fixtures/nn/torch_written.safetensors", import.meta.url)));
    assert.deepEqual(metadata, { format: "pt" });
    assert.deepEqual(Object.keys(tensors).sort(), Object.keys(expected).sort());
    assert.equal(tensors.position_ids.dtype, "int32");
    assert.equal(tensors.bf16.dtype, "bfloat16");
    for (const [name, e] of Object.entries(expected)) assertClose(tensors[name].dtype === "bool" ? tensors[name].int() : tensors[name], e, name, 1e-7, 0);
    const model = new nn.Sequential(new nn.Linear(4, 5), new nn.Tanh(), new nn.Linear(5, 3));
    assert.deepEqual(model.loadStateDict(tensors, false).unexpectedKeys.sort(), ["bf16", "counts", "double", "mask", "position_ids"]);
  });

  it("overwrites an existing file atomically, and a failed save leaves the old file as it was", () => {
    const path = join(dir, "atomic.safetensors");
    save({ a: ones([2]) }, path);
    save({ b: ones([3]) }, path);
    assert.deepEqual(Object.keys(load(path)), ["b"]);
    const before = readFileSync(path);
    assert.throws(() => save({ ok: ones([1]), bad: [1, 2] as unknown as Tensor }, path), /"bad" is object, not a Tensor/);
    assert.deepEqual(readFileSync(path), before);
    assert.ok(readdirSync(dir).every((f) => !f.endsWith(".tmp")));
    rmSync(path);
  });
});

/** A file with the given header object and data bytes, the header padded as the writer pads it. */
function handMade(header: unknown, data: Uint8Array, declaredLength?: number): Uint8Array {
  const json = Buffer.from(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(declaredLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe("bad safetensors input fails whole, with a clear error", () => {
  const good = serialize({ w: tensor([1, 2, 3, 4]), b: tensor([5, 6]) });
  const cases: [string, Uint8Array, RegExp][] = [
    ["fewer than 8 bytes", good.subarray(0, 5), /5 bytes, too few for the 8-byte header length/],
    ["truncated inside the header", good.subarray(0, 20), /header claims \d+ bytes but the file has only 12/],
    ["truncated inside the data", good.subarray(0, good.length - 4), /past the end of the data \(20 bytes; truncated file\?\)/],
    ["a header length beyond any sane size", handMade({}, new Uint8Array(0), 2 ** 40), /more than the \d+-byte limit/],
    ["a header that is not JSON", handMade({}, new Uint8Array(0), 0), /not a JSON object/],
    ["offsets past the end", handMade({ w: { dtype: "F32", shape: [2], data_offsets: [0, 16] } }, new Uint8Array(8)), /past the end of the data \(8 bytes/],
    ["offsets that disagree with the shape", handMade({ w: { dtype: "F32", shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8)), /needs 12 bytes but data_offsets \[0, 8\] span 8/],
    [
      "overlapping tensors",
      handMade({ a: { dtype: "F32", shape: [2], data_offsets: [0, 8] }, b: { dtype: "F32", shape: [2], data_offsets: [4, 12] } }, new Uint8Array(12)),
      /"b" \(bytes 4\.\.12\) overlaps "a"/,
    ],
    ["a gap between tensors", handMade({ a: { dtype: "F32", shape: [1], data_offsets: [4, 8] } }, new Uint8Array(8)), /bytes 0\.\.4 before "a" belong to no tensor/],
    ["bytes that belong to no tensor at the end", handMade({ a: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }, new Uint8Array(8)), /data is 8 bytes but the tensors cover 4/],
    ["an unknown dtype", handMade({ a: { dtype: "F8_E4M3", shape: [4], data_offsets: [0, 4] } }, new Uint8Array(4)), /dtype "F8_E4M3", which ringtorch cannot load/],
    ["begin after end", handMade({ a: { dtype: "F32", shape: [0], data_offsets: [4, 0] } }, new Uint8Array(4)), /begin after end/],
    ["a negative size in the shape", handMade({ a: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, new Uint8Array(4)), /invalid shape \[-1\]/],
    ["metadata that is not strings", handMade({ __metadata__: { epoch: 3 } }, new Uint8Array(0)), /__metadata__\["epoch"\] must be a string/],
  ];
  for (const [what, bytes, message] of cases) {
    it(what, () => {
      assert.throws(() => deserialize(bytes), message);
      const path = join(dir, "bad.safetensors");
      writeFileSync(path, bytes);
      assert.throws(() => load(path), message);
      rmSync(path);
    });
  }

  it("a model is untouched when its checkpoint file is bad", () => {
    const model = new nn.Linear(2, 2);
    const before = JSON.stringify(model.weight.toArray());
    const path = join(dir, "model.safetensors");
    const bytes = serialize(model.stateDict());
    writeFileSync(path, bytes.subarray(0, bytes.length - 3));
    assert.throws(() => model.loadStateDict(load(path)), /truncated/);
    assert.equal(JSON.stringify(model.weight.toArray()), before);
    rmSync(path);
  });

  it("int64 tensors (as PyTorch writes index buffers) load as int32 when they fit, and fail when not", () => {
    const data = new BigInt64Array([5n, -7n]);
    const ok = handMade({ ids: { dtype: "I64", shape: [2], data_offsets: [0, 16] } }, new Uint8Array(data.buffer));
    const loaded = deserialize(ok).tensors.ids;
    assert.equal(loaded.dtype, "int32");
    assert.deepEqual(loaded.toArray(), [5, -7]);
    const big = handMade({ ids: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }, new Uint8Array(new BigInt64Array([2n ** 40n]).buffer));
    assert.throws(() => deserialize(big), /value 1099511627776, which does not fit ringtorch's int32/);
  });
});
