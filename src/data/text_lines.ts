/**
 * Streaming text: a file read chunk by chunk and decoded as UTF-8 across chunk boundaries, so a
 * file larger than memory is read in constant memory.
 */
import { createReadStream } from "node:fs";
import { checkOptions } from "../util/options.js";

/** The file's text in decoded chunks (a multi-byte character split between reads stays whole). */
export async function* readTextChunks(path: string, options: { chunkSize?: number } = {}): AsyncGenerator<string> {
  checkOptions("readTextChunks", options, ["chunkSize"]);
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let offset = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: options.chunkSize ?? 1 << 16 })) {
    try {
      yield decoder.decode(chunk as Buffer, { stream: true });
    } catch {
      throw new Error(`${path}: invalid UTF-8 in bytes ${offset}..${offset + (chunk as Buffer).length}`);
    }
    offset += (chunk as Buffer).length;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** Lines without their "\n" or "\r\n", with 1-based line numbers. */
export async function* readLines(path: string, options: { chunkSize?: number } = {}): AsyncGenerator<{ line: string; lineNumber: number }> {
  checkOptions("readLines", options, ["chunkSize"]);
  let pending = "";
  let lineNumber = 0;
  for await (const chunk of readTextChunks(path, options)) {
    pending += chunk;
    let start = 0;
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n", start)) {
      const end = nl > start && pending.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield { line: pending.slice(start, end), lineNumber: ++lineNumber };
      start = nl + 1;
    }
    pending = pending.slice(start);
  }
  if (pending.length > 0) yield { line: pending.endsWith("\r") ? pending.slice(0, -1) : pending, lineNumber: ++lineNumber };
}

/** Just the text of each line (for Tokenizer.trainAsync). */
export async function* readTextLines(path: string): AsyncGenerator<string> {
  for await (const { line } of readLines(path)) yield line;
}
