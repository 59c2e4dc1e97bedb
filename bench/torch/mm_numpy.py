# A second GEMM peer beside mm.py: numpy's own BLAS (the wheels bundle OpenBLAS built with
# DYNAMIC_ARCH, so on an AVX-512 CPU it runs OpenBLAS's AVX-512 kernels, the reference issue 16
# names), timed exactly as mm.py times torch.mm. Usage: python3 mm_numpy.py THREADS.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import print_square_gflops
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

def product(n):
    a = rng.standard_normal((n, n), dtype=np.float32); b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    return lambda: np.matmul(a, b, out=c)

print_square_gflops(product)
