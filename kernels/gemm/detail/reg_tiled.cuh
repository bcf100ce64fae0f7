// The register-tiled main loop, shared by reg_tiled and split_k: a block computes a BM x BN
// tile of A[:, k0:k1] * B[k0:k1, :] into per-thread 8x8 register accumulators.
//
//  - Global -> shared: 16-byte loads (when rows are 16-byte aligned: the Vec parameter),
//    each thread loading BM*BK/4/THREADS float4 of A and BK*BN/4/THREADS of B. Edges are
//    predicated element by element and filled with zeros.
//  - A is stored transposed in shared memory (as[k][m]) so a thread reads its 8 rows of A
//    for one k as two float4; rows padded by 4 floats so the transposing stores of the two
//    k-halves of a row land in different banks.
//  - Warp tiling: 8 warps as 2 (M) x 4 (N), each warp a 64 x 32 tile; a lane owns rows
//    {4*tm .. 4*tm+3} and {32+4*tm ..} of the warp tile and columns {4*tn ..} and {16+4*tn ..},
//    so every shared-memory read is a float4 that is either broadcast or conflict-free.
//  - Double buffering: the next K-tile is fetched into registers while the current one is
//    multiplied out of shared memory, then stored into the other buffer; one barrier per tile.
//    Inside the tile, the fragments of step k+1 are read from shared memory before step k's
//    multiply-adds, and tiles wholly inside the matrix are fetched without predicates.
#pragma once

#include "common.cuh"

