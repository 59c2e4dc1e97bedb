import { checkOptions } from "../util/options.js";
import { readLines } from "./text_lines.js";

/**
 * Records of a JSON Lines file, streamed. Empty (or all-whitespace) lines are skipped; a line that
 * is not JSON is an error naming the file and line number.
 */
export async function* readJsonl<T = unknown>(path: string, options: { chunkSize?: number } = {}): AsyncGenerator<T> {
  checkOptions("readJsonl", options, ["chunkSize"]);
  for await (const { line, lineNumber } of readLines(path, options)) {
    if (line.trim().length === 0) continue;
    let value: T;
    try {
      value = JSON.parse(line) as T;
    } catch (e) {
      const shown = line.length > 60 ? line.slice(0, 60) + "…" : line;
      throw new SyntaxError(`${path}:${lineNumber}: line ${lineNumber} is not JSON (${(e as Error).message}): ${shown}`);
    }
    yield value;
  }
}

/** Every record of a JSON Lines file in an array. */
export async function loadJsonl<T = unknown>(path: string): Promise<T[]> {
  const out: T[] = [];
  for await (const r of readJsonl<T>(path)) out.push(r);
  return out;
}
