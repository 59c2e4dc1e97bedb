import { type JsonObject, obj, typeOf, unknownType } from "../json.js";
import { BPE } from "./bpe.js";
import type { Model } from "./model.js";
import { WordLevel } from "./wordlevel.js";
import { WordPiece } from "./wordpiece.js";

export { BPE, WordLevel, WordPiece, type Model };
export type { BPEConfig } from "./bpe.js";
export type { WordPieceConfig } from "./wordpiece.js";

export function modelFromJson(v: unknown, path = "model"): Model {
  const o: JsonObject = obj(v, path);
  // Old files written without a "type" are told apart by their fields, as Hugging Face does.
  const type = o.type === undefined ? (o.merges !== undefined ? "BPE" : o.continuing_subword_prefix !== undefined ? "WordPiece" : "WordLevel") : typeOf(o, path);
  switch (type) {
    case "BPE": return BPE.fromJSON(o, path);
    case "WordPiece": return WordPiece.fromJSON(o, path);
    case "WordLevel": return WordLevel.fromJSON(o, path);
    default: return unknownType(path, type, ["BPE", "WordPiece", "WordLevel"]);
  }
}
