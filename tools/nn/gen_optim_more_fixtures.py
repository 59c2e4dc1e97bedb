#!/usr/bin/env python3
"""Writes test/fixtures/nn/optim_more.json: RMSprop, Adagrad and the schedulers added for issue 15.

    ~/.venvs/peer/bin/python tools/nn/gen_optim_more_fixtures.py

- "optimizers": 10 steps of the tiny model of gen_optim_fixtures.py per configuration (losses and
  final parameters), PyTorch's defaults where an option is left out.
- "schedulers": the lr after construction and after each step.
- "plateau": ReduceLROnPlateau's lr after each step(metric) on a fixed metric sequence.
"""

import torch

import torch.nn as nn

from common import det_init, encode, hash_labels, hash_tensor, number, write


# The tiny model and loop of gen_optim_fixtures.py (not imported: that script writes its fixture on import).
def tiny():
    return det_init(nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3)))


def train(model, opt, steps):
    losses = []
    for s in range(steps):
        x, y = hash_tensor([8, 4], 100 + s), hash_labels([8], 200 + s, 3)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(number(loss.item(), torch.float32))
    return losses


def optimizers():
    configs = [
        ("rmsprop", "RMSprop", {"lr": 1e-2}),
        ("rmsprop_momentum_centered_wd", "RMSprop", {"lr": 5e-3, "alpha": 0.9, "momentum": 0.8, "centered": True, "weight_decay": 0.01}),
        ("rmsprop_maximize_eps", "RMSprop", {"lr": 1e-3, "eps": 1e-4, "maximize": True}),
        ("adagrad", "Adagrad", {"lr": 1e-1}),
        ("adagrad_decay_wd_init", "Adagrad", {"lr": 5e-2, "lr_decay": 0.1, "weight_decay": 0.01, "initial_accumulator_value": 0.5, "eps": 1e-6}),
        ("adagrad_maximize", "Adagrad", {"lr": 1e-2, "maximize": True}),
    ]
    out = []
    for name, cls, kw in configs:
        model = tiny()
        opt = getattr(torch.optim, cls)(model.parameters(), **kw)
        losses = train(model, opt, 10)
        out.append({"name": name, "optimizer": cls, "options": kw, "losses": losses,
                    "params": {n: encode(p) for n, p in model.named_parameters()}})
    return out


def schedulers():
    S = torch.optim.lr_scheduler

    def record(name, build, steps, lr=0.1):
        p = torch.nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([p], lr=lr, momentum=0.9)
        sched = build(opt)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(steps):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        return {"name": name, "lrs": lrs}

    return [
        record("multistep", lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.5), 12),
        record("exponential", lambda o: S.ExponentialLR(o, gamma=0.8), 8),
        record("linear_default", lambda o: S.LinearLR(o), 8),
        record("linear_down", lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=4), 7),
        record("sequential_warmup_cosine", lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=6, eta_min=0.001)], milestones=[3]), 12),
        record("sequential_three", lambda o: S.SequentialLR(o, [S.ExponentialLR(o, gamma=0.9), S.StepLR(o, step_size=2, gamma=0.5), S.MultiStepLR(o, milestones=[1, 3], gamma=0.3)], milestones=[3, 7]), 14),
    ]


def plateau():
    metrics = [1.0, 0.9, 0.95, 0.92, 0.91, 0.905, 0.9, 0.93, 0.8, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.91, 0.92]
    out = []
    for name, kw in [
        ("min_rel", {"patience": 2}),
        ("min_abs_cooldown_minlr", {"patience": 1, "threshold": 0.02, "threshold_mode": "abs", "cooldown": 2, "min_lr": 0.004, "factor": 0.5}),
        ("max_rel", {"mode": "max", "patience": 1, "factor": 0.3}),
    ]:
        p = torch.nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([p], lr=0.1)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        lrs = []
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        out.append({"name": name, "options": kw, "metrics": metrics, "lrs": lrs})
    return out


write("optim_more.json", {"optimizers": optimizers(), "schedulers": schedulers(), "plateau": plateau()})
