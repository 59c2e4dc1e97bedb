import type { JsonObject } from "../json.js";
import { type Model, reverseVocab } from "./model.js";

/**
 * What BPE, WordLevel and WordPiece share: a token → id vocabulary, its id → token reverse (checked
 * so that no two tokens share an id) and the lookups of the Model interface built on them.
 */
export abstract class VocabModel implements Model {
  abstract readonly type: string;
  protected readonly vocabR: string[];
  constructor(readonly vocab: Map<string, number>, where: string) {
    this.vocabR = reverseVocab(vocab, where);
  }
  abstract tokenize(word: string, ids: number[], tokens: string[]): void;
  abstract toJSON(): JsonObject;
  tokenToId(token: string): number | undefined {
    return this.vocab.get(token);
  }
  idToToken(id: number): string | undefined {
    return this.vocabR[id];
  }
  getVocab(): Map<string, number> {
    return new Map(this.vocab);
  }
  getVocabSize(): number {
    return this.vocab.size;
  }
}
