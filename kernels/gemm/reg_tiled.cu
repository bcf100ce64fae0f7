// reg_tiled: the full joint register and shared-memory tiling (see reg_tiled.cuh):
// 128 x 128 x 8 block tiles, 256 threads, 8 x 8 outputs per thread, warp tiles of 64 x 32,
// A transposed in shared memory, float4 global loads, double-buffered.
#include <la/kernels/gemm/detail/reg_tiled.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
using Cfg = rt_config;

template <bool Vec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) reg_tiled_kernel(gemm_args g) {
  const int2 tile = grouped_tile();
  const index_t row0 = static_cast<index_t>(tile.x) * Cfg::BM, col0 = static_cast<index_t>(tile.y) * Cfg::BN;
  float acc[Cfg::TM][Cfg::TN] = {};
  reg_tiled_mainloop<Vec>(static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb, g.m, g.n, 0,
                          g.k, row0, col0, acc);
  for_each_output(acc, row0, col0, g.m, g.n,
                  [&](index_t r, index_t c, float v) { store_c(g.c, g.ldc, r, c, v, g.alpha, g.beta); });
}
}  // namespace

bool reg_tiled_vectorizable(const gemm_args& g) {
  return aligned16(g.a, g.lda, 4) && aligned16(g.b, g.ldb, 4);
}

void run_reg_tiled(const gemm_args& g, cudaStream_t s) {
  const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM));
  if (reg_tiled_vectorizable(g))
    reg_tiled_kernel<true><<<grid, Cfg::THREADS, 0, s>>>(g);
  else
    reg_tiled_kernel<false><<<grid, Cfg::THREADS, 0, s>>>(g);
  LA_CHECK_LAUNCH(s);
}
}  // namespace la::gemm_detail
