/**
 * Normalizers of tokenizer.json (`normalizer`): each turns a string into a string. Hugging Face
 * also tracks offsets through every change; ringtorch's encodings carry no offsets, so a normalizer
 * is a plain string function.
 */
import { type Json, type JsonObject, arr, bool, obj, str, typeOf, unknownType, TokenizerFormatError, describeJson } from "./json.js";
import { CJK_RANGES, WHITESPACE } from "./unicode.js";

export interface Normalizer {
  normalize(s: string): string;
  toJSON(): JsonObject;
}

// Control characters (Unicode "Other": Cc, Cf, Cs, Co, Cn) except tab, newline, return, plus NUL and U+FFFD.
const CONTROL = /(?![\t\n\r])[\p{C}\u{FFFD}]/gu;
const BERT_SPACE = new RegExp(`[${WHITESPACE}]`, "gu");
const CJK = new RegExp(`([${CJK_RANGES}])`, "gu");
const ASCII_CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
const ASCII_SPACE = /[\t\n\r]/g;
const NONSPACING_MARK = /\p{Mn}/gu;
// Fast paths: most text is ASCII, where NFD, accent stripping and CJK padding change nothing.
const NON_ASCII = /[^\x00-\x7f]/;

export class BertNormalizer implements Normalizer {
  constructor(
    readonly cleanText = true,
    readonly handleChineseChars = true,
    readonly stripAccents: boolean | null = null,
    readonly lowercase = true,
  ) {}
  normalize(s: string): string {
    const ascii = !NON_ASCII.test(s);
    if (this.cleanText) s = ascii ? s.replace(ASCII_CONTROL, "").replace(ASCII_SPACE, " ") : s.replace(CONTROL, "").replace(BERT_SPACE, " ");
    if (this.handleChineseChars && !ascii) s = s.replace(CJK, " $1 ");
    if ((this.stripAccents ?? this.lowercase) && !ascii) s = stripAccents(s.normalize("NFD"));
    if (this.lowercase) s = lowercase(s);
    return s;
  }
  toJSON(): JsonObject {
    return { type: "BertNormalizer", clean_text: this.cleanText, handle_chinese_chars: this.handleChineseChars, strip_accents: this.stripAccents, lowercase: this.lowercase };
  }
}

function stripAccents(s: string): string {
  return s.replace(NONSPACING_MARK, "");
}

/**
 * Lowercases character by character as Rust's `char::to_lowercase` does: JavaScript's
 * toLowerCase would turn a word-final Σ into ς, which Hugging Face does not.
 */
function lowercase(s: string): string {
  const lower = s.toLowerCase();
  return lower.includes("ς") && s.includes("Σ") ? Array.from(s, (c) => c.toLowerCase()).join("") : lower;
}

class Simple implements Normalizer {
  constructor(readonly type: string, readonly fn: (s: string) => string) {}
  normalize(s: string): string {
    return this.fn(s);
  }
  toJSON(): JsonObject {
    return { type: this.type };
  }
}

export const Lowercase = (): Normalizer => new Simple("Lowercase", lowercase);
export const NFD = (): Normalizer => new Simple("NFD", (s) => s.normalize("NFD"));
export const NFC = (): Normalizer => new Simple("NFC", (s) => s.normalize("NFC"));
export const NFKD = (): Normalizer => new Simple("NFKD", (s) => s.normalize("NFKD"));
export const NFKC = (): Normalizer => new Simple("NFKC", (s) => s.normalize("NFKC"));
/** Removes non-spacing marks; apply NFD first (as Hugging Face's docs say) to strip composed accents. */
export const StripAccents = (): Normalizer => new Simple("StripAccents", stripAccents);

