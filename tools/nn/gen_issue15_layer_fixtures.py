#!/usr/bin/env python3
"""Writes test/fixtures/nn/layers_issue15.json: the layers added for issue 15 against PyTorch.

    ~/.venvs/peer/bin/python tools/nn/gen_issue15_layer_fixtures.py

Same case format as gen_layer_fixtures.py (det_init weights, hashed inputs, outputs, input and
parameter gradients of sum(out * hash)), plus the state-dict names of ParameterList/ParameterDict.
"""

import torch
import torch.nn as nn

from common import det_init, encode, hash_tensor, write

cases = []


def run_case(name, module_name, config, module, inputs, run=None):
    det_init(module)
    module.train()
    leaves = [hash_tensor(s["shape"], s["hash"]).requires_grad_(True) for s in inputs]
    outs = run(module, *leaves) if run else module(*leaves)
    if isinstance(outs, torch.Tensor):
        outs = [outs]
    outs = [o for o in outs if o is not None]
    loss = sum((o * hash_tensor(list(o.shape), 900 + j)).sum() for j, o in enumerate(outs))
    loss.backward()
    cases.append({
        "name": name, "module": module_name, "config": config,
        "stateDict": [[n, list(t.shape)] for n, t in module.state_dict().items()],
        "inputs": inputs,
        "outputs": [encode(o) for o in outs],
        "inputGrads": [encode(t.grad) for t in leaves],
        "paramGrads": {n: encode(p.grad) for n, p in module.named_parameters() if p.grad is not None},
    })


def f(shape, k):
    return {"hash": k, "shape": shape}


run_case("mha_kdim_vdim_batch_first", "MultiheadAttention", {"embed": 6, "heads": 2, "kdim": 4, "vdim": 5, "batchFirst": True},
         nn.MultiheadAttention(6, 2, kdim=4, vdim=5, batch_first=True), [f([2, 3, 6], 1), f([2, 4, 4], 2), f([2, 4, 5], 3)],
         run=lambda m, q, k, v: m(q, k, v))
run_case("mha_kdim_seq_first_no_bias", "MultiheadAttention", {"embed": 4, "heads": 1, "kdim": 3, "bias": False},
         nn.MultiheadAttention(4, 1, kdim=3, bias=False), [f([3, 2, 4], 4), f([5, 2, 3], 5), f([5, 2, 4], 6)],
         run=lambda m, q, k, v: m(q, k, v, average_attn_weights=False))
run_case("flatten_default", "Flatten", {}, nn.Flatten(), [f([2, 3, 4, 5], 7)])
run_case("flatten_0_2", "Flatten", {"startDim": 0, "endDim": 2}, nn.Flatten(0, 2), [f([2, 3, 4, 5], 8)])
run_case("unflatten", "Unflatten", {"dim": 1, "sizes": [2, -1]}, nn.Unflatten(1, (2, -1)), [f([3, 8, 2], 9)])


class WithParams(nn.Module):
    def __init__(self):
        super().__init__()
        self.plist = nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(3, 1))])
        self.pdict = nn.ParameterDict({"alpha": nn.Parameter(torch.zeros(1)), "beta": nn.Parameter(torch.zeros(2, 2))})


structures = {"WithParams": [[n, list(t.shape)] for n, t in WithParams().state_dict().items()]}
write("layers_issue15.json", {"cases": cases, "structures": structures})
