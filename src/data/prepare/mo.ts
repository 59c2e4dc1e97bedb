/**
 * GNU gettext's binary catalogs (.mo), read from the format's description: a magic number that
 * also gives the byte order, the count of strings, and two tables of (length, offset) for the
 * original and the translated strings. A msgid may carry a context ("ctxt\x04id") and a plural
 * ("id\0plural"); plural translations are separated by NUL.
 */
import { readFileSync } from "node:fs";

export interface MoEntry {
  context: string | null;
  msgid: string;
  msgidPlural: string | null;
  /** One string, or one per plural form. */
  msgstr: string[];
}

export interface MoCatalog {
  headers: Record<string, string>;
  entries: MoEntry[];
}

export function parseMo(bytes: Uint8Array, where = "catalog"): MoCatalog {
  if (bytes.length < 28) throw new RangeError(`${where}: ${bytes.length} bytes is too short for a .mo file (its header alone is 28)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  const little = magic === 0x950412de;
  if (!little && magic !== 0xde120495) throw new RangeError(`${where}: not a .mo file (magic 0x${magic.toString(16)}, expected 0x950412de)`);
  const u32 = (o: number) => {
    if (o + 4 > bytes.length) throw new RangeError(`${where}: truncated (a table entry at byte ${o} lies past the end, ${bytes.length})`);
    return view.getUint32(o, little);
  };
  const major = u32(4) >>> 16;
  if (major > 1) throw new RangeError(`${where}: .mo revision ${major} is not supported (0 or 1)`);
  const n = u32(8);
  const origTable = u32(12);
  const transTable = u32(16);
  const raw = (table: number, i: number) => {
    const len = u32(table + 8 * i);
    const off = u32(table + 8 * i + 4);
    if (off + len > bytes.length) throw new RangeError(`${where}: string ${i} (bytes ${off}..${off + len}) lies past the end of the file (${bytes.length} bytes)`);
    return bytes.subarray(off, off + len);
  };
  // The header (translation of "") names the charset the other strings are in.
  let decoder = new TextDecoder("utf-8");
  const headers: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    if (raw(origTable, i).length !== 0) continue;
    for (const line of decoder.decode(raw(transTable, i)).split("\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
    const charset = /charset=([^\s;]+)/i.exec(headers["Content-Type"] ?? "")?.[1];
    if (charset && charset.toUpperCase() !== "CHARSET") {
      try {
        decoder = new TextDecoder(charset);
      } catch {
        throw new RangeError(`${where}: charset ${charset} is not one this Node.js can decode`);
      }
    }
  }
  const entries: MoEntry[] = [];
  for (let i = 0; i < n; i++) {
    const id = decoder.decode(raw(origTable, i));
    if (id.length === 0) continue;
    const eot = id.indexOf("\u0004");
    const context = eot >= 0 ? id.slice(0, eot) : null;
    const [msgid, msgidPlural] = (eot >= 0 ? id.slice(eot + 1) : id).split("\u0000");
    entries.push({ context, msgid, msgidPlural: msgidPlural ?? null, msgstr: decoder.decode(raw(transTable, i)).split("\u0000") });
  }
  return { headers, entries };
}

export function readMo(path: string): MoCatalog {
  return parseMo(readFileSync(path), path);
}
