# Peer of bench/track.ts's tracing row: PyTorch DDP (gloo) of the MLP 784-1024-1024-10, Adam, batch
# 64 per rank, 2 ranks x 1 thread, in turns with torch.profiler off and on (CPU activities, the
# trace exported at the end of each profiled turn, as a user of its timeline would). Prints
# RESULT {"off": ms/step, "on": ms/step} (medians over turns) from rank 0.
import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from common import best_opt
import json, os, statistics, tempfile, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"; os.environ["OMP_NUM_THREADS"] = "1"
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.profiler import profile, ProfilerActivity
B, STEPS, ROUNDS = 64, 50, 6
def run(rank, world, out):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29534"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784,1024), torch.nn.ReLU(), torch.nn.Linear(1024,1024), torch.nn.ReLU(), torch.nn.Linear(1024,10))
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = best_opt(torch.optim.Adam, model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()
    x = torch.randn(B, 784); y = torch.randint(0, 10, (B,))
    def step():
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y); loss.backward(); opt.step()
    for _ in range(20): step()
    ms = {"off": [], "on": []}
    for r in range(ROUNDS):
        for mode in ("off", "on"):
            dist.barrier(); t0 = time.perf_counter()
            if mode == "on":
                with profile(activities=[ProfilerActivity.CPU]) as prof:
                    for _ in range(STEPS): step()
                prof.export_chrome_trace(os.path.join(out, f"rank{rank}.json"))
            else:
                for _ in range(STEPS): step()
            dist.barrier(); ms[mode].append((time.perf_counter() - t0) * 1000 / STEPS)
    if rank == 0:
        print("RESULT " + json.dumps({k: statistics.median(v) for k, v in ms.items()}), flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as out:
        mp.spawn(run, args=(2, out), nprocs=2, join=True)
