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
//   amx-parts: on the GPT bench's shapes, the share of the AMX product's time in packing B,
//              packing A and the tile loop (float32 and bfloat16 operands);
//   amx-ab [kc256]: the current AMX blocks against one variant, alternated (paired ratios).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <ctime>
#include <vector>

#include "gemm_shapes.h"

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

using Shape = GemmShape;
const auto& kShapes = kGemmShapes;

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

// The GPT bench's shapes (bench/gemm_bf16.ts): where an AMX product's time goes.
const Shape kGptShapes[] = {
    {"qkv x@w.T 1024x768x256", 1, 1024, 768, 256, false, true},
    {"ffn1 x@w.T 1024x1024x256", 1, 1024, 1024, 256, false, true},
    {"ffn2 x@w.T 1024x256x1024", 1, 1024, 256, 1024, false, true},
    {"head x@w.T 1024x8192x256", 1, 1024, 8192, 256, false, true},
    {"ffn2 dX g@w 1024x1024x256", 1, 1024, 1024, 256, false, false},
    {"ffn1 dW g.T@x 1024x256x1024", 1, 1024, 256, 1024, true, false},
    {"head dW g.T@x 8192x256x1024", 1, 8192, 256, 1024, true, false},
    {"head dX g@w 1024x256x8192", 1, 1024, 256, 8192, false, false},
    {"attn q@k.T 32x128x128x64", 32, 128, 128, 64, false, true},
    {"attn p@v 32x128x64x128", 32, 128, 64, 128, false, false},
};

inline uint64_t Ticks() { return __rdtsc(); }

// Ticks between the parts of rt_amx::Gemm<MC, KC, NC>::run_timed: pack B, pack A, tiles.
struct TickParts {
  uint64_t* t;
  uint64_t at = 0;
  void mark() { at = Ticks(); }
  void lap(int part) {
    const uint64_t now = Ticks();
    t[part] += now - at;
    at = now;
  }
};

template <int MC, int KC, int NC>
void AmxParts(const rt::Bf16GemmProblem& g, uint64_t t[3]) {
  TickParts timer{t};
  rt_amx::Gemm<MC, KC, NC>::run_timed(g, timer);
}

// Per GPT shape: GFLOPS of the whole product (thread CPU time, median of 5) and the share of ticks
// in packing B, packing A and the tile loop, with float32 and with bfloat16 operands.
void AmxBreakdown() {
  std::printf("%-30s %5s %8s %6s %6s %6s\n", "shape", "in", "GFLOPS", "packB", "packA", "tiles");
  for (auto& s : kGptShapes)
    for (bool bf : {false, true}) {
      std::mt19937 rng(2);
      std::uniform_real_distribution<float> u(-1, 1);
      std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n);
      for (auto& x : a) x = u(rng);
      for (auto& x : b) x = u(rng);
      std::vector<uint16_t> ah(a.size()), bh(b.size());
      for (size_t i = 0; i < a.size(); i++) ah[i] = uint16_t(rt_amx::ScalarBits({a.data(), false, 0, 0, 0}, int64_t(i)));
      for (size_t i = 0; i < b.size(); i++) bh[i] = uint16_t(rt_amx::ScalarBits({b.data(), false, 0, 0, 0}, int64_t(i)));
      uint64_t t[3] = {0, 0, 0};
      auto once = [&] {
        for (int64_t i = 0; i < s.batch; i++) {
          const void* ap = bf ? (const void*)(ah.data() + i * s.m * s.k) : (const void*)(a.data() + i * s.m * s.k);
          const void* bp = bf ? (const void*)(bh.data() + i * s.k * s.n) : (const void*)(b.data() + i * s.k * s.n);
          rt::Bf16GemmProblem g{s.m, s.n, s.k, {ap, bf, s.transA ? 1 : s.k, s.transA ? s.m : 1, 0},
                                {bp, bf, s.transB ? 1 : s.n, s.transB ? s.k : 1, 0}, c.data() + i * s.m * s.n, s.n, 1.0f, 0.0f};
          AmxParts<128, 512, 1024>(g, t);
        }
      };
      const double flop = 2.0 * s.batch * s.m * s.n * s.k;
      once();
      const int reps = std::max(1, int(0.04 / (flop / 400e9)));
      std::vector<double> gf;
      t[0] = t[1] = t[2] = 0;
      for (int r = 0; r < 5; r++) {
        timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        for (int i = 0; i < reps; i++) once();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        gf.push_back(flop * reps / ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)) / 1e9);
      }
      std::sort(gf.begin(), gf.end());
      const double all = double(t[0] + t[1] + t[2]);
      std::printf("%-30s %5s %8.1f %5.1f%% %5.1f%% %5.1f%%\n", s.name, bf ? "bf16" : "f32", gf[2], 100 * t[0] / all,
                  100 * t[1] / all, 100 * t[2] / all);
      std::fflush(stdout);
    }
}

// Paired A/B on the GPT shapes: candidates alternate, 11 rounds of ~20 ms each; the medians of
// each one's GFLOPS and of the pairwise ratio B / A (the machine is shared: only ratios taken
// side by side mean much).
void AmxAb(const Candidate& ca, const Candidate& cb) {
  std::printf("A: %s\nB: %s\n%-30s %8s %8s %6s\n", ca.name.c_str(), cb.name.c_str(), "shape", "A", "B", "B/A");
  for (auto& s : kGptShapes) {
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n), c(s.batch * s.m * s.n);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    const double flop = 2.0 * s.batch * s.m * s.n * s.k;
    const int reps = std::max(1, int(0.02 / (flop / 500e9)));
    auto time = [&](const Candidate& cand) {
      timespec t0, t1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
      for (int r = 0; r < reps; r++)
        for (int64_t i = 0; i < s.batch; i++)
          cand.run(s, a.data() + i * s.m * s.k, b.data() + i * s.k * s.n, c.data() + i * s.m * s.n, 0.0f, s.m, s.n, s.k);
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
      return flop * reps / ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)) / 1e9;
    };
    time(ca), time(cb);
    std::vector<double> ga, gb, ratio;
    for (int round = 0; round < 11; round++) {
      const double x = time(ca), y = time(cb);
      ga.push_back(x), gb.push_back(y), ratio.push_back(y / x);
    }
    std::sort(ga.begin(), ga.end()), std::sort(gb.begin(), gb.end()), std::sort(ratio.begin(), ratio.end());
    std::printf("%-30s %8.1f %8.1f %6.3f\n", s.name, ga[5], gb[5], ratio[5]);
    std::fflush(stdout);
  }
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
  if (what == "amx-ab") {
    if (!rt::AmxBf16Supported()) return 0;  // also asks Linux for the tile state
    const std::string which = argc > 2 ? argv[2] : "";
    // Add the variant under test as a second Gemm template argument list (e.g. a KC): both are
    // checked against float64 first.
    const Candidate a = Amx<128, 512, 1024>(" (current)"), b = which == "kc256" ? Amx<128, 256, 1024>() : Amx<128, 512, 2048>();
    std::printf("check: A err %.1e, B err %.1e\n", Check(a, true), Check(b, true));
    AmxAb(a, b);
    return 0;
  }
  if (what == "amx-parts") {
    if (rt::AmxBf16Supported()) AmxBreakdown();
    return 0;
  }
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
    Sweep({F32<12, 2, 144, 256, 4064, 1024>(" (current)"), F32<12, 2, 144, 256, 4064>(), F32<12, 2, 144, 128, 4064>(), F32<12, 2, 144, 192, 4064>(),
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
