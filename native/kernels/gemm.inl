// A packed, register-blocked GEMM in the layout of BLIS/GotoBLAS, included inside each ISA namespace
// after its simd_*.h. C[m,n] = alpha * A[m,k] B[k,n] + beta * C, C row-major with leading dimension
// ldc, A and B addressed by (row, column) strides so that transposed operands are packed straight
// from their storage without a copy.
//
// Loop nest (outermost first): jc over N in NC columns -> pc over K in KC -> pack a KC x NC block of
// B (lives in L3/L2) -> ic over M in equal blocks of at most MC rows -> pack that block of A (lives
// in L2) -> jr over the block in NR columns (a KC x NR sliver of B stays in L1) -> ir in MR rows ->
// the micro-kernel, which keeps an MR x NR tile of C in registers for the whole KC loop.
//
// Packed layouts: A as MR-row slivers, each KC columns of MR consecutive values; B as NR-column
// slivers, each KC rows of NR consecutive values. Edge slivers are zero-padded to MR/NR; an edge
// tile runs a micro-kernel of exactly its rows (and one vector fewer where that covers its
// columns), and only the write-back looks at the true column edge.

#include "gemm_pack.inl"

// How a column-major A against few columns is read (reads_cols_in_place): packed by the blocked
// loop; in place with B packed, K in passes of KC; or in place with B in place too where its rows
// are close, K in passes of up to KCF.
enum ColsInPlace : int { kNoColsInPlace = 0, kColsPackedB = 1, kColsAndBInPlace = 2 };

// KCF is the depth of run_few_rows' passes and of kColsAndBInPlace's (see there); by default the
// same KC as the blocked loop.
// NCF > 0 gives few rows against a row-major B their own loop over chunks of NCF columns
// (run_few_rows_rowb); 0 leaves them to the blocked loop. AInPlace lets products with few columns
// read a row-major A without packing it, AColsInPlace a column-major one (run_a_in_place).
template <class S, int MR, int NV, int MC, int KC, int NC, int KCF = KC, int NCF = 0, bool AInPlace = false,
          ColsInPlace AColsInPlace = kNoColsInPlace>
struct Gemm {
  using T = typename S::T;
  using V = typename S::V;
  static constexpr int W = S::W;
  static constexpr int NR = NV * W;
  static constexpr int kMR = MR, kNR = NR;
  // How the micro-kernel reads A: a packed sliver, or where it lies, row-major or column-major.
  static constexpr int kPacked = 0, kRowsInPlace = 1, kColsInPlace = 2;
  // The most slivers of B (columns / NR) that either in-place path takes (session 20: 8 against 4).
  static constexpr int kInPlaceSlivers = 8;
  static constexpr int64_t kColsPassBytes = 256 * 1024;
  static_assert(MC % MR == 0 && NC % NR == 0, "blocks must hold whole micro-tiles");
  static_assert(KCF % W == 0, "the few-rows passes split K in whole vectors");
  static_assert(NCF % NR == 0 && NCF <= NC, "the few-rows chunks of B hold whole slivers");

