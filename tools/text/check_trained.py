"""Tokenizers trained by ringtorch, loaded by Hugging Face `tokenizers`: records HF's encodings.

    ~/.venvs/peer/bin/python tools/text/check_trained.py

Runs tools/text/save_trained.ts (node) to train and save, loads each file with
tokenizers.Tokenizer.from_file, and writes test/fixtures/text/trained_by_ringtorch.expected.json
with Hugging Face's ids for the held-out texts (single and paired) and its decodes.
"""
import json
import subprocess
import tempfile

from tokenizers import Tokenizer

with tempfile.TemporaryDirectory() as d:
    subprocess.check_call(["node", "--import", "tsx", "--conditions=source", "tools/text/save_trained.ts", d])
    texts = json.load(open("test/fixtures/text/heldout.txt", encoding="utf-8"))
    out = {}
    for name in ["wordpiece", "wordlevel", "bytelevel_bpe", "bpe_prefix"]:
        tok = Tokenizer.from_file(f"{d}/{name}.json")
        single = [tok.encode(t).ids for t in texts]
        out[name] = {
            "single": single,
            "pairs": [tok.encode(texts[i], texts[i + 1]).ids for i in range(0, 20, 2)],
            "typeIds": [tok.encode(texts[i], texts[i + 1]).type_ids for i in range(0, 20, 2)],
            "decoded": [tok.decode(ids) for ids in single],
            "vocabSize": tok.get_vocab_size(),
        }
    with open("test/fixtures/text/trained_by_ringtorch.expected.json", "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)
