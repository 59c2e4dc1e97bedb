/**
 * The Alpaca instruction format: records with `instruction`, optional `input`, and `output`,
 * and the prompt template Stanford Alpaca trains with.
 */
import { readFileSync } from "node:fs";
import { readJsonl } from "./jsonl.js";

export interface AlpacaRecord {
  instruction: string;
  input?: string;
  output: string;
}

const HEADER = "Below is an instruction that describes a task";

/** The prompt (without the answer) for a record, as Stanford Alpaca writes it. */
export function alpacaPrompt(r: AlpacaRecord): string {
  return r.input
    ? `${HEADER}, paired with an input that provides further context. Write a response that appropriately completes the request.\n\n### Instruction:\n${r.instruction}\n\n### Input:\n${r.input}\n\n### Response:\n`
    : `${HEADER}. Write a response that appropriately completes the request.\n\n### Instruction:\n${r.instruction}\n\n### Response:\n`;
}

/** Checks one record's fields (where names the file and record). */
export function checkAlpacaRecord(v: unknown, where: string): AlpacaRecord {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new TypeError(`${where}: an Alpaca record must be an object with instruction, input and output, got ${Array.isArray(v) ? "an array" : typeof v}`);
  const r = v as Record<string, unknown>;
  for (const k of ["instruction", "output"]) if (typeof r[k] !== "string") throw new TypeError(`${where}: "${k}" must be a string, got ${r[k] === undefined ? "nothing" : typeof r[k]}`);
  if (r.input !== undefined && r.input !== null && typeof r.input !== "string") throw new TypeError(`${where}: "input" must be a string when present, got ${typeof r.input}`);
  return { instruction: r.instruction as string, input: (r.input as string | undefined) ?? "", output: r.output as string };
}

/** Records of an Alpaca file: a JSON array (alpaca_data.json) or JSON Lines. */
export async function* readAlpaca(path: string): AsyncGenerator<AlpacaRecord> {
  if (path.endsWith(".json")) {
    const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
    if (!Array.isArray(data)) throw new TypeError(`${path}: an Alpaca .json file must hold an array of records`);
    let i = 0;
    for (const r of data) yield checkAlpacaRecord(r, `${path}: record ${i++}`);
    return;
  }
  let i = 0;
  for await (const r of readJsonl(path)) yield checkAlpacaRecord(r, `${path}: record ${i++}`);
}
