"""The fuzzer's op table: one entry per ringtorch op, naming how to draw its arguments and what PyTorch computes.

Adding an op is one `op(...)` line here (a name, an argument generator, PyTorch's call) and one entry
in the `OPS` map of tools/fuzz/ops.ts (the same name, ringtorch's call). Arguments are positional
lists (`a`) plus a keyword dict (`k`) whose keys are ringtorch's camelCase option names.
"""
import math

import torch
import torch.nn.functional as F

from gen import FLOATS

OPS = {}

ANY = ("float32", "float64", "int32", "bool")
NUM = ("float32", "float32", "float64", "int32")


def op(name, gen, fn, inplace=False):
    OPS[name] = {"gen": gen, "fn": fn, "inplace": inplace}


def L(t):
    """An int32 index as PyTorch's int64."""
    return t.long() if isinstance(t, torch.Tensor) else t


# ---- elementwise, binary ----
def g_binary(dtypes=NUM, scalar=0.3):
    def gen(g):
        a = g.tensor(allowed=dtypes)
        shape = a["T"]["shape"] if not a["T"]["view"] else None
        sh = g.shape() if shape is None else shape
        if g.chance(scalar):
            b = g.scalar()
        else:
            b = g.tensor(allowed=dtypes, shape=g.bshape(_vshape(a, sh)))
        if g.chance(0.1) and not isinstance(b, (int, float, str)):
            a, b = b, a
        return [a, b], {}
    return gen


def _vshape(t, default):
    """The logical shape of an encoded tensor (after its view steps)."""
    s = list(t["T"]["shape"])
    for step in t["T"]["view"]:
        if step[0] == "transpose":
            s[step[1]], s[step[2]] = s[step[2]], s[step[1]]
        elif step[0] == "slice":
            s[step[1]] = len(range(step[2], min(step[3], s[step[1]]), step[4]))
        elif step[0] == "expand":
            s = list(step[1])
    return s


for name, f in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div), ("pow", torch.pow),
                ("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le), ("gt", torch.gt), ("ge", torch.ge),
                ("logicalAnd", torch.logical_and), ("logicalOr", torch.logical_or)]:
    # torch.logical_and/or take no Python scalar (ringtorch's extension does): tensors only.
    gen = g_binary(NUM + ("bool",), scalar=0.0 if name.startswith("logical") else 0.3) if name.startswith("logical") or name in ("eq", "ne", "sub") else g_binary(NUM)
    op(name, gen, (lambda f: lambda a, k: f(*a))(f))

for name, f in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
    op(name, g_binary(NUM, scalar=0.0), (lambda f: lambda a, k: f(*a))(f))

# ---- elementwise, unary ----
UNARY = {
    "neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "abs": torch.abs,
    "sign": torch.sign, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu, "silu": F.silu,
    "reciprocal": torch.reciprocal, "square": torch.square,
}
for name, f in UNARY.items():
    op(name, lambda g: ([g.tensor(allowed=NUM)], {}), (lambda f: lambda a, k: f(a[0]))(f))

op("gelu", lambda g: ([g.tensor(), g.pick(("none", "tanh"))], {}), lambda a, k: F.gelu(a[0], approximate=a[1]))


def g_clamp(g):
    x = g.tensor(allowed=NUM)
    lo = None if g.chance(0.35) else g.scalar(g.pick(("int", "float", "special")))
    hi = None if g.chance(0.35) else g.scalar(g.pick(("int", "float", "special")))
    return [x, lo, hi], {}


op("clamp", g_clamp, lambda a, k: torch.clamp(a[0], a[1], a[2]))


def g_where(g):
    c = g.tensor("bool", grad=False)
    sh = _vshape(c, [])
    a = g.scalar() if g.chance(0.3) else g.tensor(allowed=NUM, shape=g.bshape(sh))
    b = g.scalar() if g.chance(0.3) else g.tensor(allowed=NUM, shape=g.bshape(sh))
    return [c, a, b], {}


op("where", g_where, lambda a, k: torch.where(a[0], a[1], a[2]))


def g_masked(g):
    x = g.tensor(allowed=NUM)
    m = g.tensor("bool", shape=g.bshape(_vshape(x, [])), grad=False)
    return [x, m, g.scalar()], {}


op("maskedFill", g_masked, lambda a, k: a[0].masked_fill(a[1], a[2]))


# ---- in place (always on a grad-free tensor, possibly a view) ----
def g_inplace(g):
    a = g.tensor(allowed=NUM, grad=False)
    b = g.scalar() if g.chance(0.4) else g.tensor(allowed=NUM, shape=g.bshape(_vshape(a, [])), grad=False)
    return [a, b], {}


for name in ("add_", "sub_", "mul_", "div_"):
    op(name, g_inplace, (lambda n: lambda a, k: getattr(a[0], n)(a[1]))(name), inplace=True)
op("fill_", lambda g: ([g.tensor(allowed=NUM, grad=False), g.scalar()], {}), lambda a, k: a[0].fill_(a[1]), inplace=True)
op("zero_", lambda g: ([g.tensor(allowed=NUM, grad=False)], {}), lambda a, k: a[0].zero_(), inplace=True)


def g_copy(g):
    a = g.tensor(allowed=NUM, grad=False)
    return [a, g.tensor(allowed=NUM, grad=False, shape=g.bshape(_vshape(a, [])), special=False)], {}


op("copy_", g_copy, lambda a, k: a[0].copy_(a[1]), inplace=True)


# ---- reductions ----
def g_reduce(dtypes=NUM):
    def gen(g):
        x = g.tensor(allowed=dtypes)
        nd = len(_vshape(x, []))
        kw = {}
        args = [x]
        if g.chance(0.7):
            args.append(g.dims(nd) if g.chance(0.5) else g.dim(nd))
            if g.chance(0.5):
                args.append(g.chance(0.5))
        return args, kw
    return gen


def _torch_dim(d):
    return tuple(d) if isinstance(d, list) else d


def t_sum(a, k):
    if len(a) == 1:
        return torch.sum(a[0])
    return torch.sum(a[0], dim=_torch_dim(a[1]), keepdim=a[2] if len(a) > 2 else False)


def t_mean(a, k):
    if len(a) == 1:
        return torch.mean(a[0])
    return torch.mean(a[0], dim=_torch_dim(a[1]), keepdim=a[2] if len(a) > 2 else False)


