// The register-tiled main loop, shared by reg_tiled and split_k: a block computes a BM x BN
// tile of A[:, k0:k1] * B[k0:k1, :] into per-thread TM x TN register accumulators (the tile
// shapes are rt_tile instances; reg_tiled.cu lists the ones it runs).
//
//  - Global -> shared: A through registers, 16-byte loads when rows are 16-byte aligned (the
//    Vec parameter), stored transposed (as[k][m]) so a thread reads 4 rows of A for one k as
//    a float4; rows padded by 4 floats so the transposing stores of the k-quarters of a row
//    land in different banks. B with cp.async, 16 bytes (4-byte copies at ragged edges and
//    where rows are not 16-byte aligned), no staging registers. Tiles wholly inside the
//    matrix are fetched without predicates, aligned or not (unaligned rows took 12-17% longer
//    when every load was predicated: bench/history/tuning-notes-the-code-cites.md, note T2), and so are edge
//    tiles, moved back inside by their overhang (place_tile; 7-22% longer predicated). What
//    is left, and the last K-tile where BK does not divide K, is predicated element by
//    element and filled with zeros.
//  - Warp tiling: a warp's lanes form a LANES_M x LANES_N grid; a lane owns groups of 4 rows
//    repeating every 4*LANES_M rows of the warp tile and groups of 4 columns every
//    4*LANES_N, so every shared-memory read is a float4 that is broadcast or conflict-free.
//  - Double buffering: the next K-tile is in flight while the current one is multiplied out
//    of shared memory; one barrier per tile. Inside the tile, the fragments of step k+1 are
//    read before step k's multiply-adds, and the barrier comes before the last step, whose
//    multiply-adds cover the reads of the next tile's first fragments. The loop body is
//    unrolled over the two buffers so every shared-memory offset is a constant (the largest
//    single gain; bench/history/tuning-notes-the-code-cites.md, note T2).
//  - The multiply-adds of a k-step go in pairs of columns over groups of 4 rows (fma_order):
//    for 128x128x8 the order cuBLAS's own FFMA kernel issues them in (read from its SASS),
//    for 64x64x16 the same pairs with the row groups outer. ptxas keeps much of the order,
//    and its schedule was 0.7-5% faster than row by row (tuning note T2).
#pragma once

#include <type_traits>

#include <la/kernels/gemm/detail/common.cuh>

namespace la::gemm_detail {

/// The order of a thread's TM x TN multiply-adds in one k-step. Both walk pairs of columns
/// (j, j+1) over a group of 4 rows, the rows of every other pair rotated by 2 (so a pair
/// starts on a row the previous one ended near):
///  - column_pairs: pairs outer, groups of rows inside (cuBLAS's order);
///  - row_groups: groups of rows outer, pairs inside.
/// Measured per tile shape (bench/history/tuning-notes-the-code-cites.md, note T2).
enum class fma_order { column_pairs, row_groups };

/// A reg_tiled tile shape. A block of THREADS = 32 * WARPS_M * WARPS_N threads computes a
/// BM x BN tile, BK of K at a time; each thread owns TM x TN outputs, its warp a WM x WN
/// tile (WM = LANES_M * TM, WN = LANES_N * TN). MIN_BLOCKS is the __launch_bounds__ residency
/// (it caps the registers); ORDER the multiply-adds' order.
template <int BM_, int BN_, int BK_, int TM_, int TN_, int LANES_M_, int MIN_BLOCKS_, fma_order ORDER_>
struct rt_tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr fma_order ORDER = ORDER_;
  static constexpr int LANES_M = LANES_M_, LANES_N = 32 / LANES_M_;
  static constexpr int WM = LANES_M * TM, WN = LANES_N * TN, WARPS_M = BM / WM, WARPS_N = BN / WN;
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int A_PAD = 4;                        // see the stash in reg_tiled_mainloop
  static constexpr int A_LOADS = BM * BK / 4 / THREADS;  // float4 per thread per tile
  static constexpr int B_LOADS = BK * BN / 4 / THREADS;
  static constexpr int A_FLOATS = BK * (BM + A_PAD), B_FLOATS = BK * BN;  // one buffer each
  static constexpr std::size_t SMEM_BYTES = 2 * (A_FLOATS + B_FLOATS) * sizeof(float);
  static_assert(TM % 4 == 0 && TN % 4 == 0, "reg_tiled: thread tiles are groups of 4 x 4");
  static_assert(LANES_M * LANES_N == 32 && BM % WM == 0 && BN % WN == 0, "reg_tiled: warps must tile the block");
  static_assert(A_LOADS >= 1 && (BM * BK / 4) % THREADS == 0, "reg_tiled: A tile must split into float4 per thread");
  static_assert(B_LOADS >= 1 && (BK * BN / 4) % THREADS == 0, "reg_tiled: B tile must split into float4 per thread");
  static_assert(BK % 8 == 0, "reg_tiled: BK a multiple of 8 (float4 loads along K; the fragment buffers alternate)");
};

