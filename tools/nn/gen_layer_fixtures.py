#!/usr/bin/python3
"""Writes test/fixtures/nn/layers.json: PyTorch's forward outputs and gradients for ringtorch's
layers, and the state-dict names of a few model structures.

Run from the repository root (Debian's python3-torch imports only with /usr/bin/python3):

    /usr/bin/python3 tools/nn/gen_layer_fixtures.py

Weights and float inputs are not stored: both sides make them with common.det_init and
common.hash_tensor (test/nn/det.ts is the TypeScript twin). A case is
    {"name", "module", "config", "params": [[name, shape]...], "inputs": [I...], "call": {...},
     "outputs": [T...], "inputGrads": [T | null...], "paramGrads": {name: T}}
with I = {"hash": k, "shape": [...]} (float, U(-1, 1)) or an encoded tensor T (indices, masks).
The loss whose gradients are recorded is Σ_j (output_j · hash_tensor(output_j.shape, 900 + j)).sum().
"""

import math

import torch
import torch.nn as nn

from common import GPT, det_init, encode, hash_tensor, write

torch.manual_seed(0)
cases = []


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), 1)


def run_case(name, module_name, config, module, inputs, call=None, run=None):
    det_init(module)
    module.train()
    leaves = []
    for spec in inputs:
        if isinstance(spec, dict):
            t = hash_tensor(spec["shape"], spec["hash"]).requires_grad_(True)
        else:
            t = spec
        leaves.append(t)
    outs = run(module, *leaves) if run else module(*leaves)
    if isinstance(outs, torch.Tensor):
        outs = [outs]
    outs = [o for o in outs if o is not None]
    loss = sum((o * hash_tensor(list(o.shape), 900 + j)).sum() for j, o in enumerate(outs))
    loss.backward()
    cases.append({
        "name": name,
        "module": module_name,
        "config": config,
        "params": [[n, list(p.shape)] for n, p in module.named_parameters()],
        "stateDict": [[n, list(t.shape)] for n, t in module.state_dict().items()],
        "inputs": [spec if isinstance(spec, dict) else encode(spec) for spec in inputs],
        "call": call or {},
        "outputs": [encode(o) for o in outs],
        "inputGrads": [encode(t.grad) if isinstance(spec, dict) else None for spec, t in zip(inputs, leaves)],
        "paramGrads": {n: encode(p.grad) for n, p in module.named_parameters() if p.grad is not None},
    })


def f(shape, k):
    return {"hash": k, "shape": shape}


def layers():
    run_case("linear", "Linear", {"in": 5, "out": 3}, nn.Linear(5, 3), [f([2, 4, 5], 1)])
    run_case("linear_nobias", "Linear", {"in": 5, "out": 3, "bias": False}, nn.Linear(5, 3, bias=False), [f([4, 5], 2)])
    idx = torch.tensor([[1, 2, 3], [1, 5, 9]])
    run_case("embedding_padding", "Embedding", {"num": 10, "dim": 4, "paddingIdx": 1}, nn.Embedding(10, 4, padding_idx=1), [idx])
    run_case("layer_norm", "LayerNorm", {"shape": [6]}, nn.LayerNorm(6), [f([3, 6], 3)])
    run_case("layer_norm_2d", "LayerNorm", {"shape": [2, 3], "eps": 1e-3}, nn.LayerNorm([2, 3], eps=1e-3), [f([2, 2, 3], 4)])
    for name, mod, cfg in [
        ("gelu", nn.GELU(), {}),
        ("gelu_tanh", nn.GELU(approximate="tanh"), {"approximate": "tanh"}),
        ("tanh", nn.Tanh(), {}),
        ("relu", nn.ReLU(), {}),
        ("softmax", nn.Softmax(dim=1), {"dim": 1}),
        ("log_softmax", nn.LogSoftmax(dim=-1), {"dim": -1}),
    ]:
        run_case(name, type(mod).__name__, cfg, mod, [f([3, 5], 5)])
    seq = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    run_case("sequential", "Sequential", {}, seq, [f([3, 4], 6)])


def attention():
    pad = torch.tensor([[False, False, False, False, False], [False, False, False, True, True]])
    run_case(
        "mha_self_causal_padding", "MultiheadAttention", {"embed": 8, "heads": 2, "batchFirst": True},
        nn.MultiheadAttention(8, 2, batch_first=True), [f([2, 5, 8], 10)],
        call={"attnMask": encode(causal(5)), "keyPaddingMask": encode(pad)},
        run=lambda m, x: m(x, x, x, attn_mask=causal(5), key_padding_mask=pad),
    )
    bool_mask = torch.tensor([[False, True, False, False], [False, False, True, True], [True, False, False, False]])
    run_case(
        "mha_cross_seq_first_bool_mask", "MultiheadAttention", {"embed": 8, "heads": 2},
        nn.MultiheadAttention(8, 2), [f([3, 2, 8], 11), f([4, 2, 8], 12)],
        call={"attnMask": encode(bool_mask), "averageAttnWeights": False, "kvSame": True},
        run=lambda m, q, kv: m(q, kv, kv, attn_mask=bool_mask, average_attn_weights=False),
    )
    run_case(
        "mha_distinct_kv", "MultiheadAttention", {"embed": 8, "heads": 4, "batchFirst": True},
        nn.MultiheadAttention(8, 4, batch_first=True), [f([2, 3, 8], 13), f([2, 4, 8], 14), f([2, 4, 8], 15)],
        call={"needWeights": False},
        run=lambda m, q, k, v: m(q, k, v, need_weights=False),
    )


