// reg_tiled: the full joint register and shared-memory tiling (see reg_tiled.cuh), in two
// tile shapes; run_reg_tiled picks one by the problem's size (reg_tiled_shape_for).
#include <algorithm>
#include <cstdint>

#include <la/kernels/gemm/detail/reg_tiled.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
template <typename Cfg, bool Vec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) reg_tiled_kernel(gemm_args g) {
  extern __shared__ __align__(16) float rt_smem[];
  const int2 tile = grouped_tile();
  const rt_place t = place_tile<Cfg, Vec>(static_cast<index_t>(tile.x) * Cfg::BM, static_cast<index_t>(tile.y) * Cfg::BN,
                                          g.m, g.n);
  float acc[Cfg::TM][Cfg::TN] = {};
  reg_tiled_mainloop<Cfg, Vec>(rt_smem, static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                               g.m, g.n, 0, g.k, t.row0, t.col0, acc);
  // C = alpha * acc + beta * C. Where beta == 0, C is not read, and its values go 8 bytes at a
  // time where its rows allow (4096 x 4096 x 1 is all epilogue: 0.40x cuBLAS stored one by one).
  const bool pairs = reinterpret_cast<std::uintptr_t>(g.c) % 8 == 0 && g.ldc % 2 == 0 && t.col0 % 2 == 0;
  float* const c_out = static_cast<float*>(g.c);
  const index_t keep_col = kept_from(t.col0, g.n, Cfg::BN);
  for_each_quad<Cfg>(acc, t, g.m, g.n, [&](index_t r, index_t c, float4 v) {
    if (g.beta == 0.0f)
      return store_quad(c_out + static_cast<long>(r) * g.ldc + c, c, keep_col, g.n, pairs, g.alpha, v);
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (c + q < g.n && c + q >= keep_col) store_c(c_out, g.ldc, r, c + q, e[q], g.alpha, g.beta);
  });
}

template <typename Cfg, bool Vec>
void launch(const gemm_args& g, cudaStream_t s) {
  constexpr auto kernel = reg_tiled_kernel<Cfg, Vec>;
  if constexpr (Cfg::SMEM_BYTES > 48 * 1024) raise_smem_limit_once<kernel, Cfg::SMEM_BYTES>();
  const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM));
  kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(g);
  LA_CHECK_LAUNCH(s);
}

template <typename Cfg>
void run_shape(const gemm_args& g, cudaStream_t s) {
  if (reg_tiled_vectorizable(g))
    launch<Cfg, true>(g, s);
  else
    launch<Cfg, false>(g, s);
}

template <typename Cfg>
gemm_tile shape_entry(const char* name) {
  return {name, run_shape<Cfg>, [](const gemm_problem&) { return std::size_t(0); }};
}
}  // namespace

bool reg_tiled_vectorizable(const gemm_args& g) {
  return aligned16(g.a, g.lda, 4) && aligned16(g.b, g.ldb, 4);
}

const std::vector<gemm_tile>& reg_tiled_shapes() {
  static const std::vector<gemm_tile> list = {shape_entry<rt_config>("128x128x8"), shape_entry<rt_small>("64x64x16")};
  return list;
}

int reg_tiled_shape_for(const gemm_problem& p) {
  // The time of a call is that of its busiest SM, which runs ceil(tiles / SMs) tiles. A
  // 64x64 tile is a quarter of a 128x128 one's area and is done at 0.89 of its rate per
  // area, so 64x64x16 wins where ceil(t64 / SMs) < 4 * 0.89 * ceil(t128 / SMs): where the
  // 128x128 tiles leave SMs idle or their last round is a small part of the work, and
  // where they pad the edges more. On 22 measured shapes it picks the faster tile for 21
  // (the miss costs 1.8%); bench/RESULTS.md, tuning note T2.
  const long sms = std::max(p.sm_count, 1);
  const bool small = 100L * ceil_div(rt_tiles<rt_small>(p), sms) < 356L * ceil_div(rt_tiles<rt_config>(p), sms);
  return small && ceil_div(p.m, rt_small::BM) <= 65535 ? 1 : 0;
}

void run_reg_tiled(const gemm_args& g, cudaStream_t s) {
  reg_tiled_shapes()[reg_tiled_shape_for({g.m, g.n, g.k, g.sm_count})].run(g, s);
}
}  // namespace la::gemm_detail
