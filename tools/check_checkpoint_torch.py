#!/usr/bin/python3
"""Loads a ringtorch checkpoint's model into the same model built in PyTorch, strictly, and checks
that it computes what ringtorch computed on the probe inputs.

    /usr/bin/python3 tools/check_checkpoint_torch.py CHECKPOINT_STEP_DIR PROBE_JSON

PROBE_JSON: {"layers": [[in, out], ...], "x": [[...]], "y": [[...]]} for a Sequential of Linear
layers with ReLU between them. Run by test/checkpoint/torch_interop.test.ts where python3-torch is
installed (Debian's: /usr/bin/python3).
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn"))
import torch  # noqa: E402
from check_safetensors import read  # noqa: E402


def main(step_dir, probe_path):
    with open(probe_path) as f:
        probe = json.load(f)
    layers = []
    for i, (n_in, n_out) in enumerate(probe["layers"]):
        if i > 0:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(n_in, n_out))
    model = torch.nn.Sequential(*layers)
    tensors, _, how = read(os.path.join(step_dir, "model.safetensors"))
    model.load_state_dict(tensors, strict=True)
    with torch.no_grad():
        got = model(torch.tensor(probe["x"], dtype=torch.float32))
    want = torch.tensor(probe["y"], dtype=torch.float32)
    err = (got - want).abs().max().item()
    if err > 1e-5:
        print(f"MISMATCH: PyTorch's output differs from ringtorch's by {err}")
        return 1
    print(f"OK: {len(tensors)} tensors loaded strictly into torch.nn.Sequential via {how}; outputs agree within {err:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
