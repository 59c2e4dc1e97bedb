#!/usr/bin/env python3
"""Writes test/fixtures/ops/<op>.json for the ops added after the first set (trigonometry,
logsumexp, norms, any/all, non-finite checks, nll/bce losses, scatter, sort/topk, cumulative
ops, flip/roll/repeat, pad, one_hot, einsum), in the format of gen_op_fixtures.py, whose
helpers it reuses. Run from the repository root with the peer venv:

    ~/.venvs/peer/bin/python tools/gen_new_op_fixtures.py

It writes only its own ops' files, so the two generators never overwrite each other.
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_op_fixtures as g  # noqa: E402

from gen_op_fixtures import case, randn, uniform  # noqa: E402

g.gen.manual_seed(5678)
f64 = torch.float64
inf = float("inf")
nan = float("nan")


def trigonometry():
    domains = {
        "sin": (-3.0, 3.0), "cos": (-3.0, 3.0), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
        "atan": (-3.0, 3.0), "sinh": (-2.0, 2.0), "cosh": (-2.0, 2.0), "asinh": (-3.0, 3.0), "acosh": (1.1, 3.0),
        "atanh": (-0.9, 0.9), "log1p": (-0.5, 3.0), "expm1": (-2.0, 2.0),
    }
    for op, (lo, hi) in domains.items():
        fn = getattr(torch, op)
        call = f"torch.{op}(x)"
        case(op, "float32", call, lambda x: fn(x), {"x": uniform(lo, hi, 3, 4)})
        case(op, "float64", call, lambda x: fn(x), {"x": uniform(lo, hi, 6, dtype=f64)})
        case(op, "zero_dim", call, lambda x: fn(x), {"x": uniform(lo, hi)})
        case(op, "int32_input", call, lambda x: fn(x), {"x": torch.tensor([0, 1, 2], dtype=torch.int32)}, grad=False)
        case(op, "edges", call, lambda x: fn(x), {"x": torch.tensor([0.0, -1.0, 1.0, 2.0, -2.0, inf, -inf, nan])}, grad=False)
    call = "torch.atan2(a, b)"
    case("atan2", "same_shape", call, lambda a, b: torch.atan2(a, b), {"a": randn(2, 3), "b": randn(2, 3)})
    case("atan2", "broadcast", call, lambda a, b: torch.atan2(a, b), {"a": randn(3, 1), "b": randn(4)})
    case("atan2", "float64", call, lambda a, b: torch.atan2(a, b), {"a": randn(5, dtype=f64), "b": randn(5, dtype=f64)})
    case("atan2", "signs_and_zeros", call, lambda a, b: torch.atan2(a, b),
         {"a": torch.tensor([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, 1.0]), "b": torch.tensor([0.0, 0.0, -0.0, -0.0, 0.0, 0.0, inf, -inf])},
         grad=False)


def reductions():
    lse = lambda x, dim, keepdim: torch.logsumexp(x, dim=dim, keepdim=keepdim)
    case("logsumexp", "dim1", "torch.logsumexp(x, 1)", lse, {"x": randn(3, 4)}, {"dim": 1, "keepdim": False})
    case("logsumexp", "dims01_keepdim", "torch.logsumexp(x, (0, 2), keepdim=True)", lse, {"x": randn(2, 3, 4)}, {"dim": [0, 2], "keepdim": True})
    case("logsumexp", "float64", "torch.logsumexp(x, 0)", lse, {"x": randn(5, 2, dtype=f64, scale=3.0)}, {"dim": 0, "keepdim": False})
    case("logsumexp", "large", "torch.logsumexp(x, 1)", lse, {"x": torch.tensor([[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1000.0]])},
         {"dim": 1, "keepdim": False})
    case("logsumexp", "infinite", "torch.logsumexp(x, 1)", lse, {"x": torch.tensor([[-inf, -inf], [inf, 1.0], [-inf, 2.0]])},
         {"dim": 1, "keepdim": False}, grad=False)

    vn = lambda x, ord, dim, keepdim: torch.linalg.vector_norm(x, ord=ord, dim=dim, keepdim=keepdim)
    for ord in (2, 1, inf, -inf, 0, 3, 0.5, -1.5):
        label = str(ord).replace(".", "_").replace("-", "neg")
        case("vector_norm", f"ord_{label}_all", f"torch.linalg.vector_norm(x, ord={ord})", vn, {"x": randn(3, 4)},
             {"ord": ord, "dim": None, "keepdim": False})
        case("vector_norm", f"ord_{label}_dim1", f"torch.linalg.vector_norm(x, ord={ord}, dim=1)", vn, {"x": randn(3, 4)},
             {"ord": ord, "dim": 1, "keepdim": False})
    case("vector_norm", "float64_dims_keepdim", "torch.linalg.vector_norm(x, ord=2, dim=(0, 2), keepdim=True)", vn,
         {"x": randn(2, 3, 2, dtype=f64)}, {"ord": 2, "dim": [0, 2], "keepdim": True})
    case("vector_norm", "float64_ord3", "torch.linalg.vector_norm(x, ord=3, dim=0)", vn, {"x": randn(4, 2, dtype=f64)},
         {"ord": 3, "dim": 0, "keepdim": False})
    zeros_row = torch.tensor([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])
    for ord in (2, 1, 3, inf):
        label = str(ord).replace(".", "_")
        case("vector_norm", f"zero_row_ord_{label}", f"torch.linalg.vector_norm(x, ord={ord}, dim=1)", vn, {"x": zeros_row},
             {"ord": ord, "dim": 1, "keepdim": False})
    case("vector_norm", "inf_ties", "torch.linalg.vector_norm(x, ord=inf, dim=1)", vn, {"x": torch.tensor([[1.0, -3.0, 3.0], [2.0, 0.5, -2.0]])},
         {"ord": inf, "dim": 1, "keepdim": False})

    nrm = lambda x, p, dim, keepdim: torch.norm(x, p=p, dim=dim, keepdim=keepdim)
    case("norm", "default_fro", "torch.norm(x)", lambda x: torch.norm(x), {"x": randn(3, 4)})
    case("norm", "fro_dims", "torch.norm(x, p='fro', dim=(0, 1))", nrm, {"x": randn(2, 3, 2)}, {"p": "fro", "dim": [0, 1], "keepdim": False})
    case("norm", "p1_dim_keepdim", "torch.norm(x, p=1, dim=1, keepdim=True)", nrm, {"x": randn(3, 4)}, {"p": 1, "dim": 1, "keepdim": True})
    case("norm", "pinf", "torch.norm(x, p=inf, dim=0)", nrm, {"x": randn(3, 4)}, {"p": inf, "dim": 0, "keepdim": False})
    case("norm", "p2_5_float64", "torch.norm(x, p=2.5)", nrm, {"x": randn(5, dtype=f64)}, {"p": 2.5, "dim": None, "keepdim": False})

    for op in ("any", "all"):
        fn = getattr(torch, op)
        b = torch.tensor([[True, False, True], [True, True, True]])
        f = torch.tensor([[0.0, nan, 2.0], [0.0, 0.0, 0.0]])
        case(op, "bool_all", f"torch.{op}(x)", lambda x: fn(x), {"x": b}, grad=False)
        case(op, "bool_dim1", f"torch.{op}(x, dim=1)", lambda x, dim: fn(x, dim=dim), {"x": b}, {"dim": 1}, grad=False)
        case(op, "float_nan_dim0_keepdim", f"torch.{op}(x, dim=0, keepdim=True)", lambda x, dim, keepdim: fn(x, dim=dim, keepdim=keepdim),
             {"x": f}, {"dim": 0, "keepdim": True}, grad=False)
        case(op, "int_dims", f"torch.{op}(x, dim=(0, 1))", lambda x, dim: fn(x, dim=dim),
             {"x": torch.tensor([[[1, 0], [2, 3]], [[0, 0], [4, 5]]], dtype=torch.int32)}, {"dim": [0, 1]}, grad=False)
        case(op, "empty", f"torch.{op}(x)", lambda x: fn(x), {"x": torch.zeros(0)}, grad=False)


def nonfinite():
    x = torch.tensor([1.0, nan, inf, -inf, -0.0, 3.5e38 / 2])
    for op in ("isnan", "isinf", "isfinite"):
        fn = getattr(torch, op)
        case(op, "float32", f"torch.{op}(x)", lambda x: fn(x), {"x": x}, grad=False)
        case(op, "float64", f"torch.{op}(x)", lambda x: fn(x), {"x": x.to(f64)}, grad=False)
        case(op, "int32", f"torch.{op}(x)", lambda x: fn(x), {"x": torch.tensor([1, -2, 0], dtype=torch.int32)}, grad=False)
    ntn = lambda x, nan, posinf, neginf: torch.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    case("nan_to_num", "defaults", "torch.nan_to_num(x)", lambda x: torch.nan_to_num(x), {"x": x})
    case("nan_to_num", "defaults_float64", "torch.nan_to_num(x)", lambda x: torch.nan_to_num(x), {"x": x.to(f64)})
    case("nan_to_num", "custom", "torch.nan_to_num(x, nan=-1.5, posinf=9.0, neginf=-9.0)", ntn, {"x": x},
         {"nan": -1.5, "posinf": 9.0, "neginf": -9.0})
    case("nan_to_num", "int32", "torch.nan_to_num(x)", lambda x: torch.nan_to_num(x), {"x": torch.tensor([1, 2], dtype=torch.int32)}, grad=False)


def losses():
    nll = lambda input, target, weight=None, ignore_index=-100, reduction="mean": F.nll_loss(
        input, target, weight=None if weight is None else weight.detach(), ignore_index=ignore_index, reduction=reduction)
    logp = lambda *s, dtype=torch.float32: torch.log_softmax(randn(*s, dtype=dtype), dim=1 if len(s) > 1 else 0)
    t = torch.tensor([1, 0, 4, 2])
    for reduction in ("mean", "sum", "none"):
        case("nll_loss", reduction, f"F.nll_loss(input, target, reduction='{reduction}')", nll,
             {"input": logp(4, 5), "target": t}, {"reduction": reduction})
        case("nll_loss", f"weight_{reduction}", f"F.nll_loss(input, target, weight=w, reduction='{reduction}')", nll,
             {"input": logp(4, 5), "target": t, "weight": uniform(0.5, 2.0, 5)}, {"reduction": reduction})
    case("nll_loss", "ignore_index_weight", "F.nll_loss(input, target, weight=w, ignore_index=2)", nll,
         {"input": logp(4, 3), "target": torch.tensor([2, 0, 2, 1]), "weight": uniform(0.5, 2.0, 3)}, {"ignore_index": 2})
    case("nll_loss", "ignore_default_sum", "F.nll_loss(input, target, reduction='sum')", nll,
         {"input": logp(3, 4), "target": torch.tensor([-100, 3, 1])}, {"reduction": "sum"})
    case("nll_loss", "all_ignored_mean", "F.nll_loss(input, target)", nll,
         {"input": logp(2, 3), "target": torch.tensor([-100, -100])}, grad=False)
    case("nll_loss", "spatial", "F.nll_loss(input, target)", nll,
         {"input": logp(2, 3, 4), "target": torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])})
    case("nll_loss", "unbatched", "F.nll_loss(input, target)", nll, {"input": logp(5), "target": torch.tensor(3)})
    case("nll_loss", "float64", "F.nll_loss(input, target)", nll, {"input": logp(3, 4, dtype=f64), "target": torch.tensor([3, 0, 1])})

    bce = lambda input, target, weight=None, reduction="mean": F.binary_cross_entropy(
        input, target, weight=None if weight is None else weight.detach(), reduction=reduction)
    for reduction in ("mean", "sum", "none"):
        case("binary_cross_entropy", reduction, f"F.binary_cross_entropy(input, target, reduction='{reduction}')", bce,
             {"input": uniform(0.05, 0.95, 3, 4), "target": uniform(0.0, 1.0, 3, 4)}, {"reduction": reduction})
    case("binary_cross_entropy", "weight_broadcast", "F.binary_cross_entropy(input, target, weight=w)", bce,
         {"input": uniform(0.05, 0.95, 3, 4), "target": torch.bernoulli(torch.full((3, 4), 0.5), generator=g.gen), "weight": uniform(0.5, 2.0, 4)})
    case("binary_cross_entropy", "float64", "F.binary_cross_entropy(input, target)", bce,
         {"input": uniform(0.05, 0.95, 6, dtype=f64), "target": uniform(0.0, 1.0, 6, dtype=f64)})
    case("binary_cross_entropy", "edges", "F.binary_cross_entropy(input, target, reduction='none')", bce,
         {"input": torch.tensor([0.0, 1.0, 0.0, 1.0, 1e-30]), "target": torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0])}, {"reduction": "none"})

    bcel = lambda input, target, weight=None, pos_weight=None, reduction="mean": F.binary_cross_entropy_with_logits(
        input, target, weight=None if weight is None else weight.detach(), pos_weight=None if pos_weight is None else pos_weight.detach(), reduction=reduction)
    for reduction in ("mean", "sum", "none"):
        case("binary_cross_entropy_with_logits", reduction, f"F.binary_cross_entropy_with_logits(input, target, reduction='{reduction}')", bcel,
             {"input": randn(3, 4, scale=2.0), "target": uniform(0.0, 1.0, 3, 4)}, {"reduction": reduction})
    case("binary_cross_entropy_with_logits", "weight_pos_weight", "F.binary_cross_entropy_with_logits(input, target, weight=w, pos_weight=pw)", bcel,
         {"input": randn(3, 4, scale=2.0), "target": uniform(0.0, 1.0, 3, 4), "weight": uniform(0.5, 2.0, 3, 1), "pos_weight": uniform(0.5, 3.0, 4)})
    case("binary_cross_entropy_with_logits", "float64_pos_weight", "F.binary_cross_entropy_with_logits(input, target, pos_weight=pw)", bcel,
         {"input": randn(5, 2, dtype=f64, scale=2.0), "target": uniform(0.0, 1.0, 5, 2, dtype=f64), "pos_weight": uniform(0.5, 3.0, 2, dtype=f64)})
    case("binary_cross_entropy_with_logits", "large_logits", "F.binary_cross_entropy_with_logits(input, target, reduction='none')", bcel,
         {"input": torch.tensor([-100.0, 100.0, -30.0, 30.0, 0.0]), "target": torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0])}, {"reduction": "none"})


def scatter_ops():
    sc = lambda input, index, src, dim: torch.scatter(input, dim, index, src)
    case("scatter", "src_dim1", "torch.scatter(input, 1, index, src)", sc,
         {"input": randn(3, 5), "index": torch.tensor([[0, 4], [2, 1], [3, 0]]), "src": randn(3, 2)}, {"dim": 1})
    case("scatter", "src_dim0_larger_src", "torch.scatter(input, 0, index, src)", sc,
         {"input": randn(4, 3), "index": torch.tensor([[3, 0], [1, 2]]), "src": randn(3, 4)}, {"dim": 0}, grad=False)
    # PyTorch's own backward fails when src is larger than the index; the gradient is checked here instead.
    case("scatter", "index_smaller_than_input", "torch.scatter(input, 0, index, src)", sc,
         {"input": randn(4, 3), "index": torch.tensor([[3, 0], [1, 2]]), "src": randn(2, 2)}, {"dim": 0})
    case("scatter", "float64", "torch.scatter(input, 1, index, src)", sc,
         {"input": randn(2, 4, dtype=f64), "index": torch.tensor([[1, 3, 0], [2, 0, 1]]), "src": randn(2, 3, dtype=f64)}, {"dim": 1})
    case("scatter", "value", "torch.scatter(input, 1, index, value=-2.5)", lambda input, index, dim, value: torch.scatter(input, dim, index, value),
         {"input": randn(3, 4), "index": torch.tensor([[0], [3], [1]])}, {"dim": 1, "value": -2.5})
    case("scatter", "reduce_add", "torch.scatter(input, 0, index, src, reduce='add')",
         lambda input, index, src, dim, reduce: torch.scatter(input, dim, index, src, reduce=reduce),
         {"input": randn(3, 2), "index": torch.tensor([[0, 1], [0, 1], [2, 1]]), "src": randn(3, 2)}, {"dim": 0, "reduce": "add"}, grad=False)
    case("scatter", "reduce_multiply", "torch.scatter(input, 0, index, src, reduce='multiply')",
         lambda input, index, src, dim, reduce: torch.scatter(input, dim, index, src, reduce=reduce),
         {"input": randn(3, 2), "index": torch.tensor([[0, 1], [0, 1], [2, 1]]), "src": randn(3, 2)}, {"dim": 0, "reduce": "multiply"}, grad=False)

    sr = lambda input, index, src, dim, reduce, include_self: torch.scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
    index = torch.tensor([[0, 2, 0, 1], [1, 1, 3, 3]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            case("scatter_reduce", f"{reduce}_include_self_{include_self}".lower(),
                 f"torch.scatter_reduce(input, 1, index, src, '{reduce}', include_self={include_self})", sr,
                 {"input": randn(2, 4), "index": index, "src": randn(2, 4)}, {"dim": 1, "reduce": reduce, "include_self": include_self})
    case("scatter_reduce", "mean_float64_dim0", "torch.scatter_reduce(input, 0, index, src, 'mean')", sr,
         {"input": randn(3, 2, dtype=f64), "index": torch.tensor([[0, 2], [0, 2], [1, 2]]), "src": randn(3, 2, dtype=f64)},
         {"dim": 0, "reduce": "mean", "include_self": True})
    case("scatter_reduce", "prod_single_zero", "torch.scatter_reduce(input, 0, index, src, 'prod')", sr,
         {"input": torch.tensor([2.0, 0.0, 3.0]), "index": torch.tensor([0, 0, 1, 2, 2]), "src": torch.tensor([0.0, 1.5, 2.0, 0.0, 0.0])},
         {"dim": 0, "reduce": "prod", "include_self": True})
    case("scatter_reduce", "amax_ties", "torch.scatter_reduce(input, 0, index, src, 'amax')", sr,
         {"input": torch.tensor([1.0, 5.0, 0.0]), "index": torch.tensor([0, 0, 1, 2]), "src": torch.tensor([1.0, 1.0, 5.0, -1.0])},
         {"dim": 0, "reduce": "amax", "include_self": True})
    case("scatter_reduce", "mean_int", "torch.scatter_reduce(input, 0, index, src, 'mean')", sr,
         {"input": torch.tensor([1, -7, 4], dtype=torch.int32), "index": torch.tensor([0, 1, 1]), "src": torch.tensor([2, 2, 0], dtype=torch.int32)},
         {"dim": 0, "reduce": "mean", "include_self": True}, grad=False)


def selection():
    srt = lambda x, dim, descending, stable: torch.sort(x, dim=dim, descending=descending, stable=stable)
    case("sort", "last_dim", "torch.sort(x)", srt, {"x": randn(3, 5)}, {"dim": -1, "descending": False, "stable": False})
    case("sort", "dim0_descending", "torch.sort(x, dim=0, descending=True)", srt, {"x": randn(4, 3)}, {"dim": 0, "descending": True, "stable": False})
    case("sort", "float64", "torch.sort(x)", srt, {"x": randn(7, dtype=f64)}, {"dim": -1, "descending": False, "stable": False})
    ties = torch.tensor([[2.0, 1.0, 2.0, nan, 1.0, -inf], [0.0, 0.0, 3.0, 0.0, nan, inf]])
    case("sort", "stable_ties_nan", "torch.sort(x, stable=True)", srt, {"x": ties}, {"dim": -1, "descending": False, "stable": True}, grad=False)
    case("sort", "stable_ties_nan_descending", "torch.sort(x, descending=True, stable=True)", srt, {"x": ties},
         {"dim": -1, "descending": True, "stable": True}, grad=False)
    case("sort", "int32", "torch.sort(x, stable=True)", srt, {"x": torch.tensor([3, -1, 3, 0], dtype=torch.int32)},
         {"dim": -1, "descending": False, "stable": True}, grad=False)
    ags = lambda x, dim, descending, stable: torch.argsort(x, dim=dim, descending=descending, stable=stable)
    case("argsort", "dim1", "torch.argsort(x, dim=1)", ags, {"x": randn(3, 4)}, {"dim": 1, "descending": False, "stable": False}, grad=False)
    case("argsort", "stable_descending", "torch.argsort(x, descending=True, stable=True)", ags, {"x": ties},
         {"dim": -1, "descending": True, "stable": True}, grad=False)
    tk = lambda x, k, dim, largest, sorted: torch.topk(x, k, dim=dim, largest=largest, sorted=sorted)
    case("topk", "k2_last", "torch.topk(x, 2)", tk, {"x": randn(3, 5)}, {"k": 2, "dim": -1, "largest": True, "sorted": True})
    case("topk", "smallest_dim0", "torch.topk(x, 3, dim=0, largest=False)", tk, {"x": randn(4, 3)}, {"k": 3, "dim": 0, "largest": False, "sorted": True})
    case("topk", "float64_k0", "torch.topk(x, 0)", tk, {"x": randn(4, dtype=f64)}, {"k": 0, "dim": -1, "largest": True, "sorted": True})
    case("topk", "float64_full", "torch.topk(x, 4)", tk, {"x": randn(4, dtype=f64)}, {"k": 4, "dim": -1, "largest": True, "sorted": True})


def cumulative():
    for op in ("cumsum", "cumprod"):
        fn = getattr(torch, op)
        c = lambda x, dim: fn(x, dim=dim)
        case(op, "dim1", f"torch.{op}(x, dim=1)", c, {"x": randn(3, 4)}, {"dim": 1})
        case(op, "dim0", f"torch.{op}(x, dim=0)", c, {"x": randn(3, 4)}, {"dim": 0})
        case(op, "neg_dim_float64", f"torch.{op}(x, dim=-1)", c, {"x": randn(2, 3, 4, dtype=f64)}, {"dim": -1})
        case(op, "zero_dim", f"torch.{op}(x, dim=0)", c, {"x": randn()}, {"dim": 0})
        case(op, "int32", f"torch.{op}(x, dim=0)", c, {"x": torch.tensor([3, -1, 4, 2], dtype=torch.int32)}, {"dim": 0}, grad=False)
    c = lambda x, dim: torch.cumprod(x, dim=dim)
    case("cumprod", "one_zero", "torch.cumprod(x, dim=1)", c, {"x": torch.tensor([[2.0, 0.0, 3.0, 1.5], [0.5, -1.0, 2.0, 0.0]])}, {"dim": 1})
    case("cumprod", "two_zeros_float64", "torch.cumprod(x, dim=0)", c,
         {"x": torch.tensor([1.5, 0.0, -2.0, 0.0, 3.0], dtype=f64)}, {"dim": 0})


def rearrange():
    fl = lambda x, dims: torch.flip(x, dims)
    case("flip", "dim0", "torch.flip(x, [0])", fl, {"x": randn(3, 4)}, {"dims": [0]})
    case("flip", "dims_01_3d", "torch.flip(x, [0, 2])", fl, {"x": randn(2, 3, 4)}, {"dims": [0, 2]})
    case("flip", "neg_float64", "torch.flip(x, [-1])", fl, {"x": randn(5, dtype=f64)}, {"dims": [-1]})
    rl = lambda x, shifts, dims: torch.roll(x, shifts, dims)
    case("roll", "flat", "torch.roll(x, 2)", rl, {"x": randn(3, 4)}, {"shifts": 2, "dims": None})
    case("roll", "dim1_negative", "torch.roll(x, -1, 1)", rl, {"x": randn(3, 4)}, {"shifts": -1, "dims": 1})
    case("roll", "two_dims_large_shift", "torch.roll(x, (5, -7), (0, 1))", rl, {"x": randn(3, 4)}, {"shifts": [5, -7], "dims": [0, 1]})
    case("roll", "float64", "torch.roll(x, 1, 0)", rl, {"x": randn(4, dtype=f64)}, {"shifts": 1, "dims": 0})
    rp = lambda x, sizes: x.repeat(*sizes)
    case("repeat", "same_rank", "x.repeat(2, 3)", rp, {"x": randn(2, 3)}, {"sizes": [2, 3]})
    case("repeat", "new_dims", "x.repeat(2, 1, 2)", rp, {"x": randn(3)}, {"sizes": [2, 1, 2]})
    case("repeat", "float64_zero", "x.repeat(0, 2)", rp, {"x": randn(2, 2, dtype=f64)}, {"sizes": [0, 2]})
    case("repeat", "float64", "x.repeat(1, 2, 2)", rp, {"x": randn(2, 1, 2, dtype=f64)}, {"sizes": [1, 2, 2]})

    pd = lambda x, pad, mode, value=None: F.pad(x, pad, mode=mode, value=value)
    case("pad", "constant_last", "F.pad(x, (1, 2))", pd, {"x": randn(2, 3)}, {"pad": [1, 2], "mode": "constant"})
    case("pad", "constant_value_two_dims", "F.pad(x, (2, 0, 1, 1), value=-1.5)", pd, {"x": randn(2, 3)},
         {"pad": [2, 0, 1, 1], "mode": "constant", "value": -1.5})
    case("pad", "constant_negative", "F.pad(x, (-1, 1, 0, -2))", pd, {"x": randn(3, 4)}, {"pad": [-1, 1, 0, -2], "mode": "constant"})
    case("pad", "reflect_1d", "F.pad(x, (2, 1), mode='reflect')", pd, {"x": randn(2, 3, 4)}, {"pad": [2, 1], "mode": "reflect"})
    case("pad", "reflect_2d", "F.pad(x, (1, 2, 2, 1), mode='reflect')", pd, {"x": randn(1, 2, 3, 4)}, {"pad": [1, 2, 2, 1], "mode": "reflect"})
    case("pad", "replicate_2d", "F.pad(x, (2, 1, 0, 3), mode='replicate')", pd, {"x": randn(2, 3, 3)}, {"pad": [2, 1, 0, 3], "mode": "replicate"})
    case("pad", "replicate_3d_float64", "F.pad(x, (1, 0, 0, 1, 1, 1), mode='replicate')", pd, {"x": randn(1, 1, 2, 2, 2, dtype=f64)},
         {"pad": [1, 0, 0, 1, 1, 1], "mode": "replicate"})
    case("pad", "circular_2d", "F.pad(x, (1, 3, 2, 0), mode='circular')", pd, {"x": randn(1, 2, 3, 3)}, {"pad": [1, 3, 2, 0], "mode": "circular"})
    case("pad", "circular_1d", "F.pad(x, (4, 2), mode='circular')", pd, {"x": randn(2, 4)}, {"pad": [4, 2], "mode": "circular"})

    oh = lambda x, num_classes: F.one_hot(x, num_classes)
    case("one_hot", "inferred", "F.one_hot(x)", oh, {"x": torch.tensor([0, 3, 1, 3])}, {"num_classes": -1}, grad=False)
    case("one_hot", "num_classes_2d", "F.one_hot(x, 5)", oh, {"x": torch.tensor([[0, 2], [4, 1]])}, {"num_classes": 5}, grad=False)


def einsum():
    es = lambda equation, **ops: torch.einsum(equation, *[ops[k] for k in sorted(ops)])
    cases = [
        ("matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
        ("batch_matmul", "bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("trace", "ii", [(3, 3)]),
        ("diagonal", "ii->i", [(3, 3)]),
        ("batch_diagonal", "bii->bi", [(2, 3, 3)]),
        ("outer_implicit", "i,j", [(3,), (4,)]),
        ("sum_all", "ij->", [(3, 4)]),
        ("transpose", "ij->ji", [(2, 3)]),
        ("implicit_order", "ba,ac", [(2, 3), (3, 4)]),
        ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)]),
        ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
        ("ellipsis_implicit", "...ij,jk", [(2, 2, 3), (3, 4)]),
        ("ellipsis_dropped_summed", "...i,...i->i", [(2, 3), (2, 3)]),
        ("dot", "i,i->", [(5,), (5,)]),
        ("hadamard_sum_one", "ij,ij->i", [(3, 4), (3, 4)]),
        ("size_one_broadcast", "ij,ij->ij", [(1, 4), (3, 4)]),
        ("three_way_chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("uppercase", "Ab,bC->AC", [(2, 3), (3, 2)]),
    ]
    for name, equation, shapes in cases:
        ops = {f"op{i}": randn(*s) for i, s in enumerate(shapes)}
        case("einsum", name, f"torch.einsum('{equation}', ...)", es, ops, {"equation": equation})
    case("einsum", "float64", "torch.einsum('bij,bkj->bik', a, b)", es, {"op0": randn(2, 3, 4, dtype=f64), "op1": randn(2, 2, 4, dtype=f64)},
         {"equation": "bij,bkj->bik"})


def edges():
    """Empty and 0-d inputs, where shapes and identities (sum 0, max −∞, …) must match PyTorch's."""
    e = torch.zeros(0, 3)
    case("sort", "empty", "torch.sort(x, dim=0)", lambda x, dim, descending, stable: torch.sort(x, dim=dim, descending=descending, stable=stable),
         {"x": e}, {"dim": 0, "descending": False, "stable": False}, grad=False)
    case("sort", "zero_dim", "torch.sort(x)", lambda x, dim, descending, stable: torch.sort(x, dim=dim, descending=descending, stable=stable),
         {"x": torch.tensor(1.5)}, {"dim": -1, "descending": False, "stable": False}, grad=False)
    case("cumsum", "empty", "torch.cumsum(x, dim=1)", lambda x, dim: torch.cumsum(x, dim=dim), {"x": e}, {"dim": 1}, grad=False)
    case("flip", "empty", "torch.flip(x, [0, 1])", lambda x, dims: torch.flip(x, dims), {"x": e}, {"dims": [0, 1]}, grad=False)
    case("roll", "zero_dim", "torch.roll(x, 3)", lambda x, shifts, dims: torch.roll(x, shifts, dims), {"x": torch.tensor(2.5)},
         {"shifts": 3, "dims": None}, grad=False)
    case("repeat", "zero_dim", "x.repeat(3)", lambda x, sizes: x.repeat(*sizes), {"x": torch.tensor(2.5)}, {"sizes": [3]}, grad=False)
    case("pad", "empty_constant", "F.pad(x, (1, 1), value=2.0)", lambda x, pad, mode, value=None: F.pad(x, pad, mode=mode, value=value),
         {"x": e}, {"pad": [1, 1], "mode": "constant", "value": 2.0}, grad=False)
    case("einsum", "empty_contraction", "torch.einsum('ij,jk->ik', a, b)", lambda equation, **ops: torch.einsum(equation, *[ops[k] for k in sorted(ops)]),
         {"op0": torch.zeros(2, 0), "op1": torch.zeros(0, 3)}, {"equation": "ij,jk->ik"}, grad=False)
    case("einsum", "zero_dim_operands", "torch.einsum(',->', a, b)", lambda equation, **ops: torch.einsum(equation, *[ops[k] for k in sorted(ops)]),
         {"op0": torch.tensor(2.5), "op1": torch.tensor(-1.5)}, {"equation": ",->"})
    case("vector_norm", "empty", "torch.linalg.vector_norm(x)", lambda x, ord, dim, keepdim: torch.linalg.vector_norm(x, ord=ord, dim=dim, keepdim=keepdim),
         {"x": e}, {"ord": 2, "dim": None, "keepdim": False}, grad=False)
    case("logsumexp", "empty_dim", "torch.logsumexp(x, 0)", lambda x, dim, keepdim: torch.logsumexp(x, dim=dim, keepdim=keepdim),
         {"x": e}, {"dim": 0, "keepdim": False}, grad=False)
    case("any", "zero_dim_with_dim", "torch.any(x, dim=0)", lambda x, dim: torch.any(x, dim=dim), {"x": torch.tensor(2.0)}, {"dim": 0}, grad=False)
    case("all", "empty_dim1", "torch.all(x, dim=1)", lambda x, dim: torch.all(x, dim=dim), {"x": e}, {"dim": 1}, grad=False)
    case("scatter", "empty_index", "torch.scatter(input, 1, index, value=3.0)", lambda input, index, dim, value: torch.scatter(input, dim, index, value),
         {"input": randn(2, 2), "index": torch.zeros(2, 0, dtype=torch.int64)}, {"dim": 1, "value": 3.0}, grad=False)
    case("one_hot", "zero_dim", "F.one_hot(x, 3)", lambda x, num_classes: F.one_hot(x, num_classes), {"x": torch.tensor(2)}, {"num_classes": 3}, grad=False)
    case("nll_loss", "empty_batch_sum", "F.nll_loss(input, target, reduction='sum')", lambda input, target, reduction: F.nll_loss(input, target, reduction=reduction),
         {"input": torch.zeros(0, 3), "target": torch.zeros(0, dtype=torch.int64)}, {"reduction": "sum"}, grad=False)


def main():
    torch.set_num_threads(1)
    trigonometry()
    reductions()
    nonfinite()
    losses()
    scatter_ops()
    selection()
    cumulative()
    rearrange()
    einsum()
    edges()
    os.makedirs(g.OUT_DIR, exist_ok=True)
    for op, cases in sorted(g.fixtures.items()):
        path = os.path.join(g.OUT_DIR, f"{op}.json")
        body = {"op": op, "torch": torch.__version__, "seed": 5678, "cases": cases}
        with open(path, "w") as f:
            json.dump(body, f, separators=(",", ":"), allow_nan=False)
            f.write("\n")
    total = sum(len(c) for c in g.fixtures.values())
    print(f"wrote {len(g.fixtures)} files, {total} cases, to {os.path.relpath(g.OUT_DIR)}", file=sys.stderr)


if __name__ == "__main__":
    main()
