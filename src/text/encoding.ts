/**
 * An encoded sequence and the truncation and padding of tokenizer.json's `truncation` and
 * `padding` fields. Hugging Face's Encoding also carries offsets and word ids; ringtorch's does
 * not (nothing in the workloads it serves reads them).
 */
import { type JsonObject, TokenizerFormatError, describeJson, int, obj, str } from "./json.js";

export interface Encoding {
  ids: number[];
  tokens: string[];
  typeIds: number[];
  attentionMask: number[];
  specialTokensMask: number[];
}

export function makeEncoding(ids: number[], tokens: string[], typeId: number): Encoding {
  return { ids, tokens, typeIds: ids.map(() => typeId), attentionMask: ids.map(() => 1), specialTokensMask: ids.map(() => 0) };
}

/** Builds one encoding from sequences and special tokens without intermediate arrays. */
export class EncodingBuilder {
  readonly out: Encoding = { ids: [], tokens: [], typeIds: [], attentionMask: [], specialTokensMask: [] };
  /** Appends a sequence, its type ids all set to typeId (or kept when typeId is null). */
  sequence(e: Encoding, typeId: number | null): this {
    const o = this.out;
    for (let i = 0; i < e.ids.length; i++) {
      o.ids.push(e.ids[i]);
      o.tokens.push(e.tokens[i]);
      o.typeIds.push(typeId ?? e.typeIds[i]);
      o.attentionMask.push(e.attentionMask[i]);
      o.specialTokensMask.push(e.specialTokensMask[i]);
    }
    return this;
  }
  special(ids: readonly number[], tokens: readonly string[], typeId: number): this {
    const o = this.out;
    for (let i = 0; i < ids.length; i++) {
      o.ids.push(ids[i]);
      o.tokens.push(tokens[i]);
      o.typeIds.push(typeId);
      o.attentionMask.push(1);
      o.specialTokensMask.push(1);
    }
    return this;
  }
}

export function concatEncodings(parts: readonly Encoding[]): Encoding {
  const out: Encoding = { ids: [], tokens: [], typeIds: [], attentionMask: [], specialTokensMask: [] };
  for (const p of parts) {
    out.ids.push(...p.ids);
    out.tokens.push(...p.tokens);
    out.typeIds.push(...p.typeIds);
    out.attentionMask.push(...p.attentionMask);
    out.specialTokensMask.push(...p.specialTokensMask);
  }
  return out;
}

export type Direction = "right" | "left";
export type TruncationStrategy = "longestFirst" | "onlyFirst" | "onlySecond";

export interface TruncationParams {
  maxLength: number;
  strategy: TruncationStrategy;
  direction: Direction;
}

export interface PaddingParams {
  /** A fixed length, or "longest" for the longest sequence of the batch. */
  length: number | "longest";
  direction: Direction;
  padToMultipleOf: number | null;
  padId: number;
  padTypeId: number;
  padToken: string;
}

function truncateTo(e: Encoding, n: number, direction: Direction): void {
  if (e.ids.length <= n) return;
  for (const k of ["ids", "tokens", "typeIds", "attentionMask", "specialTokensMask"] as const) {
    const a = e[k] as unknown[];
    if (direction === "right") a.length = n;
    else a.splice(0, a.length - n);
  }
}

/** Hugging Face's truncate_encodings: which tokens go when a sequence (or pair) is over maxLength. */
export function truncate(a: Encoding, b: Encoding | null, p: TruncationParams): void {
  const total = a.ids.length + (b?.ids.length ?? 0);
  if (total <= p.maxLength) return;
  const toRemove = total - p.maxLength;
  if (p.strategy === "longestFirst") {
    if (b === null) return truncateTo(a, p.maxLength, p.direction);
    let n1 = a.ids.length;
    let n2 = b.ids.length;
    const swap = n1 > n2;
    if (swap) [n1, n2] = [n2, n1];
    n2 = n1 > p.maxLength ? n1 : Math.max(n1, p.maxLength - n1);
    if (n1 + n2 > p.maxLength) {
      n1 = Math.floor(p.maxLength / 2);
      n2 = n1 + (p.maxLength % 2);
    }
    if (swap) [n1, n2] = [n2, n1];
    truncateTo(a, n1, p.direction);
    truncateTo(b, n2, p.direction);
    return;
  }
  const target = p.strategy === "onlyFirst" ? a : b;
  if (target === null) throw new Error(`truncation: strategy "onlySecond" needs a pair of sequences, but only one was given`);
  if (target.ids.length <= toRemove) throw new Error(`truncation: strategy "${p.strategy}" would remove ${toRemove} tokens to reach maxLength ${p.maxLength}, but that sequence has only ${target.ids.length}`);
  truncateTo(target, target.ids.length - toRemove, p.direction);
}

