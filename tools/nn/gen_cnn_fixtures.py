#!/usr/bin/env python3
"""Writes test/fixtures/nn/cnn_layers.json: convolution, pooling and normalisation layers against PyTorch.

    ~/.venvs/peer/bin/python tools/nn/gen_cnn_fixtures.py

Each case builds a layer from `config` (the keyword arguments, PyTorch's names), sets its
parameters with det_init, runs hashed inputs in training mode and backpropagates
sum(out * hash(900 + j)). It stores the outputs, the input and parameter gradients, and the state
dict's names and shapes. Batch-norm cases then run `steps` more training forwards (inputs hashed
from 50 + step) and one in eval mode, storing the running statistics and the eval output.
"""

import torch
import torch.nn as nn

from common import det_init, encode, hash_tensor, write

cases = []


def run_case(name, module_name, config, inputs, steps=0, eval_input=None):
    ctor = getattr(nn, module_name)
    args = config.get("args", [])
    kwargs = {k: v for k, v in config.items() if k != "args"}
    module = det_init(ctor(*args, **kwargs))
    module.train()
    x = hash_tensor(inputs["shape"], inputs["hash"], scale=inputs.get("scale", 1.0), base=inputs.get("base", 0.0)).requires_grad_(True)
    out = module(x)
    outs = list(out) if isinstance(out, tuple) else [out]
    loss = sum((o * hash_tensor(list(o.shape), 900 + j)).sum() for j, o in enumerate(outs) if o.is_floating_point())
    loss.backward()
    case = {
        "name": name, "module": module_name, "config": config, "input": inputs,
        "stateDict": [[n, list(t.shape)] for n, t in module.state_dict().items()],
        "outputs": [encode(o) for o in outs],
        "inputGrad": encode(x.grad),
        "paramGrads": {n: encode(p.grad) for n, p in module.named_parameters() if p.grad is not None},
    }
    if steps or eval_input:
        with torch.no_grad():
            for s in range(steps):
                module(hash_tensor(inputs["shape"], 50 + s, scale=inputs.get("scale", 1.0), base=inputs.get("base", 0.0)))
            case["steps"] = steps
            case["buffers"] = {n: encode(b) for n, b in module.named_buffers()}
            if eval_input:
                module.eval()
                case["evalInput"] = eval_input
                case["evalOutput"] = encode(module(hash_tensor(eval_input["shape"], eval_input["hash"])))
    cases.append(case)


def i(shape, k, **kw):
    return {"shape": shape, "hash": k, **kw}


# Conv2d: odd sizes, strides, padding (numbers, pairs, "same", "valid", modes), dilation and groups.
run_case("conv2d_basic", "Conv2d", {"args": [3, 4, 3]}, i([2, 3, 7, 6], 1))
run_case("conv2d_stride_pad", "Conv2d", {"args": [3, 6, [3, 2]], "stride": [2, 1], "padding": [1, 2]}, i([2, 3, 9, 8], 2))
run_case("conv2d_dilation_groups", "Conv2d", {"args": [4, 6, 3], "dilation": [2, 1], "groups": 2, "padding": 2}, i([1, 4, 8, 7], 3))
run_case("conv2d_same_even_kernel", "Conv2d", {"args": [2, 3, 4], "padding": "same", "bias": False}, i([2, 2, 5, 6], 4))
run_case("conv2d_same_dilated", "Conv2d", {"args": [2, 2, 3], "padding": "same", "dilation": 2}, i([1, 2, 6, 5], 5))
run_case("conv2d_valid_stride3", "Conv2d", {"args": [3, 2, [2, 3]], "stride": 3, "padding": "valid"}, i([2, 3, 10, 11], 6))
run_case("conv2d_depthwise", "Conv2d", {"args": [4, 8, 3], "groups": 4, "padding": 1}, i([2, 4, 5, 5], 7))
run_case("conv2d_pointwise", "Conv2d", {"args": [5, 3, 1]}, i([2, 5, 4, 3], 8))
run_case("conv2d_large_pad_stride", "Conv2d", {"args": [2, 3, 2], "stride": [3, 2], "padding": [3, 1]}, i([2, 2, 4, 5], 9))
run_case("conv2d_reflect", "Conv2d", {"args": [2, 3, 3], "padding": 1, "padding_mode": "reflect"}, i([1, 2, 5, 6], 10))
run_case("conv2d_circular", "Conv2d", {"args": [2, 3, 3], "padding": [2, 1], "padding_mode": "circular"}, i([1, 2, 5, 6], 11))
run_case("conv2d_replicate_same", "Conv2d", {"args": [2, 2, [2, 3]], "padding": "same", "padding_mode": "replicate"}, i([2, 2, 4, 5], 12))
run_case("conv2d_unbatched", "Conv2d", {"args": [3, 2, 3], "padding": 1}, i([3, 6, 6], 13))
run_case("conv1d_basic", "Conv1d", {"args": [3, 4, 3]}, i([2, 3, 10], 14))
run_case("conv1d_stride_pad_dilation_groups", "Conv1d", {"args": [4, 6, 3], "stride": 2, "padding": 3, "dilation": 2, "groups": 2}, i([2, 4, 11], 15))
run_case("conv1d_same_even", "Conv1d", {"args": [2, 2, 4], "padding": "same"}, i([1, 2, 7], 16))
run_case("conv1d_unbatched_reflect", "Conv1d", {"args": [2, 3, 3], "padding": 2, "padding_mode": "reflect"}, i([2, 9], 17))

