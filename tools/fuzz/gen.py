"""Random inputs for the differential fuzzer: tensors (with views, edge values, edge shapes), scalars, dims.

A tensor argument is encoded as {"T": {"dtype", "shape", "values", "view", "grad"}}: `values` fill a
contiguous base of `shape`, `view` is a list of view steps applied to the base (so the argument may be
non-contiguous), and `grad` marks the base as a leaf that requires grad. The TypeScript replayer
builds exactly the same thing with ringtorch's own ops.
"""
import math
import random

import torch

TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "bool": torch.bool, "bfloat16": torch.bfloat16}
FLOATS = ("float32", "float64")


def enc_num(v):
    """JSON-safe number: NaN and infinities as strings."""
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        # JavaScript cannot tell 2.0 from 2: the generator never emits an integral float scalar.
        return v
    return int(v)


def dec_num(v):
    if v == "nan":
        return float("nan")
    if v == "inf":
        return float("inf")
    if v == "-inf":
        return float("-inf")
    return v


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(list(seq))

    def dtype(self, allowed=("float32",), stray=0.1):
        if self.chance(stray):
            return self.pick(("float32", "float64", "int32", "bool", "bfloat16"))
        # bfloat16 wherever a float is allowed, in about one case in twelve.
        if any(d in FLOATS for d in allowed) and self.chance(0.08):
            return "bfloat16"
        return self.pick(allowed)

    def shape(self, rank=None, zero=0.08, maxd=4):
        if rank is None:
            rank = self.pick((0, 1, 1, 2, 2, 2, 3, 3))
        return [0 if self.chance(zero) else self.r.randint(1, maxd) for _ in range(rank)]

    def bshape(self, shape):
        """A shape that broadcasts with `shape` (or, rarely, one that does not)."""
        if self.chance(0.04):
            return self.shape()
        out = [1 if self.chance(0.3) else d for d in shape]
        drop = self.r.randint(0, len(out)) if self.chance(0.4) else 0
        out = out[drop:]
        if self.chance(0.15):
            out = [1] * self.r.randint(1, 2) + out
        return out

    def value(self, dtype, special):
        r = self.r
        if dtype == "bool":
            return r.random() < 0.5
        if dtype == "int32":
            return r.randint(-5, 6)
        if special and r.random() < 0.12:
            return r.choice([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e-30])
        if special and r.random() < 0.15:
            return r.choice([-1.0, 0.0, 1.0, 2.0])  # ties
        return round(r.gauss(0, 2), 4)

    def tensor(self, dtype=None, shape=None, grad=None, special=True, view=True, allowed=FLOATS, positive=False, low=None, high=None):
        dtype = dtype or self.dtype(allowed)
        shape = list(self.shape() if shape is None else shape)
        steps = []
        base = list(shape)
        if view and len(shape) >= 1 and self.chance(0.25):
            kind = self.pick(("transpose", "slice", "expand") if len(shape) >= 2 else ("slice", "expand"))
            if kind == "transpose":
                a, b = self.r.sample(range(len(shape)), 2)
                base[a], base[b] = base[b], base[a]
                steps = [["transpose", a, b]]
            elif kind == "slice":
                d = self.r.randrange(len(shape))
                base[d] = shape[d] * 2
                steps = [["slice", d, 0, base[d], 2]]
            else:
                ones = [i for i, s in enumerate(shape) if self.chance(0.5)]
                if ones:
                    for i in ones:
                        base[i] = 1
                    steps = [["expand", list(shape)]]
        n = 1
        for d in base:
            n *= d
        if low is not None:
            values = [self.r.randint(low, high - 1) for _ in range(n)]
        else:
            values = [self.value(dtype, special) for _ in range(n)]
            if positive and dtype in FLOATS + ("bfloat16",):
                values = [abs(v) + 0.1 if isinstance(v, float) and math.isfinite(v) else v for v in values]
        if dtype == "bfloat16":
            # Values exactly representable in bfloat16, so that both sides read the same numbers.
            values = torch.tensor([float(v) for v in values], dtype=torch.float32).to(torch.bfloat16).double().tolist()
        if grad is None:
            grad = dtype in FLOATS + ("bfloat16",) and self.chance(0.5)
        return {"T": {"dtype": dtype, "shape": base, "values": [enc_num(v) for v in values], "view": steps, "grad": bool(grad)}}

    def index(self, n, size, shape=None):
        """An int32 index tensor with values in [0, size) (or out of range, rarely)."""
        shape = [n] if shape is None else shape
        hi = size if size > 0 else 1
        t = self.tensor("int32", shape, grad=False, view=False, low=0, high=hi)
        if self.chance(0.04) and t["T"]["values"]:
            t["T"]["values"][0] = self.pick((-1, size, size + 3))
        return t

    def scalar(self, kind=None):
        kind = kind or self.pick(("int", "float", "float", "special"))
        if kind == "int":
            return self.r.randint(-3, 4)
        if kind == "special":
            return enc_num(self.pick((float("nan"), float("inf"), float("-inf"), 0.5, -0.5)))
        v = round(self.r.gauss(0, 2), 3)
        return v + 0.25 if v == int(v) else v

    def dim(self, ndim, bad=0.04):
        if self.chance(bad):
            return self.pick((ndim, -ndim - 1, 5))
        n = max(ndim, 1)
        return self.r.randint(-n, n - 1)

    def dims(self, ndim):
        if ndim == 0:
            return self.pick(([], None, 0))
        k = self.r.randint(0, ndim)
        return self.r.sample(range(ndim), k)


def to_torch(arg):
    """Decodes one encoded argument into its PyTorch value (tensor leaves are returned by `leaves`)."""
    if isinstance(arg, dict) and "T" in arg:
        spec = arg["T"]
        base = torch.tensor([dec_num(v) for v in spec["values"]], dtype=TORCH_DTYPES[spec["dtype"]]).reshape(spec["shape"])
        if spec["grad"]:
            base.requires_grad_(True)
        t = base
        for step in spec["view"]:
            if step[0] == "transpose":
                t = t.transpose(step[1], step[2])
            elif step[0] == "slice":
                idx = [slice(None)] * t.dim()
                idx[step[1]] = slice(step[2], step[3], step[4])
                t = t[tuple(idx)]
            elif step[0] == "expand":
                t = t.expand(step[1])
        return t, base
    if isinstance(arg, list) and arg and all(isinstance(a, dict) and "T" in a for a in arg):
        pairs = [to_torch(a) for a in arg]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    if isinstance(arg, str) and arg in ("nan", "inf", "-inf"):
        return dec_num(arg), None
    return arg, None
