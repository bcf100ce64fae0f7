// Tensor Core GEMM through the WMMA API, shared by wmma_f16 and wmma_bf16 (half or bfloat16
// inputs, 16x16x16) and wmma_tf32 (float inputs rounded to TF32, 16x16x8); float
// accumulation in all.
//
//  - Block tile 128 x BN x BK (BK = 64 bytes of K: 32 halves or 16 floats) split over
//    WARPS_M x WARPS_N warps; each warp owns a grid of 16 x 16 accumulator fragments. The
//    shapes each variant uses are in wmma_f16.cu and wmma_tf32.cu, with the measurements.
//  - Operands go global -> shared with cp.async (16-byte, L2-only .cg) in a STAGES-deep ring,
//    so the loads of tile k+2 are in flight while tile k is multiplied. Rows are padded
//    (see LDA/LDB) so the fragment loads of consecutive rows start in different banks.
//  - Edges: when K, N, lda, ldb are multiples of 16 bytes (Aligned), each 16-byte chunk is
//    either inside the matrix or zero-filled by cp.async (src-size 0); otherwise chunks are
//    loaded element by element with predicates (a slower path for odd shapes).
//  - Epilogue: each warp stores one fragment at a time to a private 16 x 16 scratch in
//    shared memory and its lanes write it out with predicates, applying alpha and beta.
#pragma once

#include <cuda_bf16.h>
#include <mma.h>

#include <la/kernels/gemm/detail/common.cuh>

namespace la::gemm_detail {

namespace wmma = nvcuda::wmma;

template <typename In>
struct wmma_traits;
template <>
struct wmma_traits<__half> {
  using frag_in = __half;  // element type of the a/b fragments
  static constexpr int FK = 16;
};
template <>
struct wmma_traits<__nv_bfloat16> {
  using frag_in = __nv_bfloat16;
  static constexpr int FK = 16;
};
template <>
struct wmma_traits<float> {
  using frag_in = wmma::precision::tf32;
  static constexpr int FK = 8;
};

template <typename In, int WarpsM, int WarpsN, int BN_, int Stages = 3, int KBytes = 64>
struct wmma_config {
  static constexpr int BM = 128, BN = BN_, BK = KBytes / sizeof(In), STAGES = Stages, THREADS = 32 * WarpsM * WarpsN;
  static constexpr int WARPS_M = WarpsM, WARPS_N = WarpsN, WM = BM / WARPS_M, WN = BN / WARPS_N;
  static constexpr int FM = WM / 16, FN = WN / 16;  // fragments per warp
  static constexpr int CH = 16 / sizeof(In);        // elements per 16-byte chunk
  // Row padding: 16 bytes for A; for B 16 bytes with half, 32 with float, so that the four
  // k-rows a TF32 B fragment reads per lane quad start 8 banks apart.
  static constexpr int LDA = BK + CH, LDB = BN + (sizeof(In) == 4 ? 2 * CH : CH);
  static constexpr int A_STAGE = BM * LDA, B_STAGE = BK * LDB;  // elements
  static constexpr int A_CHUNKS = BM * BK / CH / THREADS, B_CHUNKS = BK * BN / CH / THREADS;
  static constexpr std::size_t SMEM = sizeof(In) * STAGES * (A_STAGE + B_STAGE) + sizeof(float) * 16 * 16 * (THREADS / 32);
  static_assert(WARPS_M * WARPS_N * 32 == THREADS, "wmma: warp grid must use every thread");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "wmma: warp tile must be whole 16x16 fragments");
  static_assert(BK % wmma_traits<In>::FK == 0, "wmma: BK must be a multiple of the fragment depth");
  static_assert((BM * BK / CH) % THREADS == 0 && (BK * BN / CH) % THREADS == 0, "wmma: tiles must split into 16-byte chunks per thread");
  // load_matrix_sync needs 32-byte aligned fragment pointers: rows of 16 are 32-byte multiples.
  static_assert((16 * LDA * sizeof(In)) % 32 == 0 && (wmma_traits<In>::FK * LDB * sizeof(In)) % 32 == 0, "wmma: fragment alignment");
};

/// Copies 16 bytes (CH elements) of row r from column c into shared memory: asynchronously
/// when Aligned, else element by element; zeros outside rows x cols.
template <typename In, bool Aligned>
__device__ __forceinline__ void load_chunk(In* dst, const In* src, index_t ld, index_t r, index_t c, index_t rows,
                                           index_t cols) {
  constexpr int CH = 16 / sizeof(In);
  if constexpr (Aligned) {
    const bool in = r < rows && c < cols;  // Aligned: cols % CH == 0, so a chunk is all in or all out
    cp_async16(dst, in ? src + static_cast<long>(r) * ld + c : src, in);
  } else {
#pragma unroll
    for (int e = 0; e < CH; ++e)
      dst[e] = (r < rows && c + e < cols) ? src[static_cast<long>(r) * ld + c + e] : In(0.0f);
  }
}

