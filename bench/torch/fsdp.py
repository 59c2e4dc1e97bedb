# PyTorch peer of bench/fsdp.ts: bench/torch/gpt.py's GPT on 2 ranks over gloo, trained with
# FSDP2 (fully_shard on every TransformerEncoderLayer, then the root) or DDP (argv[1]: fsdp | ddp).
# Prints total tokens/s (median of RUNS runs of STEPS steps) and each rank's peak RSS.
import os, sys, time, statistics, resource
os.environ["OPENBLAS_NUM_THREADS"] = "1"; os.environ["OMP_NUM_THREADS"] = "1"
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp
MODE = sys.argv[1] if len(sys.argv) > 1 else "fsdp"
V, D, H, L, T, B = 8192, 256, 4, 4, 128, 8
STEPS, RUNS, WARMUP = int(os.environ.get("STEPS", 5)), int(os.environ.get("RUNS", 3)), int(os.environ.get("WARMUP", 3))
class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.tok = nn.Embedding(V, D); s.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, 4*D, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        s.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.ln = nn.LayerNorm(D); s.head = nn.Linear(D, V, bias=False)
        s.register_buffer("mask", torch.triu(torch.full((T, T), float("-inf")), 1))
    def forward(s, idx):
        x = s.tok(idx) + s.pos(torch.arange(T))
        return s.head(s.ln(s.blocks(x, mask=s.mask)))
def run(rank, world, port):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    m = GPT()
    if MODE == "fsdp":
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (world,))
        for layer in m.blocks.layers: fully_shard(layer, mesh=mesh)
        fully_shard(m, mesh=mesh)
    else:
        m = nn.parallel.DistributedDataParallel(m)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4)
    g = torch.Generator().manual_seed(1 + rank)
    idx = torch.randint(0, V, (B, T), generator=g); tgt = torch.randint(0, V, (B, T), generator=g)
    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(m(idx).view(-1, V), tgt.view(-1)).backward(); opt.step()
    for _ in range(WARMUP): step()
    res = []
    for _ in range(RUNS):
        dist.barrier(); t0 = time.perf_counter()
        for _ in range(STEPS): step()
        dist.barrier(); res.append(world * STEPS * B * T / (time.perf_counter() - t0))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nrank={rank} {MODE} tokens/s runs={[round(v) for v in res]} median={statistics.median(res):.0f} rss_mb={rss:.0f}", flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(run, args=(2, 29000 + os.getpid() % 1000), nprocs=2, join=True)
