"""Hugging Face tokenizers' encode throughput on one core, the peer of bench/tokenize.ts.

    RAYON_NUM_THREADS=1 ~/.venvs/peer/bin/python bench/text/tokenize_peer.py NAME ROUNDS
Prints one JSON line: {"name", "seconds" (median round), "tokens", "bytes"}.
"""
import gzip
import json
import os
import statistics
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from tokenizers import Tokenizer  # noqa: E402

name, rounds = sys.argv[1], int(sys.argv[2])
fix = "test/fixtures/text"
path = f"{fix}/{name}.tokenizer.json"
text = gzip.open(path + ".gz").read().decode() if not os.path.exists(path) else open(path, encoding="utf-8").read()
tok = Tokenizer.from_str(text)
lines = [l for l in open(f"{fix}/corpus.txt", encoding="utf-8").read().split("\n")]
tokens = sum(len(e.ids) for e in tok.encode_batch(lines))
times = []
for _ in range(rounds):
    t0 = time.perf_counter()
    tok.encode_batch(lines)
    times.append(time.perf_counter() - t0)
print(json.dumps({"name": name, "seconds": statistics.median(times), "tokens": tokens, "bytes": sum(len(l.encode()) for l in lines)}))
