#!/usr/bin/python3
"""Writes test/fixtures/nn/optim.json: PyTorch's optimizers and schedulers on a tiny model.

    /usr/bin/python3 tools/nn/gen_optim_fixtures.py

- "optimizers": for each configuration, 10 steps of Linear(4,5)-Tanh-Linear(5,3) with
  cross-entropy on hashed batches (common.py), from det_init weights: the losses and the final
  parameters. Optional gradient clipping before each step.
- "resume": Adam's state_dict after 5 steps (PyTorch's structure, tensors encoded) and the
  parameters after 5 more, to check that ringtorch loads PyTorch's optimizer state.
- "schedulers": the lr (and momentum or beta1 where cycled) after construction and each step.
"""

import math

import torch
import torch.nn as nn

from common import det_init, encode, hash_labels, hash_tensor, number, write


def tiny():
    return det_init(nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3)))


def batch(step):
    return hash_tensor([8, 4], 100 + step), hash_labels([8], 200 + step, 3)


def train(model, opt, steps, clip=None, start=0):
    losses = []
    for s in range(start, start + steps):
        x, y = batch(s)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(number(loss.item(), torch.float32))
    return losses


def optimizers():
    configs = [
        ("sgd", "SGD", {"lr": 0.1}, None),
        ("sgd_momentum_dampening_wd", "SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}, None),
        ("sgd_nesterov", "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}, None),
        ("sgd_maximize_clip", "SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}, 0.5),
        ("adam", "Adam", {"lr": 1e-2}, None),
        ("adam_amsgrad_wd", "Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.1}, None),
        ("adam_maximize", "Adam", {"lr": 1e-3, "maximize": True, "betas": [0.8, 0.9]}, None),
        ("adamw", "AdamW", {"lr": 1e-2}, None),
        ("adamw_amsgrad_betas_eps", "AdamW", {"lr": 1e-2, "amsgrad": True, "betas": [0.8, 0.9], "eps": 1e-6, "weight_decay": 0.1}, 1.0),
    ]
    out = []
    for name, cls, kw, clip in configs:
        model = tiny()
        opt = getattr(torch.optim, cls)(model.parameters(), **{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})
        losses = train(model, opt, 10, clip)
        out.append({"name": name, "optimizer": cls, "options": kw, "clip": clip, "losses": losses,
                    "params": {n: encode(p) for n, p in model.named_parameters()}})
    # Two groups with their own hyperparameters.
    model = tiny()
    params = list(model.parameters())
    opt = torch.optim.Adam([{"params": params[:2]}, {"params": params[2:], "lr": 1e-3, "weight_decay": 0.05}], lr=1e-2)
    losses = train(model, opt, 10)
    out.append({"name": "adam_two_groups", "optimizer": "Adam", "options": {"lr": 1e-2},
                "groups": [{"params": [0, 1]}, {"params": [2, 3], "lr": 1e-3, "weight_decay": 0.05}],
                "clip": None, "losses": losses, "params": {n: encode(p) for n, p in model.named_parameters()}})
    return out


def resume():
    model = tiny()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=0.01)
    train(model, opt, 5)
    sd = opt.state_dict()
    state = {str(k): {name: (encode(v) if torch.is_tensor(v) and v.dim() > 0 else number(float(v), torch.float64)) for name, v in s.items()}
             for k, s in sd["state"].items()}
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in sd["param_groups"]]
    params5 = {n: encode(p) for n, p in model.named_parameters()}
    losses = train(model, opt, 5, start=5)
    return {"state": state, "param_groups": groups, "paramsAfter5": params5, "losses": losses,
            "paramsAfter10": {n: encode(p) for n, p in model.named_parameters()}}


def schedulers():
    def record(name, opt_factory, sched_factory, steps, track=None):
        model = tiny()
        opt = opt_factory(model.parameters())
        sched = sched_factory(opt)
        lrs, moms = [opt.param_groups[0]["lr"]], []

        def momentum():
            g = opt.param_groups[0]
            return g["betas"][0] if track == "beta1" else g["momentum"]

        if track:
            moms.append(momentum())
        for _ in range(steps):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
            if track:
                moms.append(momentum())
        entry = {"name": name, "lrs": lrs, "stateDictKeys": sorted(k for k in sched.state_dict().keys())}
        if track:
            entry["momentum"] = moms
        return entry

    sgd = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)
    adam = lambda p: torch.optim.Adam(p, lr=0.1)
    S = torch.optim.lr_scheduler

    def warmup_cosine(warmup, total, cycles=0.5):
        def f(step):
            if step < warmup:
                return step / max(1, warmup)
            progress = (step - warmup) / max(1, total - warmup)
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * cycles * 2.0 * progress)))
        return f

    return [
        record("step_lr", sgd, lambda o: S.StepLR(o, step_size=3, gamma=0.5), 10),
        record("cosine_annealing", sgd, lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01), 15),
        record("lambda_lr", sgd, lambda o: S.LambdaLR(o, lambda e: 0.95 ** e), 8),
        record("warmup_cosine", adam, lambda o: S.LambdaLR(o, warmup_cosine(3, 12)), 14),
        record("one_cycle_cos_sgd", sgd, lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=20), 20, "momentum"),
        record("one_cycle_linear_three_phase_adam", adam,
               lambda o: S.OneCycleLR(o, max_lr=0.05, epochs=4, steps_per_epoch=5, anneal_strategy="linear", three_phase=True, pct_start=0.25), 20, "beta1"),
    ]


write("optim.json", {"optimizers": optimizers(), "resume": resume(), "schedulers": schedulers()})
