"""Checks that a full state dict exported from FSDP (fsdp.fullStateDict + serialization.save) loads
into the PyTorch model of the same structure: strict names, shapes and float32 values.

    DIR=/tmp/fsdp PHASE=save npx ringrun --standalone --nproc-per-node 3 test/parallel/workers/fsdp_reshard.ts
    ~/.venvs/peer/bin/python tools/check_fsdp_export.py /tmp/fsdp/at_save.safetensors

The model is test/parallel/workers/fsdp_reshard.ts's Net: Linear(3, 15) -> tanh -> Linear(15, 7) -> tanh -> Linear(7, 3).
"""
import sys

import torch
from safetensors.torch import load_file


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 15)
        self.b = torch.nn.Linear(15, 7)
        self.c = torch.nn.Linear(7, 3)

    def forward(self, x):
        return self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))


def main(path):
    state = load_file(path)
    net = Net()
    net.load_state_dict(state, strict=True)
    for name, t in state.items():
        assert t.dtype == torch.float32, f"{name} is {t.dtype}"
        assert torch.equal(net.state_dict()[name], t), name
    out = net(torch.ones(2, 3))
    assert out.shape == (2, 3) and torch.isfinite(out).all()
    print(f"OK: PyTorch {torch.__version__} loaded {len(state)} tensors from {path} strictly; forward gives {out[0].tolist()}")


if __name__ == "__main__":
    main(sys.argv[1])
