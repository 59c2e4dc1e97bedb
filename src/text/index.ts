/**
 * Tokenizers that read and write Hugging Face's tokenizer.json, and trainers that build them.
 *
 *   const tok = text.Tokenizer.fromFile("tokenizer.json");
 *   const batch = tok.encodeBatch(["first text", "second"], { padding: "longest" });
 */
export { Tokenizer, type EncodeOptions, type TextInput } from "./tokenizer.js";
export { type Encoding, type PaddingParams, type TruncationParams } from "./encoding.js";
export { type AddedToken, addedToken } from "./added_vocabulary.js";
export { BPE, WordLevel, WordPiece, modelFromJson, type Model, type BPEConfig, type WordPieceConfig } from "./models/index.js";
export * as normalizers from "./normalizers.js";
export * as preTokenizers from "./pre_tokenizers.js";
export * as processors from "./post_processors.js";
export * as decoders from "./decoders.js";
export { BpeTrainer, type BpeTrainerOptions } from "./trainers/bpe.js";
export { WordPieceTrainer } from "./trainers/wordpiece.js";
export { WordLevelTrainer } from "./trainers/wordlevel.js";
export type { Trainer, TrainerOptions } from "./trainers/trainer.js";
export { byteLevelAlphabet } from "./byte_level.js";
export { TokenizerFormatError } from "./json.js";
export { batchTensors, type BatchTensors } from "./batch.js";
