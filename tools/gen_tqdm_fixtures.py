"""Writes test/fixtures/track/tqdm_lines.json: tqdm's own meter text for a set of bar states, the
reference for src/track/progress_format.ts.

    ~/.venvs/peer/bin/python tools/gen_tqdm_fixtures.py
"""
import json
from collections import OrderedDict
from pathlib import Path

from tqdm import tqdm

cases = [
    dict(n=45, total=100, elapsed=4.2, desc="epoch 1", postfix={"loss": 0.3}, unit="it", ncols=80),
    dict(n=0, total=100, elapsed=0.0, desc="", postfix={}, unit="it", ncols=80),
    dict(n=100, total=100, elapsed=12.0, desc="train", postfix={}, unit="batch", ncols=100),
    dict(n=3, total=50, elapsed=7.5, desc="slow", postfix={"loss": 0.123456, "lr": 0.001}, unit="it", ncols=90),
    dict(n=7, total=None, elapsed=3.3, desc="stream", postfix={"acc": 0.9}, unit="it", ncols=80),
    dict(n=1234, total=5000, elapsed=3725.0, desc="long", postfix={"big": 12345.678, "step": 42}, unit="it", ncols=120),
    dict(n=17, total=64, elapsed=1.0, desc="w", postfix={"tiny": 0.0000123, "name": "abc"}, unit="sample", ncols=60),
    dict(n=2, total=3, elapsed=0.5, desc="narrow", postfix={}, unit="it", ncols=40),
]
out = []
for c in cases:
    bar = tqdm(total=c["total"], disable=True)
    bar.set_postfix(OrderedDict(c["postfix"]), refresh=False)
    postfix = bar.postfix if c["postfix"] else None
    bar.close()
    line = tqdm.format_meter(c["n"], c["total"], c["elapsed"], ncols=c["ncols"], prefix=c["desc"], unit=c["unit"], postfix=postfix)
    out.append({**c, "line": line})
path = Path(__file__).resolve().parent.parent / "test/fixtures/track/tqdm_lines.json"
path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
print(f"wrote {len(out)} cases to {path}")
