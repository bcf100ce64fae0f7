// reg_tiled: the full joint register and shared-memory tiling (see reg_tiled.cuh):
// 128 x 128 x 8 block tiles, 256 threads, 8 x 8 outputs per thread, warp tiles of 64 x 32,
// A transposed in shared memory, float4 global loads, double-buffered.
#include "kernels/gemm/reg_tiled.cuh"
#include "kernels/gemm/variants.hpp"

namespace la::gemm_detail {
namespace {
template <bool Vec, typename Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) reg_tiled_kernel(gemm_args g) {
  const int2 tile = grouped_tile();
  const index_t row0 = static_cast<index_t>(tile.x) * Cfg::BM, col0 = static_cast<index_t>(tile.y) * Cfg::BN;
  float acc[Cfg::TM][Cfg::TN] = {};
  reg_tiled_mainloop<Vec, Cfg>(static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb, g.m, g.n, 0,
                          g.k, row0, col0, acc);
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i) {
    const index_t r = row0 + rt_row<Cfg>(i);
    if (r >= g.m) continue;
#pragma unroll
    for (int j = 0; j < Cfg::TN; ++j) {
      const index_t c = col0 + rt_col<Cfg>(j);
      if (c < g.n) store_c(g.c, g.ldc, r, c, acc[i][j], g.alpha, g.beta);
    }
  }
}
}  // namespace

bool reg_tiled_vectorizable(const gemm_args& g) {
  return aligned16(g.a, g.lda, 4) && aligned16(g.b, g.ldb, 4);
}

template <typename Cfg>
void launch_cfg(const gemm_args& g, cudaStream_t s) {
  const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM));
  if (reg_tiled_vectorizable(g))
    reg_tiled_kernel<true, Cfg><<<grid, Cfg::THREADS, 0, s>>>(g);
  else
    reg_tiled_kernel<false, Cfg><<<grid, Cfg::THREADS, 0, s>>>(g);
  LA_CHECK_LAUNCH();
}

// 128x128x8, 2 blocks/SM (rt_config). Measured against BK = 16 (cp.async for B, or register
// staging at 1 block/SM) and against a relaxed register cap: none beat it by more than
// run-to-run noise on 2048-8192^3 (H200, bench/RESULTS.md).
void launch_reg_tiled(const gemm_args& g, cudaStream_t s) { launch_cfg<rt_config>(g, s); }
}  // namespace la::gemm_detail
