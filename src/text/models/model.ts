import type { JsonObject } from "../json.js";

/** The model of a tokenizer.json (`model`): turns one pre-tokenized word into tokens. */
export interface Model {
  readonly type: string;
  /** Appends the ids and tokens of one word. */
  tokenize(word: string, ids: number[], tokens: string[]): void;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  getVocab(): Map<string, number>;
  getVocabSize(): number;
  toJSON(): JsonObject;
}

/** id → token for a vocab, checking that no two tokens share an id. */
export function reverseVocab(vocab: ReadonlyMap<string, number>, where: string): string[] {
  const r: string[] = [];
  for (const [t, id] of vocab) {
    if (r[id] !== undefined) throw new Error(`${where}: tokens ${JSON.stringify(r[id])} and ${JSON.stringify(t)} share id ${id}`);
    r[id] = t;
  }
  return r;
}
