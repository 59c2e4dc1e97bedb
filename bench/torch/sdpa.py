# Peer of bench/attention.ts: torch.nn.functional.scaled_dot_product_attention (causal), forward and
# backward, float32, batch 1, H heads of D; prints one JSON line per sequence length with the
# median milliseconds and the process's peak RSS after that length (lengths run in increasing order).
# Usage: NT=1 python sdpa.py H D L1 L2 ...
import json, os, resource, statistics, sys, time
import torch
import torch.nn.functional as F
torch.set_num_threads(int(os.environ.get("NT", "1")))
H, D = int(sys.argv[1]), int(sys.argv[2])
for L in map(int, sys.argv[3:]):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, H, L, D, generator=g, requires_grad=True) for _ in range(3))
    def step():
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.sum().backward()
    step()
    times = []
    for _ in range(3):
        t0 = time.perf_counter(); step(); times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({"L": L, "ms": statistics.median(times), "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
