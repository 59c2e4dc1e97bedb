/**
 * Added and special tokens (tokenizer.json's `added_tokens`): found in the text before the model
 * sees it, so "[SEP]" or "<|endoftext|>" stays one token. Tokens with normalized=false are matched
 * in the raw text, the others in the normalized text; the longest match wins at each position.
 */
import { type JsonObject, TokenizerFormatError, bool, describeJson, int, obj, str } from "./json.js";
import { WHITESPACE, WORD } from "./unicode.js";

export interface AddedToken {
  content: string;
  singleWord: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

export function addedToken(content: string, options: Partial<Omit<AddedToken, "content">> = {}): AddedToken {
  const special = options.special ?? false;
  return { content, singleWord: false, lstrip: false, rstrip: false, normalized: options.normalized ?? !special, special, ...options };
}

/** A piece of input: text still to tokenize, or an added token's id. */
export type Segment = string | { id: number; content: string };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const WORD_AT_END = new RegExp(`[${WORD}]$`, "u");
const WORD_AT_START = new RegExp(`^[${WORD}]`, "u");
const SPACES_AT_END = new RegExp(`[${WHITESPACE}]+$`, "u");
const SPACES_AT_START = new RegExp(`^[${WHITESPACE}]+`, "u");

export class AddedVocabulary {
  readonly tokens = new Map<number, AddedToken>();
  private readonly byContent = new Map<string, number>();
  private rawRe: RegExp | null = null;
  private normRe: RegExp | null = null;
  /** Normalized form of each normalized token → its id. */
  private normForms = new Map<string, number>();

  add(id: number, token: AddedToken): void {
    this.tokens.set(id, token);
    this.byContent.set(token.content, id);
  }
  idOf(content: string): number | undefined {
    return this.byContent.get(content);
  }
  /** Rebuilds the matchers; normalize is the tokenizer's normalizer (tokens with normalized=true are matched after it). */
  rebuild(normalize: (s: string) => string): void {
    const raw: string[] = [];
    this.normForms = new Map();
    for (const [id, t] of this.tokens) {
      if (t.normalized) this.normForms.set(normalize(t.content), id);
      else raw.push(t.content);
    }
    const build = (contents: string[]) => (contents.length === 0 ? null : new RegExp([...contents].sort((a, b) => b.length - a.length).map(escape).join("|"), "gu"));
    this.rawRe = build(raw);
    this.normRe = build([...this.normForms.keys()].filter((k) => k.length > 0));
  }
  get isEmpty(): boolean {
    return this.tokens.size === 0;
  }
  /** Splits raw text (normalized false) or normalized text (normalized true) at added tokens. */
  split(text: string, normalized: boolean, out: Segment[]): void {
    const re = normalized ? this.normRe : this.rawRe;
    if (re === null) {
      out.push(text);
      return;
    }
    let start = 0;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const id = normalized ? this.normForms.get(m[0])! : this.byContent.get(m[0])!;
      const t = this.tokens.get(id)!;
      let a = m.index;
      let b = a + m[0].length;
      if (t.singleWord && ((a > 0 && WORD_AT_END.test(text.slice(0, a))) || (b < text.length && WORD_AT_START.test(text.slice(b))))) continue;
      if (t.lstrip) a = Math.max(start, a - (SPACES_AT_END.exec(text.slice(0, a))?.[0].length ?? 0));
      if (t.rstrip) b += SPACES_AT_START.exec(text.slice(b))?.[0].length ?? 0;
      if (start < a) out.push(text.slice(start, a));
      out.push({ id, content: t.content });
      start = b;
      re.lastIndex = b;
    }
    if (start < text.length) out.push(text.slice(start));
  }
  toJSON(): JsonObject[] {
    return [...this.tokens].sort((a, b) => a[0] - b[0]).map(([id, t]) => ({ id, content: t.content, single_word: t.singleWord, lstrip: t.lstrip, rstrip: t.rstrip, normalized: t.normalized, special: t.special }));
  }
  static fromJSON(v: unknown, path = "added_tokens"): AddedVocabulary {
    const av = new AddedVocabulary();
    if (v === undefined || v === null) return av;
    if (!Array.isArray(v)) throw new TokenizerFormatError(path, `must be an array of tokens, got ${describeJson(v)}`);
    v.forEach((x, i) => {
      const where = `${path}[${i}]`;
      const o = obj(x, where);
      av.add(int(o, "id", where), { content: str(o, "content", where), singleWord: bool(o, "single_word", where, false), lstrip: bool(o, "lstrip", where, false), rstrip: bool(o, "rstrip", where, false), normalized: bool(o, "normalized", where, true), special: bool(o, "special", where, false) });
    });
    return av;
  }
}
