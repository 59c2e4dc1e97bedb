import { type Json, type JsonObject, TokenizerFormatError, arr, bool, describeJson, optStr, vocabJson, vocabMap } from "../json.js";
import { VocabModel } from "./vocab_model.js";

export interface BPEConfig {
  unkToken?: string | null;
  continuingSubwordPrefix?: string | null;
  endOfWordSuffix?: string | null;
  fuseUnk?: boolean;
  byteFallback?: boolean;
  ignoreMerges?: boolean;
}

/** Pairs of ids as one number key (ids stay below 2^26 in any real vocabulary). */
const pairKey = (a: number, b: number) => a * 67108864 + b;

/**
 * Byte-pair encoding: a word starts as characters and the pair with the lowest merge rank is
 * merged (the leftmost on ties) until no pair of the merge list is left.
 */
export class BPE extends VocabModel {
  readonly type = "BPE";
  readonly config: Required<BPEConfig>;
  /** pair key → rank, and pair key → id of the merged token. */
  private readonly ranks = new Map<number, number>();
  private readonly merged = new Map<number, number>();
  private readonly cache = new Map<string, number[]>();
  constructor(vocab: Map<string, number>, readonly merges: [string, string][], config: BPEConfig = {}) {
    super(vocab, "BPE");
    this.config = { unkToken: null, continuingSubwordPrefix: null, endOfWordSuffix: null, fuseUnk: false, byteFallback: false, ignoreMerges: false, ...config };
    const prefixLen = this.config.continuingSubwordPrefix?.length ?? 0;
    merges.forEach(([a, b], rank) => {
      const ia = vocab.get(a);
      const ib = vocab.get(b);
      if (ia === undefined || ib === undefined) throw new TokenizerFormatError(`model.merges[${rank}]`, `merges ${JSON.stringify(a)} and ${JSON.stringify(b)}, but ${JSON.stringify(ia === undefined ? a : b)} is not in model.vocab`);
      const joined = a + (prefixLen > 0 && b.startsWith(this.config.continuingSubwordPrefix!) ? b.slice(prefixLen) : b);
      const id = vocab.get(joined);
      if (id === undefined) throw new TokenizerFormatError(`model.merges[${rank}]`, `merges into ${JSON.stringify(joined)}, which is not in model.vocab`);
      const key = pairKey(ia, ib);
      // A pair listed twice keeps its later rank, as Hugging Face's HashMap does.
      this.ranks.set(key, rank);
      this.merged.set(key, id);
    });
  }
  static fromJSON(o: JsonObject, path: string): BPE {
    const vocab = vocabMap(o.vocab, `${path}.vocab`);
    const merges = arr(o, "merges", path).map((m, i): [string, string] => {
      if (typeof m === "string") {
        const parts = m.split(" ");
        if (parts.length !== 2) throw new TokenizerFormatError(`${path}.merges[${i}]`, `must be two tokens separated by one space, got ${describeJson(m)}`);
        return [parts[0], parts[1]];
      }
      if (Array.isArray(m) && m.length === 2 && typeof m[0] === "string" && typeof m[1] === "string") return [m[0], m[1]];
      throw new TokenizerFormatError(`${path}.merges[${i}]`, `must be "a b" or ["a", "b"], got ${describeJson(m)}`);
    });
    const dropout = o.dropout;
    if (dropout !== undefined && dropout !== null) throw new TokenizerFormatError(`${path}.dropout`, `is ${describeJson(dropout)}; ringtorch encodes deterministically and supports only null`);
    return new BPE(vocab, merges, {
      unkToken: optStr(o, "unk_token", path),
      continuingSubwordPrefix: optStr(o, "continuing_subword_prefix", path),
      endOfWordSuffix: optStr(o, "end_of_word_suffix", path),
      fuseUnk: bool(o, "fuse_unk", path, false),
      byteFallback: bool(o, "byte_fallback", path, false),
      ignoreMerges: bool(o, "ignore_merges", path, false),
    });
  }
  tokenize(word: string, ids: number[], tokens: string[]): void {
    if (word.length === 0) return;
    let hit = this.cache.get(word);
    if (hit === undefined) {
      hit = this.config.ignoreMerges && this.vocab.has(word) ? [this.vocab.get(word)!] : this.mergeWord(word);
      if (this.cache.size < 50_000) this.cache.set(word, hit);
    }
    for (const id of hit) {
      ids.push(id);
      tokens.push(this.vocabR[id]);
    }
  }
  private mergeWord(word: string): number[] {
    const { continuingSubwordPrefix: prefix, endOfWordSuffix: suffix, unkToken, fuseUnk, byteFallback } = this.config;
    const symbols: number[] = [];
    const chars = Array.from(word);
    let pendingUnk = false;
    const unkId = () => {
      const id = unkToken === null ? undefined : this.vocab.get(unkToken);
      if (id === undefined) throw new Error(`BPE: ${JSON.stringify(word)} has a character outside the vocabulary and the model has no unknown token in its vocabulary (unk_token ${JSON.stringify(unkToken)})`);
      return id;
    };
    chars.forEach((c, i) => {
      let s = c;
      if (i > 0 && prefix !== null) s = prefix + s;
      if (i === chars.length - 1 && suffix !== null) s = s + suffix;
      const id = this.vocab.get(s);
      if (id !== undefined) {
        symbols.push(id);
        pendingUnk = false;
        return;
      }
      if (byteFallback) {
        const bytes = [...new TextEncoder().encode(c)].map((b) => this.vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`));
        if (bytes.every((b) => b !== undefined)) {
          symbols.push(...(bytes as number[]));
          pendingUnk = false;
          return;
        }
      }
      if (fuseUnk && pendingUnk) return;
      symbols.push(unkId());
      pendingUnk = true;
    });
    return this.applyMerges(symbols);
  }
  /** Merges the lowest-ranked pair, leftmost first, until none is in the merge list. */
  private applyMerges(symbols: number[]): number[] {
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = this.ranks.get(pairKey(symbols[i], symbols[i + 1]));
        if (r !== undefined && r < bestRank) [best, bestRank] = [i, r];
      }
      if (best < 0) return symbols;
      const key = pairKey(symbols[best], symbols[best + 1]);
      const id = this.merged.get(key)!;
      // Merge every non-overlapping occurrence of this pair, left to right, in one pass.
      const out: number[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && pairKey(symbols[i], symbols[i + 1]) === key) {
          out.push(id);
          i++;
        } else out.push(symbols[i]);
      }
      symbols = out;
    }
  }
  toJSON(): JsonObject {
    const c = this.config;
    return {
      type: "BPE", dropout: null, unk_token: c.unkToken, continuing_subword_prefix: c.continuingSubwordPrefix, end_of_word_suffix: c.endOfWordSuffix,
      fuse_unk: c.fuseUnk, byte_fallback: c.byteFallback, ignore_merges: c.ignoreMerges, vocab: vocabJson(this.vocab), merges: this.merges as unknown as Json[],
    };
  }
}

