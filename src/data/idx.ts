import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

export type IdxArray = Uint8Array | Int8Array | Int16Array | Int32Array | Float32Array | Float64Array;

export interface IdxData {
  shape: number[];
  data: IdxArray;
}

const TYPES: Record<number, { name: string; bytes: number; read: (v: DataView, at: number) => number; Ctor: new (n: number) => IdxArray }> = {
  0x08: { name: "ubyte", bytes: 1, read: (v, at) => v.getUint8(at), Ctor: Uint8Array },
  0x09: { name: "byte", bytes: 1, read: (v, at) => v.getInt8(at), Ctor: Int8Array },
  0x0b: { name: "short", bytes: 2, read: (v, at) => v.getInt16(at), Ctor: Int16Array },
  0x0c: { name: "int", bytes: 4, read: (v, at) => v.getInt32(at), Ctor: Int32Array },
  0x0d: { name: "float", bytes: 4, read: (v, at) => v.getFloat32(at), Ctor: Float32Array },
  0x0e: { name: "double", bytes: 8, read: (v, at) => v.getFloat64(at), Ctor: Float64Array },
};

/**
 * Reads an IDX file (the format of MNIST and Fashion-MNIST), gzip'd or not: a big-endian header
 * of 0, 0, a type code and the number of dims, then each dim as a 32-bit size, then the values.
 */
export function readIdx(path: string): IdxData {
  let bytes: Buffer = readFileSync(path);
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  return parseIdx(bytes, path);
}

export function parseIdx(bytes: Uint8Array, source = "IDX data"): IdxData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0) throw new Error(`readIdx: ${source} is not an IDX file (it does not start with two zero bytes)`);
  const type = TYPES[bytes[2]];
  if (!type) throw new Error(`readIdx: ${source} has unknown IDX type code 0x${bytes[2].toString(16)}`);
  const ndim = bytes[3];
  const headerBytes = 4 + 4 * ndim;
  if (bytes.length < headerBytes) throw new Error(`readIdx: ${source} is truncated inside its header`);
  const shape = Array.from({ length: ndim }, (_, i) => view.getUint32(4 + 4 * i));
  const n = shape.reduce((a, b) => a * b, 1);
  const expected = headerBytes + n * type.bytes;
  if (bytes.length < expected) throw new Error(`readIdx: ${source} should hold ${expected} bytes for shape [${shape.join(", ")}] of ${type.name}, but has ${bytes.length}`);
  if (type.bytes === 1) {
    const data = new type.Ctor(n);
    (data as Uint8Array).set(bytes.subarray(headerBytes, headerBytes + n));
    return { shape, data };
  }
  const data = new type.Ctor(n);
  for (let i = 0; i < n; i++) data[i] = type.read(view, headerBytes + i * type.bytes);
  return { shape, data };
}