op("sum", g_reduce(ANY), t_sum)
op("mean", g_reduce(), t_mean)


def g_var(g):
    x = g.tensor(allowed=FLOATS)
    nd = len(_vshape(x, []))
    if g.chance(0.15):
        x["T"]["values"] = [v * 1e20 if isinstance(v, float) else v for v in x["T"]["values"]]
    dim = None if g.chance(0.3) else (g.dims(nd) if g.chance(0.5) else g.dim(nd))
    if dim == []:
        # PyTorch's var/std backward takes dim=[] as reducing nothing (N = 1) while the forward
        # reduces everything: a PyTorch bug, so [] is fuzzed without gradients.
        x["T"]["grad"] = False
    kw = {}
    if g.chance(0.5):
        kw["correction"] = g.pick((0, 1, 2))
    if g.chance(0.3):
        kw["keepdim"] = g.chance(0.5)
    return [x, dim], kw


def t_var(f):
    def run(a, k):
        kw = {"correction": k.get("correction", 1), "keepdim": k.get("keepdim", False)}
        return f(a[0], dim=_torch_dim(a[1]), **kw)
    return run


op("var", g_var, t_var(torch.var))
op("std", g_var, t_var(torch.std))


def g_extreme(g):
    x = g.tensor(allowed=NUM)
    nd = len(_vshape(x, []))
    if g.chance(0.4):
        return [x], {}
    return ([x, g.dim(nd), g.chance(0.5)], {})


def t_extreme(name):
    def run(a, k):
        f = getattr(torch, name)
        if len(a) == 1:
            return f(a[0])
        r = f(a[0], a[1], keepdim=a[2])
        return (r.values, r.indices) if name in ("max", "min") else r
    return run


for name in ("max", "min", "argmax", "argmin"):
    op(name, g_extreme, t_extreme(name))


# ---- matmul family ----
def g_matmul(g):
    dt = g.dtype(FLOATS)
    m, k, n = g.r.randint(0, 4), g.r.randint(0, 4), g.r.randint(1, 4)
    kind = g.pick(("vv", "mv", "vm", "mm", "bmm", "bcast"))
    sa, sb = {"vv": ([k], [k]), "mv": ([m, k], [k]), "vm": ([k], [k, n]), "mm": ([m, k], [k, n]),
              "bmm": ([2, m, k], [2, k, n]), "bcast": ([2, 1, m, k], [3, k, n])}[kind]
    if g.chance(0.05):
        sb = list(sb)
        sb[0] += 1
    return [g.tensor(dt, sa), g.tensor(dt if g.chance(0.95) else g.dtype(NUM), sb)], {}


op("matmul", g_matmul, lambda a, k: torch.matmul(a[0], a[1]))


def g_linear(g):
    dt = g.dtype(FLOATS)
    i, o = g.r.randint(0, 4), g.r.randint(1, 4)
    x = g.tensor(dt, g.shape(g.r.randint(1, 3))[:-1] + [i] if g.chance(0.9) else [i])
    w = g.tensor(dt, [o, i])
    b = g.tensor(dt, [o]) if g.chance(0.6) else None
    return [x, w, b], {}


op("linear", g_linear, lambda a, k: F.linear(a[0], a[1], a[2]))


# ---- views and joins ----
def g_shape_op(g):
    x = g.tensor(allowed=NUM)
    return [x], {}


def g_reshape(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    n = 1
    for d in s:
        n *= d
    shape = g.pick(([n], [-1], [1, n], [n, 1], s[::-1], [2, -1] if n % 2 == 0 else [n, -1], [n + 1]))
    return [x, shape], {}


op("reshape", g_reshape, lambda a, k: a[0].reshape(a[1]))
op("view", g_reshape, lambda a, k: a[0].view(a[1]))
op("contiguous", g_shape_op, lambda a, k: a[0].contiguous())
op("clone", g_shape_op, lambda a, k: a[0].clone())


def g_flatten(g):
    x = g.tensor(allowed=NUM)
    nd = len(_vshape(x, []))
    return [x, g.dim(nd), g.dim(nd)], {}


op("flatten", g_flatten, lambda a, k: torch.flatten(a[0], a[1], a[2]))


def g_transpose(g):
    x = g.tensor(allowed=NUM)
    nd = len(_vshape(x, []))
    return [x, g.dim(nd), g.dim(nd)], {}


op("transpose", g_transpose, lambda a, k: a[0].transpose(a[1], a[2]))


def g_permute(g):
    x = g.tensor(allowed=NUM)
    nd = len(_vshape(x, []))
    p = list(range(nd))
    g.r.shuffle(p)
    if g.chance(0.05):
        p = p + [0]
    return [x, p], {}


op("permute", g_permute, lambda a, k: a[0].permute(a[1]))
op("t", g_shape_op, lambda a, k: a[0].t())


def g_expand(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    target = [g.r.randint(1, 3) if d == 1 and g.chance(0.6) else (-1 if g.chance(0.2) else d) for d in s]
    if g.chance(0.3):
        target = [g.r.randint(0, 3)] + target
    if g.chance(0.1) and target:
        target[g.r.randrange(len(target))] = g.pick((2.5, -2))
    return [x, target], {}


op("expand", g_expand, lambda a, k: a[0].expand(a[1]))


def g_unsqueeze(g):
    x = g.tensor(allowed=NUM)
    return [x, g.dim(len(_vshape(x, [])) + 1)], {}


op("unsqueeze", g_unsqueeze, lambda a, k: a[0].unsqueeze(a[1]))


def g_squeeze(g):
    x = g.tensor(allowed=NUM, shape=[g.pick((1, 1, 2, 0)) for _ in range(g.r.randint(0, 3))])
    nd = len(_vshape(x, []))
    return ([x] if g.chance(0.4) else [x, g.dim(nd)]), {}


op("squeeze", g_squeeze, lambda a, k: a[0].squeeze(*a[1:]))


def g_narrow(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s))
    size = s[d] if -len(s) <= d < len(s) else 2
    start = g.r.randint(-size, size) if size else 0
    return [x, d, start, g.r.randint(0, max(size, 1))], {}


op("narrow", g_narrow, lambda a, k: a[0].narrow(a[1], a[2], a[3]))


def g_slice(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s))
    start = g.pick((None, 0, 1, -1, -3, 5, 1.5)) if g.chance(0.97) else 1.5
    end = g.pick((None, 2, -1, 10, 0))
    return [x, d, start, end, g.pick((1, 1, 2, 3, 0))], {}


