import { type JsonObject, int, str, vocabJson, vocabMap } from "../json.js";
import { charLength } from "../unicode.js";
import { VocabModel } from "./vocab_model.js";

export interface WordPieceConfig {
  unkToken?: string;
  continuingSubwordPrefix?: string;
  maxInputCharsPerWord?: number;
}

/**
 * BERT's greedy longest-match-first subwords: the longest vocabulary entry that starts the word,
 * then the longest "##"-prefixed entry that continues it; a word with any unmatched rest (or
 * longer than maxInputCharsPerWord characters) becomes one unknown token.
 */
export class WordPiece extends VocabModel {
  readonly type = "WordPiece";
  readonly unkToken: string;
  readonly continuingSubwordPrefix: string;
  readonly maxInputCharsPerWord: number;
  private readonly cache = new Map<string, { ids: number[]; tokens: string[] }>();
  constructor(vocab: Map<string, number>, config: WordPieceConfig = {}) {
    super(vocab, "WordPiece");
    this.unkToken = config.unkToken ?? "[UNK]";
    this.continuingSubwordPrefix = config.continuingSubwordPrefix ?? "##";
    this.maxInputCharsPerWord = config.maxInputCharsPerWord ?? 100;
  }
  static fromJSON(o: JsonObject, path: string): WordPiece {
    return new WordPiece(vocabMap(o.vocab, `${path}.vocab`), {
      unkToken: str(o, "unk_token", path, "[UNK]"),
      continuingSubwordPrefix: str(o, "continuing_subword_prefix", path, "##"),
      maxInputCharsPerWord: int(o, "max_input_chars_per_word", path, 100),
    });
  }
  tokenize(word: string, ids: number[], tokens: string[]): void {
    let hit = this.cache.get(word);
    if (hit === undefined) {
      hit = this.split(word);
      // A bounded cache, as Hugging Face's: frequent words repeat, rare ones should not grow memory.
      if (this.cache.size < 50_000) this.cache.set(word, hit);
    }
    for (let i = 0; i < hit.ids.length; i++) {
      ids.push(hit.ids[i]);
      tokens.push(hit.tokens[i]);
    }
  }
  private split(word: string): { ids: number[]; tokens: string[] } {
    if (charLength(word) > this.maxInputCharsPerWord) return this.unknown();
    const ids: number[] = [];
    const tokens: string[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let found: string | undefined;
      let foundId = -1;
      while (start < end) {
        const sub = start > 0 ? this.continuingSubwordPrefix + word.slice(start, end) : word.slice(start, end);
        const id = this.vocab.get(sub);
        if (id !== undefined) {
          found = sub;
          foundId = id;
          break;
        }
        end--;
        // Never cut a surrogate pair: step back over a low surrogate to its high half.
        const c = word.charCodeAt(end);
        if (c >= 0xdc00 && c <= 0xdfff && end > start) end--;
      }
      if (found === undefined) return this.unknown();
      ids.push(foundId);
      tokens.push(found);
      start = end;
    }
    return { ids, tokens };
  }
  private unknown(): { ids: number[]; tokens: string[] } {
    const id = this.vocab.get(this.unkToken);
    if (id === undefined) throw new Error(`WordPiece: the unknown token ${JSON.stringify(this.unkToken)} is not in the vocabulary`);
    return { ids: [id], tokens: [this.unkToken] };
  }
  toJSON(): JsonObject {
    return { type: "WordPiece", unk_token: this.unkToken, continuing_subword_prefix: this.continuingSubwordPrefix, max_input_chars_per_word: this.maxInputCharsPerWord, vocab: vocabJson(this.vocab) };
  }
}