/// 128x128x8, 8 warps of 32x64 (lanes 4 x 8), 8x8 a thread, 2 blocks/SM: reg_tiled's tile
/// where the output has enough tiles, and split_k's.
using rt_config = rt_tile<128, 128, 8, 8, 8, 4, 2, fma_order::column_pairs>;
/// 64x64x16, 4 warps of 64x16, 8x4 a thread, 4 blocks/SM: reg_tiled's tile where it leaves
/// the busiest SM less work (reg_tiled_shape_for; bench/history/tuning-notes-the-code-cites.md, note T2).
using rt_small = rt_tile<64, 64, 16, 8, 4, 8, 4, fma_order::row_groups>;

/// Output tiles of a problem at tile size BM x BN.
template <typename Cfg = rt_config>
inline long rt_tiles(const gemm_problem& p) {
  return static_cast<long>(ceil_div(p.m, Cfg::BM)) * ceil_div(p.n, Cfg::BN);
}

/// Four consecutive elements of row r from column c; zeros outside [0,rows) x [0,cols).
template <bool Vec>
__device__ __forceinline__ float4 load4(const float* p, index_t ld, index_t r, index_t c, index_t rows, index_t cols) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (r >= rows) return v;
  const float* q = p + static_cast<long>(r) * ld + c;
  if (Vec && c + 3 < cols) return *reinterpret_cast<const float4*>(q);  // 16-byte aligned: Vec
  if (c < cols) v.x = q[0];
  if (c + 1 < cols) v.y = q[1];
  if (c + 2 < cols) v.z = q[2];
  if (c + 3 < cols) v.w = q[3];
  return v;
}

