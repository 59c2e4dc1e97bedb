// Batched GEMM: splits the work over the pool and hands single matrices to the ISA's packed GEMM.
#include "matmul.h"

#include <algorithm>

#include "dispatch.h"
#include "thread_pool.h"

namespace rt {
namespace {

// Below this many multiply-adds a GEMM runs on the calling thread: waking a worker costs a few
// microseconds, and both threads would pack the same small operands.
constexpr double kParallelMacs = 1 << 21;

template <class T>
GemmProblem<T> Slice(const MatmulArgs<T>& a, int64_t b) {
  GemmProblem<T> p;
  p.m = a.m, p.n = a.n, p.k = a.k;
  p.a = a.a + b * a.a_batch_stride, p.rsa = a.a_row_stride, p.csa = a.a_col_stride;
  p.b = a.b + b * a.b_batch_stride, p.rsb = a.b_row_stride, p.csb = a.b_col_stride;
  p.c = a.out + b * a.m * a.n, p.ldc = a.n;
  p.alpha = a.alpha, p.beta = a.beta;
  return p;
}

// C = beta * C for an empty inner dimension (beta 0 overwrites, even NaN).
template <class T>
void ScaleOnly(const MatmulArgs<T>& a) {
  const int64_t total = a.batch * a.m * a.n;
  if (a.beta == T(0)) {
    std::fill(a.out, a.out + total, T(0));
  } else if (a.beta != T(1)) {
    for (int64_t i = 0; i < total; i++) a.out[i] *= a.beta;
  }
}

// Rows of A at most this many go to RowTimesMatrix: the packed GEMM would pack all of B (a whole
// vocabulary projection in generation) to multiply it with one or two rows.
constexpr int64_t kGemvRows = 2;

// out[j] = alpha * Σ_k x[k·xs] B[k, j] + beta * out[j] for columns [j0, j1) of one row. B's rows
// contiguous: axpy over rows (the inner loop vectorises); B's columns contiguous (B = Wᵀ, a
// Linear): one dot product per column, in four partial sums.
template <class T>
void RowTimesMatrix(const T* x, int64_t xs, const T* b, int64_t rsb, int64_t csb, int64_t k, T* out, int64_t j0, int64_t j1,
                    T alpha, T beta) {
  if (csb == 1) {
    for (int64_t j = j0; j < j1; j++) out[j] = beta == T(0) ? T(0) : beta * out[j];
    for (int64_t kk = 0; kk < k; kk++) {
      const T s = alpha * x[kk * xs];
      const T* row = b + kk * rsb;
      for (int64_t j = j0; j < j1; j++) out[j] += s * row[j];
    }
    return;
  }
  for (int64_t j = j0; j < j1; j++) {
    const T* col = b + j * csb;
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t kk = 0;
    for (; kk + 4 <= k; kk += 4) {
      s0 += x[kk * xs] * col[kk * rsb];
      s1 += x[(kk + 1) * xs] * col[(kk + 1) * rsb];
      s2 += x[(kk + 2) * xs] * col[(kk + 2) * rsb];
      s3 += x[(kk + 3) * xs] * col[(kk + 3) * rsb];
    }
    for (; kk < k; kk++) s0 += x[kk * xs] * col[kk * rsb];
    const T dot = (s0 + s1) + (s2 + s3);
    out[j] = beta == T(0) ? alpha * dot : alpha * dot + beta * out[j];
  }
}

template <class T>
void FewRows(const MatmulArgs<T>& a) {
  for (int64_t bt = 0; bt < a.batch; bt++) {
    const T* b = a.b + bt * a.b_batch_stride;
    for (int64_t i = 0; i < a.m; i++) {
      const T* x = a.a + bt * a.a_batch_stride + i * a.a_row_stride;
      T* out = a.out + (bt * a.m + i) * a.n;
      ParallelRange(a.n, double(a.k), [&](int64_t j0, int64_t j1) {
        RowTimesMatrix(x, a.a_col_stride, b, a.b_row_stride, a.b_col_stride, a.k, out, j0, j1, a.alpha, a.beta);
      });
    }
  }
}

}  // namespace

template <class T>
void Matmul(const MatmulArgs<T>& a) {
  if (a.batch == 0 || a.m == 0 || a.n == 0) return;
  if (a.k == 0) return ScaleOnly(a);
  if (a.m <= kGemvRows) return FewRows(a);
  const TypedKernels<T>& K = Kernels().get<T>();
  const int nt = GetNumThreads();
  const double macs = double(a.batch) * double(a.m) * double(a.n) * double(a.k);
  if (nt == 1 || macs < kParallelMacs) {
    for (int64_t b = 0; b < a.batch; b++) K.gemm(Slice(a, b));
    return;
  }
  // Tasks are claimed dynamically, so there are more of them than threads where that is cheap: a
  // thread that another process preempts then holds up only a small part.
  if (a.batch >= nt) {
    ParallelFor(a.batch, [&](int64_t b) { K.gemm(Slice(a, b)); });
    return;
  }
  // Split each matrix along whichever of M and N has more micro-tiles, so each part packs only its
  // share of the operand that is split (and repacks the other, which is why parts stay few).
  const bool split_n = (a.n + K.gemm_nr - 1) / K.gemm_nr >= (a.m + K.gemm_mr - 1) / K.gemm_mr;
  const int64_t extent = split_n ? a.n : a.m;
  const int64_t unit = split_n ? K.gemm_nr : K.gemm_mr;
  const int64_t units = (extent + unit - 1) / unit;
  const int64_t parts = std::min<int64_t>(units >= 16 * nt ? 2 * nt : nt, units);
  ParallelFor(a.batch * parts, [&](int64_t task) {
    const int64_t b = task / parts, part = task % parts;
    const int64_t lo = std::min(extent, units * part / parts * unit);
    const int64_t hi = std::min(extent, units * (part + 1) / parts * unit);
    if (lo >= hi) return;
    GemmProblem<T> p = Slice(a, b);
    if (split_n) {
      p.n = hi - lo;
      p.b += lo * p.csb;
      p.c += lo;
    } else {
      p.m = hi - lo;
      p.a += lo * p.rsa;
      p.c += lo * p.ldc;
    }
    K.gemm(p);
  });
}

template void Matmul<float>(const MatmulArgs<float>&);
template void Matmul<double>(const MatmulArgs<double>&);

}  // namespace rt
