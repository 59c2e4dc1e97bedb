// Packing for gemm.inl (same ISA namespace). Each operand is read in whichever of its two
// layouts it has: the contiguous direction is always the inner loop of the reads.

template <class S, int MR, int NR>
struct Pack {
  using T = typename S::T;
  static constexpr int W = S::W;

  // MC x KC block of A into MR-row slivers: dst[sliver][p][r] = A(ir + r, p).
  static void a(const T* src, int64_t rs, int64_t cs, int64_t mc, int64_t kc, T* dst) {
    const int64_t full = rs == 1 && cs != 1 ? mc / MR * MR : 0;
    if (full > 0) a_cols(src, cs, kc, full, dst);
    for (int64_t ir = full; ir < mc; ir += MR) {
      T* d = dst + ir * kc;
      const int mr = int(std::min<int64_t>(MR, mc - ir));
      const T* s = src + ir * rs;
      if (cs == 1 && mr == MR && S::kHasTranspose) {
        // Row-major A: W x W register transposes per group of W rows. A group whose last vector
        // reaches past row MR spills into the next p's first rows, so groups go from the last to
        // the first and p upwards, and every spill is overwritten afterwards (the last one lands in
        // the next sliver or the buffer's slack).
        const int64_t kfull = kc / W * W;
        for (int r0 = (MR - 1) / W * W; r0 >= 0; r0 -= W)
          for (int64_t p = 0; p < kfull; p += W)
            S::transpose_store(s + r0 * rs + p, rs, std::min(W, MR - r0), d + p * MR + r0, MR);
        for (int64_t p = kfull; p < kc; p++)
          for (int r = 0; r < MR; r++) d[p * MR + r] = s[r * rs + p];
      } else if (cs == 1) {
        for (int r = 0; r < MR; r++) {
          if (r < mr) {
            const T* row = s + r * rs;
            for (int64_t p = 0; p < kc; p++) d[p * MR + r] = row[p];
          } else {
            for (int64_t p = 0; p < kc; p++) d[p * MR + r] = T(0);
          }
        }
      } else {
        for (int64_t p = 0; p < kc; p++)
          for (int r = 0; r < MR; r++) d[p * MR + r] = r < mr ? s[r * rs + p * cs] : T(0);
      }
    }
  }

  // Column-major A (a transposed operand, g.T @ x), whole slivers. Row by row of the storage
  // across all slivers, for the same reason as b_rows: a sliver-at-a-time order would read one
  // short piece of each of kc storage rows, which for power-of-two strides all share a cache set.
  static void a_cols(const T* src, int64_t cs, int64_t kc, int64_t mc, T* dst) {
    for (int64_t p = 0; p < kc; p++) {
      const T* s = src + p * cs;
      for (int64_t ir = 0; ir < mc; ir += MR)
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) dst[ir * kc + p * MR + r] = s[ir + r];
    }
  }

  // KC x NC block of B into NR-column slivers: dst[sliver][p][j] = B(p, jr + j).
  static void b(const T* src, int64_t rs, int64_t cs, int64_t kc, int64_t nc, T* dst) {
    const int64_t full = cs == 1 ? nc / NR * NR : 0;
    if (full > 0) b_rows(src, rs, kc, full, dst);
    for (int64_t jr = full; jr < nc; jr += NR) {
      T* d = dst + jr * kc;
      const int nr = int(std::min<int64_t>(NR, nc - jr));
      const T* s = src + jr * cs;
      if (rs == 1) {
        // Transposed B (x @ w.T): each column is contiguous along p.
        if (nr == NR && transpose_b(s, cs, kc, d)) continue;
        for (int j = 0; j < NR; j++) {
          if (j < nr) {
            const T* col = s + j * cs;
            for (int64_t p = 0; p < kc; p++) d[p * NR + j] = col[p];
          } else {
            for (int64_t p = 0; p < kc; p++) d[p * NR + j] = T(0);
          }
        }
      } else {
        for (int64_t p = 0; p < kc; p++)
          for (int j = 0; j < NR; j++) d[p * NR + j] = j < nr ? s[p * rs + j * cs] : T(0);
      }
    }
  }

  // Row-major B, whole slivers. A few rows at a time across all slivers: the reads then run along
  // rows (a sliver-at-a-time order reads one cache line per row, which defeats the prefetchers and,
  // for power-of-two row lengths, maps every line to the same cache set).
  static void b_rows(const T* src, int64_t rs, int64_t kc, int64_t nc, T* dst) {
    constexpr int64_t kRows = 8;
    for (int64_t p0 = 0; p0 < kc; p0 += kRows) {
      const int64_t p1 = std::min(kc, p0 + kRows);
      for (int64_t jr = 0; jr < nc; jr += NR) {
        T* d = dst + jr * kc;
        for (int64_t p = p0; p < p1; p++)
#pragma GCC unroll 8
          for (int j = 0; j < NR; j += W) S::store(d + p * NR + j, S::load(src + p * rs + jr + j));
      }
    }
  }

  // A register transpose of whole W x W tiles where the ISA provides one (see simd_*.h).
  static bool transpose_b(const T* s, int64_t cs, int64_t kc, T* dst) {
    if constexpr (S::kHasTranspose) {
      // Both W-wide halves of a cache line of each column are used back to back, so a line is
      // read once even when power-of-two column strides make all the columns share a cache set.
      const int64_t kfull = kc / W * W;
      int64_t p = 0;
      for (; p + 2 * W <= kfull; p += 2 * W)
        for (int j = 0; j < NR; j += W) {
          S::transpose_store(s + j * cs + p, cs, W, dst + p * NR + j, NR);
          S::transpose_store(s + j * cs + p + W, cs, W, dst + (p + W) * NR + j, NR);
        }
      for (; p < kfull; p += W)
        for (int j = 0; j < NR; j += W) S::transpose_store(s + j * cs + p, cs, W, dst + p * NR + j, NR);
      for (int64_t p = kfull; p < kc; p++)
        for (int j = 0; j < NR; j++) dst[p * NR + j] = s[j * cs + p];
      return true;
    } else {
      (void)s, (void)cs, (void)kc, (void)dst;
      return false;
    }
  }
};
