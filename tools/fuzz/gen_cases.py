"""Writes random differential-fuzz cases with PyTorch's results.

  ~/.venvs/peer/bin/python tools/fuzz/gen_cases.py --n 10000 --seed 7 --out /tmp/fuzz.json [--ops add,sum]

Each case holds an op name, its encoded arguments (see gen.py) and what PyTorch did: the error it
raised, or every output's dtype, shape, values and requires_grad, the gradient fed to backward and
the resulting gradient of every leaf (null where none reached it), and for in-place ops each input's
base after the op (so that writes through views are checked). tools/fuzz/replay.ts replays them.
"""
import argparse
import json
import math
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(__file__))
from gen import Gen, enc_num, to_torch  # noqa: E402
from ops import OPS  # noqa: E402

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

OUT_DTYPES = {torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64", torch.int32: "int32", torch.int64: "int32", torch.bool: "bool"}


def enc_tensor(t):
    t = t.detach()
    dtype = OUT_DTYPES.get(t.dtype)
    if dtype is None:
        raise TypeError(f"unsupported result dtype {t.dtype}")
    flat = t.reshape(-1).tolist()
    return {"dtype": dtype, "shape": list(t.shape), "values": [enc_num(bool(v) if dtype == "bool" else v) for v in flat]}


def tensors_of(args, kw):
    """Every (view, base) tensor argument, positional first, then keyword values in order."""
    out = []
    for v in list(args) + list(kw.values()):
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], torch.Tensor):
            out.append(v)
        elif isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], list):
            out.extend(zip(v[0], v[1]))
    return out


def run_case(name, seed):
    spec = OPS[name]
    g = Gen(seed)
    args, kw = spec["gen"](g)
    case = {"op": name, "seed": seed, "args": args, "kw": kw}
    targs = [to_torch(a) for a in args]
    tkw = {k: to_torch(v) for k, v in kw.items()}
    pairs = tensors_of(targs, tkw)
    try:
        result = spec["fn"]([a for a, _ in targs], {k: v for k, (v, _) in tkw.items()})
    except Exception as e:  # PyTorch refused the input: ringtorch must refuse it too.
        case["error"] = str(e).split("\n")[0][:200]
        return case
    outs = list(result) if isinstance(result, (list, tuple)) else [result]
    if any(d < 0 for o in outs for d in o.shape):
        return None  # PyTorch accepted a negative size (expand of an empty tensor): not a reference result
    try:
        case["outs"] = [dict(enc_tensor(o), rg=bool(o.requires_grad)) for o in outs]
    except TypeError as e:
        return None
    if spec["inplace"]:
        case["after"] = [enc_tensor(b) for _, b in pairs]
        return case
    first = outs[0] if outs else None
    if first is not None and first.requires_grad and first.dtype.is_floating_point:
        gout = torch.tensor([round(g.r.gauss(0, 1), 3) for _ in range(first.numel())], dtype=first.dtype).reshape(first.shape)
        case["gout"] = [enc_num(v) for v in gout.reshape(-1).tolist()]
        try:
            torch.autograd.backward(first, gout)
            case["grads"] = [enc_tensor(b.grad) if b.grad is not None else None for _, b in pairs if b.requires_grad]
        except Exception as e:
            case["gradError"] = str(e).split("\n")[0][:200]
            return case
        if g.chance(0.3):
            second_order(case, spec, args, kw, g)
    return case


def second_order(case, spec, args, kw, g):
    """Double backward: s = Σ_i Σ(grad_i · w_i) for the first-order grads built with create_graph, then ds/dleaf."""
    targs = [to_torch(a) for a in args]
    tkw = {k: to_torch(v) for k, v in kw.items()}
    leaves = [b for _, b in tensors_of(targs, tkw) if b.requires_grad]
    out = spec["fn"]([a for a, _ in targs], {k: v for k, (v, _) in tkw.items()})
    first = (list(out) if isinstance(out, (list, tuple)) else [out])[0]
    gout = torch.tensor([float(v) for v in case["gout"]], dtype=first.dtype).reshape(first.shape)
    try:
        grads = torch.autograd.grad(first, leaves, gout, create_graph=True, allow_unused=True)
        ws = [[round(g.r.gauss(0, 1), 3) for _ in range(l.numel())] for l in leaves]
        total = None
        for gr, w in zip(grads, ws):
            if gr is not None and gr.requires_grad:
                term = (gr * torch.tensor(w, dtype=gr.dtype).reshape(gr.shape)).sum()
                total = term if total is None else total + term
        case["ggw"] = ws
        if total is None:
            case["gg"] = None
            return
        gg = torch.autograd.grad(total, leaves, allow_unused=True)
        case["gg"] = [enc_tensor(x) if x is not None else None for x in gg]
    except Exception as e:
        case.pop("ggw", None)
        case["ggError"] = str(e).split("\n")[0][:200]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("--ops", default="")
    a = p.parse_args()
    names = a.ops.split(",") if a.ops else sorted(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        sys.exit(f"unknown ops {unknown}; known: {sorted(OPS)}")
    cases = []
    i = 0
    while len(cases) < a.n:
        seed = a.seed * 1_000_003 + i
        name = names[i % len(names)]
        i += 1
        c = run_case(name, seed)
        if c is not None:
            cases.append(c)
    with open(a.out, "w") as f:
        json.dump({"torch": torch.__version__, "seed": a.seed, "cases": cases}, f, separators=(",", ":"))
    errors = sum(1 for c in cases if "error" in c)
    print(f"wrote {len(cases)} cases ({errors} expect an error) over {len(names)} ops to {a.out}")


if __name__ == "__main__":
    main()
