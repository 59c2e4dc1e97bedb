#!/usr/bin/python3
"""Reads safetensors files written by ringtorch with PyTorch, and checks that they hold a model
PyTorch can load strictly and that computes what ringtorch computed.

    node --import tsx --conditions=source tools/nn/write_safetensors_check.ts /tmp/gpt.safetensors
    /usr/bin/python3 tools/nn/check_safetensors.py /tmp/gpt.safetensors

Uses Hugging Face's `safetensors` package when it is installed; otherwise (Debian has no
python3-safetensors) a reader written here from the format's specification, with torch.frombuffer.
"""

import json
import struct
import sys

import torch

from common import GPT

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "BF16": torch.bfloat16, "BOOL": torch.bool, "I64": torch.int64}


def read_spec(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    assert (8 + n) % 8 == 0, "data section is not 8-byte aligned"
    base = 8 + n
    meta = header.pop("__metadata__", {})
    out = {}
    covered = 0
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        begin, end = e["data_offsets"]
        assert begin == covered, f"{name}: gap or overlap at {begin} (expected {covered})"
        covered = end
        dtype = DTYPES[e["dtype"]]
        t = torch.frombuffer(bytearray(data[base + begin:base + end]), dtype=dtype) if end > begin else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(e["shape"])
    assert base + covered == len(data), "bytes left over after the last tensor"
    return out, meta


def read(path):
    try:
        from safetensors.torch import load_file
        from safetensors import safe_open
        with safe_open(path, "pt") as f:
            meta = f.metadata() or {}
        return load_file(path), meta, "safetensors library"
    except ImportError:
        tensors, meta = read_spec(path)
        return tensors, meta, "spec reader (safetensors library not installed)"


def main(path):
    tensors, meta, how = read(path)
    model = GPT()
    model.load_state_dict(tensors, strict=True)
    expected, _, _ = read(path[: -len(".safetensors")] + ".expected.safetensors")
    with torch.no_grad():
        logits = model(expected["input"].long())
    diff = (logits - expected["logits"]).abs().max().item()
    print(f"read with the {how}; metadata {meta}; {len(tensors)} tensors loaded strictly into PyTorch's GPT; "
          f"max |logits - ringtorch's| = {diff:.3g}")
    if diff > 1e-4:
        sys.exit("FAILED: PyTorch computes different logits from ringtorch's weights")
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1])