export class Strip implements Normalizer {
  constructor(readonly stripLeft = true, readonly stripRight = true) {}
  normalize(s: string): string {
    if (this.stripLeft) s = s.replace(new RegExp(`^[${WHITESPACE}]+`, "u"), "");
    if (this.stripRight) s = s.replace(new RegExp(`[${WHITESPACE}]+$`, "u"), "");
    return s;
  }
  toJSON(): JsonObject {
    return { type: "Strip", strip_left: this.stripLeft, strip_right: this.stripRight };
  }
}

export class Prepend implements Normalizer {
  constructor(readonly prepend: string) {}
  normalize(s: string): string {
    return s.length === 0 ? s : this.prepend + s;
  }
  toJSON(): JsonObject {
    return { type: "Prepend", prepend: this.prepend };
  }
}

/** A `{"String": "..."}` or `{"Regex": "..."}` pattern of Replace and Split. */
export type Pattern = { String: string } | { Regex: string };

export function patternRegex(p: Pattern, flags: string): RegExp {
  return "String" in p ? new RegExp(p.String.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), flags) : new RegExp(p.Regex, flags);
}

export function readPattern(v: unknown, path: string): Pattern {
  const o = obj(v, path);
  if (typeof o.String === "string") return { String: o.String };
  if (typeof o.Regex === "string") {
    try {
      new RegExp(o.Regex, "gu");
    } catch (e) {
      throw new TokenizerFormatError(`${path}.Regex`, `is a pattern JavaScript cannot compile (${(e as Error).message}); Oniguruma-only syntax such as inline (?i:…) flags is not supported`);
    }
    return { Regex: o.Regex };
  }
  throw new TokenizerFormatError(path, `must be {"String": ...} or {"Regex": ...}, got ${describeJson(v)}`);
}

export class Replace implements Normalizer {
  private readonly re: RegExp;
  constructor(readonly pattern: Pattern, readonly content: string) {
    this.re = patternRegex(pattern, "gu");
  }
  normalize(s: string): string {
    return s.replace(this.re, () => this.content);
  }
  toJSON(): JsonObject {
    return { type: "Replace", pattern: this.pattern as unknown as Json, content: this.content };
  }
}

export class NormalizerSequence implements Normalizer {
  constructor(readonly normalizers: Normalizer[]) {}
  normalize(s: string): string {
    for (const n of this.normalizers) s = n.normalize(s);
    return s;
  }
  toJSON(): JsonObject {
    return { type: "Sequence", normalizers: this.normalizers.map((n) => n.toJSON()) };
  }
}

const TYPES = ["BertNormalizer", "Lowercase", "NFD", "NFC", "NFKD", "NFKC", "StripAccents", "Strip", "Prepend", "Replace", "Sequence"];

export function normalizerFromJson(v: unknown, path = "normalizer"): Normalizer | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const type = typeOf(o, path);
  switch (type) {
    case "BertNormalizer": {
      const sa = o.strip_accents;
      if (sa !== undefined && sa !== null && typeof sa !== "boolean") throw new TokenizerFormatError(`${path}.strip_accents`, `must be true, false or null, got ${describeJson(sa)}`);
      return new BertNormalizer(bool(o, "clean_text", path, true), bool(o, "handle_chinese_chars", path, true), (sa as boolean | null | undefined) ?? null, bool(o, "lowercase", path, true));
    }
    case "Lowercase": return Lowercase();
    case "NFD": return NFD();
    case "NFC": return NFC();
    case "NFKD": return NFKD();
    case "NFKC": return NFKC();
    case "StripAccents": return StripAccents();
    case "Strip": return new Strip(bool(o, "strip_left", path, true), bool(o, "strip_right", path, true));
    case "Prepend": return new Prepend(str(o, "prepend", path));
    case "Replace": return new Replace(readPattern(o.pattern, `${path}.pattern`), str(o, "content", path));
    case "Sequence": return new NormalizerSequence(arr(o, "normalizers", path).map((n, i) => normalizerFromJson(n, `${path}.normalizers[${i}]`)!).filter((n) => n !== null));
    default: return unknownType(path, type, TYPES);
  }
}
