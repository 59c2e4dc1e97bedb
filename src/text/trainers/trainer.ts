import type { Model } from "../models/model.js";

/** Counts words, then builds a model: Tokenizer.train feeds it each text's pre-tokenized words. */
export interface Trainer {
  feed(words: readonly string[]): void;
  /** Builds the model; `previous` is the tokenizer's model before training, whose settings (unknown token) carry over as in Hugging Face. */
  train(previous?: Model): { model: Model; specialTokens: string[] };
}

/** Options every trainer takes (Hugging Face's names in camelCase). */
export interface TrainerOptions {
  vocabSize?: number;
  minFrequency?: number;
  specialTokens?: string[];
  showProgress?: boolean;
}

export class WordCounter {
  readonly counts = new Map<string, number>();
  feed(words: readonly string[]): void {
    for (const w of words) this.counts.set(w, (this.counts.get(w) ?? 0) + 1);
  }
}
