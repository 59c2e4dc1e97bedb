/**
 * Typed reads of a parsed tokenizer.json with errors that name the field: a corrupt file
 * should say "tokenizer.json: model.vocab must be an object mapping tokens to ids, got an array",
 * not fail later with "cannot read properties of undefined".
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export class TokenizerFormatError extends Error {
  constructor(path: string, message: string) {
    super(`tokenizer.json: ${path} ${message}`);
    this.name = "TokenizerFormatError";
  }
}

export function describeJson(v: unknown): string {
  if (v === undefined) return "nothing (the field is missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}

export function obj(v: unknown, path: string): JsonObject {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new TokenizerFormatError(path, `must be an object, got ${describeJson(v)}`);
  return v as JsonObject;
}

export function str(o: JsonObject, key: string, path: string, fallback?: string): string {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "string") throw new TokenizerFormatError(`${path}.${key}`, `must be a string, got ${describeJson(v)}`);
  return v;
}

export function optStr(o: JsonObject, key: string, path: string): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw new TokenizerFormatError(`${path}.${key}`, `must be a string or null, got ${describeJson(v)}`);
  return v;
}

export function bool(o: JsonObject, key: string, path: string, fallback?: boolean): boolean {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "boolean") throw new TokenizerFormatError(`${path}.${key}`, `must be true or false, got ${describeJson(v)}`);
  return v;
}

export function int(o: JsonObject, key: string, path: string, fallback?: number): number {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new TokenizerFormatError(`${path}.${key}`, `must be a non-negative integer, got ${describeJson(v)}`);
  return v;
}

export function arr(o: JsonObject, key: string, path: string): Json[] {
  const v = o[key];
  if (!Array.isArray(v)) throw new TokenizerFormatError(`${path}.${key}`, `must be an array, got ${describeJson(v)}`);
  return v;
}

export function typeOf(o: JsonObject, path: string): string {
  return str(o, "type", path);
}

export function unknownType(path: string, type: string, known: readonly string[]): never {
  throw new TokenizerFormatError(`${path}.type`, `is ${JSON.stringify(type)}, which ringtorch does not implement; known: ${known.join(", ")}`);
}

/** A vocab object {token: id} as a Map, checking every id. */
export function vocabMap(v: unknown, path: string): Map<string, number> {
  const o = obj(v, path);
  const m = new Map<string, number>();
  for (const [k, id] of Object.entries(o)) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) throw new TokenizerFormatError(`${path}[${JSON.stringify(k)}]`, `must be a non-negative integer id, got ${describeJson(id)}`);
    m.set(k, id);
  }
  return m;
}

/** A vocab Map written in id order, as Hugging Face writes it. */
export function vocabJson(vocab: ReadonlyMap<string, number>): JsonObject {
  const out: JsonObject = {};
  for (const [k, id] of [...vocab].sort((a, b) => a[1] - b[1])) out[k] = id;
  return out;
}
