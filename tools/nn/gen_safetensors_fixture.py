#!/usr/bin/python3
"""Writes test/fixtures/nn/torch_written.safetensors and torch_written.json: a small PyTorch state
dict serialised the way Hugging Face's safetensors library serialises it (tensors ordered by
dtype size, largest first, then by name; the header padded with spaces to 8-byte alignment), and
the same tensors as JSON, so that ringtorch's reader is checked against bytes PyTorch produced.

    /usr/bin/python3 tools/nn/gen_safetensors_fixture.py
"""

import json
import os
import struct

import torch
import torch.nn as nn

from common import FIXTURE_DIR, det_init, encode, write

SIZES = {torch.float64: 8, torch.int64: 8, torch.float32: 4, torch.int32: 4, torch.bfloat16: 2, torch.bool: 1}
NAMES = {torch.float64: "F64", torch.int64: "I64", torch.float32: "F32", torch.int32: "I32", torch.bfloat16: "BF16", torch.bool: "BOOL"}


def serialize(tensors, metadata):
    order = sorted(tensors.items(), key=lambda kv: (-SIZES[kv[1].dtype], kv[0]))
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in order:
        raw = t.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if t.numel() > 0 else b""
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


model = det_init(nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3)))
tensors = dict(model.state_dict())
tensors["position_ids"] = torch.arange(6, dtype=torch.int64).unsqueeze(0)
tensors["mask"] = torch.tensor([True, False, True])
tensors["double"] = torch.tensor([1.0 / 3.0, -2.5], dtype=torch.float64)
tensors["bf16"] = torch.tensor([1.0, -0.3333, 65504.0], dtype=torch.bfloat16)
tensors["counts"] = torch.tensor([[1, -2], [3, 2147483647]], dtype=torch.int32)
os.makedirs(FIXTURE_DIR, exist_ok=True)
path = os.path.join(FIXTURE_DIR, "torch_written.safetensors")
with open(path, "wb") as f:
    f.write(serialize(tensors, {"format": "pt"}))
print(f"wrote {path} ({os.path.getsize(path)} bytes)")
write("torch_written.json", {"tensors": {n: encode(t.float() if t.dtype == torch.bfloat16 else t) for n, t in tensors.items()}})
