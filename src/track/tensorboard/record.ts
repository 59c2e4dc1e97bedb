import { maskedCrc32c } from "./crc32c.js";

/**
 * TFRecord framing: uint64 length (little-endian), masked CRC-32C of those 8 bytes, the data,
 * masked CRC-32C of the data.
 */
export function frameRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + data.length);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

export interface FramedRecord {
  data: Uint8Array;
  /** Byte offset of the record's length field. */
  start: number;
}

/**
 * The complete, checksummed records of a file's bytes; stops at a torn or corrupt tail (a writer
 * killed mid-record), which is where the next append should begin.
 */
export function readRecords(bytes: Uint8Array): { records: FramedRecord[]; validEnd: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: FramedRecord[] = [];
  let at = 0;
  while (at + 12 <= bytes.length) {
    const len = Number(view.getBigUint64(at, true));
    if (view.getUint32(at + 8, true) !== maskedCrc32c(bytes.subarray(at, at + 8))) break;
    if (at + 16 + len > bytes.length) break;
    const data = bytes.subarray(at + 12, at + 12 + len);
    if (view.getUint32(at + 12 + len, true) !== maskedCrc32c(data)) break;
    records.push({ data, start: at });
    at += 16 + len;
  }
  return { records, validEnd: at };
}

/** Field 1 of an Event (wall_time, a double), when the record starts with it as this writer's do. */
export function eventWallTime(data: Uint8Array): number | undefined {
  if (data.length < 9 || data[0] !== 0x09) return undefined;
  return new DataView(data.buffer, data.byteOffset + 1, 8).getFloat64(0, true);
}
