import { checkOptions } from "../../util/options.js";
import { BPE } from "../models/bpe.js";
import type { Model } from "../models/model.js";
import { compareCodePoints } from "../unicode.js";
import { MaxHeap } from "./heap.js";
import { type Trainer, type TrainerOptions, WordCounter } from "./trainer.js";

export interface BpeTrainerOptions extends TrainerOptions {
  limitAlphabet?: number;
  initialAlphabet?: string[];
  continuingSubwordPrefix?: string;
  endOfWordSuffix?: string;
  maxTokenLength?: number;
}
export const BPE_TRAINER_KEYS = ["vocabSize", "minFrequency", "specialTokens", "showProgress", "limitAlphabet", "initialAlphabet", "continuingSubwordPrefix", "endOfWordSuffix", "maxTokenLength"];

const pairKey = (a: number, b: number) => a * 67108864 + b;
const pairOf = (k: number): [number, number] => [Math.floor(k / 67108864), k % 67108864];

interface Merge {
  pair: number;
  count: number;
  pos: Set<number>;
}

/** One word as symbol ids and each symbol's length in characters. */
class Word {
  constructor(readonly ids: number[], readonly lens: number[]) {}
  /**
   * Merges every (c1, c2) into `replacement`, left to right, and returns the pair count changes:
   * Hugging Face's Word::merge, whose exact changes (and what it leaves out) the trainer's
   * queue depends on.
   */
  merge(c1: number, c2: number, replacement: number, maxLength: number): [number, number][] {
    const changes: [number, number][] = [];
    const { ids, lens } = this;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] !== c1 || i + 1 >= ids.length || ids[i + 1] !== c2) continue;
      const newLen = lens[i] + lens[i + 1];
      const second = ids[i + 1];
      if (i > 0) {
        changes.push([pairKey(ids[i - 1], c1), -1]);
        if (lens[i - 1] + newLen < maxLength) changes.push([pairKey(ids[i - 1], replacement), 1]);
      }
      ids.splice(i, 2, replacement);
      lens.splice(i, 2, newLen);
      if (i < ids.length - 1) {
        changes.push([pairKey(second, ids[i + 1]), -1]);
        if (lens[i + 1] + newLen < maxLength) changes.push([pairKey(replacement, ids[i + 1]), 1]);
      }
    }
    return changes;
  }
}

/**
 * Hugging Face's BpeTrainer, step for step: special tokens, then the alphabet in code point order,
 * then merges of the most frequent pair (the smallest pair of ids on ties) until vocabSize. It
 * writes the same vocabulary and merges as Hugging Face for the same words.
 */
