// The driver of the bfloat16 GEMM: picks the path, splits the work over the pool (as matmul.cc
// does for float32), and holds the portable path.
#include "bf16_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "dispatch.h"
#include "dtype.h"
#include "kernel_table.h"
#include "matmul.h"
#include "thread_pool.h"

namespace rt {
namespace {

bool DetectAvx512Bf16() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return Avx512Bf16Gemm() != nullptr && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

bool CpuHasAvx512Bf16() {
  static const bool has = DetectAvx512Bf16();
  return has;
}

enum class Path { kPortable, kAvx512Bf16, kAmx };

// -1 follows the active ISA (when that is avx512: AMX where the CPU and OS allow it, else
// vdpbf16ps where the CPU has AVX512_BF16; else portable); otherwise a forced Path.
std::atomic<int> g_choice{-1};

bool CpuHasAmx() { return AmxBf16Gemm() != nullptr && CpuHasAvx512Bf16() && AmxBf16Supported(); }

Path ActivePath() {
  const int c = g_choice.load(std::memory_order_relaxed);
  if (c >= 0) return Path(c);
  if (std::strcmp(ActiveIsa(), "avx512") != 0) return Path::kPortable;
  if (CpuHasAmx()) return Path::kAmx;
  return CpuHasAvx512Bf16() ? Path::kAvx512Bf16 : Path::kPortable;
}

constexpr double kParallelMacs = 1 << 21;

// One row of an operand (cols values, cs apart) rounded to bfloat16, written as float32.
template <class T>
void RoundRow(const T* s, int64_t cs, int64_t cols, float* d) {
  for (int64_t c = 0; c < cols; c++) {
    if constexpr (sizeof(T) == 2) d[c] = Bf16ToFloat(s[c * cs]);
    else d[c] = Bf16ToFloat(FloatToBf16(s[c * cs]));
  }
}

// Rows lo..hi of the operand seen as [batches * rows, cols] (batch t / rows, row t % rows), rounded
// to bfloat16 into out[t * cols ...] as float32.
void RoundRows(const Bf16Operand& op, int64_t rows, int64_t cols, int64_t lo, int64_t hi, float* out) {
  for (int64_t t = lo; t < hi; t++) {
    const int64_t at = (t / rows) * op.bs + (t % rows) * op.rs;
    if (op.bf16) RoundRow(static_cast<const uint16_t*>(op.data) + at, op.cs, cols, out + t * cols);
    else RoundRow(static_cast<const float*>(op.data) + at, op.cs, cols, out + t * cols);
  }
}

// The operand's values rounded to bfloat16, as a contiguous float32 [batches, rows, cols] copy in
// `out`, a buffer the calling thread keeps: a fresh allocation per product (as this was) faulted
// in every page of both copies, megabytes per call under autocast.
float* RoundedCopy(const Bf16Operand& op, int64_t batches, int64_t rows, int64_t cols, std::vector<float>& out) {
  out.resize(size_t(batches * rows * cols));
  float* d = out.data();
  ParallelRange(batches * rows, double(cols), [&](int64_t lo, int64_t hi) { RoundRows(op, rows, cols, lo, hi, d); });
  return d;
}

// Exact on any CPU: the rounded operands are products of bfloat16 values, which float32 holds
// exactly, so only the order of the float32 sums differs from the vdpbf16ps path.
void PortableMatmul(const Bf16MatmulArgs& a) {
  thread_local std::vector<float> a_copy, b_copy;
  const int64_t ba = a.a.bs == 0 ? 1 : a.batch, bb = a.b.bs == 0 ? 1 : a.batch;
  const float* ra = RoundedCopy(a.a, ba, a.m, a.k, a_copy);
  const float* rb = RoundedCopy(a.b, bb, a.k, a.n, b_copy);
  MatmulArgs<float> f;
  f.batch = a.batch, f.m = a.m, f.n = a.n, f.k = a.k;
  f.a = ra, f.a_row_stride = a.k, f.a_col_stride = 1, f.a_batch_stride = ba == 1 ? 0 : a.m * a.k;
  f.b = rb, f.b_row_stride = a.n, f.b_col_stride = 1, f.b_batch_stride = bb == 1 ? 0 : a.k * a.n;
  f.out = a.out, f.alpha = a.alpha, f.beta = a.beta;
  Matmul(f);
}

Bf16GemmProblem Slice(const Bf16MatmulArgs& a, int64_t b) {
  Bf16GemmProblem p;
  p.m = a.m, p.n = a.n, p.k = a.k;
  p.a = a.a, p.b = a.b;
  // Offsets move into the data pointer so the kernel sees one matrix.
  p.a.data = static_cast<const char*>(a.a.data) + b * a.a.bs * (a.a.bf16 ? 2 : 4);
  p.b.data = static_cast<const char*>(a.b.data) + b * a.b.bs * (a.b.bf16 ? 2 : 4);
  p.c = a.out + b * a.m * a.n, p.ldc = a.n;
  p.alpha = a.alpha, p.beta = a.beta;
  return p;
}

void ScaleOnly(const Bf16MatmulArgs& a) {
  const int64_t total = a.batch * a.m * a.n;
  if (a.beta == 0.0f) std::fill(a.out, a.out + total, 0.0f);
  else if (a.beta != 1.0f)
    for (int64_t i = 0; i < total; i++) a.out[i] *= a.beta;
}

// One of the ISA kernels over the pool: whole matrices per task where the batch fills the threads
// (from batch_macs multiply-adds in all), else strips of whole mr x nr blocks of C (from
// strip_macs: each strip packs the whole uncut operand again).
void KernelMatmul(const Bf16MatmulArgs& a, Bf16GemmFn gemm, int64_t mr, int64_t nr, double batch_macs, double strip_macs) {
  const int nt = GetNumThreads();
  const double macs = double(a.batch) * double(a.m) * double(a.n) * double(a.k);
  if (nt == 1 || macs < (a.batch >= nt ? batch_macs : strip_macs)) {
    for (int64_t b = 0; b < a.batch; b++) gemm(Slice(a, b));
    return;
  }
  if (a.batch >= nt) {
    ParallelFor(a.batch, [&](int64_t b) { gemm(Slice(a, b)); });
    return;
  }
  const bool split_n = (a.n + nr - 1) / nr >= (a.m + mr - 1) / mr;
  const int64_t extent = split_n ? a.n : a.m, unit = split_n ? nr : mr;
  const int64_t units = (extent + unit - 1) / unit;
  const int64_t parts = std::min<int64_t>(units >= 16 * nt ? 2 * nt : nt, units);
  ParallelFor(a.batch * parts, [&](int64_t task) {
    const int64_t b = task / parts, part = task % parts;
    const int64_t lo = std::min(extent, units * part / parts * unit);
    const int64_t hi = std::min(extent, units * (part + 1) / parts * unit);
    if (lo >= hi) return;
    Bf16GemmProblem p = Slice(a, b);
    Bf16Operand& cut = split_n ? p.b : p.a;
    const int64_t stride = split_n ? cut.cs : cut.rs;
    cut.data = static_cast<const char*>(cut.data) + lo * stride * (cut.bf16 ? 2 : 4);
    if (split_n) p.n = hi - lo, p.c += lo;
    else p.m = hi - lo, p.c += lo * p.ldc;
    gemm(p);
  });
}

}  // namespace

void MatmulBf16(const Bf16MatmulArgs& a) {
  if (a.batch == 0 || a.m == 0 || a.n == 0) return;
  if (a.k == 0) return ScaleOnly(a);
  switch (ActivePath()) {
    // vdpbf16ps does twice an FMA's work per instruction, so the threshold for waking a worker
    // doubles. AMX, 2 threads against 1 alternated (bench/gemm_bf16.ts --threshold, 4 runs on a
    // shared 2-core VM at load 2-10): a batch of attention's 128 x 128 x 64 products split by
    // matrix gained 1.2-1.5x from 8 Mi multiply-adds (4 Mi: 0.96-1.37x), while one k = 256 product
    // cut in column strips, where each strip packs (rounds) all of A again, lost at 16 Mi
    // (0.59-1.52x, median 0.8x) and gained from 32 Mi (1.07-1.49x).
    case Path::kAmx:
      return KernelMatmul(a, AmxBf16Gemm(), AmxBf16TileRows(), AmxBf16TileCols(), 4 * kParallelMacs, 16 * kParallelMacs);
    case Path::kAvx512Bf16:
      return KernelMatmul(a, Avx512Bf16Gemm(), Avx512Bf16TileRows(), Avx512Bf16TileCols(), 2 * kParallelMacs,
                          2 * kParallelMacs);
    case Path::kPortable: return PortableMatmul(a);
  }
}

void GemmBf16OnThisThread(const Bf16GemmProblem& p) {
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0) {
    for (int64_t r = 0; r < p.m; r++) {
      float* c = p.c + r * p.ldc;
      if (p.beta == 0.0f) std::fill(c, c + p.n, 0.0f);
      else if (p.beta != 1.0f)
        for (int64_t j = 0; j < p.n; j++) c[j] *= p.beta;
    }
    return;
  }
  const Path path = ActivePath();
  if (path == Path::kAmx) return AmxBf16Gemm()(p);
  if (path == Path::kAvx512Bf16) return Avx512Bf16Gemm()(p);
  // Portable: rounded copies (exact), then the active ISA's float32 GEMM, as PortableMatmul.
  // On this thread (it may be a pool task already): one matrix, so its rows alone (bs unused).
  thread_local std::vector<float> ra, rb;
  ra.resize(size_t(p.m * p.k));
  rb.resize(size_t(p.k * p.n));
  RoundRows(p.a, p.m, p.k, 0, p.m, ra.data());
  RoundRows(p.b, p.k, p.n, 0, p.k, rb.data());
  GemmProblem<float> g;
  g.m = p.m, g.n = p.n, g.k = p.k;
  g.a = ra.data(), g.rsa = p.k, g.csa = 1;
  g.b = rb.data(), g.rsb = p.n, g.csb = 1;
  g.c = p.c, g.ldc = p.ldc, g.alpha = p.alpha, g.beta = p.beta;
  Kernels().get<float>().gemm(g);
}

const char* Bf16GemmPath() {
  switch (ActivePath()) {
    case Path::kAmx: return "amx";
    case Path::kAvx512Bf16: return "avx512bf16";
    case Path::kPortable: break;
  }
  return "portable";
}

bool Bf16GemmPathSupported(const char* name) {
  if (std::strcmp(name, "auto") == 0 || std::strcmp(name, "portable") == 0) return true;
  if (std::strcmp(name, "avx512bf16") == 0) return CpuHasAvx512Bf16();
  if (std::strcmp(name, "amx") == 0) return CpuHasAmx();
  return false;
}

bool SelectBf16GemmPath(const char* name) {
  if (!Bf16GemmPathSupported(name)) return false;
  const Path forced = std::strcmp(name, "amx") == 0          ? Path::kAmx
                      : std::strcmp(name, "avx512bf16") == 0 ? Path::kAvx512Bf16
                                                             : Path::kPortable;
  g_choice.store(std::strcmp(name, "auto") == 0 ? -1 : int(forced));
  return true;
}

}  // namespace rt