/** Pads every encoding in place to one length. */
export function pad(encodings: Encoding[], p: PaddingParams): void {
  if (encodings.length === 0) return;
  let length = p.length === "longest" ? Math.max(...encodings.map((e) => e.ids.length)) : p.length;
  if (p.padToMultipleOf !== null && p.padToMultipleOf > 0 && length % p.padToMultipleOf > 0) length += p.padToMultipleOf - (length % p.padToMultipleOf);
  for (const e of encodings) {
    const n = length - e.ids.length;
    if (n <= 0) continue;
    const fill = <T>(a: T[], v: T) => {
      const extra = new Array<T>(n).fill(v);
      if (p.direction === "right") a.push(...extra);
      else a.unshift(...extra);
    };
    fill(e.ids, p.padId);
    fill(e.tokens, p.padToken);
    fill(e.typeIds, p.padTypeId);
    fill(e.attentionMask, 0);
    fill(e.specialTokensMask, 1);
  }
}

const STRATEGIES: Record<string, TruncationStrategy> = { LongestFirst: "longestFirst", OnlyFirst: "onlyFirst", OnlySecond: "onlySecond" };
const direction = (o: JsonObject, path: string): Direction => {
  const d = str(o, "direction", path, "Right");
  if (d !== "Right" && d !== "Left") throw new TokenizerFormatError(`${path}.direction`, `must be "Right" or "Left", got ${JSON.stringify(d)}`);
  return d === "Right" ? "right" : "left";
};
const capital = (d: Direction) => (d === "right" ? "Right" : "Left");

export function truncationFromJson(v: unknown, path = "truncation"): TruncationParams | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const s = str(o, "strategy", path, "LongestFirst");
  if (!(s in STRATEGIES)) throw new TokenizerFormatError(`${path}.strategy`, `must be one of ${Object.keys(STRATEGIES).join(", ")}, got ${JSON.stringify(s)}`);
  if (int(o, "stride", path, 0) !== 0) throw new TokenizerFormatError(`${path}.stride`, "is not 0; ringtorch does not return overflowing windows, so only stride 0 is supported");
  return { maxLength: int(o, "max_length", path), strategy: STRATEGIES[s], direction: direction(o, path) };
}

export function truncationToJson(t: TruncationParams | null): JsonObject | null {
  if (t === null) return null;
  const strategy = Object.keys(STRATEGIES).find((k) => STRATEGIES[k] === t.strategy)!;
  return { direction: capital(t.direction), max_length: t.maxLength, strategy, stride: 0 };
}

export function paddingFromJson(v: unknown, path = "padding"): PaddingParams | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const s = o.strategy;
  let length: number | "longest";
  if (s === "BatchLongest" || s === undefined) length = "longest";
  else if (s !== null && typeof s === "object" && !Array.isArray(s) && "Fixed" in s) length = int(s, "Fixed", `${path}.strategy`);
  else throw new TokenizerFormatError(`${path}.strategy`, `must be "BatchLongest" or {"Fixed": n}, got ${describeJson(s)}`);
  const multiple = o.pad_to_multiple_of;
  if (multiple !== null && multiple !== undefined && (typeof multiple !== "number" || !Number.isInteger(multiple) || multiple < 0)) throw new TokenizerFormatError(`${path}.pad_to_multiple_of`, `must be a non-negative integer or null, got ${describeJson(multiple)}`);
  return { length, direction: direction(o, path), padToMultipleOf: (multiple as number | null | undefined) ?? null, padId: int(o, "pad_id", path, 0), padTypeId: int(o, "pad_type_id", path, 0), padToken: str(o, "pad_token", path, "[PAD]") };
}

export function paddingToJson(p: PaddingParams | null): JsonObject | null {
  if (p === null) return null;
  return { strategy: p.length === "longest" ? "BatchLongest" : { Fixed: p.length }, direction: capital(p.direction), pad_to_multiple_of: p.padToMultipleOf, pad_id: p.padId, pad_type_id: p.padTypeId, pad_token: p.padToken };
}
