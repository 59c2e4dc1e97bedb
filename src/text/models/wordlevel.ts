import { type JsonObject, str, vocabJson, vocabMap } from "../json.js";
import { type Model, reverseVocab } from "./model.js";

/** One id per whole word; unknown words become `unkToken`. */
export class WordLevel implements Model {
  readonly type = "WordLevel";
  private readonly vocabR: string[];
  private readonly unkId: number | undefined;
  constructor(readonly vocab: Map<string, number>, readonly unkToken = "[UNK]") {
    this.vocabR = reverseVocab(vocab, "WordLevel");
    this.unkId = vocab.get(unkToken);
  }
  static fromJSON(o: JsonObject, path: string): WordLevel {
    return new WordLevel(vocabMap(o.vocab, `${path}.vocab`), str(o, "unk_token", path, "[UNK]"));
  }
  tokenize(word: string, ids: number[], tokens: string[]): void {
    const id = this.vocab.get(word);
    if (id !== undefined) {
      ids.push(id);
      tokens.push(word);
    } else if (this.unkId !== undefined) {
      ids.push(this.unkId);
      tokens.push(this.unkToken);
    } else {
      throw new Error(`WordLevel: ${JSON.stringify(word)} is not in the vocabulary and the unknown token ${JSON.stringify(this.unkToken)} is not either`);
    }
  }
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
  toJSON(): JsonObject {
    return { type: "WordLevel", vocab: vocabJson(this.vocab), unk_token: this.unkToken };
  }
}
