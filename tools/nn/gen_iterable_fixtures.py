#!/usr/bin/env python3
"""Writes test/fixtures/nn/iterable_dataset.json: PyTorch's DataLoader over IterableDatasets with
workers (the batch order of its round-robin over workers), for test/data/iterable_dataset.test.ts.

    ~/.venvs/peer/bin/python tools/nn/gen_iterable_fixtures.py
"""

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from common import write


class Sharded(IterableDataset):
    """range(n), split between workers by id (the pattern of PyTorch's IterableDataset docs)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        w = get_worker_info()
        start, step = (w.id, w.num_workers) if w else (0, 1)
        return iter(range(start, self.n, step))


class Unsharded(IterableDataset):
    def __iter__(self):
        return iter(range(5))


def batches(ds, **kw):
    return [b.tolist() if torch.is_tensor(b) else b for b in DataLoader(ds, **kw)]


if __name__ == "__main__":
    cases = [
        {"name": "sharded_3_workers_batch_2", "dataset": "sharded", "n": 11, "batchSize": 2, "numWorkers": 3, "dropLast": False},
        {"name": "sharded_2_workers_batch_3_drop_last", "dataset": "sharded", "n": 10, "batchSize": 3, "numWorkers": 2, "dropLast": True},
        {"name": "sharded_no_workers", "dataset": "sharded", "n": 7, "batchSize": 3, "numWorkers": 0, "dropLast": False},
        {"name": "unsharded_2_workers_duplicates", "dataset": "unsharded", "n": 5, "batchSize": 2, "numWorkers": 2, "dropLast": False},
    ]
    for c in cases:
        ds = Sharded(c["n"]) if c["dataset"] == "sharded" else Unsharded()
        c["batches"] = batches(ds, batch_size=c["batchSize"], num_workers=c["numWorkers"], drop_last=c["dropLast"])
    write("iterable_dataset.json", {"cases": cases})