template <typename In, bool Aligned, typename Cfg>
__global__ void __launch_bounds__(Cfg::THREADS) wmma_gemm_kernel(gemm_args g) {
  using Tr = wmma_traits<In>;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, CH = Cfg::CH, FK = Tr::FK;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  In* as = reinterpret_cast<In*>(smem_raw);        // [STAGES][BM][LDA]
  In* bs = as + Cfg::STAGES * Cfg::A_STAGE;        // [STAGES][BK][LDB]
  float* scratch = reinterpret_cast<float*>(bs + Cfg::STAGES * Cfg::B_STAGE);  // [warps][16][16]

  const In* a = static_cast<const In*>(g.a);
  const In* b = static_cast<const In*>(g.b);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / Cfg::WARPS_N, wn = warp % Cfg::WARPS_N;
  const int2 tile = grouped_tile();
  const index_t row0 = static_cast<index_t>(tile.x) * BM, col0 = static_cast<index_t>(tile.y) * BN;
  const int ktiles = ceil_div(g.k, BK);

  auto load_tile = [&](int kt, int stage) {
    const index_t k0 = static_cast<index_t>(kt) * BK;
#pragma unroll
    for (int i = 0; i < Cfg::A_CHUNKS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BK / CH), c = (e % (BK / CH)) * CH;  // tile [BM][BK]
      load_chunk<In, Aligned>(as + stage * Cfg::A_STAGE + r * Cfg::LDA + c, a, g.lda, row0 + r, k0 + c, g.m, g.k);
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_CHUNKS; ++i) {
      const int e = t + i * Cfg::THREADS, r = e / (BN / CH), c = (e % (BN / CH)) * CH;  // tile [BK][BN]
      load_chunk<In, Aligned>(bs + stage * Cfg::B_STAGE + r * Cfg::LDB + c, b, g.ldb, k0 + r, col0 + c, g.k, g.n);
    }
  };


  wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[Cfg::FM][Cfg::FN];
#pragma unroll
  for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

#pragma unroll
  for (int s = 0; s < Cfg::STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();  // empty groups keep the count uniform
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<Cfg::STAGES - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();                   // everyone's have, and stage (kt-1) is free to refill
    const int pre = kt + Cfg::STAGES - 1;
    if (pre < ktiles) load_tile(pre, pre % Cfg::STAGES);
    cp_async_commit();
    const In* at = as + (kt % Cfg::STAGES) * Cfg::A_STAGE;
    const In* bt = bs + (kt % Cfg::STAGES) * Cfg::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += FK) {
      wmma::fragment<wmma::matrix_a, 16, 16, FK, typename Tr::frag_in, wmma::row_major> fa[Cfg::FM];
      wmma::fragment<wmma::matrix_b, 16, 16, FK, typename Tr::frag_in, wmma::row_major> fb[Cfg::FN];
#pragma unroll
      for (int i = 0; i < Cfg::FM; ++i) {
        wmma::load_matrix_sync(fa[i], at + (wm * Cfg::WM + i * 16) * Cfg::LDA + kk, Cfg::LDA);
        if constexpr (std::is_same_v<In, float>)
#pragma unroll
          for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
      }
#pragma unroll
      for (int j = 0; j < Cfg::FN; ++j) {
        wmma::load_matrix_sync(fb[j], bt + kk * Cfg::LDB + wn * Cfg::WN + j * 16, Cfg::LDB);
        if constexpr (std::is_same_v<In, float>)
#pragma unroll
          for (int e = 0; e < fb[j].num_elements; ++e) fb[j].x[e] = wmma::__float_to_tf32(fb[j].x[e]);
      }
#pragma unroll
      for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();

  float* mine = scratch + warp * 256;
#pragma unroll
  for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::FN; ++j) {
      wmma::store_matrix_sync(mine, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const index_t r0 = row0 + wm * Cfg::WM + i * 16, c0 = col0 + wn * Cfg::WN + j * 16;
#pragma unroll
      for (int e = lane; e < 256; e += 32) {
        const index_t r = r0 + e / 16, c = c0 + e % 16;
        if (r < g.m && c < g.n) store_c(g.c, g.ldc, r, c, mine[e], g.alpha, g.beta);
      }
      __syncwarp();
    }
}

template <auto Kernel, typename Cfg>
void launch_kernel(const gemm_args& g, dim3 grid, cudaStream_t s) {
  raise_smem_limit_once<Kernel, Cfg::SMEM>();
  Kernel<<<grid, Cfg::THREADS, Cfg::SMEM, s>>>(g);
  LA_CHECK_LAUNCH(s);
}

template <typename In, typename Cfg>
void launch_wmma(const gemm_args& g, cudaStream_t s) {
  constexpr int CH = Cfg::CH;
  const bool aligned = g.k % CH == 0 && g.n % CH == 0 && aligned16(g.a, g.lda, sizeof(In)) && aligned16(g.b, g.ldb, sizeof(In));
  const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM));
  if (aligned)
    launch_kernel<wmma_gemm_kernel<In, true, Cfg>, Cfg>(g, grid, s);
  else
    launch_kernel<wmma_gemm_kernel<In, false, Cfg>, Cfg>(g, grid, s);
}

}  // namespace la::gemm_detail
