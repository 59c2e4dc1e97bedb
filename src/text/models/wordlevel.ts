import { type JsonObject, str, vocabJson, vocabMap } from "../json.js";
import { VocabModel } from "./vocab_model.js";

/** One id per whole word; unknown words become `unkToken`. */
export class WordLevel extends VocabModel {
  readonly type = "WordLevel";
  private readonly unkId: number | undefined;
  constructor(vocab: Map<string, number>, readonly unkToken = "[UNK]") {
    super(vocab, "WordLevel");
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
  toJSON(): JsonObject {
    return { type: "WordLevel", vocab: vocabJson(this.vocab), unk_token: this.unkToken };
  }
}