def t_slice(a, k):
    x, d, start, end, step = a
    if x.dim() == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor")
    idx = [slice(None)] * x.dim()
    idx[d] = slice(start, end, step)
    return x[tuple(idx)]


op("slice", g_slice, t_slice)


def g_select(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s))
    size = s[d] if -len(s) <= d < len(s) else 2
    return [x, d, g.r.randint(-size - 1, size)], {}


op("select", g_select, lambda a, k: a[0].select(a[1], a[2]))


def g_index_select(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s))
    size = s[d] if -len(s) <= d < len(s) else 1
    return [x, d, g.index(g.r.randint(0, 4), size)], {}


op("indexSelect", g_index_select, lambda a, k: torch.index_select(a[0], a[1], L(a[2])))


def g_cat(g):
    dt = g.dtype(NUM)
    base = g.shape(g.r.randint(1, 3))
    d = g.dim(len(base))
    ts = []
    for _ in range(g.r.randint(1, 3)):
        s = list(base)
        if -len(s) <= d < len(s):
            s[d] = g.r.randint(0, 3)
        if g.chance(0.05):
            s = [0]
        ts.append(g.tensor(dt if g.chance(0.8) else g.dtype(NUM), s))
    return [ts, d], {}


op("cat", g_cat, lambda a, k: torch.cat(a[0], a[1]))


def g_stack(g):
    dt = g.dtype(NUM)
    s = g.shape()
    ts = [g.tensor(dt, s if g.chance(0.95) else g.shape()) for _ in range(g.r.randint(1, 3))]
    return [ts, g.dim(len(s) + 1)], {}


op("stack", g_stack, lambda a, k: torch.stack(a[0], a[1]))


def g_split(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s))
    size = s[d] if -len(s) <= d < len(s) else 2
    if g.chance(0.5):
        return [x, g.r.randint(1, 3), d], {}
    parts = []
    left = size
    while left > 0:
        p = g.r.randint(0, left)
        parts.append(p)
        left -= p
    return [x, parts or [0], d], {}


op("split", g_split, lambda a, k: list(torch.split(a[0], a[1], a[2])))
def g_chunk(g):
    x = g.tensor(allowed=NUM)
    return [x, g.r.randint(0, 4) if g.chance(0.05) else g.r.randint(1, 4), g.dim(len(_vshape(x, [])))], {}


op("chunk", g_chunk, lambda a, k: list(torch.chunk(a[0], a[1], a[2])))


