import { checkOptions } from "../../util/options.js";
import type { Model } from "../models/model.js";
import { WordLevel } from "../models/wordlevel.js";
import { compareCodePoints } from "../unicode.js";
import { type Trainer, type TrainerOptions, WordCounter } from "./trainer.js";

/**
 * Hugging Face's WordLevelTrainer: the special tokens, then the words by descending count (ties
 * by code point), keeping those seen at least minFrequency times, up to vocabSize in all.
 */
export class WordLevelTrainer implements Trainer {
  readonly vocabSize: number;
  readonly minFrequency: number;
  readonly specialTokens: string[];
  private readonly words = new WordCounter();
  constructor(options: TrainerOptions & { unkToken?: string } = {}) {
    checkOptions("WordLevelTrainer", options, ["vocabSize", "minFrequency", "specialTokens", "showProgress", "unkToken"]);
    this.vocabSize = options.vocabSize ?? 30000;
    this.minFrequency = options.minFrequency ?? 0;
    this.specialTokens = options.specialTokens ?? [];
    this.explicitUnk = options.unkToken;
  }
  private readonly explicitUnk: string | undefined;
  feed(words: readonly string[]): void {
    this.words.feed(words);
  }
  train(previous?: Model): { model: WordLevel; specialTokens: string[] } {
    const unk = this.explicitUnk ?? (previous instanceof WordLevel ? previous.unkToken : "[UNK]");
    const ordered = [...this.words.counts].sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0]));
    const list = [...this.specialTokens, ...ordered.filter(([, n]) => n >= this.minFrequency).map(([w]) => w)].slice(0, this.vocabSize);
    // Collected into a map as in Hugging Face: a word listed twice keeps its last index.
    const vocab = new Map<string, number>();
    list.forEach((w, i) => vocab.set(w, i));
    return { model: new WordLevel(vocab, unk), specialTokens: this.specialTokens };
  }
}
