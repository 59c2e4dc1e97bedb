# PyTorch peer of bench/pipeline.ts: the same deep MLP (8 blocks of Linear + ReLU, the first
# Linear(IN = 784, D) and the others Linear(D, D), then Linear(D, 10)), SGD, batch B, split after
# block SPLIT (default 4) into 2 stages over gloo with
# torch.distributed.pipelining (PipelineStage + ScheduleGPipe / Schedule1F1B), or unsplit in one
# process. argv: gpipe | 1f1b | unsplit, then the number of micro-batches.
# Prints samples/s (median of RUNS runs of STEPS steps) and each rank's peak RSS.
import os, sys, time, statistics, resource
os.environ["OPENBLAS_NUM_THREADS"] = "1"; os.environ["OMP_NUM_THREADS"] = "1"
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp
from common import best_opt
MODE = sys.argv[1] if len(sys.argv) > 1 else "1f1b"
M = int(sys.argv[2]) if len(sys.argv) > 2 else 4
LAYERS, D, B = 8, int(os.environ.get("WIDTH", 512)), int(os.environ.get("BATCH", 256))
IN = int(os.environ.get("IN_FEATURES", 784))
STEPS, RUNS, WARMUP = int(os.environ.get("STEPS", 10)), int(os.environ.get("RUNS", 3)), int(os.environ.get("WARMUP", 5))

def model():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(IN if i == 0 else D, D), nn.ReLU()) for i in range(LAYERS)], nn.Linear(D, 10))

def report(rank, res):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(f"\nrank={rank} {MODE} samples/s runs={[round(v) for v in res]} median={statistics.median(res):.0f} rss_mb={rss:.0f}\n")
    sys.stdout.flush()

def timed(step, barrier=lambda: None):
    for _ in range(WARMUP): step()
    res = []
    for _ in range(RUNS):
        barrier(); t0 = time.perf_counter()
        for _ in range(STEPS): step()
        barrier(); res.append(STEPS * B / (time.perf_counter() - t0))
    return res

def run(rank, world, port):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, Schedule1F1B
    full = model()
    half = int(os.environ.get("SPLIT", LAYERS // 2))
    sub = nn.Sequential(*list(full)[:half]) if rank == 0 else nn.Sequential(*list(full)[half:])
    stage = PipelineStage(sub, rank, world, torch.device("cpu"))
    loss_fn = nn.functional.mse_loss
    sched = (ScheduleGPipe if MODE == "gpipe" else Schedule1F1B)(stage, n_microbatches=M, loss_fn=loss_fn)
    opt = best_opt(torch.optim.SGD, sub.parameters(), lr=1e-3)
    torch.manual_seed(1)
    x, y = torch.randn(B, IN), torch.randn(B, 10)
    def step():
        opt.zero_grad(set_to_none=False)
        if rank == 0: sched.step(x)
        else: sched.step(target=y, losses=[])
        opt.step()
    report(rank, timed(step, dist.barrier))
    dist.destroy_process_group()

if __name__ == "__main__":
    if MODE == "unsplit":
        torch.set_num_threads(1)
        m = model(); opt = best_opt(torch.optim.SGD, m.parameters(), lr=1e-3)
        torch.manual_seed(1)
        x, y = torch.randn(B, IN), torch.randn(B, 10)
        def step():
            opt.zero_grad(set_to_none=False)
            nn.functional.mse_loss(m(x), y).backward(); opt.step()
        report(0, timed(step))
    else:
        mp.spawn(run, args=(2, 29000 + os.getpid() % 1000), nprocs=2, join=True)
