#!/usr/bin/python3
"""Writes test/fixtures/ops/<op>.json: small inputs, PyTorch's outputs, and the input gradients
for a fixed upstream gradient, so that ringtorch's tests can check its ops without Python.

Run from the repository root (Debian's python3-torch imports only with /usr/bin/python3):

    /usr/bin/python3 tools/gen_op_fixtures.py

Each file is {"op", "torch", "cases": [...]}; a case is
    {"name", "call", "params", "inputs": {name: T}, "outputs": [T], "upstream": [T | null],
     "grads": {name: T | null}}
with T = {"dtype", "shape", "data"} (data flat, row-major). dtypes use ringtorch's names: index
tensors are int64 in PyTorch but "int32" here. Non-finite floats are the strings "Infinity",
"-Infinity" and "NaN". `call` is the PyTorch expression, for a reader; `params` its non-tensor
arguments. Inputs are rounded to two decimals so that the file states them exactly, and outputs
are written with the fewest digits that read back to the same float32 (or float64).
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn"))
from common import number  # noqa: E402  (one JSON encoding of numbers for every fixture)

SEED = 1234
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "ops")

gen = torch.Generator().manual_seed(SEED)
fixtures = {}

DTYPE_NAMES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int64: "int32",
    torch.int32: "int32",
    torch.bool: "bool",
}


def randn(*shape, dtype=torch.float32, scale=1.0):
    """Gaussian values rounded to two decimals (never exactly 0, so no op sits on a kink)."""
    x = torch.randn(shape, generator=gen, dtype=torch.float64) * scale
    x = torch.round(x * 100) / 100
    x = torch.where(x == 0, torch.full_like(x, 0.01), x)
    return x.to(dtype)


def uniform(lo, hi, *shape, dtype=torch.float32):
    x = lo + (hi - lo) * torch.rand(shape, generator=gen, dtype=torch.float64)
    return (torch.round(x * 100) / 100).to(dtype)


def randint(lo, hi, *shape):
    return torch.randint(lo, hi, shape, generator=gen)


def encode(t):
    t = t.detach()
    values = t.reshape(-1).tolist()
    return {
        "dtype": DTYPE_NAMES[t.dtype],
        "shape": list(t.shape),
        "data": [number(v, t.dtype) for v in values],
    }


def flatten_outputs(result):
    if isinstance(result, torch.Tensor):
        return [result]
    return [r for r in result]


def case(op, name, call, fn, inputs, params=None, grad=True):
    """Runs fn(**inputs, **params) and records outputs and, for float inputs, their gradients
    under an upstream gradient drawn from the seeded generator."""
    params = params or {}
    leaves = {}
    for key, value in inputs.items():
        t = value.detach().clone()
        if grad and t.is_floating_point():
            t.requires_grad_(True)
        leaves[key] = t
    outputs = flatten_outputs(fn(**leaves, **params))
    entry = {
        "name": name,
        "call": call,
        "params": {k: (number(v, torch.float64) if isinstance(v, float) else v) for k, v in params.items()},
        "inputs": {k: encode(v) for k, v in leaves.items()},
        "outputs": [encode(o) for o in outputs],
    }
    differentiable = [o for o in outputs if o.requires_grad]
    wants = [v for v in leaves.values() if v.requires_grad]
    if grad and differentiable and wants:
        upstream = [randn(*o.shape, dtype=o.dtype) if o.requires_grad else None for o in outputs]
        grads = torch.autograd.grad(
            [o for o in outputs if o.requires_grad],
            wants,
            [u for u in upstream if u is not None],
            allow_unused=True,
        )
        by_name = dict(zip([k for k, v in leaves.items() if v.requires_grad], grads))
        entry["upstream"] = [encode(u) if u is not None else None for u in upstream]
        entry["grads"] = {
            k: (encode(by_name[k]) if k in by_name and by_name[k] is not None else None) for k in leaves
        }
    fixtures.setdefault(op, []).append(entry)


def binary_ops():
    f64 = torch.float64
    for op, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)]:
        denominator = (lambda *s, dtype=torch.float32: uniform(0.5, 2.0, *s, dtype=dtype)) if op == "div" else randn
        call = f"torch.{op}(a, b)"
        case(op, "same_shape", call, lambda a, b: fn(a, b), {"a": randn(2, 3), "b": denominator(2, 3)})
        case(op, "broadcast_col_row", call, lambda a, b: fn(a, b), {"a": randn(3, 1), "b": denominator(1, 4)})
        case(op, "broadcast_trailing", call, lambda a, b: fn(a, b), {"a": randn(2, 3, 4), "b": denominator(4)})
        case(op, "broadcast_middle", call, lambda a, b: fn(a, b), {"a": randn(2, 1, 3), "b": denominator(4, 1)})
        case(op, "zero_dim_other", call, lambda a, b: fn(a, b), {"a": randn(2, 3), "b": denominator()})
        case(op, "float64", call, lambda a, b: fn(a, b), {"a": randn(5, dtype=f64), "b": denominator(5, dtype=f64)})
        case(op, "scalar_other", f"torch.{op}(a, other)", lambda a, other: fn(a, other), {"a": randn(2, 3)}, {"other": 1.5})
        if op in ("add", "sub"):
            case(op, "alpha", f"torch.{op}(a, b, alpha=2.5)", lambda a, b, alpha: fn(a, b, alpha=alpha),
                 {"a": randn(2, 3), "b": randn(3)}, {"alpha": 2.5})
    case("div", "scalar_self", "torch.div(self, b)", lambda b, self: torch.div(self, b),
         {"b": uniform(0.5, 2.0, 2, 3)}, {"self": 3.0})
    case("div", "by_zero", "torch.div(a, b)", lambda a, b: torch.div(a, b),
         {"a": torch.tensor([1.0, -1.0, 0.0]), "b": torch.tensor([0.0, 0.0, 0.0])}, grad=False)

    pos = lambda *s, dtype=torch.float32: uniform(0.5, 2.0, *s, dtype=dtype)
    case("pow", "tensor_exponent", "torch.pow(a, b)", lambda a, b: torch.pow(a, b), {"a": pos(2, 3), "b": randn(2, 3)})
    case("pow", "tensor_exponent_broadcast", "torch.pow(a, b)", lambda a, b: torch.pow(a, b), {"a": pos(3, 1), "b": randn(4)})
    case("pow", "tensor_exponent_float64", "torch.pow(a, b)", lambda a, b: torch.pow(a, b),
         {"a": pos(5, dtype=f64), "b": randn(5, dtype=f64)})
    for exponent in (2, 3, 0.5, -1.5, 0):
        base = randn(2, 3) if exponent in (2, 3, 0) else pos(2, 3)
        case("pow", f"scalar_exponent_{exponent}".replace(".", "_").replace("-", "neg"), "torch.pow(a, exponent)",
             lambda a, exponent: torch.pow(a, exponent), {"a": base}, {"exponent": exponent})
    case("pow", "scalar_exponent_float64", "torch.pow(a, exponent)", lambda a, exponent: torch.pow(a, exponent),
         {"a": pos(5, dtype=f64)}, {"exponent": 2.5})
    case("pow", "scalar_base", "torch.pow(self, b)", lambda b, self: torch.pow(self, b), {"b": randn(2, 3)}, {"self": 2.0})
    case("pow", "zero_base_edges", "torch.pow(a, exponent)", lambda a, exponent: torch.pow(a, exponent),
         {"a": torch.tensor([0.0, 0.0, 2.0])}, {"exponent": 2})


def unary_ops():
    f64 = torch.float64
    pos = lambda *s, dtype=torch.float32: uniform(0.2, 3.0, *s, dtype=dtype)
    table = [
        ("neg", torch.neg, randn),
        ("sqrt", torch.sqrt, pos),
        ("rsqrt", torch.rsqrt, pos),
        ("exp", torch.exp, randn),
        ("log", torch.log, pos),
        ("abs", torch.abs, randn),
        ("tanh", torch.tanh, randn),
        ("sigmoid", torch.sigmoid, randn),
        ("relu", torch.relu, randn),
        ("silu", F.silu, randn),
    ]
    for op, fn, make in table:
        call = f"torch.{op}(x)" if op != "silu" else "F.silu(x)"
        case(op, "float32", call, lambda x: fn(x), {"x": make(3, 4, dtype=torch.float32)})
        case(op, "float64", call, lambda x: fn(x), {"x": make(6, dtype=f64)})
        case(op, "zero_dim", call, lambda x: fn(x), {"x": make(dtype=torch.float32)})
    case("abs", "at_zero", "torch.abs(x)", lambda x: torch.abs(x), {"x": torch.tensor([0.0, -2.0, 3.0])})
    case("relu", "at_zero", "torch.relu(x)", lambda x: torch.relu(x), {"x": torch.tensor([0.0, -2.0, 3.0])})
    case("sqrt", "edges", "torch.sqrt(x)", lambda x: torch.sqrt(x), {"x": torch.tensor([0.0, -1.0, 4.0])}, grad=False)
    case("log", "edges", "torch.log(x)", lambda x: torch.log(x), {"x": torch.tensor([0.0, -1.0, 1.0])}, grad=False)
    case("exp", "large", "torch.exp(x)", lambda x: torch.exp(x), {"x": torch.tensor([-100.0, 88.0, 89.0])}, grad=False)
    case("sigmoid", "large", "torch.sigmoid(x)", lambda x: torch.sigmoid(x), {"x": torch.tensor([-100.0, 0.0, 100.0])})

    for approximate in ("none", "tanh"):
        call = f"F.gelu(x, approximate='{approximate}')"
        gelu = lambda x, approximate: F.gelu(x, approximate=approximate)
        case("gelu", f"{approximate}_float32", call, gelu, {"x": randn(3, 4, scale=2.0)}, {"approximate": approximate})
        case("gelu", f"{approximate}_float64", call, gelu, {"x": randn(6, dtype=f64, scale=2.0)}, {"approximate": approximate})

    clamp = lambda x, min, max: torch.clamp(x, min=min, max=max)
    case("clamp", "both", "torch.clamp(x, min=-0.5, max=0.5)", clamp, {"x": randn(3, 4)}, {"min": -0.5, "max": 0.5})
    case("clamp", "min_only", "torch.clamp(x, min=0.1)", clamp, {"x": randn(3, 4)}, {"min": 0.1, "max": None})
    case("clamp", "max_only", "torch.clamp(x, max=0.2)", clamp, {"x": randn(3, 4)}, {"min": None, "max": 0.2})
    case("clamp", "float64", "torch.clamp(x, min=-1, max=1)", clamp, {"x": randn(6, dtype=f64, scale=1.5)}, {"min": -1.0, "max": 1.0})
    case("clamp", "at_bounds", "torch.clamp(x, min=-1, max=1)", clamp,
         {"x": torch.tensor([-1.0, 1.0, -1.5, 1.5, 0.0])}, {"min": -1.0, "max": 1.0})
    case("clamp", "min_above_max", "torch.clamp(x, min=1, max=-1)", clamp,
         {"x": torch.tensor([-2.0, 0.0, 2.0])}, {"min": 1.0, "max": -1.0})


def reductions():
    f64 = torch.float64
    for op in ("sum", "mean"):
        fn = getattr(torch, op)
        case(op, "all", f"torch.{op}(x)", lambda x: fn(x), {"x": randn(3, 4)})
        case(op, "dim1", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim), {"x": randn(3, 4)}, {"dim": 1})
        case(op, "dim0_keepdim", f"torch.{op}(x, dim=0, keepdim=True)", lambda x, dim, keepdim: fn(x, dim=dim, keepdim=keepdim),
             {"x": randn(3, 4)}, {"dim": 0, "keepdim": True})
        case(op, "dims_tuple", f"torch.{op}(x, dim=(0, 2))", lambda x, dim: fn(x, dim=dim), {"x": randn(2, 3, 4)}, {"dim": [0, 2]})
        case(op, "negative_dim_keepdim", f"torch.{op}(x, dim=-1, keepdim=True)", lambda x, dim, keepdim: fn(x, dim=dim, keepdim=keepdim),
             {"x": randn(2, 3, 4)}, {"dim": -1, "keepdim": True})
        case(op, "float64", f"torch.{op}(x, dim=0)", lambda x, dim: fn(x, dim=dim), {"x": randn(4, 3, dtype=f64)}, {"dim": 0})
    case("sum", "empty", "torch.sum(x, dim=0)", lambda x, dim: torch.sum(x, dim=dim), {"x": torch.zeros(0, 3)}, {"dim": 0}, grad=False)

    var = lambda x, dim, correction, keepdim: torch.var(x, dim=dim, correction=correction, keepdim=keepdim)
    case("var", "all_unbiased", "torch.var(x)", lambda x: torch.var(x), {"x": randn(3, 4)})
    case("var", "all_biased", "torch.var(x, unbiased=False)", lambda x, unbiased: torch.var(x, unbiased=unbiased),
         {"x": randn(3, 4)}, {"unbiased": False})
    case("var", "dim1", "torch.var(x, dim=1, correction=1)", var, {"x": randn(3, 4)}, {"dim": 1, "correction": 1, "keepdim": False})
    case("var", "dim0_correction0_keepdim", "torch.var(x, dim=0, correction=0, keepdim=True)", var,
         {"x": randn(3, 4)}, {"dim": 0, "correction": 0, "keepdim": True})
    case("var", "dims_correction2", "torch.var(x, dim=(1, 2), correction=2)", var,
         {"x": randn(2, 3, 4)}, {"dim": [1, 2], "correction": 2, "keepdim": False})
    case("var", "float64", "torch.var(x, dim=-1, correction=1)", var, {"x": randn(3, 5, dtype=f64)}, {"dim": -1, "correction": 1, "keepdim": False})
    case("var", "single_element_unbiased", "torch.var(x, dim=1)", lambda x, dim: torch.var(x, dim=dim),
         {"x": randn(3, 1)}, {"dim": 1}, grad=False)

    for op in ("max", "min"):
        fn = getattr(torch, op)
        case(op, "all", f"torch.{op}(x)", lambda x: fn(x), {"x": randn(3, 4)})
        case(op, "dim1", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim), {"x": randn(3, 4)}, {"dim": 1})
        case(op, "dim0_keepdim", f"torch.{op}(x, dim=0, keepdim=True)", lambda x, dim, keepdim: fn(x, dim=dim, keepdim=keepdim),
             {"x": randn(3, 4)}, {"dim": 0, "keepdim": True})
        case(op, "negative_dim_3d", f"torch.{op}(x, dim=-2)", lambda x, dim: fn(x, dim=dim), {"x": randn(2, 3, 4)}, {"dim": -2})
        case(op, "float64", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim), {"x": randn(2, 5, dtype=f64)}, {"dim": 1})
        # Ties: max(dim) sends the gradient to the first index; a full max() splits it evenly.
        ties = torch.tensor([[1.0, 3.0, 3.0], [-2.0, -2.0, -5.0]]) * (1 if op == "max" else -1)
        case(op, "ties_dim", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim), {"x": ties}, {"dim": 1})
        case(op, "ties_all", f"torch.{op}(x)", lambda x: fn(x), {"x": torch.tensor([2.0, 5.0, 5.0, 1.0]) * (1 if op == "max" else -1)})
        case(op, "nan", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim),
             {"x": torch.tensor([[1.0, float("nan"), 2.0, float("nan")], [4.0, 3.0, 2.0, 1.0]])}, {"dim": 1}, grad=False)

    case("argmax", "all", "torch.argmax(x)", lambda x: torch.argmax(x), {"x": randn(3, 4)}, grad=False)
    case("argmax", "dim1", "torch.argmax(x, dim=1)", lambda x, dim: torch.argmax(x, dim=dim), {"x": randn(3, 4)}, {"dim": 1}, grad=False)
    case("argmax", "dim0_keepdim", "torch.argmax(x, dim=0, keepdim=True)", lambda x, dim, keepdim: torch.argmax(x, dim=dim, keepdim=keepdim),
         {"x": randn(3, 4)}, {"dim": 0, "keepdim": True}, grad=False)
    case("argmax", "ties", "torch.argmax(x, dim=1)", lambda x, dim: torch.argmax(x, dim=dim),
         {"x": torch.tensor([[1.0, 3.0, 3.0], [7.0, 7.0, 7.0]])}, {"dim": 1}, grad=False)


def linear_algebra():
    f64 = torch.float64
    mm = lambda a, b: torch.matmul(a, b)
    shapes = [
        ("dot_1d_1d", (4,), (4,)),
        ("matrix_vector", (3, 4), (4,)),
        ("vector_matrix", (4,), (4, 3)),
        ("matrix_matrix", (2, 4), (4, 3)),
        ("batched_3d_3d", (2, 3, 4), (2, 4, 2)),
        ("batched_3d_2d", (2, 3, 4), (4, 2)),
        ("batched_2d_3d", (3, 4), (2, 4, 2)),
        ("vector_batched", (4,), (2, 4, 3)),
        ("batched_vector", (2, 3, 4), (4,)),
        ("broadcast_4d_3d", (2, 1, 3, 4), (3, 4, 2)),
    ]
    for name, sa, sb in shapes:
        case("matmul", name, "torch.matmul(a, b)", mm, {"a": randn(*sa), "b": randn(*sb)})
    case("matmul", "float64", "torch.matmul(a, b)", mm, {"a": randn(3, 5, dtype=f64), "b": randn(5, 2, dtype=f64)})

    lin = lambda x, weight, bias: F.linear(x, weight, bias)
    case("linear", "with_bias", "F.linear(x, weight, bias)", lin, {"x": randn(2, 3), "weight": randn(4, 3), "bias": randn(4)})
    case("linear", "batched_no_bias", "F.linear(x, weight)", lambda x, weight: F.linear(x, weight),
         {"x": randn(2, 5, 3), "weight": randn(4, 3)})
    case("linear", "vector_input", "F.linear(x, weight, bias)", lin, {"x": randn(3), "weight": randn(2, 3), "bias": randn(2)})
    case("linear", "float64", "F.linear(x, weight, bias)", lin,
         {"x": randn(3, 4, dtype=f64), "weight": randn(2, 4, dtype=f64), "bias": randn(2, dtype=f64)})


def softmax_and_norm():
    f64 = torch.float64
    for op, fn in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
        call = f"F.{op}(x, dim=%d)"
        sm = lambda x, dim: fn(x, dim=dim)
        case(op, "last_dim", call % -1, sm, {"x": randn(3, 5, scale=2.0)}, {"dim": -1})
        case(op, "dim0", call % 0, sm, {"x": randn(3, 4)}, {"dim": 0})
        case(op, "middle_dim_3d", call % 1, sm, {"x": randn(2, 3, 4)}, {"dim": 1})
        case(op, "float64", call % -1, sm, {"x": randn(2, 6, dtype=f64, scale=3.0)}, {"dim": -1})
        case(op, "large_values", call % -1, sm, {"x": torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])}, {"dim": -1})

    ln = lambda x, weight, bias, normalized_shape, eps: F.layer_norm(x, normalized_shape, weight, bias, eps)
    case("layer_norm", "last_dim_affine", "F.layer_norm(x, [5], weight, bias, eps=1e-5)", ln,
         {"x": randn(3, 5), "weight": randn(5), "bias": randn(5)}, {"normalized_shape": [5], "eps": 1e-5})
    case("layer_norm", "last_two_dims_affine", "F.layer_norm(x, [3, 4], weight, bias, eps=1e-5)", ln,
         {"x": randn(2, 3, 4), "weight": randn(3, 4), "bias": randn(3, 4)}, {"normalized_shape": [3, 4], "eps": 1e-5})
    case("layer_norm", "no_affine", "F.layer_norm(x, [4], eps=1e-5)",
         lambda x, normalized_shape, eps: F.layer_norm(x, normalized_shape, eps=eps),
         {"x": randn(2, 3, 4)}, {"normalized_shape": [4], "eps": 1e-5})
    case("layer_norm", "large_eps_float64", "F.layer_norm(x, [6], weight, bias, eps=0.1)", ln,
         {"x": randn(2, 6, dtype=f64), "weight": randn(6, dtype=f64), "bias": randn(6, dtype=f64)},
         {"normalized_shape": [6], "eps": 0.1})


def indexing():
    f64 = torch.float64
    emb = lambda weight, indices, padding_idx: F.embedding(indices, weight, padding_idx=padding_idx)
    case("embedding", "plain_repeated", "F.embedding(indices, weight)", lambda weight, indices: F.embedding(indices, weight),
         {"weight": randn(6, 3), "indices": torch.tensor([[0, 2, 2, 5], [1, 0, 4, 2]])})
    case("embedding", "padding_idx", "F.embedding(indices, weight, padding_idx=1)", emb,
         {"weight": randn(5, 4), "indices": torch.tensor([[1, 3, 1], [0, 1, 3]])}, {"padding_idx": 1})
    case("embedding", "negative_padding_idx", "F.embedding(indices, weight, padding_idx=-1)", emb,
         {"weight": randn(4, 2), "indices": torch.tensor([3, 0, 3, 2])}, {"padding_idx": -1})
    case("embedding", "float64_1d", "F.embedding(indices, weight)", lambda weight, indices: F.embedding(indices, weight),
         {"weight": randn(4, 3, dtype=f64), "indices": torch.tensor([2, 2, 0])})

    sel = lambda x, index, dim: torch.index_select(x, dim, index)
    case("index_select", "dim0", "torch.index_select(x, 0, index)", sel, {"x": randn(4, 3), "index": torch.tensor([3, 0, 3])}, {"dim": 0})
    case("index_select", "dim1", "torch.index_select(x, 1, index)", sel, {"x": randn(2, 4, 3), "index": torch.tensor([2, 1])}, {"dim": 1})
    case("index_select", "negative_dim", "torch.index_select(x, -1, index)", sel,
         {"x": randn(2, 5), "index": torch.tensor([4, 4, 0, 1])}, {"dim": -1})
    case("index_select", "float64", "torch.index_select(x, 0, index)", sel,
         {"x": randn(3, 2, dtype=f64), "index": torch.tensor([1, 1])}, {"dim": 0})

    gat = lambda x, index, dim: torch.gather(x, dim, index)
    case("gather", "dim0", "torch.gather(x, 0, index)", gat,
         {"x": randn(3, 4), "index": torch.tensor([[2, 0, 1, 1], [0, 0, 2, 1]])}, {"dim": 0})
    case("gather", "dim1_narrower", "torch.gather(x, 1, index)", gat,
         {"x": randn(3, 4), "index": torch.tensor([[3, 3], [0, 1], [2, 0]])}, {"dim": 1})
    case("gather", "dim1_3d", "torch.gather(x, 1, index)", gat,
         {"x": randn(2, 3, 2), "index": torch.tensor([[[0, 2]], [[1, 1]]])}, {"dim": 1})
    case("gather", "negative_dim_float64", "torch.gather(x, -1, index)", gat,
         {"x": randn(2, 3, dtype=f64), "index": torch.tensor([[2, 2, 0, 1], [1, 0, 0, 0]])}, {"dim": -1})
    case("gather", "index_smaller_off_dim", "torch.gather(x, 1, index)", gat,
         {"x": randn(3, 4), "index": torch.tensor([[1, 3], [0, 0]])}, {"dim": 1})

    sca = lambda x, index, src, dim: torch.scatter_add(x, dim, index, src)
    case("scatter_add", "dim0_repeated", "torch.scatter_add(x, 0, index, src)", sca,
         {"x": randn(3, 4), "index": torch.tensor([[2, 0, 2, 1], [2, 2, 0, 1]]), "src": randn(2, 4)}, {"dim": 0})
    case("scatter_add", "dim1_3d", "torch.scatter_add(x, 1, index, src)", sca,
         {"x": randn(2, 3, 2), "index": torch.tensor([[[0, 2], [0, 0]], [[1, 1], [2, 0]]]), "src": randn(2, 2, 2)}, {"dim": 1})
    # PyTorch 1.13's backward fails when src is larger than the index, so this case is forward only.
    case("scatter_add", "smaller_index_larger_src", "torch.scatter_add(x, 1, index, src)", sca,
         {"x": randn(3, 4), "index": torch.tensor([[3, 3], [0, 1]]), "src": randn(2, 3)}, {"dim": 1}, grad=False)


def joining():
    f64 = torch.float64
    cat = lambda a, b, c, dim: torch.cat([a, b, c], dim=dim)
    case("cat", "dim0", "torch.cat([a, b, c], dim=0)", cat, {"a": randn(1, 3), "b": randn(2, 3), "c": randn(3, 3)}, {"dim": 0})
    case("cat", "dim1", "torch.cat([a, b, c], dim=1)", cat, {"a": randn(2, 1), "b": randn(2, 3), "c": randn(2, 2)}, {"dim": 1})
    case("cat", "negative_dim_3d", "torch.cat([a, b, c], dim=-2)", cat,
         {"a": randn(2, 1, 2), "b": randn(2, 2, 2), "c": randn(2, 1, 2)}, {"dim": -2})
    case("cat", "float64", "torch.cat([a, b, c], dim=0)", cat,
         {"a": randn(2, dtype=f64), "b": randn(1, dtype=f64), "c": randn(3, dtype=f64)}, {"dim": 0})

    stack = lambda a, b, c, dim: torch.stack([a, b, c], dim=dim)
    for dim in (0, 1, -1):
        case("stack", f"dim{dim}".replace("-", "neg"), f"torch.stack([a, b, c], dim={dim})", stack,
             {"a": randn(2, 3), "b": randn(2, 3), "c": randn(2, 3)}, {"dim": dim})

    split = lambda x, split_size_or_sections, dim: torch.split(x, split_size_or_sections, dim=dim)
    case("split", "size_uneven", "torch.split(x, 2, dim=0)", split, {"x": randn(5, 2)}, {"split_size_or_sections": 2, "dim": 0})
    case("split", "sections", "torch.split(x, [1, 3, 2], dim=1)", split, {"x": randn(2, 6)}, {"split_size_or_sections": [1, 3, 2], "dim": 1})
    case("split", "negative_dim_even", "torch.split(x, 2, dim=-1)", split, {"x": randn(2, 2, 4)}, {"split_size_or_sections": 2, "dim": -1})

    chunk = lambda x, chunks, dim: torch.chunk(x, chunks, dim=dim)
    case("chunk", "uneven", "torch.chunk(x, 3, dim=0)", chunk, {"x": randn(7, 2)}, {"chunks": 3, "dim": 0})
    # Six rows in four chunks gives three chunks of two: chunk size is ceil(6 / 4).
    case("chunk", "fewer_than_asked", "torch.chunk(x, 4, dim=1)", chunk, {"x": randn(2, 6)}, {"chunks": 4, "dim": 1})
    case("chunk", "even_negative_dim", "torch.chunk(x, 2, dim=-1)", chunk, {"x": randn(3, 4, dtype=f64)}, {"chunks": 2, "dim": -1})


def selection_and_comparison():
    f64 = torch.float64
    wh = lambda condition, x, y: torch.where(condition, x, y)
    case("where", "same_shape", "torch.where(condition, x, y)", wh,
         {"condition": torch.tensor([[True, False, True], [False, False, True]]), "x": randn(2, 3), "y": randn(2, 3)})
    case("where", "broadcast", "torch.where(condition, x, y)", wh,
         {"condition": torch.tensor([[True], [False]]), "x": randn(2, 3), "y": randn(3)})
    case("where", "float64_broadcast_x", "torch.where(condition, x, y)", wh,
         {"condition": torch.tensor([True, False, False, True]), "x": randn(1, dtype=f64), "y": randn(2, 4, dtype=f64)})

    mf = lambda x, mask, value: torch.masked_fill(x, mask, value)
    case("masked_fill", "same_shape", "x.masked_fill(mask, -1.5)", mf,
         {"x": randn(2, 3), "mask": torch.tensor([[True, False, False], [False, True, True]])}, {"value": -1.5})
    case("masked_fill", "broadcast_mask_neg_inf", "x.masked_fill(mask, float('-inf'))", mf,
         {"x": randn(2, 3, 3), "mask": torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)}, {"value": float("-inf")})

    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        fn = getattr(torch, op)
        a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        case(op, "same_shape_with_ties", f"torch.{op}(a, b)", lambda a, b: fn(a, b),
             {"a": a, "b": torch.tensor([[1.0, 0.0, 4.0], [4.0, 6.0, 5.0]])}, grad=False)
        case(op, "broadcast", f"torch.{op}(a, b)", lambda a, b: fn(a, b), {"a": a, "b": torch.tensor([2.0, 5.0, 3.0])}, grad=False)
        case(op, "scalar", f"torch.{op}(a, other)", lambda a, other: fn(a, other), {"a": a}, {"other": 3.0}, grad=False)
        case(op, "nan", f"torch.{op}(a, b)", lambda a, b: fn(a, b),
             {"a": torch.tensor([float("nan"), 1.0, float("nan")], dtype=f64), "b": torch.tensor([float("nan"), float("nan"), 1.0], dtype=f64)},
             grad=False)

    for op in ("tril", "triu"):
        fn = getattr(torch, op)
        tri = lambda x, diagonal: fn(x, diagonal=diagonal)
        case(op, "square", f"torch.{op}(x)", lambda x: fn(x), {"x": randn(3, 3)})
        case(op, "diagonal_1_wide", f"torch.{op}(x, diagonal=1)", tri, {"x": randn(3, 5)}, {"diagonal": 1})
        case(op, "diagonal_neg1_tall", f"torch.{op}(x, diagonal=-1)", tri, {"x": randn(4, 2)}, {"diagonal": -1})
        case(op, "batched_float64", f"torch.{op}(x, diagonal=0)", tri, {"x": randn(2, 3, 3, dtype=f64)}, {"diagonal": 0})


def losses():
    f64 = torch.float64

    def ce(logits, target, reduction="mean", ignore_index=-100, label_smoothing=0.0):
        return F.cross_entropy(logits, target, reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing)

    targets = torch.tensor([1, 0, 4, 2])
    for reduction in ("mean", "sum", "none"):
        case("cross_entropy", f"indices_{reduction}", f"F.cross_entropy(logits, target, reduction='{reduction}')", ce,
             {"logits": randn(4, 5), "target": targets}, {"reduction": reduction})
    case("cross_entropy", "ignore_index_default", "F.cross_entropy(logits, target)", ce,
         {"logits": randn(4, 5), "target": torch.tensor([1, -100, 4, -100])})
    case("cross_entropy", "ignore_index_custom_none", "F.cross_entropy(logits, target, ignore_index=2, reduction='none')", ce,
         {"logits": randn(4, 3), "target": torch.tensor([2, 0, 2, 1])}, {"ignore_index": 2, "reduction": "none"})
    for reduction in ("mean", "sum", "none"):
        case("cross_entropy", f"label_smoothing_{reduction}",
             f"F.cross_entropy(logits, target, label_smoothing=0.1, reduction='{reduction}')", ce,
             {"logits": randn(4, 5), "target": targets}, {"label_smoothing": 0.1, "reduction": reduction})
    case("cross_entropy", "label_smoothing_ignore_index", "F.cross_entropy(logits, target, label_smoothing=0.2)", ce,
         {"logits": randn(4, 5), "target": torch.tensor([3, -100, 0, 1])}, {"label_smoothing": 0.2})
    case("cross_entropy", "spatial_3d", "F.cross_entropy(logits, target)", ce,
         {"logits": randn(2, 3, 4), "target": torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])})
    case("cross_entropy", "unbatched_1d", "F.cross_entropy(logits, target)", ce,
         {"logits": randn(5), "target": torch.tensor(3)})
    case("cross_entropy", "float64", "F.cross_entropy(logits, target)", ce,
         {"logits": randn(3, 4, dtype=f64, scale=2.0), "target": torch.tensor([3, 0, 1])})
    probs = torch.softmax(randn(4, 5), dim=1)
    for reduction in ("mean", "sum", "none"):
        case("cross_entropy", f"probabilities_{reduction}", f"F.cross_entropy(logits, target_probs, reduction='{reduction}')",
             lambda logits, target, reduction: ce(logits, target, reduction=reduction),
             {"logits": randn(4, 5), "target": probs}, {"reduction": reduction})
    case("cross_entropy", "probabilities_label_smoothing", "F.cross_entropy(logits, target_probs, label_smoothing=0.1)",
         lambda logits, target, label_smoothing: ce(logits, target, label_smoothing=label_smoothing),
         {"logits": randn(4, 5), "target": probs}, {"label_smoothing": 0.1})

    mse = lambda input, target, reduction: F.mse_loss(input, target, reduction=reduction)
    for reduction in ("mean", "sum", "none"):
        case("mse_loss", reduction, f"F.mse_loss(input, target, reduction='{reduction}')", mse,
             {"input": randn(3, 4), "target": randn(3, 4)}, {"reduction": reduction})
    case("mse_loss", "float64", "F.mse_loss(input, target)", mse,
         {"input": randn(5, dtype=f64), "target": randn(5, dtype=f64)}, {"reduction": "mean"})


def main():
    torch.set_num_threads(1)
    binary_ops()
    unary_ops()
    reductions()
    linear_algebra()
    softmax_and_norm()
    indexing()
    joining()
    selection_and_comparison()
    losses()
    os.makedirs(OUT_DIR, exist_ok=True)
    for op, cases in sorted(fixtures.items()):
        path = os.path.join(OUT_DIR, f"{op}.json")
        body = {"op": op, "torch": torch.__version__, "seed": SEED, "cases": cases}
        with open(path, "w") as f:
            json.dump(body, f, separators=(",", ":"), allow_nan=False)
            f.write("\n")
    total = sum(len(c) for c in fixtures.values())
    print(f"wrote {len(fixtures)} files, {total} cases, to {os.path.relpath(OUT_DIR)}", file=sys.stderr)


if __name__ == "__main__":
    main()