# ---- indexing ----
def g_gather(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    d = g.dim(len(s), bad=0.02)
    size = s[d] if -len(s) <= d < len(s) else 1
    ishape = [g.r.randint(0, max(1, v)) if i != (d % max(len(s), 1)) else g.r.randint(0, 3) for i, v in enumerate(s)]
    return [x, d, g.index(0, size, ishape)], {}


op("gather", g_gather, lambda a, k: torch.gather(a[0], a[1], L(a[2])))


def g_scatter_add(g):
    x = g.tensor(allowed=FLOATS)
    s = _vshape(x, [])
    d = g.dim(len(s), bad=0.02)
    size = s[d] if -len(s) <= d < len(s) else 1
    ishape = [g.r.randint(0, max(1, v)) if i != (d % max(len(s), 1)) else g.r.randint(0, 3) for i, v in enumerate(s)]
    # A src larger than the index makes PyTorch's backward raise (ringtorch narrows it): same shape here.
    src = g.tensor(x["T"]["dtype"], ishape)
    return [x, d, g.index(0, size, ishape), src], {}


op("scatterAdd", g_scatter_add, lambda a, k: torch.scatter_add(a[0], a[1], L(a[2]), a[3]))


def g_embedding(g):
    w = g.tensor(allowed=FLOATS, shape=[g.r.randint(1, 5), g.r.randint(1, 3)], special=False)
    num = w["T"]["shape"][0]
    kw = {}
    if g.chance(0.3):
        kw["paddingIdx"] = g.r.randint(-num, num - 1)
    return [g.index(0, num, g.shape(g.r.randint(0, 2))), w], kw


op("embedding", g_embedding, lambda a, k: F.embedding(L(a[0]), a[1], padding_idx=k.get("paddingIdx")))


def g_tri(g):
    x = g.tensor(allowed=NUM, shape=g.shape(g.r.randint(1, 3)))
    return [x, g.r.randint(-2, 2)], {}


op("tril", g_tri, lambda a, k: torch.tril(a[0], a[1]))
op("triu", g_tri, lambda a, k: torch.triu(a[0], a[1]))


# ---- softmax, norms, losses ----
def g_softmax(g):
    x = g.tensor(allowed=FLOATS)
    return [x, g.dim(len(_vshape(x, [])))], {}


op("softmax", g_softmax, lambda a, k: torch.softmax(a[0], a[1]))
op("logSoftmax", g_softmax, lambda a, k: torch.log_softmax(a[0], a[1]))


def g_layer_norm(g):
    x = g.tensor(allowed=FLOATS, shape=g.shape(g.r.randint(1, 3), zero=0.03))
    s = _vshape(x, [])
    k = g.r.randint(1, len(s))
    ns = s[len(s) - k:]
    dt = x["T"]["dtype"]
    w = g.tensor(dt, ns) if g.chance(0.5) else None
    b = g.tensor(dt, ns) if g.chance(0.5) else None
    return [x, ns, w, b], {}


op("layerNorm", g_layer_norm, lambda a, k: F.layer_norm(a[0], a[1], a[2], a[3]))


def g_cross_entropy(g):
    n, c = g.r.randint(0, 3), g.r.randint(1, 4)
    shape = g.pick(([c], [n, c], [n, c, 2]))
    x = g.tensor(allowed=FLOATS, shape=shape, special=g.chance(0.3))
    kw = {}
    if g.chance(0.4):
        tshape = shape
        target = g.tensor(x["T"]["dtype"], tshape, special=False, positive=True)
        if g.chance(0.2):
            kw["ignoreIndex"] = 1
    else:
        tshape = [s for i, s in enumerate(shape) if i != (0 if len(shape) == 1 else 1)]
        target = g.index(0, c, tshape)
        if g.chance(0.3):
            kw["ignoreIndex"] = g.r.randint(0, c - 1)
    if g.chance(0.3):
        kw["weight"] = g.tensor(x["T"]["dtype"], [c], special=False, positive=True, view=False, grad=False)
    if g.chance(0.3):
        kw["reduction"] = g.pick(("sum", "none", "mean"))
    if g.chance(0.2):
        kw["labelSmoothing"] = g.pick((0.1, 0.25))
    return [x, target], kw


def t_cross_entropy(a, k):
    kw = dict(weight=k.get("weight"), reduction=k.get("reduction", "mean"), label_smoothing=k.get("labelSmoothing", 0.0))
    if "ignoreIndex" in k:
        kw["ignore_index"] = k["ignoreIndex"]
    return F.cross_entropy(a[0], L(a[1]) if a[1].dtype == torch.int32 else a[1], **kw)


op("crossEntropy", g_cross_entropy, t_cross_entropy)


def g_mse(g):
    x = g.tensor(allowed=FLOATS)
    y = g.tensor(x["T"]["dtype"], _vshape(x, []) if g.chance(0.9) else g.shape())
    kw = {"reduction": g.pick(("sum", "none", "mean"))} if g.chance(0.5) else {}
    return [x, y], kw


op("mseLoss", g_mse, lambda a, k: F.mse_loss(a[0], a[1], reduction=k.get("reduction", "mean")))


def g_to(g):
    # Casting NaN or infinity to an integer is undefined in C++ (PyTorch gives INT_MIN): finite values only.
    return [g.tensor(allowed=ANY, special=False), g.pick(("float32", "float64", "int32", "bool"))], {}


op("to", g_to, lambda a, k: a[0].to({"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "bool": torch.bool}[a[1]]))


def g_mm(g):
    dt = g.dtype(FLOATS)
    m, k, n = g.r.randint(0, 3), g.r.randint(0, 3), g.r.randint(0, 3)
    sa, sb = [m, k], [k if g.chance(0.95) else k + 1, n]
    if g.chance(0.05):
        sa = [m]
    return [g.tensor(dt, sa), g.tensor(dt, sb)], {}


op("mm", g_mm, lambda a, k: torch.mm(a[0], a[1]))


def g_bmm(g):
    dt = g.dtype(FLOATS)
    b, m, k, n = g.r.randint(0, 2), g.r.randint(0, 3), g.r.randint(0, 3), g.r.randint(0, 3)
    return [g.tensor(dt, [b, m, k]), g.tensor(dt, [b if g.chance(0.95) else b + 1, k, n])], {}


op("bmm", g_bmm, lambda a, k: torch.bmm(a[0], a[1]))


def g_arange(g):
    if g.chance(0.5):
        start, end, step = g.r.randint(-4, 4), g.r.randint(-4, 8), g.pick((1, 2, 3, -1, -2, 0))
    else:
        start, end, step = g.scalar("float"), g.scalar("float") * 2, g.pick((0.5, 0.75, -0.5, 1.25))
    return [start, end, step], {}


op("arange", g_arange, lambda a, k: torch.arange(a[0], a[1], a[2]))


def g_full(g):
    shape = g.shape()
    if g.chance(0.05) and shape:
        shape[0] = g.pick((-1, 2.5))
    dt = g.pick(("float32", "float64", "int32", "bool"))
    value = g.scalar("int") if dt in ("int32", "bool") or g.chance(0.3) else g.scalar()
    return [shape, value], {"dtype": dt}


TD = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "bool": torch.bool}
op("full", g_full, lambda a, k: torch.full(a[0], a[1], dtype=TD[k["dtype"]]))
op("zeros", lambda g: ([g.shape()], {"dtype": g.pick(tuple(TD))}), lambda a, k: torch.zeros(a[0], dtype=TD[k["dtype"]]))
op("ones", lambda g: ([g.shape()], {"dtype": g.pick(tuple(TD))}), lambda a, k: torch.ones(a[0], dtype=TD[k["dtype"]]))


def g_dropout(g):
    # Only the deterministic settings: p = 0, p = 1, evaluation mode, and invalid probabilities.
    x = g.tensor(allowed=FLOATS)
    p = g.pick((0.0, 1.0, 0.5, 1.5, -0.25))
    training = p in (0.0, 1.0, 1.5, -0.25) and g.chance(0.7)
    return [x, p], {"training": training}


op("dropout", g_dropout, lambda a, k: F.dropout(a[0], a[1], training=k["training"]))


def g_expand_as(g):
    x = g.tensor(allowed=NUM)
    s = _vshape(x, [])
    target = [g.r.randint(1, 3) if d == 1 else d for d in s]
    if g.chance(0.3):
        target = [2] + target
    return [x, g.tensor(allowed=NUM, shape=target, grad=False)], {}


op("expandAs", g_expand_as, lambda a, k: a[0].expand_as(a[1]))


def g_squeeze_dims(g):
    x = g.tensor(allowed=NUM, shape=[g.pick((1, 1, 2, 0)) for _ in range(g.r.randint(1, 3))])
    nd = len(_vshape(x, []))
    return [x, g.r.sample(range(nd), g.r.randint(0, nd))], {}


op("squeezeDims", g_squeeze_dims, lambda a, k: a[0].squeeze(tuple(a[1])))


def g_pow_special(g):
    # PyTorch special-cases some scalar exponents (sqrt, rsqrt, square, cube, reciprocal): edge bases against them.
    x = g.tensor(allowed=NUM)
    return [x, g.pick((0.5, -0.5, 2, 3, -1, -2, 0, 1, 1.5, -1.5, float("inf"), float("-inf"), float("nan")))], {}


op("powSpecial", lambda g: (lambda a: ([a[0][0], _enc(a[0][1])], {}))(g_pow_special(g)), lambda a, k: torch.pow(a[0], a[1]))


def _enc(v):
    from gen import enc_num
    return enc_num(v)


def g_rbinary(g):
    # A number on the left: PyTorch's functions refuse it, its Python operators (rsub, rtruediv, …) agree with ringtorch.
    b = g.tensor(allowed=NUM + ("bool",))
    return [g.scalar(), b, g.pick(("add", "sub", "mul", "div", "pow"))], {}


_OPERATORS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "pow": lambda a, b: a ** b}
op("rbinary", g_rbinary, lambda a, k: _OPERATORS[a[2]](a[0], a[1]))


# ---- issue 22: trigonometric and friends ----
# Domains are covered by the values gen draws (normals, ±0, ±inf, NaN, 1e30, ties at ±1, 2).
for name, f in [("sin", torch.sin), ("cos", torch.cos), ("tan", torch.tan), ("asin", torch.asin), ("acos", torch.acos),
                ("atan", torch.atan), ("sinh", torch.sinh), ("cosh", torch.cosh), ("asinh", torch.asinh),
                ("acosh", torch.acosh), ("atanh", torch.atanh), ("log1p", torch.log1p), ("expm1", torch.expm1)]:
    op(name, lambda g: ([g.tensor(allowed=NUM)], {}), (lambda f: lambda a, k: f(a[0]))(f))
op("atan2", g_binary(NUM, scalar=0.0), lambda a, k: torch.atan2(a[0], a[1]))


# ---- reductions ----
def t_reduce_dims(f):
    def run(a, k):
        if len(a) == 1:
            return f(a[0])
        return f(a[0], _torch_dim(a[1]), keepdim=a[2] if len(a) > 2 else False)
    return run


def g_reduce_dims(dtypes):
    def gen(g):
        x = g.tensor(allowed=dtypes)
        nd = len(_vshape(x, []))
        args = [x]
        if g.chance(0.8):
            args.append(g.dims(nd) if g.chance(0.5) else g.dim(nd))
            if args[1] is None:
                args[1] = 0 if nd else []
            if g.chance(0.5):
                args.append(g.chance(0.5))
        return args, {}
    return gen


def g_logsumexp(g):
    # torch.logsumexp needs a dim (ringtorch's defaults to all); PyTorch with dim=[] fails on its
    # own broadcast ("output with shape [] doesn't match"), so [] is replaced by a dim.
    (x, *rest), _ = g_reduce_dims(FLOATS + ("int32",))(g)
    nd = len(_vshape(x, []))
    dim = rest[0] if rest else g.dim(nd)
    if dim == []:
        dim = g.dim(nd)
    return [x, dim, rest[1] if len(rest) > 1 else False], {}


op("logsumexp", g_logsumexp, t_reduce_dims(torch.logsumexp))
op("amax", g_reduce_dims(NUM), t_reduce_dims(torch.amax))
op("amin", g_reduce_dims(NUM), t_reduce_dims(torch.amin))
op("any", g_reduce_dims(ANY), t_reduce_dims(torch.any))
op("all", g_reduce_dims(ANY), t_reduce_dims(torch.all))

INF = float("inf")


def g_vector_norm(g):
    x = g.tensor(allowed=FLOATS)
    nd = len(_vshape(x, []))
    ord_ = g.pick((2, 2, 1, 0, 3, 0.5, -1, INF, -INF, 1.5))
    dim = None if g.chance(0.3) else (g.dims(nd) if g.chance(0.5) else g.dim(nd))
    return [x, _enc(ord_), dim, g.chance(0.3)], {}


op("vectorNorm", g_vector_norm, lambda a, k: torch.linalg.vector_norm(a[0], a[1], _torch_dim(a[2]), a[3]))


def g_norm(g):
    x = g.tensor(allowed=FLOATS)
    nd = len(_vshape(x, []))
    p = g.pick(("fro", 2, 1, 3, INF, -INF, 0, 0.5))
    dim = None if g.chance(0.4) else (g.r.sample(range(nd), g.r.randint(1, nd)) if nd and g.chance(0.5) else g.dim(nd))
    return [x, _enc(p) if p != "fro" else p, dim, g.chance(0.3)], {}


op("norm", g_norm, lambda a, k: torch.norm(a[0], a[1], _torch_dim(a[2]), a[3]))


# ---- non-finite ----
op("isnan", lambda g: ([g.tensor(allowed=ANY)], {}), lambda a, k: torch.isnan(a[0]))
op("isinf", lambda g: ([g.tensor(allowed=ANY)], {}), lambda a, k: torch.isinf(a[0]))
op("isfinite", lambda g: ([g.tensor(allowed=ANY)], {}), lambda a, k: torch.isfinite(a[0]))


def g_nan_to_num(g):
    x = g.tensor(allowed=NUM)
    a = [x]
    if g.chance(0.7):
        a += [g.pick((0.0, 1.5, -2.0)), g.pick((None, 100.0, 3.0)), g.pick((None, -100.0, -3.0))]
    return a, {}


op("nanToNum", g_nan_to_num, lambda a, k: torch.nan_to_num(a[0], *a[1:]))


# ---- losses ----
def g_nll(g):
    n, c = g.r.randint(0, 3), g.r.randint(1, 4)
    shape = g.pick(([c], [n, c], [n, c, 2]))
    x = g.tensor(allowed=FLOATS, shape=shape, special=g.chance(0.3))
    tshape = [s for i, s in enumerate(shape) if i != (0 if len(shape) == 1 else 1)]
    target = g.index(0, c, tshape)
    kw = {}
    if g.chance(0.3):
        kw["ignoreIndex"] = g.r.randint(0, c - 1)
    if g.chance(0.3):
        kw["weight"] = g.tensor(x["T"]["dtype"], [c], special=False, positive=True, view=False, grad=False)
    if g.chance(0.5):
        kw["reduction"] = g.pick(("sum", "none", "mean"))
    return [x, target], kw


def t_nll(a, k):
    kw = dict(weight=k.get("weight"), reduction=k.get("reduction", "mean"))
    if "ignoreIndex" in k:
        kw["ignore_index"] = k["ignoreIndex"]
    return F.nll_loss(a[0], L(a[1]), **kw)


op("nllLoss", g_nll, t_nll)


def g_bce(logits):
    def gen(g):
        s = g.shape()
        if logits:
            x = g.tensor(allowed=FLOATS, shape=s)
        else:
            x = g.tensor(allowed=FLOATS, shape=s, special=False)
            x["T"]["values"] = [round(1 / (1 + math.exp(-v)), 4) if isinstance(v, float) else v for v in x["T"]["values"]]
        dt = x["T"]["dtype"]
        y = g.tensor(dt, s if g.chance(0.95) else g.shape(), special=False)
        y["T"]["values"] = [g.pick((0.0, 1.0, 0.25)) if isinstance(v, float) else v for v in y["T"]["values"]]
        kw = {}
        # PyTorch refuses weights that require grad; ringtorch detaches them (README): grad-free here.
        if g.chance(0.3):
            kw["weight"] = g.tensor(dt, g.bshape(s), special=False, positive=True, view=False, grad=False)
        if logits and g.chance(0.3):
            kw["posWeight"] = g.tensor(dt, s[-1:] if s else [], special=False, positive=True, view=False, grad=False)
        if g.chance(0.5):
            kw["reduction"] = g.pick(("sum", "none", "mean"))
        return [x, y], kw
    return gen


op("binaryCrossEntropy", g_bce(False), lambda a, k: F.binary_cross_entropy(a[0], a[1], weight=k.get("weight"), reduction=k.get("reduction", "mean")))
op("binaryCrossEntropyWithLogits", g_bce(True), lambda a, k: F.binary_cross_entropy_with_logits(
    a[0], a[1], weight=k.get("weight"), pos_weight=k.get("posWeight"), reduction=k.get("reduction", "mean")))


# ---- scatter ----
def g_scatter(kind):
    def gen(g):
        x = g.tensor(allowed=NUM if kind == "reduce" else ANY)
        s = _vshape(x, [])
        d = g.dim(len(s), bad=0.02)
        size = s[d] if -len(s) <= d < len(s) else 1
        ishape = [g.r.randint(0, max(1, v)) if i != (d % max(len(s), 1)) else g.r.randint(0, 3) for i, v in enumerate(s)]
        index = g.index(0, size, ishape)
        if kind == "scalar":
            return [x, d, index, g.scalar("int") if x["T"]["dtype"] in ("int32", "bool") else g.scalar()], {}
        src = g.tensor(x["T"]["dtype"], ishape)
        if kind == "reduce":
            kw = {"includeSelf": g.chance(0.5)} if g.chance(0.5) else {}
            return [x, d, index, src, g.pick(("sum", "prod", "mean", "amax", "amin"))], kw
        return [x, d, index, src], {}
    return gen


def t_scatter(a, k):
    return torch.scatter(a[0], a[1], L(a[2]), a[3])


op("scatter", g_scatter("src"), t_scatter)
op("scatterValue", g_scatter("scalar"), t_scatter)
op("scatterReduce", g_scatter("reduce"), lambda a, k: torch.scatter_reduce(a[0], a[1], L(a[2]), a[3], a[4], include_self=k.get("includeSelf", True)))


# ---- shape and order ----
def g_one_hot(g):
    n = g.r.randint(0, 4)
    x = g.index(0, n if n else 1, g.shape(g.r.randint(0, 2)))
    return [x, g.pick((-1, n, n + 2))] if g.chance(0.7) else [x], {}


op("oneHot", g_one_hot, lambda a, k: F.one_hot(L(a[0]), *a[1:]))


def g_pad(g):
    mode = g.pick(("constant", "constant", "reflect", "replicate", "circular"))
    x = g.tensor(allowed=NUM if mode == "constant" else FLOATS, shape=g.shape(g.r.randint(1, 4) if mode == "constant" else g.r.randint(2, 4), zero=0.03))
    nd = len(_vshape(x, []))
    k = g.r.randint(1, min(nd, 3) if mode != "constant" else nd)
    lo = -2 if mode == "constant" else 0
    pads = [g.r.randint(lo, 2) for _ in range(2 * k)]
    args = [x, pads, mode]
    if mode == "constant" and g.chance(0.5):
        args.append(g.scalar("int") if x["T"]["dtype"] == "int32" else g.scalar())
    return args, {}


op("pad", g_pad, lambda a, k: F.pad(a[0], a[1], a[2], *a[3:]))


def g_sort(g):
    x = g.tensor(allowed=NUM)
    return [x, g.dim(len(_vshape(x, []))), g.chance(0.5)], {}


# ringtorch's sort is always stable, so PyTorch's stable sort is its reference.
op("sort", g_sort, lambda a, k: tuple(torch.sort(a[0], dim=a[1], descending=a[2], stable=True)))
op("argsort", g_sort, lambda a, k: torch.argsort(a[0], dim=a[1], descending=a[2], stable=True))


def g_topk(g):
    x = g.tensor(allowed=NUM, special=False)
    s = _vshape(x, [])
    d = g.dim(len(s))
    size = s[d] if -len(s) <= d < len(s) else 1
    # Distinct values (and no expanded view, which repeats them): which of equal elements topk
    # returns is unspecified in PyTorch.
    if x["T"]["view"] and x["T"]["view"][0][0] == "expand":
        x = g.tensor(x["T"]["dtype"], s, special=False, view=False)
    x["T"]["values"] = [v + i * 1e-3 if x["T"]["dtype"] != "int32" else v * 100 + i for i, v in enumerate(x["T"]["values"])] \
        if x["T"]["dtype"] in ("float32", "float64", "int32") else x["T"]["values"]
    return [x, g.r.randint(0, size) if g.chance(0.95) else size + 1, d, g.chance(0.5)], {}


op("topk", g_topk, lambda a, k: tuple(torch.topk(a[0], a[1], a[2], a[3])))


def g_cumulative(g):
    x = g.tensor(allowed=NUM + ("bool",))
    kw = {"dtype": g.pick(("float64", "float32"))} if g.chance(0.2) else {}
    return [x, g.dim(len(_vshape(x, [])))], kw


def t_cumulative(f):
    return lambda a, k: f(a[0], a[1], dtype=TD[k["dtype"]] if "dtype" in k else None)


op("cumsum", g_cumulative, t_cumulative(torch.cumsum))
op("cumprod", g_cumulative, t_cumulative(torch.cumprod))


def g_flip(g):
    x = g.tensor(allowed=ANY)
    nd = len(_vshape(x, []))
    return [x, g.r.sample(range(nd), g.r.randint(0, nd)) if nd and g.chance(0.9) else [g.dim(nd)]], {}


op("flip", g_flip, lambda a, k: torch.flip(a[0], a[1]))


def g_roll(g):
    x = g.tensor(allowed=ANY)
    nd = len(_vshape(x, []))
    if g.chance(0.3) or nd == 0:
        return [x, g.r.randint(-5, 5), None], {}
    k = g.r.randint(1, nd)
    return [x, [g.r.randint(-5, 5) for _ in range(k)], g.r.sample(range(nd), k)], {}


op("roll", g_roll, lambda a, k: torch.roll(a[0], a[1], a[2]))


def g_repeat(g):
    x = g.tensor(allowed=ANY)
    nd = len(_vshape(x, []))
    reps = [g.r.randint(0, 3) for _ in range(nd + g.r.randint(0, 2))]
    if g.chance(0.05):
        reps = reps[1:] if reps else [-1]
    return [x, reps], {}


op("repeat", g_repeat, lambda a, k: a[0].repeat(a[1]))

EINSUMS = [("ij,jk->ik", [["i", "j"], ["j", "k"]]), ("ij->ji", [["i", "j"]]), ("ii->i", [["i", "i"]]), ("ii", [["i", "i"]]),
           ("bij,bjk->bik", [["b", "i", "j"], ["b", "j", "k"]]), ("i,j->ij", [["i"], ["j"]]), ("i,i->", [["i"], ["i"]]),
           ("ij->", [["i", "j"]]), ("...ij->...ji", [["b", "i", "j"]]), ("ij,ij->i", [["i", "j"], ["i", "j"]]),
           ("ijk,k->ij", [["i", "j", "k"], ["k"]]), ("i,j,k->ijk", [["i"], ["j"], ["k"]]), ("ij,jk", [["i", "j"], ["j", "k"]])]


def g_einsum(g):
    eq, shapes = g.pick(EINSUMS)
    sizes = {c: g.r.randint(0, 3) if g.chance(0.1) else g.r.randint(1, 3) for c in "bijk"}
    dt = g.dtype(FLOATS)
    ts = [g.tensor(dt, [sizes[c] for c in s]) for s in shapes]
    if g.chance(0.04):
        ts = ts[:-1] if len(ts) > 1 else ts + ts
    return [eq, ts], {}


op("einsum", g_einsum, lambda a, k: torch.einsum(a[0], *a[1]))


# ---- coverage of the rest of the public ops (fuzz3) ----
op("logSigmoid", lambda g: ([g.tensor(allowed=FLOATS)], {}), lambda a, k: F.logsigmoid(a[0]))

TDB = dict(TD, bfloat16=torch.bfloat16)


def g_like(kind):
    def gen(g):
        x = g.tensor(allowed=ANY, grad=False)
        kw = {"dtype": g.pick(tuple(TDB))} if g.chance(0.4) else {}
        if kind == "full":
            dt = kw.get("dtype", x["T"]["dtype"])
            return [x, g.scalar("int") if dt in ("int32", "bool") else g.scalar()], kw
        return [x], kw
    return gen


def t_like(f):
    return lambda a, k: f(*a, **({"dtype": TDB[k["dtype"]]} if "dtype" in k else {}))


op("zerosLike", g_like("zeros"), t_like(torch.zeros_like))
op("onesLike", g_like("ones"), t_like(torch.ones_like))
op("fullLike", g_like("full"), t_like(torch.full_like))


def g_scatter_inplace(kind):
    base = g_scatter(kind)

    def gen(g):
        args, kw = base(g)
        args[0]["T"]["grad"] = False
        if len(args) > 3 and isinstance(args[3], dict):
            args[3]["T"]["grad"] = False
        return args, kw
    return gen


op("scatter_", g_scatter_inplace("src"), lambda a, k: a[0].scatter_(a[1], L(a[2]), a[3]), inplace=True)
op("scatterValue_", g_scatter_inplace("scalar"), lambda a, k: a[0].scatter_(a[1], L(a[2]), a[3]), inplace=True)
op("scatterReduce_", g_scatter_inplace("reduce"),
   lambda a, k: a[0].scatter_reduce_(a[1], L(a[2]), a[3], a[4], include_self=k.get("includeSelf", True)), inplace=True)


def g_sdpa(g):
    dt = g.dtype(FLOATS, stray=0.02)
    b, h, l, s, d, dv = g.r.randint(1, 2), g.r.randint(1, 2), g.r.randint(1, 3), g.r.randint(1, 3), g.r.randint(1, 4), g.r.randint(1, 3)
    lead = [b, h] if g.chance(0.7) else [b]
    q = g.tensor(dt, lead + [l, d], special=False)
    k_ = g.tensor(dt, lead + [s, d], special=False)
    v = g.tensor(dt, lead + [s, dv], special=False)
    kw = {}
    if g.chance(0.4):
        kw["bias"] = g.tensor(dt, g.pick(([l, s], [1, s], lead + [l, s])), special=False)
    return [q, k_, v], kw


op("scaledDotProductAttention", g_sdpa, lambda a, k: F.scaled_dot_product_attention(a[0], a[1], a[2], attn_mask=k.get("bias")))


def g_to_bf16(g):
    return [g.tensor(allowed=ANY + ("bfloat16",), special=False), g.pick(("float32", "float64", "int32", "bool", "bfloat16"))], {}


op("toAny", g_to_bf16, lambda a, k: a[0].to(TDB[a[1]]))
op("fullAny", lambda g: ([g.shape(), g.scalar("float")], {"dtype": g.pick(tuple(TDB))}), lambda a, k: torch.full(a[0], a[1], dtype=TDB[k["dtype"]]))


def g_inplace_bf16(g):
    # In-place arithmetic into a bfloat16 destination (possibly a view): computed in float32, rounded once.
    a = g.tensor("bfloat16", grad=False)
    name = g.pick(("add_", "sub_", "mul_", "div_", "copy_"))
    scalar = g.chance(0.4) and name != "copy_"  # ringtorch's copy_ takes a tensor
    b = g.scalar() if scalar else g.tensor(allowed=("bfloat16", "float32", "int32"), shape=g.bshape(_vshape(a, [])), grad=False)
    return [a, b, name], {}


op("inplaceBf16", g_inplace_bf16, lambda a, k: getattr(a[0], a[2])(a[1]), inplace=True)


# ---- convolution, pooling and normalisation over channels (N, C, spatial...) ----
def _spatial_input(g, spatial, dt, c):
    """An [N, C, *spatial] input (or, rarely, one without the batch dim)."""
    lead = [g.r.randint(1, 2)] if g.chance(0.85) else []
    return g.tensor(dt, lead + [c] + spatial)


def g_conv(nd):
    def gen(g):
        dt = g.dtype(FLOATS, stray=0.05)
        groups = g.pick((1, 1, 2))
        cin, cout = groups * g.r.randint(1, 2), groups * g.r.randint(1, 2)
        kernel = [g.r.randint(1, 3) for _ in range(nd)]
        spatial = [g.r.randint(1, 5) for _ in range(nd)]
        x = _spatial_input(g, spatial, dt, cin)
        w = g.tensor(dt, [cout, cin // groups] + kernel)
        b = g.tensor(dt, [cout]) if g.chance(0.6) else None
        kw = {"groups": groups}
        stride = g.r.randint(1, 2)
        if g.chance(0.5):
            kw["stride"] = stride if g.chance(0.5) else [g.r.randint(1, 2) for _ in range(nd)]
        if g.chance(0.6):
            kw["padding"] = g.pick((0, 1, 2, "valid", "same")) if g.chance(0.8) else [g.r.randint(0, 1) for _ in range(nd)]
        if g.chance(0.3):
            kw["dilation"] = g.r.randint(1, 2)
        return [x, w, b], kw
    return gen


def _conv_kw(k):
    return {"stride": k.get("stride", 1), "padding": k.get("padding", 0), "dilation": k.get("dilation", 1), "groups": k["groups"]}


op("conv1d", g_conv(1), lambda a, k: F.conv1d(a[0], a[1], a[2], **_conv_kw(k)))
op("conv2d", g_conv(2), lambda a, k: F.conv2d(a[0], a[1], a[2], **_conv_kw(k)))


def g_pool(kind):
    def gen(g):
        dt = g.dtype(FLOATS, stray=0.05)
        spatial = [g.r.randint(1, 6), g.r.randint(1, 6)]
        x = _spatial_input(g, spatial, dt, g.r.randint(1, 2))
        if kind == "adaptive":
            return [x, g.pick((1, 2, 3, [2, 1], [None, 2], [4, 3]))], {}
        k = g.r.randint(1, 3) if g.chance(0.7) else [g.r.randint(1, 3), g.r.randint(1, 3)]
        kw = {}
        if g.chance(0.5):
            kw["stride"] = g.r.randint(1, 3)
        if g.chance(0.5):
            kw["padding"] = g.r.randint(0, 1)
        if g.chance(0.3):
            kw["ceilMode"] = True
        if kind == "max" and g.chance(0.3):
            kw["dilation"] = 2
        if kind == "avg":
            if g.chance(0.3):
                kw["countIncludePad"] = False
            if g.chance(0.2):
                kw["divisorOverride"] = g.r.randint(1, 5)
        if kind == "max" and _window_in_padding(spatial, k, kw):
            # PyTorch's backward writes such a window's gradient outside the input (heap corruption
            # that aborts the generator): compare the forward only.
            x["T"]["grad"] = False
        return [x, k], kw
    return gen


def _window_in_padding(spatial, k, kw):
    """Whether some max-pool window has no position inside the input (PyTorch's output size rule)."""
    for d, size in enumerate(spatial):
        kd = k if isinstance(k, int) else k[d]
        s, p, dil = kw.get("stride", kd), kw.get("padding", 0), kw.get("dilation", 1)
        if p * 2 > kd:
            return False  # refused before any kernel runs
        span = dil * (kd - 1) + 1
        out = (size + 2 * p - span + (s - 1 if kw.get("ceilMode") else 0)) // s + 1
        if kw.get("ceilMode") and (out - 1) * s >= size + p:
            out -= 1
        for i in range(max(out, 0)):
            if not any(0 <= i * s - p + j * dil < size for j in range(kd)):
                return True
    return False


def _pool_kw(k, names):
    out = {}
    for ours, theirs in names:
        if ours in k:
            out[theirs] = k[ours]
    return out


MAXPOOL_KW = (("stride", "stride"), ("padding", "padding"), ("dilation", "dilation"), ("ceilMode", "ceil_mode"))
AVGPOOL_KW = (("stride", "stride"), ("padding", "padding"), ("ceilMode", "ceil_mode"), ("countIncludePad", "count_include_pad"), ("divisorOverride", "divisor_override"))
op("maxPool2d", g_pool("max"), lambda a, k: F.max_pool2d(a[0], a[1], **_pool_kw(k, MAXPOOL_KW)))
op("avgPool2d", g_pool("avg"), lambda a, k: F.avg_pool2d(a[0], a[1], **_pool_kw(k, AVGPOOL_KW)))
op("adaptiveAvgPool2d", g_pool("adaptive"), lambda a, k: F.adaptive_avg_pool2d(a[0], a[1]))


def g_batch_norm(g):
    dt = g.dtype(FLOATS, stray=0.05)
    c = g.r.randint(1, 3)
    shape = [g.r.randint(1, 3), c] + [g.r.randint(1, 3) for _ in range(g.pick((0, 1, 2)))]
    x = g.tensor(dt, shape)
    kw = {"training": g.chance(0.7)}
    stats = g.chance(0.7) or not kw["training"]
    rm = g.tensor(dt, [c], grad=False, special=False, view=False) if stats else None
    rv = g.tensor(dt, [c], grad=False, special=False, view=False, positive=True) if stats else None
    if g.chance(0.6):
        kw["weight"] = g.tensor(dt, [c])
    if g.chance(0.6):
        kw["bias"] = g.tensor(dt, [c])
    if g.chance(0.3):
        kw["eps"] = 1e-3
    if g.chance(0.3):
        kw["momentum"] = 0.3
    return [x, rm, rv], kw


op("batchNorm", g_batch_norm, lambda a, k: F.batch_norm(a[0], a[1], a[2], k.get("weight"), k.get("bias"), k["training"], k.get("momentum", 0.1), k.get("eps", 1e-5)))


def g_group_norm(g):
    dt = g.dtype(FLOATS, stray=0.05)
    groups = g.r.randint(1, 3)
    c = groups * g.r.randint(1, 2) if g.chance(0.95) else groups + 1
    shape = [g.r.randint(1, 2), c] + [g.r.randint(1, 3) for _ in range(g.pick((0, 1, 2)))]
    x = g.tensor(dt, shape)
    w = g.tensor(dt, [c]) if g.chance(0.6) else None
    b = g.tensor(dt, [c]) if g.chance(0.6) else None
    if any(t is not None and t["T"]["grad"] for t in (w, b)) and x["T"]["view"] and x["T"]["dtype"] in FLOATS + ("bfloat16",):
        # PyTorch's backward segfaults for a strided input that needs no gradient beside a weight that does.
        x["T"]["grad"] = True
    return [x, groups, w, b], {}


op("groupNorm", g_group_norm, lambda a, k: F.group_norm(a[0], a[1], a[2], a[3]))
