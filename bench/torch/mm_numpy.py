# A second GEMM peer beside mm.py: numpy's own BLAS (the wheels bundle OpenBLAS built with
# DYNAMIC_ARCH, so on an AVX-512 CPU it runs OpenBLAS's AVX-512 kernels, the reference issue 16
# names), timed exactly as mm.py times torch.mm. Usage: python3 mm_numpy.py THREADS.
import statistics, sys, time
nt = int(sys.argv[1]) if len(sys.argv) > 1 else 1
import numpy as np
try:
    from threadpoolctl import threadpool_info, threadpool_limits
    threadpool_limits(nt)
    info = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} threads={i.get('num_threads')}" for i in threadpool_info()]
except ImportError:  # then OPENBLAS_NUM_THREADS, set by the caller, holds the threads
    info = ["threadpoolctl missing: threads from OPENBLAS_NUM_THREADS"]
print("numpy", np.__version__, "|", "; ".join(info))
rng = np.random.default_rng(0)
for n in [256, 512, 1024, 2048]:
    a = rng.standard_normal((n, n), dtype=np.float32); b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    flop = 2.0 * n**3
    for _ in range(3): np.matmul(a, b, out=c)
    reps = max(1, int(0.3 / (flop / 50e9)))
    gf = []
    for r in range(7):
        t0 = time.perf_counter()
        for _ in range(reps): np.matmul(a, b, out=c)
        gf.append(flop / ((time.perf_counter() - t0) / reps) / 1e9)
    print(f"n={n} reps/run={reps} GFLOPS runs={[round(x,1) for x in gf]} max={max(gf):.1f} median={statistics.median(gf):.1f} min={min(gf):.1f}")
