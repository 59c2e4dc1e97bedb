// The AVX-512 GEMMs' register tiles and cache blocks, swept on the machine at hand: for each
// candidate (float32: native/kernels/gemm.inl's Gemm; bfloat16: isa_avx512bf16.cc's), the same
// template the addon instantiates, checked against a float64 product on edge sizes in every
// operand layout, then timed on the squares and the MLP/GPT/attention shapes of bench/gemm.ts and
// bench/gemm_bf16.ts, one thread. The first candidate of each list is the addon's current one.
// It exists because the development VMs lack AVX-512: build it here, run it where the CPU has it.
//
//   g++ -O3 -std=c++17 -static -pthread -Inative/kernels bench/native/gemm_tune.cc \
//       native/kernels/pack_buffer.cc -o /tmp/gemm_tune && /tmp/gemm_tune [f32|bf16|both|amx]
//
// Prints one line per candidate and shape: GFLOPS (median of 5 timed runs), and the check's error.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "pack_buffer.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace tune512 {
using namespace rt;
#include "simd_avx512.h"
#include "gemm.inl"
}  // namespace tune512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace tune2 {
using namespace rt;
#include "simd_avx2.h"
#include "gemm.inl"
}  // namespace tune2
#pragma GCC pop_options

// The bfloat16 kernels' files, whole: their Gemm templates are not in headers.
#include "isa_avx512bf16.cc"
#include "isa_amx.cc"