def transformer():
    def enc(**kw):
        return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **kw)

    run_case("encoder_layer_post_relu", "TransformerEncoderLayer", {"d": 8, "heads": 2, "ff": 16, "batchFirst": True},
             enc(), [f([2, 5, 8], 20)], call={"srcMask": encode(causal(5))},
             run=lambda m, x: m(x, src_mask=causal(5)))
    pad = torch.tensor([[False, False, False, False, True], [False, False, False, False, False]])
    run_case("encoder_layer_pre_gelu", "TransformerEncoderLayer",
             {"d": 8, "heads": 2, "ff": 16, "batchFirst": True, "normFirst": True, "activation": "gelu"},
             enc(norm_first=True, activation="gelu"), [f([2, 5, 8], 21)], call={"srcKeyPaddingMask": encode(pad)},
             run=lambda m, x: m(x, src_key_padding_mask=pad))
    mem_pad = torch.tensor([[False, False, False, True, True], [False, False, False, False, False]])
    for norm_first, act, tag in [(False, "relu", "post_relu"), (True, "gelu", "pre_gelu")]:
        layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first, activation=act)
        run_case(f"decoder_layer_{tag}", "TransformerDecoderLayer",
                 {"d": 8, "heads": 2, "ff": 16, "batchFirst": True, "normFirst": norm_first, "activation": act},
                 layer, [f([2, 4, 8], 22), f([2, 5, 8], 23)],
                 call={"tgtMask": encode(causal(4)), "memoryKeyPaddingMask": encode(mem_pad)},
                 run=lambda m, t, mem: m(t, mem, tgt_mask=causal(4), memory_key_padding_mask=mem_pad))
    stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, norm=nn.LayerNorm(8))
    run_case("encoder_stack_seq_first", "TransformerEncoder", {"d": 8, "heads": 2, "ff": 16, "layers": 2, "finalNorm": True},
             stack, [f([5, 2, 8], 24)], call={"mask": encode(causal(5))}, run=lambda m, x: m(x, mask=causal(5)))
    full = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, dropout=0.0, batch_first=True)
    run_case("transformer", "Transformer", {"d": 8, "heads": 2, "ff": 16, "enc": 1, "dec": 1, "batchFirst": True},
             full, [f([2, 5, 8], 25), f([2, 4, 8], 26)], call={"tgtMask": encode(causal(4))},
             run=lambda m, s, t: m(s, t, tgt_mask=causal(4)))


def losses():
    target = torch.tensor([0, 2, 3, 1, 2])
    run_case("cross_entropy_smoothing_ignore", "CrossEntropyLoss", {"ignoreIndex": 2, "labelSmoothing": 0.1},
             nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1), [f([5, 4], 30), target])
    run_case("cross_entropy_sum", "CrossEntropyLoss", {"reduction": "sum"}, nn.CrossEntropyLoss(reduction="sum"), [f([5, 4], 31), target])
    run_case("mse", "MSELoss", {}, nn.MSELoss(), [f([3, 4], 32), hash_tensor([3, 4], 33)])


def structures():
    models = {
        "gpt": GPT(),
        "transformer": nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16),
        "mlp": nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)),
    }
    return {
        name: {
            "stateDict": [[n, list(t.shape)] for n, t in m.state_dict().items()],
            "parameters": [n for n, _ in m.named_parameters()],
            "modules": [n for n, _ in m.named_modules()],
        }
        for name, m in models.items()
    }


def init_statistics():
    """Summary statistics of PyTorch's default initialisations; ringtorch's draws differ but must
    come from the same distributions (same bounds and spread)."""
    def stats(t):
        t = t.detach().double()
        return {"min": float(t.min()), "max": float(t.max()), "mean": float(t.mean()), "std": float(t.std())}

    torch.manual_seed(0)
    lin = nn.Linear(300, 200)
    mha = nn.MultiheadAttention(64, 4)
    emb = nn.Embedding(1000, 64, padding_idx=3)
    ln = nn.LayerNorm(32)
    return {
        "Linear(300,200).weight": stats(lin.weight),
        "Linear(300,200).bias": stats(lin.bias),
        "MultiheadAttention(64,4).in_proj_weight": stats(mha.in_proj_weight),
        "MultiheadAttention(64,4).in_proj_bias": stats(mha.in_proj_bias),
        "MultiheadAttention(64,4).out_proj.weight": stats(mha.out_proj.weight),
        "MultiheadAttention(64,4).out_proj.bias": stats(mha.out_proj.bias),
        "Embedding(1000,64,padding_idx=3).weight": stats(emb.weight),
        "Embedding(1000,64,padding_idx=3).weight[3]": stats(emb.weight[3]),
        "LayerNorm(32).weight": stats(ln.weight),
        "LayerNorm(32).bias": stats(ln.bias),
    }


layers()
attention()
transformer()
losses()
write("layers.json", {"cases": cases, "structures": structures(), "init": init_statistics()})
