// reg_tiled: the full joint register and shared-memory tiling (see reg_tiled.cuh), in two
// tile shapes; run_reg_tiled picks one by the problem's size (reg_tiled_shape_for).
#include <algorithm>
#include <cstdint>
#include <optional>

#include <la/kernels/gemm/detail/operand_copy.hpp>
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
  // One walk for both cases: a walk each (for_each_output where beta != 0) spilled 52 bytes
  // of the 128x128x8 tile, against 8.
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

namespace {
/// Which operands reg_tiled copies to a 16-byte pitch first: those whose rows are not 16-byte
/// aligned, where the problem runs the 64x64x16 tile in more than one round. Its 4-byte loads
/// cost it 15-30% there (3001^3 1.62 against 3000^3 1.27 ms), more than the copy (3001^3
/// 1.39 ms with it, 12345 x 678 x 910 522 -> 448 us). The copies cost more than they gain
/// in one round (1001^3, 1023^3, 701^3, 513^3: 2-14 us slower with them, where the right
/// edge of a copy whose N is not a multiple of 4 still takes predicates) and on the 128x128x8
/// tile, whose 4-byte loads cost it 2-4% (4097^3, 2047^3, 8191 x 8191 x 63). bench/RESULTS.md,
/// tuning note T2. The copies only speed the product up: none where p.speed_extras is false.
struct rt_copies {
  bool a = false, b = false;
};
rt_copies reg_tiled_copies(const gemm_problem& p, bool a_aligned, bool b_aligned) {
  if (!p.speed_extras || p.m == 0 || p.n == 0 || p.k == 0 || (a_aligned && b_aligned)) return {};
  if (reg_tiled_shape_for(p) != 1 || rt_tiles<rt_small>(p) <= static_cast<long>(rt_small::MIN_BLOCKS) * p.sm_count)
    return {};
  return {!a_aligned, !b_aligned};
}

/// The workspace the copies c of p's operands take.
std::size_t copies_bytes(const gemm_problem& p, const rt_copies& c) {
  return (c.a ? copy_bytes(p.m, p.k, 4, 16) : 0) + (c.b ? copy_bytes(p.k, p.n, 4, 16) : 0);
}
}  // namespace

std::size_t reg_tiled_workspace_bytes(const gemm_problem& p) {
  const index_t lda = p.lda ? p.lda : p.k, ldb = p.ldb ? p.ldb : p.n;
  return copies_bytes(p, reg_tiled_copies(p, aligned16(nullptr, lda, 4), aligned16(nullptr, ldb, 4)));
}

void run_reg_tiled(const gemm_args& g, cudaStream_t s) {
  const gemm_problem p{g.m, g.n, g.k, g.sm_count, g.lda, g.ldb};
  const gemm_tile& tile = reg_tiled_shapes()[reg_tiled_shape_for(p)];
  const rt_copies c = reg_tiled_copies(p, aligned16(g.a, g.lda, 4), aligned16(g.b, g.ldb, 4));
  // The copies go in the workspace (gemm(): the context's scratch), where it has room for them.
  if ((!c.a && !c.b) || !g.workspace || g.workspace_size < copies_bytes(p, c)) return tile.run(g, s);
  workspace_room room{static_cast<unsigned char*>(g.workspace), static_cast<unsigned char*>(g.workspace) + g.workspace_size};
  std::optional<pitched> pa, pb;
  gemm_args h = g;
  if (c.a) pa.emplace(g.a, g.lda, g.m, g.k, 4, 16, room, s), h.a = pa->p, h.lda = pa->ld;
  if (c.b) pb.emplace(g.b, g.ldb, g.k, g.n, 4, 16, room, s), h.b = pb->p, h.ldb = pb->ld;
  tile.run(h, s);
}
}  // namespace la::gemm_detail
