/**
 * The safetensors format (https://github.com/huggingface/safetensors), as ringtorch reads and
 * writes it:
 *
 *   [8 bytes]  N, the header's length, unsigned little-endian
 *   [N bytes]  a UTF-8 JSON object: { "__metadata__"?: {string: string},
 *              name: { "dtype": "F32", "shape": [..], "data_offsets": [begin, end] }, … },
 *              padded with spaces so that the data starts 8-byte aligned
 *   [rest]     the byte buffer; offsets are relative to its start, tensors are row-major and
 *              little-endian, and together they cover it exactly (no gaps, no overlaps)
 *
 * A reader trusts nothing in the file: every offset, size and dtype is checked before any tensor
 * is made, so a bad file yields an error and no tensors.
 */
import type { DType } from "../tensor/dtype.js";
import { itemSize } from "../tensor/dtype.js";

export const HEADER_LIMIT_BYTES = 100 * 1024 * 1024;

/** ringtorch dtype → safetensors dtype. */
export const TO_FILE_DTYPE: Record<DType, string> = {
  float32: "F32",
  float64: "F64",
  int32: "I32",
  bfloat16: "BF16",
  bool: "BOOL",
};

/** File dtypes that load, with their size in the file and the ringtorch dtype they become. */
export const FROM_FILE_DTYPE: Record<string, { dtype: DType; bytes: number }> = {
  F32: { dtype: "float32", bytes: 4 },
  F64: { dtype: "float64", bytes: 8 },
  I32: { dtype: "int32", bytes: 4 },
  BF16: { dtype: "bfloat16", bytes: 2 },
  BOOL: { dtype: "bool", bytes: 1 },
  // PyTorch writes index buffers as int64; they load as int32 when every value fits.
  I64: { dtype: "int32", bytes: 8 },
};

export interface HeaderEntry {
  name: string;
  fileDtype: string;
  dtype: DType;
  shape: number[];
  begin: number;
  end: number;
}

export interface ParsedHeader {
  entries: HeaderEntry[];
  metadata: Record<string, string>;
  /** Where the byte buffer starts in the file. */
  dataStart: number;
}

export class SafetensorsError extends Error {
  override name = "SafetensorsError";
}

/** The header JSON for tensors laid out back to back in the given order, padded to 8-byte alignment. */
export function buildHeader(entries: { name: string; dtype: DType; shape: readonly number[] }[], metadata?: Record<string, string>): { header: Buffer; sizes: number[] } {
  const json: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") throw new TypeError(`safetensors: metadata values must be strings; "${k}" is ${typeof v}`);
    }
    json.__metadata__ = metadata;
  }
  let offset = 0;
  const sizes: number[] = [];
  for (const e of entries) {
    if (e.name === "__metadata__" || e.name === "") throw new TypeError(`safetensors: "${e.name}" cannot be a tensor name`);
    const size = e.shape.reduce((a, b) => a * b, 1) * itemSize(e.dtype);
    json[e.name] = { dtype: TO_FILE_DTYPE[e.dtype], shape: [...e.shape], data_offsets: [offset, offset + size] };
    sizes.push(size);
    offset += size;
  }
  const text = Buffer.from(JSON.stringify(json), "utf8");
  const padded = Math.ceil((8 + text.length) / 8) * 8 - 8;
  const header = Buffer.alloc(8 + padded, 0x20);
  header.writeBigUInt64LE(BigInt(padded), 0);
  text.copy(header, 8);
  return { header, sizes };
}

function fail(source: string, message: string): never {
  throw new SafetensorsError(`safetensors: ${source}: ${message}`);
}

/** Parses and checks the header of a file of `fileLength` bytes whose first bytes are `head`. */
export function parseHeader(head: Uint8Array, fileLength: number, source: string): ParsedHeader {
  if (fileLength < 8) fail(source, `the file has ${fileLength} bytes, too few for the 8-byte header length (truncated?)`);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(HEADER_LIMIT_BYTES)) fail(source, `the header claims ${n} bytes, more than the ${HEADER_LIMIT_BYTES}-byte limit (not a safetensors file?)`);
  const headerLength = Number(n);
  if (8 + headerLength > fileLength) fail(source, `the header claims ${headerLength} bytes but the file has only ${fileLength - 8} after the length (truncated?)`);
  if (head.byteLength < 8 + headerLength) throw new RangeError("parseHeader: the caller must pass at least the whole header");
  let json: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(8, 8 + headerLength));
    if (!text.startsWith("{")) fail(source, "the header is not a JSON object");
    json = JSON.parse(text);
  } catch (err) {
    if (err instanceof SafetensorsError) throw err;
    fail(source, `the header is not valid UTF-8 JSON (${(err as Error).message})`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) fail(source, "the header is not a JSON object");
  const dataStart = 8 + headerLength;
  const bufferLength = fileLength - dataStart;
  const metadata: Record<string, string> = {};
  const entries: HeaderEntry[] = [];
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fail(source, "__metadata__ must be an object of strings");
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== "string") fail(source, `__metadata__["${k}"] must be a string, got ${typeof v}`);
        metadata[k] = v;
      }
      continue;
    }
    entries.push(parseEntry(name, raw, bufferLength, source));
  }
  checkCoverage(entries, bufferLength, source);
  return { entries, metadata, dataStart };
}

function parseEntry(name: string, raw: unknown, bufferLength: number, source: string): HeaderEntry {
  if (raw === null || typeof raw !== "object") fail(source, `the entry for "${name}" is not an object`);
  const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
  if (typeof dtype !== "string") fail(source, `"${name}" has no dtype`);
  const known = FROM_FILE_DTYPE[dtype];
  if (!known) fail(source, `"${name}" has dtype "${dtype}", which ringtorch cannot load (supported: ${Object.keys(FROM_FILE_DTYPE).join(", ")})`);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) fail(source, `"${name}" has an invalid shape ${JSON.stringify(shape)}`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    fail(source, `"${name}" has invalid data_offsets ${JSON.stringify(offsets)}; expected [begin, end]`);
  }
  const [begin, end] = offsets as number[];
  if (begin > end) fail(source, `"${name}" has data_offsets [${begin}, ${end}] with begin after end`);
  if (end > bufferLength) fail(source, `"${name}" has data_offsets [${begin}, ${end}] past the end of the data (${bufferLength} bytes; truncated file?)`);
  const bytes = (shape as number[]).reduce((a, b) => a * b, 1) * known.bytes;
  if (end - begin !== bytes) {
    fail(source, `"${name}" (${dtype} of shape [${(shape as number[]).join(", ")}]) needs ${bytes} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`);
  }
  return { name, fileDtype: dtype, dtype: known.dtype, shape: shape as number[], begin, end };
}

/** Tensors must tile the byte buffer exactly: no overlaps, no gaps, nothing left over. */
function checkCoverage(entries: HeaderEntry[], bufferLength: number, source: string): void {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  let previous = "the start of the data";
  for (const e of sorted) {
    if (e.begin < cursor) fail(source, `"${e.name}" (bytes ${e.begin}..${e.end}) overlaps ${previous}`);
    if (e.begin > cursor) fail(source, `bytes ${cursor}..${e.begin} before "${e.name}" belong to no tensor`);
    if (e.end > e.begin) {
      cursor = e.end;
      previous = `"${e.name}"`;
    }
  }
  if (cursor !== bufferLength) fail(source, `the data is ${bufferLength} bytes but the tensors cover ${cursor} (truncated file, or bytes belonging to no tensor)`);
}
