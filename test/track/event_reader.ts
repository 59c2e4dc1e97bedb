// An event-file reader written for the tests from the published formats alone, sharing no code
// with src/track: TFRecord framing (uint64 length, masked CRC-32C of the length, data, masked
// CRC-32C of the data, mask 0xa282ead8) and protobuf wire format with the field numbers of
// tensorflow's event.proto / summary.proto / tensor.proto and tensorboard's hparams protos.
import { readFileSync } from "node:fs";

/** Bit-at-a-time CRC-32C (no table), so that a wrong table in src cannot agree with it by accident. */
export function crc32cBitwise(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function masked(bytes: Uint8Array): number {
  const c = crc32cBitwise(bytes);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** Every record of a file; a bad CRC or a torn record is an error here (the writer must leave none). */
export function readTfRecords(path: string): Uint8Array[] {
  const buf = new Uint8Array(readFileSync(path));
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < buf.length) {
    if (at + 12 > buf.length) throw new Error(`${path}: torn length at byte ${at}`);
    const len = Number(dv.getBigUint64(at, true));
    if (dv.getUint32(at + 8, true) !== masked(buf.subarray(at, at + 8))) throw new Error(`${path}: bad length CRC at byte ${at}`);
    if (at + 16 + len > buf.length) throw new Error(`${path}: torn record at byte ${at}`);
    const data = buf.subarray(at + 12, at + 12 + len);
    if (dv.getUint32(at + 12 + len, true) !== masked(data)) throw new Error(`${path}: bad data CRC at byte ${at}`);
    out.push(data);
    at += 16 + len;
  }
  return out;
}

type Field = { num: number; wire: number; varint?: bigint; bytes?: Uint8Array; fixed?: DataView };

/** Decodes one protobuf message into its fields, in order. */
export function fields(msg: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = msg[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < msg.length) {
    const key = Number(varint());
    const num = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ num, wire, varint: varint() });
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      out.push({ num, wire, fixed: new DataView(msg.buffer, msg.byteOffset + i, n) });
      i += n;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ num, wire, bytes: msg.subarray(i, i + len) });
      i += len;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const one = (fs: Field[], num: number) => fs.find((f) => f.num === num);
const all = (fs: Field[], num: number) => fs.filter((f) => f.num === num);
const str = (f: Field | undefined) => (f?.bytes ? new TextDecoder().decode(f.bytes) : undefined);

export interface DecodedValue {
  tag: string;
  simpleValue?: number;
  pluginName?: string;
  pluginContent?: Uint8Array;
  /** TensorProto string_val (text summaries) with its dtype and shape. */
  strings?: string[];
  dtype?: number;
  shape?: number[];
}

export interface DecodedEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  values?: DecodedValue[];
}

/** Event: wall_time 1, step 2, file_version 3, summary 5 { value 1 { tag 1, simple_value 2, tensor 8, metadata 9 } }. */
export function decodeEvent(data: Uint8Array): DecodedEvent {
  const f = fields(data);
  const ev: DecodedEvent = { wallTime: one(f, 1)?.fixed?.getFloat64(0, true) ?? 0, step: Number(one(f, 2)?.varint ?? 0n) };
  const fv = str(one(f, 3));
  if (fv !== undefined) ev.fileVersion = fv;
  const summary = one(f, 5)?.bytes;
  if (summary) {
    ev.values = all(fields(summary), 1).map((vf) => {
      const v = fields(vf.bytes!);
      const out: DecodedValue = { tag: str(one(v, 1))! };
      const simple = one(v, 2);
      if (simple) out.simpleValue = simple.fixed!.getFloat32(0, true);
      const meta = one(v, 9)?.bytes;
      if (meta) {
        const pd = fields(one(fields(meta), 1)!.bytes!);
        out.pluginName = str(one(pd, 1));
        out.pluginContent = one(pd, 2)?.bytes ?? new Uint8Array();
      }
      const tensor = one(v, 8)?.bytes;
      if (tensor) {
        const t = fields(tensor);
        out.dtype = Number(one(t, 1)?.varint ?? 0n);
        out.shape = all(fields(one(t, 2)?.bytes ?? new Uint8Array()), 2).map((d) => Number(one(fields(d.bytes!), 1)?.varint ?? 0n));
        out.strings = all(t, 8).map((s) => str(s)!);
      }
      return out;
    });
  }
  return ev;
}

export function readEvents(path: string): DecodedEvent[] {
  return readTfRecords(path).map(decodeEvent);
}

/** google.protobuf.Value: number_value 2, string_value 3, bool_value 4. */
function protoValue(bytes: Uint8Array): number | string | boolean {
  const f = fields(bytes)[0];
  if (f.num === 2) return f.fixed!.getFloat64(0, true);
  if (f.num === 3) return str(f)!;
  if (f.num === 4) return f.varint === 1n;
  throw new Error(`unexpected Value field ${f.num}`);
}

/**
 * HParamsPluginData: version 1, experiment 2 { hparam_infos 4 { name 1, type 4 }, metric_infos 5 { name 1 { tag 2 } } },
 * session_start_info 3 { hparams 1 (map entry: key 1, value 2), group_name 4 }, session_end_info 4 { status 1 }.
 */
export function decodeHParams(content: Uint8Array) {
  const f = fields(content);
  const exp = one(f, 2)?.bytes;
  const ssi = one(f, 3)?.bytes;
  const sei = one(f, 4)?.bytes;
  return {
    version: Number(one(f, 1)?.varint ?? 0n),
    experiment: exp && {
      hparams: all(fields(exp), 4).map((h) => ({ name: str(one(fields(h.bytes!), 1)), type: Number(one(fields(h.bytes!), 4)?.varint ?? 0n) })),
      metrics: all(fields(exp), 5).map((m) => str(one(fields(one(fields(m.bytes!), 1)!.bytes!), 2))),
    },
    sessionStart: ssi && {
      hparams: Object.fromEntries(all(fields(ssi), 1).map((e) => [str(one(fields(e.bytes!), 1)), protoValue(one(fields(e.bytes!), 2)!.bytes!)])),
      group: str(one(fields(ssi), 4)),
    },
    sessionEnd: sei && { status: Number(one(fields(sei), 1)?.varint ?? 0n) },
  };
}
