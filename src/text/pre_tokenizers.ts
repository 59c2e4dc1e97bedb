/**
 * Pre-tokenizers of tokenizer.json (`pre_tokenizer`): each splits every piece of text into
 * smaller pieces ("words") that the model then tokenizes one by one.
 */
import { GPT2_PATTERN, toByteLevel } from "./byte_level.js";
import { type Json, type JsonObject, TokenizerFormatError, arr, bool, describeJson, obj, str, typeOf, unknownType } from "./json.js";
import { type Pattern, patternRegex, readPattern } from "./normalizers.js";
import { SPLIT_BEHAVIORS, type SplitBehavior, splitBy } from "./split.js";
import { PUNCTUATION, WHITESPACE, WORD } from "./unicode.js";

export interface PreTokenizer {
  /** Splits each piece, appending the results to a new array. */
  preTokenize(pieces: readonly string[]): string[];
  toJSON(): JsonObject;
}

/** A pre-tokenizer that keeps the matches of one regex (the common shape: Bert, Whitespace, WhitespaceSplit). */
class Matcher implements PreTokenizer {
  constructor(readonly type: string, private readonly re: RegExp) {}
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    for (const p of pieces) {
      const m = p.match(this.re);
      if (m !== null) for (const w of m) out.push(w);
    }
    return out;
  }
  toJSON(): JsonObject {
    return { type: this.type };
  }
}

/** Splits on whitespace (removed), then isolates each punctuation character. */
export const BertPreTokenizer = (): PreTokenizer => new Matcher("BertPreTokenizer", new RegExp(`[^${WHITESPACE}${PUNCTUATION}]+|[${PUNCTUATION}]`, "gu"));
/** Hugging Face's `\w+|[^\w\s]+`. */
export const Whitespace = (): PreTokenizer => new Matcher("Whitespace", new RegExp(`[${WORD}]+|[^${WORD}${WHITESPACE}]+`, "gu"));
export const WhitespaceSplit = (): PreTokenizer => new Matcher("WhitespaceSplit", new RegExp(`[^${WHITESPACE}]+`, "gu"));

export class ByteLevelPreTokenizer implements PreTokenizer {
  constructor(readonly addPrefixSpace = true, readonly trimOffsets = true, readonly useRegex = true) {}
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    for (let p of pieces) {
      if (this.addPrefixSpace && !p.startsWith(" ")) p = " " + p;
      if (!this.useRegex) {
        if (p.length > 0) out.push(toByteLevel(p));
        continue;
      }
      // The GPT-2 pattern matches every character, so its matches are the isolated pieces.
      const m = p.match(GPT2_PATTERN);
      if (m !== null) for (const w of m) out.push(toByteLevel(w));
    }
    return out;
  }
  toJSON(): JsonObject {
    return { type: "ByteLevel", add_prefix_space: this.addPrefixSpace, trim_offsets: this.trimOffsets, use_regex: this.useRegex };
  }
}

export class Punctuation implements PreTokenizer {
  private readonly re = new RegExp(`[${PUNCTUATION}]`, "gu");
  constructor(readonly behavior: SplitBehavior = "Isolated") {}
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    for (const p of pieces) splitBy(p, this.re, this.behavior, false, out);
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Punctuation", behavior: this.behavior };
  }
}

export class Digits implements PreTokenizer {
  private readonly re = /\p{N}/gu;
  constructor(readonly individualDigits = false) {}
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    for (const p of pieces) splitBy(p, this.re, this.individualDigits ? "Isolated" : "Contiguous", false, out);
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Digits", individual_digits: this.individualDigits };
  }
}

export class Split implements PreTokenizer {
  private readonly re: RegExp;
  constructor(readonly pattern: Pattern, readonly behavior: SplitBehavior, readonly invert = false) {
    this.re = patternRegex(pattern, "gu");
  }
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    for (const p of pieces) splitBy(p, this.re, this.behavior, this.invert, out);
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Split", pattern: this.pattern as unknown as Json, behavior: this.behavior, invert: this.invert };
  }
}

/** SentencePiece-style: spaces become the replacement character, which starts each word. */
export class Metaspace implements PreTokenizer {
  private readonly re: RegExp;
  constructor(readonly replacement = "▁", readonly prependScheme: "always" | "never" | "first" = "always", readonly split = true) {
    this.re = new RegExp(replacement.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gu");
  }
  preTokenize(pieces: readonly string[]): string[] {
    const out: string[] = [];
    pieces.forEach((p, i) => {
      let s = p.replaceAll(" ", this.replacement);
      const prepend = this.prependScheme === "always" || (this.prependScheme === "first" && i === 0);
      if (prepend && !s.startsWith(this.replacement)) s = this.replacement + s;
      if (this.split) splitBy(s, this.re, "MergedWithNext", false, out);
      else if (s.length > 0) out.push(s);
    });
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Metaspace", replacement: this.replacement, prepend_scheme: this.prependScheme, split: this.split };
  }
}

export class PreTokenizerSequence implements PreTokenizer {
  constructor(readonly pretokenizers: PreTokenizer[]) {}
  preTokenize(pieces: readonly string[]): string[] {
    let out = pieces as string[];
    for (const p of this.pretokenizers) out = p.preTokenize(out);
    return out;
  }
  toJSON(): JsonObject {
    return { type: "Sequence", pretokenizers: this.pretokenizers.map((p) => p.toJSON()) };
  }
}

const TYPES = ["BertPreTokenizer", "Whitespace", "WhitespaceSplit", "ByteLevel", "Punctuation", "Digits", "Split", "Metaspace", "Sequence"];

function behavior(o: JsonObject, path: string, fallback?: SplitBehavior): SplitBehavior {
  const b = o.behavior === undefined && fallback ? fallback : o.behavior;
  if (!SPLIT_BEHAVIORS.includes(b as SplitBehavior)) throw new TokenizerFormatError(`${path}.behavior`, `must be one of ${SPLIT_BEHAVIORS.join(", ")}, got ${describeJson(b)}`);
  return b as SplitBehavior;
}

export function preTokenizerFromJson(v: unknown, path = "pre_tokenizer"): PreTokenizer | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, path);
  const type = typeOf(o, path);
  switch (type) {
    case "BertPreTokenizer": return BertPreTokenizer();
    case "Whitespace": return Whitespace();
    case "WhitespaceSplit": return WhitespaceSplit();
    case "ByteLevel": return new ByteLevelPreTokenizer(bool(o, "add_prefix_space", path, true), bool(o, "trim_offsets", path, true), bool(o, "use_regex", path, true));
    case "Punctuation": return new Punctuation(behavior(o, path, "Isolated"));
    case "Digits": return new Digits(bool(o, "individual_digits", path, false));
    case "Split": return new Split(readPattern(o.pattern, `${path}.pattern`), behavior(o, path), bool(o, "invert", path, false));
    case "Metaspace": {
      const scheme = str(o, "prepend_scheme", path, "always");
      if (scheme !== "always" && scheme !== "never" && scheme !== "first") throw new TokenizerFormatError(`${path}.prepend_scheme`, `must be "always", "never" or "first", got ${JSON.stringify(scheme)}`);
      return new Metaspace(str(o, "replacement", path, "▁"), scheme, bool(o, "split", path, true));
    }
    case "Sequence": return new PreTokenizerSequence(arr(o, "pretokenizers", path).map((p, i) => preTokenizerFromJson(p, `${path}.pretokenizers[${i}]`)!).filter((p) => p !== null));
    default: return unknownType(path, type, TYPES);
  }
}
