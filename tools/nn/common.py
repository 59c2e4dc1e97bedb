"""Shared by the fixture generators in tools/nn: deterministic values that TypeScript reproduces
bit for bit (test/nn/det.ts), so fixtures need not store weights or inputs, and the JSON encoding.

hash_uniform(n, k) is a 32-bit integer hash of (i, k) mapped to [0, 1); both sides compute it in
exact integer arithmetic and the same float64 formula, then round to float32.
"""

import json
import math
import os

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FIXTURE_DIR = os.path.join(ROOT, "test", "fixtures", "nn")
M32 = 0xFFFFFFFF


def hash_uniform(n, k):
    i = np.arange(n, dtype=np.uint64)
    x = (i * np.uint64(0x9E3779B1) + np.uint64((k * 0x85EBCA77) & M32) + np.uint64(0x165667B1)) & np.uint64(M32)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x2C1B3C6D)) & np.uint64(M32)
    x ^= x >> np.uint64(12)
    x = (x * np.uint64(0x297A2D39)) & np.uint64(M32)
    x ^= x >> np.uint64(15)
    return x.astype(np.float64) / 2.0**32


def hash_tensor(shape, k, scale=1.0, base=0.0, dtype=torch.float32):
    """base + scale * U(-1, 1) from the hash, rounded to dtype."""
    n = int(np.prod(shape)) if len(shape) > 0 else 1
    v = base + scale * (2.0 * hash_uniform(n, k) - 1.0)
    return torch.tensor(v, dtype=torch.float64).reshape(shape).to(dtype)


def hash_labels(shape, k, classes):
    n = int(np.prod(shape))
    return torch.tensor(np.floor(hash_uniform(n, k) * classes).astype(np.int64)).reshape(shape)


def det_param(name, shape, k):
    """The deterministic value of the k-th parameter (named_parameters order)."""
    if len(shape) >= 2:
        return hash_tensor(shape, k, scale=1.0 / math.sqrt(shape[-1]))
    base = 1.0 if name.endswith("weight") else 0.0
    return hash_tensor(shape, k, scale=0.1, base=base)


def det_init(module, salt=0):
    with torch.no_grad():
        for k, (name, p) in enumerate(module.named_parameters()):
            p.copy_(det_param(name, list(p.shape), k + salt))
    return module


class GPT(torch.nn.Module):
    """The structure of ../shared/peers/torch/gpt.py, at small sizes by default."""

    def __init__(s, V=50, D=16, H=2, L=2, T=8):
        super().__init__()
        nn = torch.nn
        s.tok = nn.Embedding(V, D)
        s.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        s.blocks = nn.TransformerEncoder(layer, L)
        s.ln = nn.LayerNorm(D)
        s.head = nn.Linear(D, V, bias=False)
        s.register_buffer("mask", torch.triu(torch.full((T, T), float("-inf")), 1))

    def forward(s, idx):
        x = s.tok(idx) + s.pos(torch.arange(idx.shape[1]))
        return s.head(s.ln(s.blocks(x, mask=s.mask)))


def number(v, dtype):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if dtype == torch.float32:
        return float(str(np.float32(v)))  # the shortest repr that round-trips (str, as numpy 2 repr adds the type)
    return float(repr(float(v)))


DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int32", torch.int32: "int32", torch.bool: "bool"}


def encode(t):
    t = t.detach()
    return {"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape), "data": [number(v, t.dtype) for v in t.reshape(-1).tolist()]}


def write(name, payload):
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    path = os.path.join(FIXTURE_DIR, name)
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, **payload}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")