  static void run(const GemmProblem<T>& g) {
    // A's block and then B's in one allocation, so that both lie on the huge pages PackBuffer maps
    // for B's size (A's alone would be under one).
    static thread_local PackBuffer buf;
    // Slack after A: the register-transpose packing writes up to W - 1 values past a sliver.
    constexpr size_t kA = (size_t(MC) * std::max(KC, KCF) + W + 15) / 16 * 16;
    T* pa = static_cast<T*>(buf.get((kA + std::max(size_t(KC) * NC, size_t(KCF) * NR * (AColsInPlace != kNoColsInPlace ? kInPlaceSlivers : 1))) * sizeof(T)));
    T* pb = pa + kA;
    if (reads_rows_in_place(g)) return run_a_in_place<kRowsInPlace>(g, pb, g.rsa, KC, 256);
    if (reads_cols_in_place(g)) {
      if (AColsInPlace == kColsPackedB) return run_a_in_place<kColsInPlace>(g, pb, g.csa, KC, 0);
      return run_a_in_place<kColsInPlace>(g, pb, g.csa, cols_pass_depth(g.n), 1024);
    }
    if (g.m <= MC && g.rsb == 1 && g.csb != 1) return run_few_rows(g, pa, pb);
    if (NCF > 0 && g.m <= MC && g.csb == 1 && std::min<int64_t>(g.k, KC) * g.n > int64_t(2) * KC * NCF)
      return run_few_rows_rowb(g, pa, pb);
    const bool split_c = rows_alias(g.ldc);
    for (int64_t jc = 0; jc < g.n; jc += NC) {
      const int64_t nc = std::min<int64_t>(NC, g.n - jc);
      // K in equal passes of whole vectors (2048 = 6 x 344 rather than 5 x 384 + 128): a short last
      // pass reads and writes all of C for a third of the arithmetic.
      const int64_t passes = (g.k + KC - 1) / KC;
      int64_t kc = 0;
      for (int64_t pc = 0, pass = 0; pc < g.k; pc += kc, pass++) {
        kc = pass_depth(g.k - pc, passes - pass);
        const T beta = pc == 0 ? g.beta : T(1);
        Pack<S, MR, NR>::b(g.b + pc * g.rsb + jc * g.csb, g.rsb, g.csb, kc, nc, pb);
        // M likewise in blocks of equal whole tiles (1024 = 7 x 132 + 100, not 7 x 144 + 16): the
        // packed B's slivers come from L3 for each block, which a block of 3 tiles hardly repays.
        const int64_t mblocks = (g.m + MC - 1) / MC;
        const int64_t mstep = ((g.m + mblocks - 1) / mblocks + MR - 1) / MR * MR;
        for (int64_t ic = 0; ic < g.m; ic += mstep) {
          const int64_t mc = std::min<int64_t>(mstep, g.m - ic);
          Pack<S, MR, NR>::a(g.a + ic * g.rsa + pc * g.csa, g.rsa, g.csa, mc, kc, pa);
          const int64_t tiles = (mc + MR - 1) / MR;
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const int nr = int(std::min<int64_t>(NR, nc - jr));
            // The next packed sliver of B is fetched into L2 a part per tile, so that the first
            // tile on it does not wait on L3 (the block of B is megabytes, past L2).
            const char* next = reinterpret_cast<const char*>(pb + (jr + NR) * kc);
            const int64_t next_bytes = jr + NR < nc ? int64_t(sizeof(T)) * kc * NR : 0;
            for (int64_t ir = 0, t = 0; ir < mc; ir += MR, t++) {
              const int mr = int(std::min<int64_t>(MR, mc - ir));
              for (int64_t o = next_bytes * t / tiles / 64 * 64; o < next_bytes * (t + 1) / tiles; o += 64)
                __builtin_prefetch(next + o, 0, 2);
              if (split_c)
                tile_in_halves(kc, pa + ir * kc, pb + jr * kc, g.c + (ic + ir) * g.ldc + jc + jr, g.ldc, g.alpha, beta, mr, nr);
              else
                tile<MR>(kc, pa + ir * kc, pb + jr * kc, g.c + (ic + ir) * g.ldc + jc + jr, g.ldc, g.alpha, beta, mr, nr);
            }
          }
        }
      }
    }
  }

  // When all of A fits one MC block (the batch-sized GEMMs of training) each B sliver serves only
  // m / MR micro-tiles, so reading B dominates more than usual. For a transposed B (x @ w.T) it
  // measured faster to pack each sliver just before its tiles (it stays in L1) while the source of
  // the next sliver is prefetched into L2, a part per tile; a row-major B does better with the
  // row-ordered block packing of run().
  // Its passes over K may be deeper than KC (KCF): with so few rows each pass also reads and
  // writes all of C and packs A again, while a sliver of B streamed from L2 instead of L1 costs the
  // kernel little. K is split into equal passes of whole vectors, so no pass is a short remainder.
  static void run_few_rows(const GemmProblem<T>& g, T* pa, T* pb) {
    const int64_t tiles = (g.m + MR - 1) / MR;
    const int64_t passes = (g.k + KCF - 1) / KCF;
    int64_t kc = 0;
    for (int64_t pc = 0, pass = 0; pc < g.k; pc += kc, pass++) {
      kc = pass_depth(g.k - pc, passes - pass);
      const T beta = pc == 0 ? g.beta : T(1);
      const T* b = g.b + pc * g.rsb;
      Pack<S, MR, NR>::a(g.a + pc * g.csa, g.rsa, g.csa, g.m, kc, pa);
      for (int64_t jr = 0; jr < g.n; jr += NR) {
        const int nr = int(std::min<int64_t>(NR, g.n - jr));
        Pack<S, MR, NR>::b(b + jr * g.csb, g.rsb, g.csb, kc, nr, pb);
        const int64_t next = jr + NR;
        const int next_nr = int(std::min<int64_t>(NR, g.n - next));
        for (int64_t t = 0; t < tiles; t++) {
          if (next_nr > 0) prefetch_sliver(b + next * g.csb, g.rsb, g.csb, kc, next_nr, t, tiles);
          const int64_t ir = t * MR;
          tile<MR>(kc, pa + ir * kc, pb, g.c + ir * g.ldc + jr, g.ldc, g.alpha, beta, int(std::min<int64_t>(MR, g.m - ir)), nr);
        }
      }
    }
  }

  // Few rows against a row-major B (g @ w): B is read once per pass for only m / MR tiles per
  // sliver, and reading it from L3 into the packed block measured about as long as all the tiles
  // that use a tenth of it. So B is packed NCF columns at a time (the chunk stays in L2 for its
  // tiles instead of going out to L3 and back) while the next chunk's rows are prefetched a part
  // per tile, so that the L3 reads overlap the arithmetic instead of following it. Only where the
  // blocked loop's block of B would be more than two chunks: smaller ones stay in L2 anyway, and
  // there (3 x 300 x 50, 32 x 512 x 512) the prefetching measured 2-13% slower.
  static void run_few_rows_rowb(const GemmProblem<T>& g, T* pa, T* pb) {
    const int64_t tiles = (g.m + MR - 1) / MR;
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min<int64_t>(KC, g.k - pc);
      const T beta = pc == 0 ? g.beta : T(1);
      const T* b = g.b + pc * g.rsb;
      Pack<S, MR, NR>::a(g.a + pc * g.csa, g.rsa, g.csa, g.m, kc, pa);
      for (int64_t jc = 0; jc < g.n; jc += NCF) {
        const int64_t nc = std::min<int64_t>(NCF, g.n - jc);
        Pack<S, MR, NR>::b(b + jc, g.rsb, 1, kc, nc, pb);
        const T* next = b + jc + NCF;
        const int64_t next_nc = std::min<int64_t>(NCF, g.n - jc - NCF);
        const int64_t calls = (nc + NR - 1) / NR * tiles;
        int64_t call = 0;
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int nr = int(std::min<int64_t>(NR, nc - jr));
          for (int64_t t = 0; t < tiles; t++, call++) {
            if (next_nc > 0) prefetch_sliver(next, g.rsb, 1, kc, next_nc, call, calls);
            const int64_t ir = t * MR;
            tile<MR>(kc, pa + ir * kc, pb + jr * kc, g.c + ir * g.ldc + jc + jr, g.ldc, g.alpha, beta,
                     int(std::min<int64_t>(MR, g.m - ir)), nr);
          }
        }
      }
    }
  }

  // A row-major A of short rows against few columns of B (attention's p @ v: 128 x 128 by 128 x 64,
  // a classifier's x @ w.T with 16 outputs): packing A costs about as much as a pass of the tiles
  // over it, since only n / NR slivers reuse the packed copy. There the micro-kernel reads A where
  // it lies, each of its R rows a stream of consecutive values (the broadcasts are scalar loads
  // either way), a tile of rows against every sliver while those rows are in L1, and only B is
  // packed. Not where A's rows are a multiple of 4 KiB apart: all R rows would fall in one L1
  // set, more than its 8 ways. Any number of rows (the blocked loop's blocks of A would not be
  // reused more either), and K in passes as in run() (p @ v at 512 tokens 1.03 -> 1.21x OpenBLAS).
  // Up to 8 slivers (session 20; from 4): on AVX-512 a small Transformer's qkv x @ w.T 1024 x 192 x
  // 64 1.03 -> 1.07x OpenBLAS, 512 x 256 x 256 1.07 -> 1.11x, 1024 x 160 x 128 1.02 -> 1.07x; on the
  // AVX2 kernels (against OpenBLAS's Haswell ones) p @ v with 128 columns 1.03 -> 1.06x, 1024 x 96 x
  // 256 1.00-1.02 -> 1.06x, the rest within 1%.
  static bool reads_rows_in_place(const GemmProblem<T>& g) {
    return AInPlace && g.csa == 1 && g.n <= kInPlaceSlivers * NR && !whole_4k(g.rsa);
  }

  // A column-major A (a transposed row-major matrix: a weight's gradient g.T @ x, K the batch's
  // tokens) against at most 8 slivers of B: at each step of k a tile's R values of A lie side by
  // side, as in a packed sliver, only lda apart instead of MR, so the micro-kernel reads them in
  // place; B likewise where its rows are whole slivers at most 1 KiB apart. Packing both cost
  // 10-25% of these products (each packed value served only n / NR or m / MR tiles), and with
  // neither packed a pass over K may be as deep as KCF where B's rows fit (below): a tile's streams
  // of A and B come from L2 with the hardware's prefetch either way, and deeper passes write C less
  // often. On a Zen 4 core, ours / OpenBLAS (gemm_vs_openblas, alternated): 64 x 64 x 1024
  // 0.91-0.94 -> 1.24-1.26x, 192 x 64 x 1024 0.89-0.90 -> 1.18-1.20x, 2048 x 64 x 1024 0.92-0.97 ->
  // 1.30-1.40x, 768 x 256 x 1024 0.99-1.00 -> 1.08-1.11x, 100 x 50 x 700 (B packed) 0.76 -> 0.98x;
  // 512 columns or more measured mixed (1024^3 0.84-0.89x) and stay with the blocked loop. That is
  // kColsAndBInPlace. AVX2's 6 x 16 tile does a quarter of that arithmetic per line of A it streams,
  // and there A read in place paid only with B packed and passes of KC, so that a tile's stream of
  // A and its sliver of B stay in L1 for the row's slivers (kColsPackedB; isa_avx2.cc).
  // On AVX2 not where A's columns are a multiple of 4 KiB apart: a pass's 384 lines of a tile's A
  // then fall in at most 32 of L2's sets (8 ways each) and come from L3 for every sliver (session 21,
  // ours / OpenBLAS against the blocked loop: 1024 x 64 x 1024 0.78-0.83 against 0.93-0.94x, 4096 x
  // 128 x 512 0.86-0.87 against 0.92-0.96x, 1024 x 128 x 2048 0.77-0.91 against 0.89-0.92x).
  // (n > 0: cols_pass_depth divides by it.)
  static bool reads_cols_in_place(const GemmProblem<T>& g) {
    return AColsInPlace != kNoColsInPlace && g.rsa == 1 && g.csa != 1 && g.n > 0 && g.n <= kInPlaceSlivers * NR &&
           !(AColsInPlace == kColsPackedB && whole_4k(g.csa));
  }

  // The column-major path's pass depth: every tile of rows reads the pass's rows of B again, so they
  // stay within 256 KiB (a quarter of L2): 256 columns take passes of 256 (the GPT head's 8192 x 256
  // x 1024 gradient 0.95-0.98x OpenBLAS in passes of 1024, 1.06-1.08x), 64 columns of 1024.
  static int64_t cols_pass_depth(int64_t n) {
    return std::min<int64_t>(KCF, std::max<int64_t>(W, kColsPassBytes / int64_t(sizeof(T)) / n / W * W));
  }

  // Either in-place path (AMode kRowsInPlace or kColsInPlace; A's values lda apart, K in passes of
  // at most max_depth). B is read in place too where its rows are whole slivers close enough
  // (max_ldb_bytes): for row-major A at most 256 bytes apart (p @ v with a head size of 64: 1.16 ->
  // 1.19-1.20x OpenBLAS): farther apart, a sliver's rows share fewer L1 sets than its kc x NR
  // values need, and the packed copy, which fills every set, does better; for column-major A 1 KiB
  // (kColsAndBInPlace) or never (kColsPackedB: 0).
  template <int AMode>
  static void run_a_in_place(const GemmProblem<T>& g, T* pb, int64_t lda, int64_t max_depth, int64_t max_ldb_bytes) {
    const bool b_in_place = g.csb == 1 && g.n % NR == 0 && g.rsb * int64_t(sizeof(T)) <= max_ldb_bytes;
    const int64_t ldb = b_in_place ? g.rsb : NR;
    // K in equal passes of whole vectors, as in run(); C accumulates after the first.
    const int64_t passes = (g.k + max_depth - 1) / max_depth;
    int64_t kc = 0;
    for (int64_t pc = 0, pass = 0; pc < g.k; pc += kc, pass++) {
      kc = pass_depth(g.k - pc, passes - pass);
      const T beta = pc == 0 ? g.beta : T(1);
      if (!b_in_place) Pack<S, MR, NR>::b(g.b + pc * g.rsb, g.rsb, g.csb, kc, g.n, pb);
      for (int64_t ir = 0; ir < g.m; ir += MR) {
        const int mr = int(std::min<int64_t>(MR, g.m - ir));
        const T* a = g.a + ir * g.rsa + pc * g.csa;
        for (int64_t jr = 0; jr < g.n; jr += NR) {
          const T* b = b_in_place ? g.b + pc * g.rsb + jr : pb + jr * kc;
          tile<MR, AMode>(kc, a, lda, b, ldb, g.c + ir * g.ldc + jr, g.ldc, g.alpha, beta, mr,
                          int(std::min<int64_t>(NR, g.n - jr)));
        }
      }
    }
  }

  // Whether rows of C this far apart fall in the same L1 sets (a multiple of 4 KiB: 1024 floats):
  // each of a tile's MR rows then puts a line in every set its columns span, more than the sets' 8
  // ways when MR > 8, and the lines prefetched at the tile's start evict each other before its
  // write-back. Halves of 6 rows (AVX-512's 12 x 32 tile) measured, ours over OpenBLAS on one
  // thread, two alternated pairs: 1024^2 1.03-1.04 -> 1.07x, 2048^2 1.03-1.05 -> 1.07x, g.T @ x
  // (1024 x 1024 x 64) 1.07-1.09 -> 1.15-1.16x, x @ w.T 1024 x 8192 x 256 1.05-1.07 -> 1.12x;
  // other shapes unchanged, as were the few-rows path's x @ w.T (so it does not split).
  static bool rows_alias(int64_t ldc) { return MR > 8 && whole_4k(ldc); }

  // Whether values this many elements apart are a whole number of 4 KiB apart: L1's set period
  // (64 sets of 64 bytes), so that lines at that stride all fall in one set (and in few of L2's).
  static bool whole_4k(int64_t stride) { return stride * int64_t(sizeof(T)) % 4096 == 0; }

  // An MR-row tile of a packed A sliver as two tiles of MR / 2 rows (the sliver's layout is the same:
  // MR values per step of k), so that each writes back at most 8 lines per L1 set.
  static void tile_in_halves(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta, int mr, int nr) {
    constexpr int H = MR / 2;
    tile<H>(kc, a, b, c, ldc, alpha, beta, std::min(mr, H), nr);
    if (mr > H) tile<MR - H>(kc, a + H, b, c + H * ldc, ldc, alpha, beta, mr - H, nr);
  }

  // The depth of the next of `left` equal passes over the `rest` of K: whole vectors, the last pass
  // what remains.
  static int64_t pass_depth(int64_t rest, int64_t left) {
    return std::min<int64_t>(rest, ((rest + left - 1) / left + W - 1) / W * W);
  }

  // Prefetches part `part` of `parts` of the cache lines of a kc x nr block of B into L2: a
  // sliver (nr = NR) or, for run_few_rows_rowb, the next chunk of NCF columns.
  static void prefetch_sliver(const T* s, int64_t rs, int64_t cs, int64_t kc, int64_t nr, int64_t part, int64_t parts) {
    constexpr int64_t kLine = 64 / sizeof(T);
    if (cs == 1) {
      for (int64_t p = kc * part / parts; p < kc * (part + 1) / parts; p++) {
        for (int64_t j = 0; j < nr; j += kLine) __builtin_prefetch(s + p * rs + j, 0, 2);
        __builtin_prefetch(s + p * rs + nr - 1, 0, 2);
      }
    } else if (rs == 1) {
      for (int64_t j = nr * part / parts; j < nr * (part + 1) / parts; j++) {
        for (int64_t p = 0; p < kc; p += kLine) __builtin_prefetch(s + j * cs + p, 0, 2);
        __builtin_prefetch(s + j * cs + kc - 1, 0, 2);
      }
    }
  }

  // Picks the micro-kernel for an mr x nr tile: exactly mr rows (edge tiles skip the padding rows'
  // arithmetic) and one vector fewer when the last one would be padding only.
  // A is a packed sliver (kPacked), or R rows of A read where they lie: lda apart (kRowsInPlace) or
  // side by side with each step of k lda further on (kColsInPlace).
  template <int R>
  static void tile(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta, int mr, int nr) {
    tile<R, kPacked>(kc, a, 0, b, NR, c, ldc, alpha, beta, mr, nr);
  }
  template <int R, int AMode>
  static void tile(int64_t kc, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, T alpha, T beta,
                   int mr, int nr) {
    if constexpr (R > 1) {
      if (mr < R) return tile<R - 1, AMode>(kc, a, lda, b, ldb, c, ldc, alpha, beta, mr, nr);
    }
    if constexpr (NV > 1) {
      if (nr <= (NV - 1) * W) return kernel<R, NV - 1, AMode>(kc, a, lda, b, ldb, c, ldc, alpha, beta, nr);
    }
    kernel<R, NV, AMode>(kc, a, lda, b, ldb, c, ldc, alpha, beta, nr);
  }

  // C[R, nr] = alpha * (A sliver)(B sliver) + beta * C, accumulating R x NVe vectors in registers.
  // The packed A sliver has MR values per step of p whatever R is; in place, row i's value is at
  // a[i * lda] (kRowsInPlace) or a[i], the next step lda on (kColsInPlace). B's next step is NR on in
  // a packed sliver, ldb in place.
  template <int R, int NVe, int AMode>
  static void kernel(int64_t kc, const T* __restrict a, int64_t lda, const T* __restrict b, int64_t ldb,
                     T* __restrict c, int64_t ldc, T alpha, T beta, int nr) {
    V acc[R][NVe];
#pragma GCC unroll 16
    for (int i = 0; i < R; i++)
#pragma GCC unroll 4
      for (int j = 0; j < NVe; j++) acc[i][j] = S::zero();
#pragma GCC unroll 16
    for (int i = 0; i < R; i++) {
      S::prefetch(c + i * ldc);
      S::prefetch(c + i * ldc + NVe * W - 1);
    }

#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; p++) {
      V bv[NVe];
#pragma GCC unroll 4
      for (int j = 0; j < NVe; j++) bv[j] = S::load(b + j * W);
#pragma GCC unroll 16
      for (int i = 0; i < R; i++) {
        const V ai = S::set1(AMode == kRowsInPlace ? a[i * lda] : a[i]);
#pragma GCC unroll 4
        for (int j = 0; j < NVe; j++) acc[i][j] = S::fmadd(ai, bv[j], acc[i][j]);
      }
      a += AMode == kPacked ? MR : AMode == kRowsInPlace ? 1 : lda;
      b += AMode == kPacked ? NR : ldb;
    }

    const V va = S::set1(alpha);
    if (nr == NVe * W) {
      if (beta == T(0)) {
#pragma GCC unroll 16
        for (int i = 0; i < R; i++)
#pragma GCC unroll 4
          for (int j = 0; j < NVe; j++) S::store(c + i * ldc + j * W, S::mul(va, acc[i][j]));
      } else {
        const V vb = S::set1(beta);
#pragma GCC unroll 16
        for (int i = 0; i < R; i++)
#pragma GCC unroll 4
          for (int j = 0; j < NVe; j++) {
            T* ci = c + i * ldc + j * W;
            S::store(ci, S::fmadd(va, acc[i][j], S::mul(vb, S::load(ci))));
          }
      }
      return;
    }
    alignas(64) T tile[R * NVe * W];
    for (int i = 0; i < R; i++)
      for (int j = 0; j < NVe; j++) S::store(tile + (i * NVe + j) * W, S::mul(va, acc[i][j]));
    for (int i = 0; i < R; i++) {
      T* ci = c + i * ldc;
      const T* ti = tile + i * NVe * W;
      if (beta == T(0))
        for (int j = 0; j < nr; j++) ci[j] = ti[j];
      else
        for (int j = 0; j < nr; j++) ci[j] = ti[j] + beta * ci[j];
    }
  }
};