# Pooling.
run_case("maxpool_2", "MaxPool2d", {"args": [2]}, i([2, 3, 6, 7], 20))
run_case("maxpool_3_s2_p1", "MaxPool2d", {"args": [3], "stride": 2, "padding": 1}, i([1, 2, 7, 7], 21))
run_case("maxpool_ceil_dilation", "MaxPool2d", {"args": [[3, 2]], "stride": [2, 1], "dilation": [1, 2], "ceil_mode": True}, i([1, 2, 8, 7], 22))
run_case("maxpool_indices", "MaxPool2d", {"args": [2], "stride": 1, "return_indices": True}, i([1, 2, 4, 5], 23))
run_case("maxpool_unbatched_ceil", "MaxPool2d", {"args": [2], "ceil_mode": True}, i([3, 5, 5], 24))
run_case("avgpool_2", "AvgPool2d", {"args": [2]}, i([2, 3, 6, 7], 25))
run_case("avgpool_3_s2_p1", "AvgPool2d", {"args": [3], "stride": 2, "padding": 1}, i([1, 2, 7, 6], 26))
run_case("avgpool_exclude_pad_ceil", "AvgPool2d", {"args": [3], "stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}, i([1, 2, 8, 6], 27))
run_case("avgpool_ceil_include_pad", "AvgPool2d", {"args": [[2, 3]], "stride": [2, 2], "padding": [1, 1], "ceil_mode": True}, i([2, 1, 6, 6], 28))
run_case("avgpool_divisor", "AvgPool2d", {"args": [2], "divisor_override": 3}, i([1, 2, 5, 4], 29))
run_case("adaptive_avg_3x4", "AdaptiveAvgPool2d", {"args": [[3, 4]]}, i([2, 3, 7, 9], 30))
run_case("adaptive_avg_global", "AdaptiveAvgPool2d", {"args": [1]}, i([2, 3, 5, 4], 31))
run_case("adaptive_avg_none", "AdaptiveAvgPool2d", {"args": [[None, 2]]}, i([1, 2, 3, 5], 32))
run_case("adaptive_avg_upsample", "AdaptiveAvgPool2d", {"args": [[5, 3]]}, i([1, 1, 3, 2], 33))

# Normalisation: batch statistics, running statistics after more steps, eval mode.
run_case("batchnorm2d", "BatchNorm2d", {"args": [3]}, i([4, 3, 5, 5], 40, scale=2.0, base=1.5), steps=2, eval_input=i([2, 3, 3, 4], 41))
run_case("batchnorm2d_cumulative", "BatchNorm2d", {"args": [3], "momentum": None, "eps": 1e-3}, i([3, 3, 4, 2], 42, base=-0.5), steps=3, eval_input=i([2, 3, 2, 2], 43))
run_case("batchnorm2d_no_affine_no_tracking", "BatchNorm2d", {"args": [2], "affine": False, "track_running_stats": False}, i([3, 2, 3, 3], 44), eval_input=i([2, 2, 3, 3], 45))
run_case("batchnorm1d_2d_input", "BatchNorm1d", {"args": [4], "momentum": 0.3}, i([6, 4], 46, base=2.0), steps=1, eval_input=i([3, 4], 47))
run_case("batchnorm1d_3d_input", "BatchNorm1d", {"args": [3]}, i([2, 3, 5], 48), steps=1, eval_input=i([2, 3, 4], 49))
run_case("groupnorm", "GroupNorm", {"args": [2, 6]}, i([2, 6, 4, 3], 60))
run_case("groupnorm_no_affine", "GroupNorm", {"args": [3, 3], "affine": False, "eps": 1e-3}, i([3, 3, 5], 61, base=1.0))
run_case("groupnorm_one_group", "GroupNorm", {"args": [1, 4]}, i([3, 4, 2, 2, 2], 62))

write("cnn_layers.json", {"cases": cases})
