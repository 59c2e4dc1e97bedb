# The PyTorch side of bench/cnn.ts: the same network, optimizer, batch and protocol; with
# --ranks N, DistributedDataParallel over gloo on N one-thread processes (total samples/s).
import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from common import best_opt, print_peak_rss
import argparse, os, statistics, time
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--runs", type=int, default=5)
p.add_argument("--steps", type=int, default=20)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--ranks", type=int, default=1)
a = p.parse_args()


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10),
    )


def run(rank, world):
    threads = 1 if world > 1 else int(os.environ.get("NT", "1"))
    torch.set_num_threads(threads)
    if world > 1:
        import torch.distributed as dist
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29541"
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = cnn()
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = best_opt(torch.optim.Adam, model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    local = a.batch // world
    x = torch.randn(local, 1, 28, 28)
    y = torch.randint(0, 10, (local,))

    def step():
        opt.zero_grad(set_to_none=True)
        lossf(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    res = []
    for r in range(a.runs):
        if world > 1:
            dist.barrier()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step()
        if world > 1:
            dist.barrier()
        res.append(a.steps * local * world / (time.perf_counter() - t0))
    if rank == 0:
        print(f"CNN torch ranks={world} threads={torch.get_num_threads()} samples/s runs={[round(v) for v in res]} median={statistics.median(res):.0f} max={max(res):.0f}", flush=True)
    if world > 1:
        dist.barrier()
    print_peak_rss(rank)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    if a.ranks > 1:
        import torch.multiprocessing as mp
        mp.spawn(run, args=(a.ranks,), nprocs=a.ranks, join=True)
    else:
        run(0, 1)
