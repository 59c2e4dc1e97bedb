# Peer of bench/gemm_bf16.ts: bfloat16 products on PyTorch's CPU (torch.matmul of bf16 tensors, as
# autocast runs them), shapes from argv as JSON [[batch, m, n, k, transA, transB], ...]; the timing
# protocol of bench/api.ts (runs of ~50 ms, median of 7). Prints "median=<GFLOPS>" per shape.
import json, statistics, sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
for batch, m, n, k, ta, tb in json.loads(sys.argv[2]):
    a = torch.randn(batch, k, m).transpose(1, 2) if ta else torch.randn(batch, m, k)
    b = torch.randn(batch, n, k).transpose(1, 2) if tb else torch.randn(batch, k, n)
    a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
    if batch == 1: a, b = a[0], b[0]
    flop = 2.0 * batch * m * n * k
    calls, t0 = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - t0 < 0.03:
        torch.matmul(a, b); calls += 1
    reps = max(1, round(0.05 / ((time.perf_counter() - t0) / calls)))
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps): torch.matmul(a, b)
        runs.append((time.perf_counter() - t0) / reps)
    print("median=%.3f" % (flop / statistics.median(runs) / 1e9))