/// The main loop over K in [k0, k1) of the Cfg tile at (row0, col0), accumulating into acc.
/// smem: Cfg::SMEM_BYTES of dynamic shared memory, 16-byte aligned.
template <typename Cfg, bool Vec>
__device__ __forceinline__ void reg_tiled_mainloop(float* smem, const float* __restrict__ a, index_t lda,
                                                   const float* __restrict__ b, index_t ldb, index_t m, index_t n,
                                                   index_t k0, index_t k1, index_t row0, index_t col0,
                                                   float (&acc)[Cfg::TM][Cfg::TN]) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN, LDA_S = BM + Cfg::A_PAD;
  float* const as = smem;                       // [2][BK][LDA_S]: A transposed, as[k][m]
  float* const bs = smem + 2 * Cfg::A_FLOATS;  // [2][BK][BN]
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int wm = warp / Cfg::WARPS_N, wn = warp % Cfg::WARPS_N;
  const int tm = lane / Cfg::LANES_N, tn = lane % Cfg::LANES_N;
  const int ar = wm * Cfg::WM + tm * 4;  // first of this thread's rows in the tile
  const int bc = wn * Cfg::WN + tn * 4;  // first of its columns

  float4 ra[Cfg::A_LOADS];
  const bool interior = row0 + BM <= m && col0 + BN <= n;
  // B's float4 i of K-tile kt into buffer buf with cp.async; `whole`: the tile is inside.
  auto fetch_b = [&](int i, index_t kt, int buf, bool whole) {
    const int e = t + i * Cfg::THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;  // tile [BK][BN]
    float* const dst = bs + buf * Cfg::B_FLOATS + r * BN + c;
    const index_t gr = kt + r, gc = col0 + c;
    const float* const src = b + static_cast<long>(gr) * ldb + gc;
    if (Vec && (whole || (gr < k1 && gc + 3 < n))) {
      cp_async16(dst, src, true);
      return;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const bool in = whole || (gr < k1 && gc + q < n);
      cp_async4(dst + q, in ? src + q : b, in);
    }
  };
  // Starts loading K-tile kt: A into registers (stash stores it), B into buffer buf
  // (cp.async, committed as one group).
  auto fetch = [&](index_t kt, int buf) {
    if (interior && kt + BK <= k1) {  // whole tile inside: no predicates; 16-byte loads where Vec
#pragma unroll
      for (int i = 0; i < Cfg::A_LOADS; ++i) {
        const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;
        const float* const q = a + static_cast<long>(row0 + r) * lda + kt + kc;
        ra[i] = Vec ? *reinterpret_cast<const float4*>(q) : make_float4(q[0], q[1], q[2], q[3]);
      }
#pragma unroll
      for (int i = 0; i < Cfg::B_LOADS; ++i) fetch_b(i, kt, buf, true);
      cp_async_commit();
      return;
    }
#pragma unroll
    for (int i = 0; i < Cfg::A_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;  // tile [BM][BK]
      ra[i] = load4<Vec>(a, lda, row0 + r, kt + kc, m, k1);
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_LOADS; ++i) fetch_b(i, kt, buf, false);
    cp_async_commit();
  };
  // A transposed into buffer buf. The k-quarters of a row go to rows of as that are
  // 4 * LDA_S floats apart, 16 banks with A_PAD = 4: with BK = 8 a warp's stores are
  // conflict-free (BK = 16: 2-way).
  auto stash = [&](int buf) {
    float* const ab = as + buf * Cfg::A_FLOATS;
#pragma unroll
    for (int i = 0; i < Cfg::A_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;
      ab[(kc + 0) * LDA_S + r] = ra[i].x;
      ab[(kc + 1) * LDA_S + r] = ra[i].y;
      ab[(kc + 2) * LDA_S + r] = ra[i].z;
      ab[(kc + 3) * LDA_S + r] = ra[i].w;
    }
  };
  // Fragments of two k-steps: those of step k+1 are read before step k's multiply-adds.
  float fa[2][TM], fb[2][TN];
  auto load_frags = [&](int buf, int k, int f) {
    const float* const ab = as + buf * Cfg::A_FLOATS + ar + k * LDA_S;
    const float* const bb = bs + buf * Cfg::B_FLOATS + bc + k * BN;
#pragma unroll
    for (int g = 0; g < TM / 4; ++g)
      *reinterpret_cast<float4*>(&fa[f][4 * g]) = *reinterpret_cast<const float4*>(ab + g * 4 * Cfg::LANES_M);
#pragma unroll
    for (int g = 0; g < TN / 4; ++g)
      *reinterpret_cast<float4*>(&fb[f][4 * g]) = *reinterpret_cast<const float4*>(bb + g * 4 * Cfg::LANES_N);
  };
  // Rows i4 + (ii, or (ii + 2) % 4 on odd pairs) with columns j, j + 1 (see fma_order).
  auto fma_quad = [&](int f, int i4, int j) {
#pragma unroll
    for (int ii = 0; ii < 4; ++ii) {
      const int i = i4 + ((j / 2) % 2 ? (ii + 2) % 4 : ii);
      acc[i][j] += fa[f][i] * fb[f][j];
      acc[i][j + 1] += fa[f][i] * fb[f][j + 1];
    }
  };
  auto fma_step = [&](int f) {
    if constexpr (Cfg::ORDER == fma_order::column_pairs) {
#pragma unroll
      for (int j = 0; j < TN; j += 2)
#pragma unroll
        for (int i4 = 0; i4 < TM; i4 += 4) fma_quad(f, i4, j);
    } else {
#pragma unroll
      for (int i4 = 0; i4 < TM; i4 += 4)
#pragma unroll
        for (int j = 0; j < TN; j += 2) fma_quad(f, i4, j);
    }
  };

  if (k0 >= k1) return;
  fetch(k0, 0);
  stash(0);
  cp_async_wait<0>();
  __syncthreads();
  load_frags(0, 0, 0);
  // One K-tile out of buffer `cur` (a constant), the next one fetched into cur ^ 1. Its last
  // step uses fragment buffer 1 (BK even), so the next tile's first fragments go to buffer 0.
  auto tile = [&](auto buf, index_t kt) {
    constexpr int cur = decltype(buf)::value;
    const bool more = kt + BK < k1;
    if (more) fetch(kt + BK, cur ^ 1);  // in flight while we multiply
#pragma unroll
    for (int k = 0; k + 1 < BK; ++k) {
      load_frags(cur, k + 1, (k + 1) % 2);
      fma_step(k % 2);
    }
    if (more) {
      stash(cur ^ 1);
      cp_async_wait<0>();
      __syncthreads();
      load_frags(cur ^ 1, 0, 0);
    }
    fma_step(1);
    return more;
  };
  for (index_t kt = k0;; kt += 2 * BK) {
    if (!tile(std::integral_constant<int, 0>{}, kt)) break;
    if (!tile(std::integral_constant<int, 1>{}, kt + BK)) break;
  }
}

