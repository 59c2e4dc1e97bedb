"""Writes test/distributed/fixtures/interleaved_orders.json: PyTorch's ScheduleInterleaved1F1B
order of actions for every rank, for several (ranks, stages per rank, micro-batches), as the
reference of test/distributed/pipeline.test.ts. Idle slots (None) are dropped: ringtorch's ranks
wait on their messages rather than on a global clock.

    ~/.venvs/peer/bin/python tools/gen_pipeline_orders.py
"""
import json
import os
from types import SimpleNamespace

import torch
from torch.distributed.pipelining.schedules import ScheduleInterleaved1F1B

cases = []
for p in (2, 3, 4):
    for v in (2, 3):
        for m in range(1, 2 * p + 3):
            rounds = max(1, m // p)
            if m % rounds != 0:
                continue
            # The method reads only these attributes of the schedule.
            ns = SimpleNamespace(n_local_stages=v, pp_group_size=p, microbatches_per_round=m // rounds, _n_microbatches=m)
            orders = []
            for rank in range(p):
                ops = ScheduleInterleaved1F1B._calculate_single_rank_operations(ns, rank)
                orders.append(" ".join(str(a) for a in ops if a is not None))
            cases.append({"p": p, "v": v, "m": m, "orders": orders})

out = os.path.join(os.path.dirname(__file__), "..", "test", "distributed", "fixtures", "interleaved_orders.json")
with open(out, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
    f.write("\n")
print(f"{len(cases)} cases -> {out}")
