// Trainers against Hugging Face's: the same corpus, pipeline and options give the same
// vocabulary, merges and added tokens as the tokenizer.json files Hugging Face trained
// (tools/text/make_fixtures.py). WordPiece training is checked by tools/text/check_trained.py.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BPE, BpeTrainer, Tokenizer, WordLevel, WordLevelTrainer, WordPieceTrainer, byteLevelAlphabet, normalizers as N, preTokenizers as P, processors, decoders } from "../../src/text/index.js";
import { readTextLines } from "../../src/data/index.js";
import { FIXTURES, corpus, expected, fixtureJson, heldout } from "./fixtures.js";

const hfJson = (name: string) => JSON.parse(fixtureJson(name));
const mine = (t: Tokenizer) => JSON.parse(t.toString());

describe("trainers give Hugging Face's vocabularies", () => {
  it("WordLevel (note 000's tokenizer: whitespace words, four specials, minFrequency 2)", () => {
    const tok = new Tokenizer(new WordLevel(new Map(), "[UNK]"));
    tok.preTokenizer = P.Whitespace();
    tok.train(corpus(), new WordLevelTrainer({ specialTokens: ["[UNK]", "[PAD]", "[SOS]", "[EOS]"], minFrequency: 2 }));
    const hf = hfJson("wordlevel");
    assert.deepEqual(mine(tok).model, hf.model);
    assert.deepEqual(mine(tok).added_tokens, hf.added_tokens);
  });

  it("BPE with an unknown token over NFKC + lowercase, punctuation and digits split", () => {
    const tok = new Tokenizer(new BPE(new Map(), []));
    tok.normalizer = new N.NormalizerSequence([N.NFKC(), N.Lowercase()]);
    tok.preTokenizer = new P.PreTokenizerSequence([P.WhitespaceSplit(), new P.Punctuation(), new P.Digits(true)]);
    tok.train(corpus(), new BpeTrainer({ vocabSize: 1500, minFrequency: 2, specialTokens: ["[UNK]", "[PAD]"] }));
    const hf = hfJson("bpe");
    const m = mine(tok).model;
    assert.deepEqual(m.vocab, hf.model.vocab);
    assert.deepEqual(m.merges, hf.model.merges);
  });

  it("BPE with an end-of-word suffix", () => {
    const tok = new Tokenizer(new BPE(new Map(), []));
    tok.normalizer = new N.NormalizerSequence([N.NFD(), N.StripAccents(), N.Lowercase()]);
    tok.preTokenizer = P.Whitespace();
    tok.train(corpus(), new BpeTrainer({ vocabSize: 1200, specialTokens: ["<unk>", "<pad>"], endOfWordSuffix: "</w>" }));
    // Hugging Face numbers the "x</w>" symbols in hash order (a different order each run), and
    // merge ties follow ids: the tokens and the merges agree, a tie's rank may not.
    const hf = hfJson("bpe_suffix");
    const m = mine(tok).model;
    assert.deepEqual(Object.keys(m.vocab).sort(), Object.keys(hf.model.vocab).sort());
    const key = (x: string[]) => x.join(" ");
    assert.deepEqual(m.merges.map(key).sort(), hf.model.merges.map(key).sort());
    const sameRank = m.merges.filter((x: string[], i: number) => key(x) === key(hf.model.merges[i])).length;
    assert.ok(sameRank >= m.merges.length - 10, `${m.merges.length - sameRank} merges at another rank than Hugging Face's`);
  });

  it("byte-level BPE (GPT-2's shape) and its encodings of held-out text", () => {
    const tok = new Tokenizer(new BPE(new Map(), []));
    tok.preTokenizer = new P.ByteLevelPreTokenizer(false);
    tok.decoder = new decoders.ByteLevelDecoder();
    tok.postProcessor = new processors.ByteLevelProcessing({ add_prefix_space: true, trim_offsets: false, use_regex: true });
    tok.train(corpus(), new BpeTrainer({ vocabSize: 2000, specialTokens: ["<|endoftext|>"], initialAlphabet: byteLevelAlphabet() }));
    const hf = hfJson("bytelevel_bpe");
    assert.deepEqual(mine(tok).model, hf.model);
    assert.deepEqual(mine(tok).added_tokens, hf.added_tokens);
    const exp = expected("bytelevel_bpe");
    heldout().forEach((t, i) => assert.deepEqual(tok.encode(t).ids, exp.single[i].ids, `text ${i}`));
  });

  it("WordPiece: special tokens first, the alphabet, ## continuations; reloads from its own file", () => {
    const tok = new Tokenizer(new BPE(new Map(), []));
    tok.normalizer = new N.BertNormalizer();
    tok.preTokenizer = P.BertPreTokenizer();
    tok.train(corpus(), new WordPieceTrainer({ vocabSize: 2000, specialTokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] }));
    const vocab = tok.getVocab();
    assert.equal(vocab.size, 2000);
    assert.deepEqual(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map((t) => vocab.get(t)), [0, 1, 2, 3, 4]);
    // Hugging Face's vocabulary differs only where its hash order breaks ties, so most entries agree.
    const hf = new Map(Object.entries(hfJson("wordpiece").model.vocab as Record<string, number>));
    const shared = [...vocab.keys()].filter((k) => hf.has(k)).length;
    assert.ok(shared > 1900, `only ${shared} of 2000 tokens are in Hugging Face's vocabulary`);
    const again = Tokenizer.fromString(tok.toString());
    for (const t of heldout()) assert.deepEqual(again.encode(t).ids, tok.encode(t).ids);
  });

  it("a file larger than memory trains from an async stream of lines", async () => {
    const lines = () => readTextLines(`${FIXTURES}corpus.txt`);
    const tok = new Tokenizer(new WordLevel(new Map(), "[UNK]"));
    tok.preTokenizer = P.Whitespace();
    await tok.trainAsync(lines(), new WordLevelTrainer({ specialTokens: ["[UNK]", "[PAD]", "[SOS]", "[EOS]"], minFrequency: 2 }));
    assert.deepEqual(mine(tok).model, hfJson("wordlevel").model);
  });
});