namespace la::gemm_detail {

// 128x128x8, 2 blocks/SM: the fastest of the configurations tried; the others and their
// figures are in bench/RESULTS.md, tuning note T2.
struct rt_config {
  static constexpr int BM = 128, BN = 128, BK = 8, THREADS = 256, TM = 8, TN = 8, MIN_BLOCKS = 2;
  static constexpr int WARPS_M = 2, WARPS_N = 4, WM = BM / WARPS_M, WN = BN / WARPS_N;
  static constexpr int A_PAD = 4;
  static constexpr int A_LOADS = BM * BK / 4 / THREADS;  // float4 per thread per tile
  static constexpr int B_LOADS = BK * BN / 4 / THREADS;
  static_assert(WARPS_M * WARPS_N * 32 == THREADS, "reg_tiled: warp grid must use every thread");
  static_assert(WM == 8 * TM && WN == 4 * TN, "reg_tiled: a warp is 8 x 4 lanes of TM x TN outputs");
  static_assert(A_LOADS >= 1 && (BM * BK / 4) % THREADS == 0, "reg_tiled: A tile must split into float4 per thread");
  static_assert(B_LOADS >= 1 && (BK * BN / 4) % THREADS == 0, "reg_tiled: B tile must split into float4 per thread");
  static_assert(BK % 4 == 0, "reg_tiled: BK must be a multiple of 4 (float4 loads along K)");
};

/// Output tiles of a problem at the reg_tiled tile size (split-K sizing and selection).
inline long rt_tiles(const gemm_problem& p) {
  return static_cast<long>(ceil_div(p.m, rt_config::BM)) * ceil_div(p.n, rt_config::BN);
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

template <bool Vec>
__device__ __forceinline__ void reg_tiled_mainloop(const float* __restrict__ a, index_t lda, const float* __restrict__ b,
                                                   index_t ldb, index_t m, index_t n, index_t k0, index_t k1,
                                                   index_t row0, index_t col0, float (&acc)[rt_config::TM][rt_config::TN]) {
  using Cfg = rt_config;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  __shared__ __align__(16) float as[2][BK][BM + Cfg::A_PAD];  // A transposed: [k][m]
  __shared__ __align__(16) float bs[2][BK][BN];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int wm = warp / Cfg::WARPS_N, wn = warp % Cfg::WARPS_N;
  const int tm = lane / 4, tn = lane % 4;
  const int ar = wm * Cfg::WM + tm * 4;  // first of this thread's rows in the tile
  const int bc = wn * Cfg::WN + tn * 4;  // first of its columns

  float4 ra[Cfg::A_LOADS], rb[Cfg::B_LOADS];
  const bool interior = Vec && row0 + BM <= m && col0 + BN <= n;
  auto fetch = [&](index_t kt) {
    if (interior && kt + BK <= k1) {  // whole tile inside: 16-byte loads, no predicates
#pragma unroll
      for (int i = 0; i < Cfg::A_LOADS; ++i) {
        const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;
        ra[i] = *reinterpret_cast<const float4*>(a + static_cast<long>(row0 + r) * lda + kt + kc);
      }
#pragma unroll
      for (int i = 0; i < Cfg::B_LOADS; ++i) {
        const int e = t + i * Cfg::THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
        rb[i] = *reinterpret_cast<const float4*>(b + static_cast<long>(kt + r) * ldb + col0 + c);
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < Cfg::A_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;  // tile [BM][BK]
      ra[i] = load4<Vec>(a, lda, row0 + r, kt + kc, m, k1);
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;  // tile [BK][BN]
      rb[i] = load4<Vec>(b, ldb, kt + r, col0 + c, k1, n);
    }
  };
  auto stash = [&](int buf) {
#pragma unroll
    for (int i = 0; i < Cfg::A_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BK / 4), kc = (e % (BK / 4)) * 4;
      as[buf][kc + 0][r] = ra[i].x;
      as[buf][kc + 1][r] = ra[i].y;
      as[buf][kc + 2][r] = ra[i].z;
      as[buf][kc + 3][r] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_LOADS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&bs[buf][r][c]) = rb[i];
    }
  };

  if (k0 >= k1) return;
  fetch(k0);
  stash(0);
  __syncthreads();
  int cur = 0;
  for (index_t kt = k0; kt < k1; kt += BK) {
    const bool more = kt + BK < k1;
    if (more) fetch(kt + BK);  // in flight while we multiply
    float fa[2][Cfg::TM], fb[2][Cfg::TN];  // fragments of steps k and k+1
    auto load_frags = [&](int k, int f) {
      *reinterpret_cast<float4*>(&fa[f][0]) = *reinterpret_cast<const float4*>(&as[cur][k][ar]);
      *reinterpret_cast<float4*>(&fa[f][4]) = *reinterpret_cast<const float4*>(&as[cur][k][ar + 32]);
      *reinterpret_cast<float4*>(&fb[f][0]) = *reinterpret_cast<const float4*>(&bs[cur][k][bc]);
      *reinterpret_cast<float4*>(&fb[f][4]) = *reinterpret_cast<const float4*>(&bs[cur][k][bc + 16]);
    };
    load_frags(0, 0);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const int f = k % 2;
      if (k + 1 < BK) load_frags(k + 1, (k + 1) % 2);
#pragma unroll
      for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j) acc[i][j] += fa[f][i] * fb[f][j];
    }
    if (more) stash(cur ^ 1);
    __syncthreads();
    cur ^= 1;
  }
}

/// Calls out(r, c, v) for every accumulator of this thread that lies inside m x n, with its
/// global row and column (the epilogue of reg_tiled and split_k).
template <typename Out>
__device__ __forceinline__ void for_each_output(const float (&acc)[rt_config::TM][rt_config::TN], index_t row0,
                                                index_t col0, index_t m, index_t n, Out&& out) {
  using Cfg = rt_config;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const index_t r_base = row0 + (warp / Cfg::WARPS_N) * Cfg::WM + (lane / 4) * 4;
  const index_t c_base = col0 + (warp % Cfg::WARPS_N) * Cfg::WN + (lane % 4) * 4;
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i) {
    const index_t r = r_base + (i % 4) + (i / 4) * 32;  // rows {4tm..4tm+3} and 32 below
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < Cfg::TN; ++j) {
      const index_t c = c_base + (j % 4) + (j / 4) * 16;  // columns {4tn..4tn+3} and 16 right
      if (c < n) out(r, c, acc[i][j]);
    }
  }
}

}  // namespace la::gemm_detail