namespace {

struct Shape {
  const char* name;
  int64_t batch, m, n, k;
  bool transA, transB;
};

const Shape kShapes[] = {
    {"256^2", 1, 256, 256, 256, false, false},        {"512^2", 1, 512, 512, 512, false, false},
    {"1024^2", 1, 1024, 1024, 1024, false, false},    {"2048^2", 1, 2048, 2048, 2048, false, false},
    {"fc1 x@w.T 64x1024x784", 1, 64, 1024, 784, false, true},
    {"fc2 dX g@w 64x1024x1024", 1, 64, 1024, 1024, false, false},
    {"fc2 dW g.T@x 1024x1024x64", 1, 1024, 1024, 64, true, false},
    {"ffn1 x@w.T 1024x1024x256", 1, 1024, 1024, 256, false, true},
    {"head x@w.T 1024x8192x256", 1, 1024, 8192, 256, false, true},
    {"attn q@k.T 32x128x128x64", 32, 128, 128, 64, false, true},
    {"attn p@v 32x128x64x128", 32, 128, 64, 128, false, false},
};

// One matrix product C[m,n] = A B (+ beta C) with A/B in the shape's layouts.
using Run = std::function<void(const Shape&, const float* a, const float* b, float* c, float beta, int64_t m, int64_t n,
                               int64_t k)>;

struct Candidate {
  std::string name;
  Run run;
};

// A float32 candidate: G is an instantiation of gemm.inl's Gemm in one ISA namespace.
template <class G>
Candidate F32Of(const std::string& label) {
  return {label, [](const Shape& s, const float* a, const float* b, float* c, float beta, int64_t m, int64_t n, int64_t k) {
            rt::GemmProblem<float> g{m, n, k, a, s.transA ? 1 : k, s.transA ? m : 1, b, s.transB ? 1 : n, s.transB ? k : 1,
                                     c, n, 1.0f, beta};
            G::run(g);
          }};
}

std::string Label(const char* isa, int mr, int nr, int mc, int kc, int nc, int kcf, int ncf, const char* note) {
  char name[112];
  std::snprintf(name, sizeof name, "%s %dx%d MC%d KC%d NC%d KCF%d NCF%d%s", isa, mr, nr, mc, kc, nc, kcf, ncf, note);
  return name;
}

template <int MR, int NV, int MC, int KC, int NC, int KCF = KC, int NCF = 0>
Candidate F32(const char* note = "") {
  return F32Of<tune512::Gemm<tune512::F32, MR, NV, MC, KC, NC, KCF, NCF>>(Label("f32", MR, NV * 16, MC, KC, NC, KCF, NCF, note));
}

template <int MR, int NV, int MC, int KC, int NC, int KCF = KC, int NCF = 0>
Candidate F32Avx2(const char* note = "") {
  return F32Of<tune2::Gemm<tune2::F32, MR, NV, MC, KC, NC, KCF, NCF>>(Label("avx2 f32", MR, NV * 8, MC, KC, NC, KCF, NCF, note));
}

template <int MR, int NV, int MC, int KC, int NC>
Candidate Bf16(const char* note = "") {
  using G = rt_avx512bf16::Gemm<MR, NV, MC, KC, NC>;
  char name[96];
  std::snprintf(name, sizeof name, "bf16 %dx%d MC%d KC%d NC%d%s", MR, NV * 16, MC, KC, NC, note);
  return {name, [](const Shape& s, const float* a, const float* b, float* c, float beta, int64_t m, int64_t n, int64_t k) {
            rt::Bf16GemmProblem g{m, n, k, {a, false, s.transA ? 1 : k, s.transA ? m : 1, 0},
                                  {b, false, s.transB ? 1 : n, s.transB ? k : 1, 0}, c, n, 1.0f, beta};
            G::run(g);
          }};
}

template <int MC, int KC, int NC>
Candidate Amx(const char* note = "") {
  using G = rt_amx::Gemm<MC, KC, NC>;
  char name[96];
  std::snprintf(name, sizeof name, "amx 32x32 MC%d KC%d NC%d%s", MC, KC, NC, note);
  return {name, [](const Shape& s, const float* a, const float* b, float* c, float beta, int64_t m, int64_t n, int64_t k) {
            rt::Bf16GemmProblem g{m, n, k, {a, false, s.transA ? 1 : k, s.transA ? m : 1, 0},
                                  {b, false, s.transB ? 1 : n, s.transB ? k : 1, 0}, c, n, 1.0f, beta};
            G::run(g);
          }};
}

float Bf16Round(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// Largest |C - A B| over sum |A||B| on sizes that cut every edge (rows, columns, odd k), every layout.
double Check(const Candidate& cand, bool bf16) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  double worst = 0;
  const int64_t sizes[][3] = {{1, 1, 1}, {13, 33, 17}, {37, 70, 300}, {150, 65, 513}, {300, 200, 1030}, {5, 4100, 40}};
  for (auto& sz : sizes)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++)
        for (float beta : {0.0f, 0.5f}) {
          const int64_t m = sz[0], n = sz[1], k = sz[2];
          Shape s{"check", 1, m, n, k, ta == 1, tb == 1};
          std::vector<float> a(m * k), b(k * n), c(m * n), c0(m * n);
          for (auto& x : a) x = u(rng);
          for (auto& x : b) x = u(rng);
          for (auto& x : c0) x = u(rng);
          c = c0;
          cand.run(s, a.data(), b.data(), c.data(), beta, m, n, k);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
              double ref = beta * double(c0[i * n + j]), mag = std::fabs(ref);
              for (int64_t p = 0; p < k; p++) {
                double x = ta ? a[p * m + i] : a[i * k + p], y = tb ? b[j * k + p] : b[p * n + j];
                if (bf16) x = Bf16Round(float(x)), y = Bf16Round(float(y));
                ref += x * y;
                mag += std::fabs(x * y);
              }
              worst = std::max(worst, std::fabs(c[i * n + j] - ref) / std::max(mag, 1e-30));
            }
        }
  return worst;
}

double Seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double Gflops(const Candidate& cand, const Shape& s) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  auto once = [&] {
    for (int64_t i = 0; i < s.batch; i++)
      cand.run(s, a.data() + i * s.m * s.k, b.data() + i * s.k * s.n, c.data() + i * s.m * s.n, 0.0f, s.m, s.n, s.k);
  };
  const double flop = 2.0 * s.batch * s.m * s.n * s.k;
  once();
  once();
  const int reps = std::max(1, int(0.04 / (flop / 100e9)));
  std::vector<double> g;
  for (int r = 0; r < 5; r++) {
    const double t0 = Seconds();
    for (int i = 0; i < reps; i++) once();
    g.push_back(flop * reps / (Seconds() - t0) / 1e9);
  }
  std::sort(g.begin(), g.end());
  return g[2];
}

void Sweep(const std::vector<Candidate>& cands, bool bf16) {
  std::vector<std::vector<double>> table;
  for (auto& c : cands) {
    const double err = Check(c, bf16);
    std::vector<double> row;
    for (auto& s : kShapes) row.push_back(Gflops(c, s));
    std::printf("%-44s err %.1e |", c.name.c_str(), err);
    for (double g : row) std::printf(" %6.1f", g);
    std::printf("%s\n", err > (bf16 ? 1e-5 : 1e-6) ? "  CHECK FAILED" : "");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "both";
  if (what == "avx2") {  // the AVX2 path, e.g. on a machine without AVX-512
    std::printf("GFLOPS, one thread; columns:");
    for (auto& s : kShapes) std::printf(" [%s]", s.name);
    std::printf("\n");
    Sweep({F32Avx2<6, 2, 144, 384, 4080, 1024, 256>(" (current)"), F32Avx2<6, 2, 144, 256, 4080, 1024, 256>()}, false);
    return 0;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("this CPU has no AVX-512F: nothing to sweep\n");
    return 0;
  }
  std::printf("GFLOPS, one thread; columns:");
  for (auto& s : kShapes) std::printf(" [%s]", s.name);
  std::printf("\n");
  if (what == "amx") {
    if (!rt::AmxBf16Supported()) {
      std::printf("this CPU or OS has no AMX-BF16 tiles: the amx sweep is skipped\n");
      return 0;
    }
    Sweep({Amx<128, 512, 1024>(" (current)"), Amx<256, 1024, 256>(), Amx<256, 512, 512>(), Amx<64, 1024, 1024>(),
           Amx<64, 512, 1024>(), Amx<128, 1024, 1024>(), Amx<256, 512, 1024>(), Amx<128, 512, 2048>(),
           Amx<256, 256, 1024>()},
          true);
    return 0;
  }
  if (what != "bf16") {
    Sweep({F32<12, 2, 144, 256, 4064>(" (current)"), F32<12, 2, 144, 128, 4064>(), F32<12, 2, 144, 192, 4064>(),
           F32<12, 2, 144, 384, 4064>(), F32<12, 2, 240, 256, 4064>(), F32<12, 2, 144, 256, 1024>(),
           F32<14, 2, 140, 256, 4064>(), F32<8, 3, 144, 256, 4032>(), F32<6, 4, 144, 256, 4032>(),
           F32<6, 4, 144, 128, 4032>(), F32<4, 4, 144, 256, 4032>(), F32<12, 2, 144, 256, 4064, 1024, 512>(" few-rows")},
          false);
  }
  if (what != "f32" && __builtin_cpu_supports("avx512bf16")) {
    Sweep({Bf16<12, 2, 144, 512, 4096>(" (current)"), Bf16<12, 2, 144, 256, 4096>(), Bf16<12, 2, 144, 384, 4096>(),
           Bf16<12, 2, 144, 1024, 4096>(), Bf16<14, 2, 140, 512, 4096>(), Bf16<8, 3, 144, 512, 4080>(),
           Bf16<6, 4, 144, 512, 4096>(), Bf16<6, 4, 144, 256, 4096>(), Bf16<12, 2, 144, 512, 1024>()},
          true);
  } else if (what != "f32") {
    std::printf("this CPU has no AVX512_BF16: the bf16 sweep is skipped\n");
  }
  return 0;
}
