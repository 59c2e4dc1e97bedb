// The tiled attention driver. ISA-independent: the two products of each tile run on the ISA's packed
// GEMM and the exponentials on its vector exp; this file only walks tiles and keeps the running
// row maxima and sums. Work is split over the pool by (batch·head, query tile) forward and by
// batch·head backward, where each task owns its dk/dv rows and accumulates dq without races.
#include "attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "bf16_gemm.h"
#include "dispatch.h"
#include "thread_pool.h"

namespace rt {
namespace {

constexpr int64_t kBr = 64;   // query rows per tile
constexpr int64_t kBc = 128;  // keys per tile

// One tile product: the ISA's float GEMM, or under lowp the bfloat16 one (operands rounded as packed).
template <class T>
void TileGemm(const AttnProblem<T>& p, const TypedKernels<T>& K, const GemmProblem<T>& g) {
  if constexpr (std::is_same_v<T, float>) {
    if (p.lowp) {
      Bf16GemmProblem b;
      b.m = g.m, b.n = g.n, b.k = g.k;
      b.a = {g.a, false, g.rsa, g.csa, 0};
      b.b = {g.b, false, g.rsb, g.csb, 0};
      b.c = g.c, b.ldc = g.ldc, b.alpha = g.alpha, b.beta = g.beta;
      return GemmBf16OnThisThread(b);
    }
  }
  K.gemm(g);
}

template <class T>
const T* RowsOf(const AttnOperand<T>& o, int64_t n, int64_t h, int64_t row) {
  return o.data + n * o.sn + h * o.sh + row * o.sr;
}

// scores[r, c] = scale * q[i0 + r] · k[j0 + c] + bias, with causal and bias applied.
template <class T>
void Scores(const AttnProblem<T>& p, const TypedKernels<T>& K, int64_t n, int64_t h, int64_t i0, int64_t br, int64_t j0,
            int64_t bc, T* sc) {
  GemmProblem<T> g;
  g.m = br, g.n = bc, g.k = p.d;
  g.a = RowsOf(p.q, n, h, i0), g.rsa = p.q.sr, g.csa = 1;
  g.b = RowsOf(p.k, n, h, j0), g.rsb = 1, g.csb = p.k.sr;
  g.c = sc, g.ldc = bc;
  g.alpha = T(p.scale), g.beta = T(0);
  TileGemm(p, K, g);
  if (p.bias.data) {
    const T* b = p.bias.data + n * p.bias.sn + h * p.bias.sh;
    for (int64_t r = 0; r < br; r++) {
      const T* br_ = b + (i0 + r) * p.bias.si + j0 * p.bias.sj;
      T* row = sc + r * bc;
      if (p.bias.sj == 1) {
        for (int64_t c = 0; c < bc; c++) row[c] += br_[c];
      } else {
        for (int64_t c = 0; c < bc; c++) row[c] += br_[c * p.bias.sj];
      }
    }
  }
  if (p.causal && j0 + bc - 1 > i0) {
    const T ninf = -std::numeric_limits<T>::infinity();
    for (int64_t r = 0; r < br; r++) {
      const int64_t first_hidden = std::max<int64_t>(0, i0 + r + 1 - j0);
      for (int64_t c = first_hidden; c < bc; c++) sc[r * bc + c] = ninf;
    }
  }
}

// Multiplies the tile's probabilities by keep / (1 - p) in place.
template <class T>
void ApplyDropout(const AttnProblem<T>& p, int64_t b, int64_t i0, int64_t br, int64_t j0, int64_t bc, T* pr) {
  const T inv = T(1.0 / (1.0 - p.dropout_p));
  for (int64_t r = 0; r < br; r++) {
    const uint64_t base = (uint64_t(b) * uint64_t(p.l) + uint64_t(i0 + r)) * uint64_t(p.s) + uint64_t(j0);
    for (int64_t c = 0; c < bc; c++) pr[r * bc + c] = AttnKeep(p.seed, base + c, p.dropout_p) ? pr[r * bc + c] * inv : T(0);
  }
}

// Keys [0, end) can be seen by some row of a query tile ending at row i_end (exclusive).
template <class T>
int64_t KeyEnd(const AttnProblem<T>& p, int64_t i_end) {
  return p.causal ? std::min(p.s, i_end) : p.s;
}

template <class T>
void ForwardTile(const AttnProblem<T>& p, const TypedKernels<T>& K, int64_t b, int64_t i0, T* out, T* lse) {
  const int64_t n = b / p.h, h = b % p.h;
  const int64_t br = std::min(kBr, p.l - i0);
  thread_local std::vector<T> sc_buf, m_buf, l_buf;
  sc_buf.resize(size_t(kBr * kBc));
  m_buf.assign(size_t(br), -std::numeric_limits<T>::infinity());
  l_buf.assign(size_t(br), T(0));
  T* sc = sc_buf.data();
  T* m = m_buf.data();
  T* lsum = l_buf.data();
  T* acc = out + (b * p.l + i0) * p.dv;  // accumulates unnormalised in place
  std::fill(acc, acc + br * p.dv, T(0));
  const int64_t j_end = KeyEnd(p, i0 + br);
  for (int64_t j0 = 0; j0 < j_end; j0 += kBc) {
    const int64_t bc = std::min(kBc, j_end - j0);
    Scores(p, K, n, h, i0, br, j0, bc, sc);
    for (int64_t r = 0; r < br; r++) {
      T* row = sc + r * bc;
      T mx = m[r];
      for (int64_t c = 0; c < bc; c++) mx = row[c] > mx ? row[c] : mx;
      // A row with nothing visible yet keeps base 0 so that exp(-inf - base) is 0, not NaN.
      const T base = std::isinf(mx) && mx < 0 ? T(0) : mx;
      for (int64_t c = 0; c < bc; c++) row[c] -= base;
      K.unary(kExp, row, row, bc, T(0), T(0));
      T sum = 0;
      for (int64_t c = 0; c < bc; c++) sum += row[c];
      const T corr = std::isinf(m[r]) && m[r] < 0 ? T(0) : T(std::exp(m[r] - base));
      if (corr != T(1)) {
        T* a = acc + r * p.dv;
        for (int64_t c = 0; c < p.dv; c++) a[c] *= corr;
      }
      lsum[r] = lsum[r] * corr + sum;
      m[r] = mx;
    }
    if (p.dropout_p > 0) ApplyDropout(p, b, i0, br, j0, bc, sc);
    GemmProblem<T> g;
    g.m = br, g.n = p.dv, g.k = bc;
    g.a = sc, g.rsa = bc, g.csa = 1;
    g.b = RowsOf(p.v, n, h, j0), g.rsb = p.v.sr, g.csb = 1;
    g.c = acc, g.ldc = p.dv;
    g.alpha = T(1), g.beta = T(1);
    if (p.dv > 0) TileGemm(p, K, g);
  }
  for (int64_t r = 0; r < br; r++) {
    // 0/0 = NaN for a row that sees no key, as the composed softmax gives.
    const T inv = T(1) / lsum[r];
    T* a = acc + r * p.dv;
    for (int64_t c = 0; c < p.dv; c++) a[c] *= inv;
    lse[b * p.l + i0 + r] = m[r] + T(std::log(lsum[r]));
  }
}

template <class T>
void BackwardHead(const AttnProblem<T>& p, const TypedKernels<T>& K, int64_t b, const T* out, const T* dout, const T* lse,
                  T* dq, T* dk, T* dv) {
  const int64_t n = b / p.h, h = b % p.h;
  thread_local std::vector<T> sc_buf, dp_buf, delta_buf;
  sc_buf.resize(size_t(kBr * kBc));
  dp_buf.resize(size_t(kBr * kBc));
  delta_buf.resize(size_t(p.l));
  T* sc = sc_buf.data();
  T* dp = dp_buf.data();
  T* delta = delta_buf.data();
  const T* o = out + b * p.l * p.dv;
  const T* go = dout + b * p.l * p.dv;
  const T* ls = lse + b * p.l;
  // delta_i = Σ_j P_ij dP_ij = dout_i · out_i (dropout included, since out already carries it).
  for (int64_t i = 0; i < p.l; i++) {
    T s = 0;
    for (int64_t c = 0; c < p.dv; c++) s += o[i * p.dv + c] * go[i * p.dv + c];
    delta[i] = s;
  }
  T* gq = dq + b * p.l * p.d;
  T* gk = dk + b * p.s * p.d;
  T* gv = dv + b * p.s * p.dv;
  std::fill(gq, gq + p.l * p.d, T(0));
  std::fill(gk, gk + p.s * p.d, T(0));
  std::fill(gv, gv + p.s * p.dv, T(0));
  const T inv_keep = p.dropout_p > 0 ? T(1.0 / (1.0 - p.dropout_p)) : T(1);
  for (int64_t j0 = 0; j0 < p.s; j0 += kBc) {
    const int64_t bc = std::min(kBc, p.s - j0);
    // Causal: query rows before j0 see none of these keys.
    for (int64_t i0 = p.causal ? j0 / kBr * kBr : 0; i0 < p.l; i0 += kBr) {
      const int64_t br = std::min(kBr, p.l - i0);
      Scores(p, K, n, h, i0, br, j0, bc, sc);
      for (int64_t r = 0; r < br; r++) {
        T* row = sc + r * bc;
        const T base = ls[i0 + r];
        for (int64_t c = 0; c < bc; c++) row[c] -= base;
        K.unary(kExp, row, row, bc, T(0), T(0));
      }
      // dp = dout_i · v_jᵀ
      GemmProblem<T> g;
      g.m = br, g.n = bc, g.k = p.dv;
      g.a = go + i0 * p.dv, g.rsa = p.dv, g.csa = 1;
      g.b = RowsOf(p.v, n, h, j0), g.rsb = 1, g.csb = p.v.sr;
      g.c = dp, g.ldc = bc;
      g.alpha = T(1), g.beta = T(0);
      if (p.dv > 0) TileGemm(p, K, g);
      else std::fill(dp, dp + br * bc, T(0));
      if (p.dropout_p > 0) {
        // dv uses P∘Z/(1-p) and dp is masked the same way; sc keeps P for dS.
        const int64_t b_ = b;
        for (int64_t r = 0; r < br; r++) {
          const uint64_t idx = (uint64_t(b_) * uint64_t(p.l) + uint64_t(i0 + r)) * uint64_t(p.s) + uint64_t(j0);
          for (int64_t c = 0; c < bc; c++) {
            const bool keep = AttnKeep(p.seed, idx + c, p.dropout_p);
            dp[r * bc + c] = keep ? dp[r * bc + c] * inv_keep : T(0);
          }
        }
        // gv += (P∘Z/(1-p))ᵀ dout: build the dropped probabilities row by row into a scratch copy.
        thread_local std::vector<T> pd_buf;
        pd_buf.assign(sc, sc + br * bc);
        ApplyDropout(p, b, i0, br, j0, bc, pd_buf.data());
        GemmProblem<T> gvp;
        gvp.m = bc, gvp.n = p.dv, gvp.k = br;
        gvp.a = pd_buf.data(), gvp.rsa = 1, gvp.csa = bc;
        gvp.b = go + i0 * p.dv, gvp.rsb = p.dv, gvp.csb = 1;
        gvp.c = gv + j0 * p.dv, gvp.ldc = p.dv;
        gvp.alpha = T(1), gvp.beta = T(1);
        if (p.dv > 0) TileGemm(p, K, gvp);
      } else if (p.dv > 0) {
        GemmProblem<T> gvp;
        gvp.m = bc, gvp.n = p.dv, gvp.k = br;
        gvp.a = sc, gvp.rsa = 1, gvp.csa = bc;
        gvp.b = go + i0 * p.dv, gvp.rsb = p.dv, gvp.csb = 1;
        gvp.c = gv + j0 * p.dv, gvp.ldc = p.dv;
        gvp.alpha = T(1), gvp.beta = T(1);
        TileGemm(p, K, gvp);
      }
      // dS = P ∘ (dp - delta), into dp.
      for (int64_t r = 0; r < br; r++) {
        const T dl = delta[i0 + r];
        for (int64_t c = 0; c < bc; c++) dp[r * bc + c] = sc[r * bc + c] * (dp[r * bc + c] - dl);
      }
      // gq_i += scale · dS k_j ; gk_j += scale · dSᵀ q_i
      GemmProblem<T> gq_p;
      gq_p.m = br, gq_p.n = p.d, gq_p.k = bc;
      gq_p.a = dp, gq_p.rsa = bc, gq_p.csa = 1;
      gq_p.b = RowsOf(p.k, n, h, j0), gq_p.rsb = p.k.sr, gq_p.csb = 1;
      gq_p.c = gq + i0 * p.d, gq_p.ldc = p.d;
      gq_p.alpha = T(p.scale), gq_p.beta = T(1);
      TileGemm(p, K, gq_p);
      GemmProblem<T> gk_p;
      gk_p.m = bc, gk_p.n = p.d, gk_p.k = br;
      gk_p.a = dp, gk_p.rsa = 1, gk_p.csa = bc;
      gk_p.b = RowsOf(p.q, n, h, i0), gk_p.rsb = p.q.sr, gk_p.csb = 1;
      gk_p.c = gk + j0 * p.d, gk_p.ldc = p.d;
      gk_p.alpha = T(p.scale), gk_p.beta = T(1);
      TileGemm(p, K, gk_p);
    }
  }
}

}  // namespace

template <class T>
void AttentionForward(const AttnProblem<T>& p, T* out, T* lse) {
  const TypedKernels<T>& K = Kernels().get<T>();
  const int64_t heads = p.n * p.h;
  const int64_t tiles = (p.l + kBr - 1) / kBr;
  if (heads == 0 || tiles == 0) return;
  ParallelFor(heads * tiles, [&](int64_t t) { ForwardTile(p, K, t / tiles, (t % tiles) * kBr, out, lse); });
}

template <class T>
void AttentionBackward(const AttnProblem<T>& p, const T* out, const T* dout, const T* lse, T* dq, T* dk, T* dv) {
  const TypedKernels<T>& K = Kernels().get<T>();
  const int64_t heads = p.n * p.h;
  if (heads == 0) return;
  ParallelFor(heads, [&](int64_t b) { BackwardHead(p, K, b, out, dout, lse, dq, dk, dv); });
}

template void AttentionForward<float>(const AttnProblem<float>&, float*, float*);
template void AttentionForward<double>(const AttnProblem<double>&, double*, double*);
template void AttentionBackward<float>(const AttnProblem<float>&, const float*, const float*, const float*, float*, float*, float*);
template void AttentionBackward<double>(const AttnProblem<double>&, const double*, const double*, const double*, double*, double*,
                                        double*);

}  // namespace rt
