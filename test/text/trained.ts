// The tokenizers ringtorch trains for the round trip through Hugging Face: tools/text/check_trained.py
// saves them (through tools/text/save_trained.ts), loads them in Hugging Face `tokenizers` and records
// its encodings; trained_roundtrip.test.ts checks ringtorch's own encodings against those.
import { BPE, BpeTrainer, Tokenizer, WordLevel, WordLevelTrainer, WordPiece, WordPieceTrainer, byteLevelAlphabet, decoders, normalizers as N, preTokenizers as P, processors } from "../../src/text/index.js";
import { corpus } from "./fixtures.js";

export function trainedTokenizers(): Record<string, Tokenizer> {
  const lines = corpus();
  const wp = new Tokenizer(new WordPiece(new Map()));
  wp.normalizer = new N.BertNormalizer();
  wp.preTokenizer = P.BertPreTokenizer();
  wp.decoder = new decoders.WordPieceDecoder();
  wp.train(lines, new WordPieceTrainer({ vocabSize: 2000, specialTokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] }));
  const cls = wp.tokenToId("[CLS]")!;
  const sep = wp.tokenToId("[SEP]")!;
  wp.postProcessor = new processors.BertProcessing(["[SEP]", sep], ["[CLS]", cls]);

  const wl = new Tokenizer(new WordLevel(new Map(), "[UNK]"));
  wl.normalizer = new N.NormalizerSequence([N.NFKC(), N.Lowercase()]);
  wl.preTokenizer = new P.PreTokenizerSequence([P.WhitespaceSplit(), new P.Punctuation("Isolated")]);
  wl.train(lines, new WordLevelTrainer({ vocabSize: 3000, specialTokens: ["[UNK]", "[PAD]"] }));

  const bl = new Tokenizer(new BPE(new Map(), []));
  bl.preTokenizer = new P.ByteLevelPreTokenizer(true);
  bl.decoder = new decoders.ByteLevelDecoder();
  bl.train(lines, new BpeTrainer({ vocabSize: 1000, minFrequency: 3, specialTokens: ["<|endoftext|>"], initialAlphabet: byteLevelAlphabet() }));

  const bp = new Tokenizer(new BPE(new Map(), [], { unkToken: "[UNK]" }));
  bp.normalizer = N.Lowercase();
  bp.preTokenizer = P.Whitespace();
  bp.train(lines, new BpeTrainer({ vocabSize: 800, specialTokens: ["[UNK]"], continuingSubwordPrefix: "##" }));
  return { wordpiece: wp, wordlevel: wl, bytelevel_bpe: bl, bpe_prefix: bp };
}