export class BpeTrainer implements Trainer {
  readonly options: Required<Omit<BpeTrainerOptions, "limitAlphabet" | "continuingSubwordPrefix" | "endOfWordSuffix" | "maxTokenLength">> & BpeTrainerOptions;
  private readonly words = new WordCounter();
  constructor(options: BpeTrainerOptions = {}) {
    checkOptions("BpeTrainer", options, BPE_TRAINER_KEYS);
    this.options = { vocabSize: 30000, minFrequency: 0, specialTokens: [], showProgress: false, initialAlphabet: [], ...options };
  }
  feed(words: readonly string[]): void {
    this.words.feed(words);
  }
  train(previous?: Model): { model: BPE; specialTokens: string[] } {
    const { vocab, merges } = this.trainVocab();
    const keep = previous instanceof BPE ? { unkToken: previous.config.unkToken, fuseUnk: previous.config.fuseUnk, byteFallback: previous.config.byteFallback } : {};
    return { model: new BPE(vocab, merges, { ...keep, continuingSubwordPrefix: this.options.continuingSubwordPrefix ?? null, endOfWordSuffix: this.options.endOfWordSuffix ?? null }), specialTokens: this.options.specialTokens };
  }
  /** The vocabulary (token → id) and the merges in rank order. */
  trainVocab(): { vocab: Map<string, number>; merges: [string, string][] } {
    const o = this.options;
    const prefix = o.continuingSubwordPrefix;
    const suffix = o.endOfWordSuffix;
    const maxLength = o.maxTokenLength ?? Infinity;
    const w2id = new Map<string, number>();
    const id2w: string[] = [];
    const addToken = (t: string) => {
      if (!w2id.has(t)) {
        w2id.set(t, id2w.length);
        id2w.push(t);
      }
      return w2id.get(t)!;
    };
    for (const t of o.specialTokens) addToken(t);

    // The alphabet: every character seen (weighted by word count), the initial alphabet always kept.
    const alphabet = new Map<string, number>();
    for (const [word, count] of this.words.counts) for (const c of word) alphabet.set(c, (alphabet.get(c) ?? 0) + count);
    for (const c of o.initialAlphabet) alphabet.set(c, Infinity);
    let kept = [...alphabet];
    const toRemove = o.limitAlphabet === undefined ? 0 : Math.max(0, alphabet.size - o.limitAlphabet);
    if (toRemove > 0) kept = kept.sort((a, b) => a[1] - b[1]).slice(toRemove);
    kept.sort((a, b) => a[0].codePointAt(0)! - b[0].codePointAt(0)!);
    for (const [c] of kept) addToken(c);

    // Words as symbol ids. Hugging Face walks a hash map here (so prefixed ids come in a random
    // order); ringtorch walks words in code point order, so training is reproducible.
    const entries = [...this.words.counts].sort((a, b) => compareCodePoints(a[0], b[0]));
    const words: Word[] = [];
    const counts: number[] = [];
    for (const [word, count] of entries) {
      const chars = Array.from(word);
      const ids: number[] = [];
      chars.forEach((c, i) => {
        if (!w2id.has(c)) return;
        let s = c;
        if (i > 0 && prefix !== undefined) s = prefix + s;
        if (i === chars.length - 1 && suffix !== undefined) s = s + suffix;
        ids.push(addToken(s));
      });
      words.push(new Word(ids, ids.map(() => 1)));
      counts.push(count);
    }

    const pairCounts = new Map<number, number>();
    let whereToUpdate = new Map<number, Set<number>>();
    words.forEach((w, i) => {
      for (let j = 0; j + 1 < w.ids.length; j++) {
        const k = pairKey(w.ids[j], w.ids[j + 1]);
        pairCounts.set(k, (pairCounts.get(k) ?? 0) + counts[i]);
        let s = whereToUpdate.get(k);
        if (s === undefined) whereToUpdate.set(k, (s = new Set()));
        s.add(i);
      }
    });
    // Highest count first; on ties the smaller pair (first id, then second).
    const queue = new MaxHeap<Merge>((a, b) => a.count > b.count || (a.count === b.count && a.pair < b.pair));
    const flush = () => {
      for (const [pair, pos] of whereToUpdate) {
        const count = pairCounts.get(pair)!;
        if (count > 0) queue.push({ pair, count, pos });
      }
      whereToUpdate = new Map();
    };
    flush();

    const merges: [number, number][] = [];
    for (;;) {
      if (w2id.size >= o.vocabSize) break;
      const top = queue.pop();
      if (top === undefined) break;
      const current = pairCounts.get(top.pair)!;
      if (top.count !== current) {
        top.count = current;
        queue.push(top);
        continue;
      }
      if (top.count < 1 || o.minFrequency > top.count) break;
      const [a, b] = pairOf(top.pair);
      let partB = id2w[b];
      if (prefix !== undefined && partB.startsWith(prefix)) partB = partB.slice(prefix.length);
      const newId = addToken(id2w[a] + partB);
      merges.push([top.pair, newId]);
      for (const i of top.pos) {
        for (const [pair, change] of words[i].merge(a, b, newId, maxLength)) {
          pairCounts.set(pair, (pairCounts.get(pair) ?? 0) + change * counts[i]);
          if (change > 0) {
            let s = whereToUpdate.get(pair);
            if (s === undefined) whereToUpdate.set(pair, (s = new Set()));
            s.add(i);
          }
        }
      }
      flush();
    }

    // A pair merged twice keeps its last rank, as in Hugging Face's merge map.
    const rankOf = new Map<number, number>();
    merges.forEach(([pair], rank) => rankOf.set(pair, rank));
    const mergeList = [...rankOf].sort((x, y) => x[1] - y[1]).map(([pair]): [string, string] => {
      const [a, b] = pairOf(pair);
      return [id2w[a], id2w[b]];
    });
    return { vocab: w2id, merges: mergeList };
  }
}