/// Where a block's tile lies: it computes the BM x BN outputs from (row0, col0). A tile that
/// would reach past m or n is moved back inside by its overhang, where the matrix holds a
/// whole tile (and, with 16-byte loads of B, where n % 4 == 0 keeps them aligned; reg_tiled
/// passes a copy of B's width rounded up to 4, its pad zeroed, as n): it then
/// runs the main loop without predicates, like an interior tile, and recomputes rows or
/// columns that its neighbour stores (it stores from kept_from on). Edge tiles fetched with
/// predicates took 7% (bottom) and 22% (right) longer than interior ones, and a grid of one
/// round waits for its slowest tile (bench/history/tuning-notes-the-code-cites.md, note T2).
struct rt_place {
  index_t row0, col0;
};
template <typename Cfg, bool Vec>
__device__ __forceinline__ rt_place place_tile(index_t row0, index_t col0, index_t m, index_t n) {
  rt_place t{row0, col0};
  if (row0 + Cfg::BM > m && m >= Cfg::BM) t.row0 = m - Cfg::BM;
  if (col0 + Cfg::BN > n && n >= Cfg::BN && (!Vec || n % 4 == 0)) t.col0 = n - Cfg::BN;
  return t;
}
/// The first row (or column) that a tile starting at `origin` stores, of `extent` rows in
/// tiles of `tile`: its own origin, or where the last tile began before place_tile moved it
/// (an unmoved tile never starts at extent - tile unless tile divides extent). Recomputed in
/// the epilogue rather than kept through the main loop, whose registers are all in use.
__device__ __forceinline__ index_t kept_from(index_t origin, index_t extent, int tile) {
  return extent % tile != 0 && origin == extent - tile ? extent - extent % tile : origin;
}

/// Calls quad(r, c, v) for every group of 4 consecutive accumulators of this thread (columns
/// c .. c + 3 of row r, as a float4) that the tile stores: the row in [kept_from, m), the
/// columns not all outside [kept_from, n). Columns outside are the caller's to drop. The
/// columns' tiles were placed in n_placed >= n columns (the B that was read: reg_tiled reads
/// a copy of B to its zeroed pad, the next multiple of 4; elsewhere n).
template <typename Cfg, typename Quad>
__device__ __forceinline__ void for_each_quad(const float (&acc)[Cfg::TM][Cfg::TN], const rt_place& t, index_t m,
                                              index_t n, index_t n_placed, Quad&& quad) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const index_t keep_row = kept_from(t.row0, m, Cfg::BM), keep_col = kept_from(t.col0, n_placed, Cfg::BN);
  const index_t r_base = t.row0 + (warp / Cfg::WARPS_N) * Cfg::WM + (lane / Cfg::LANES_N) * 4;
  const index_t c_base = t.col0 + (warp % Cfg::WARPS_N) * Cfg::WN + (lane % Cfg::LANES_N) * 4;
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i) {
    const index_t r = r_base + (i % 4) + (i / 4) * 4 * Cfg::LANES_M;  // groups of 4 rows, 4*LANES_M apart
    if (r >= m || r < keep_row) continue;
#pragma unroll
    for (int j = 0; j < Cfg::TN; j += 4) {
      const index_t c = c_base + (j / 4) * 4 * Cfg::LANES_N;  // groups of 4 columns, 4*LANES_N apart
      if (c < n && c + 3 >= keep_col) quad(r, c, make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

/// Calls out(r, c, v) for every accumulator of this thread that it stores (split_k's epilogue).
template <typename Cfg, typename Out>
__device__ __forceinline__ void for_each_output(const float (&acc)[Cfg::TM][Cfg::TN], const rt_place& t, index_t m,
                                                index_t n, Out&& out) {
  const index_t keep_col = kept_from(t.col0, n, Cfg::BN);
  for_each_quad<Cfg>(acc, t, m, n, n, [&](index_t r, index_t c, float4 v) {
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (c + q < n && c + q >= keep_col) out(r, c + q, e[q]);
  });
}

/// alpha * v into p[0 .. 3] (columns c .. c + 3 of a row), those outside [lo, n) dropped: two
/// 8-byte stores where `pairs` (p is 8-byte aligned) and all four are inside, else one by one.
/// (A 16-byte store made ptxas spill 52 bytes of the 128x128x8 tile.)
__device__ __forceinline__ void store_quad(float* p, index_t c, index_t lo, index_t n, bool pairs, float alpha,
                                           float4 v) {
  if (pairs && c >= lo && c + 3 < n) {
    reinterpret_cast<float2*>(p)[0] = make_float2(alpha * v.x, alpha * v.y);
    reinterpret_cast<float2*>(p)[1] = make_float2(alpha * v.z, alpha * v.w);
    return;
  }
  const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (c + q >= lo && c + q < n) p[q] = alpha * e[q];
}

}  // namespace la::gemm_detail
