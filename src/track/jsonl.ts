import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

/**
 * Append-only JSON lines. Each record is one `write(2)` of a whole line on an O_APPEND file, so a
 * process killed at any instant leaves every earlier record intact and at most the last one torn
 * (no trailing newline). Readers skip such a tail; a writer reopening the file cuts it off first,
 * so that the next record does not glue onto the fragment.
 */
export class JsonlWriter {
  private fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, "a+");
    dropTornTail(this.fd, path);
  }

  append(record: unknown): void {
    if (this.fd < 0) throw new Error(`track: ${this.path} is closed; the run has finished`);
    writeSync(this.fd, JSON.stringify(record) + "\n");
  }

  /** Cuts the file to its first `bytes` bytes (a rewind to a checkpoint; see Run's resumeFrom). */
  truncate(bytes: number): void {
    ftruncateSync(this.fd, bytes);
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

function dropTornTail(fd: number, path: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  // Read backwards in chunks until the last newline: a torn line is short, so one chunk nearly always does.
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) {
      if (start + at + 1 !== size) ftruncateSync(fd, start + at + 1);
      return;
    }
    end = start;
  }
  if (size > 0) {
    console.warn(`ringtorch track: ${path} held no complete record; starting it again`);
    ftruncateSync(fd, 0);
  }
}

export interface JsonlLine<T> {
  value: T;
  /** Byte offset of the line's start, and of the byte after its newline. */
  start: number;
  end: number;
}

/**
 * Reads every complete record of a JSON lines file. A last line without its newline is a record
 * torn by a crash (or one being written right now) and is skipped; a bad line before it is an error.
 */
export function readJsonl<T = Record<string, unknown>>(path: string): JsonlLine<T>[] {
  if (!existsSync(path)) return [];
  const buf = readFileSync(path);
  const out: JsonlLine<T>[] = [];
  let start = 0;
  let lineNo = 1;
  for (let nl = buf.indexOf(0x0a); nl >= 0; start = nl + 1, nl = buf.indexOf(0x0a, start), lineNo++) {
    if (nl === start) continue;
    const text = buf.toString("utf8", start, nl);
    try {
      out.push({ value: JSON.parse(text) as T, start, end: nl + 1 });
    } catch {
      throw new Error(`track: ${path} line ${lineNo} is not a JSON record: ${text.slice(0, 80)}`);
    }
  }
  return out;
}
