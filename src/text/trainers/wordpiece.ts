import { checkOptions } from "../../util/options.js";
import type { Model } from "../models/model.js";
import { WordPiece } from "../models/wordpiece.js";
import { BPE_TRAINER_KEYS, BpeTrainer, type BpeTrainerOptions } from "./bpe.js";
import type { Trainer } from "./trainer.js";

/**
 * Hugging Face's WordPieceTrainer: a BPE trainer whose non-initial pieces carry the "##" prefix;
 * the vocabulary it learns becomes a WordPiece model (the merges are dropped).
 */
export class WordPieceTrainer implements Trainer {
  private readonly bpe: BpeTrainer;
  private readonly explicitUnk: string | undefined;
  readonly continuingSubwordPrefix: string;
  constructor(options: BpeTrainerOptions & { unkToken?: string } = {}) {
    checkOptions("WordPieceTrainer", options, [...BPE_TRAINER_KEYS, "unkToken"]);
    const { unkToken, ...rest } = options;
    this.explicitUnk = unkToken;
    this.continuingSubwordPrefix = rest.continuingSubwordPrefix ?? "##";
    this.bpe = new BpeTrainer({ ...rest, continuingSubwordPrefix: this.continuingSubwordPrefix });
  }
  feed(words: readonly string[]): void {
    this.bpe.feed(words);
  }
  train(previous?: Model): { model: WordPiece; specialTokens: string[] } {
    const { vocab } = this.bpe.trainVocab();
    const unkToken = this.explicitUnk ?? (previous instanceof WordPiece ? previous.unkToken : "[UNK]");
    return { model: new WordPiece(vocab, { unkToken, continuingSubwordPrefix: this.continuingSubwordPrefix }), specialTokens: this.bpe.options.specialTokens };
  }
}
