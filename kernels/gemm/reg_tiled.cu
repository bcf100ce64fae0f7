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
/// PadB: B is a copy (reg_tiled_copies) whose rows are zero from column n to the next multiple
/// of 4, nb, and the tiles read it to nb: the right edge's tiles then move back inside by a
/// multiple of 4 and read B 16 bytes at a time like the others (place_tile). A template
/// parameter, not an argument: one more live register spilled 8 more bytes of 128x128x8.
template <typename Cfg, bool Vec, bool PadB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) reg_tiled_kernel(gemm_args g) {
  static_assert(Vec || !PadB, "reg_tiled: a copy of B is read 16 bytes at a time");
  extern __shared__ __align__(16) float rt_smem[];
  const index_t nb = PadB ? (g.n + 3) / 4 * 4 : g.n;
  const int2 tile = grouped_tile();
  const rt_place t = place_tile<Cfg, Vec>(static_cast<index_t>(tile.x) * Cfg::BM, static_cast<index_t>(tile.y) * Cfg::BN,
                                          g.m, nb);
  float acc[Cfg::TM][Cfg::TN] = {};
  reg_tiled_mainloop<Cfg, Vec>(rt_smem, static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                               g.m, nb, 0, g.k, t.row0, t.col0, acc);
  // C = alpha * acc + beta * C. Where beta == 0, C is not read, and its values go 8 bytes at a
  // time where its rows allow (4096 x 4096 x 1 is all epilogue: 0.40x cuBLAS stored one by one).
  const bool pairs = reinterpret_cast<std::uintptr_t>(g.c) % 8 == 0 && g.ldc % 2 == 0 && t.col0 % 2 == 0;
  float* const c_out = static_cast<float*>(g.c);
  const index_t keep_col = kept_from(t.col0, nb, Cfg::BN);
  // One walk for both cases: a walk each (for_each_output where beta != 0) spilled 52 bytes
  // of the 128x128x8 tile, against 8.
  for_each_quad<Cfg>(acc, t, g.m, g.n, nb, [&](index_t r, index_t c, float4 v) {
    if (g.beta == 0.0f)
      return store_quad(c_out + static_cast<long>(r) * g.ldc + c, c, keep_col, g.n, pairs, g.alpha, v);
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (c + q < g.n && c + q >= keep_col) store_c(c_out, g.ldc, r, c + q, e[q], g.alpha, g.beta);
  });
}

template <typename Cfg, bool Vec, bool PadB = false>
void launch(const gemm_args& g, cudaStream_t s) {
  constexpr auto kernel = reg_tiled_kernel<Cfg, Vec, PadB>;
  if constexpr (Cfg::SMEM_BYTES > 48 * 1024) raise_smem_limit_once<kernel, Cfg::SMEM_BYTES>();
  const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM));
  kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(g);
  LA_CHECK_LAUNCH(s);
}

/// A tile shape's kernels; pad_b: B is a copy with zeroed pads (reg_tiled_kernel's PadB).
template <typename Cfg>
void run_shape(const gemm_args& g, bool pad_b, cudaStream_t s) {
  if (pad_b)
    launch<Cfg, true, true>(g, s);
  else if (reg_tiled_vectorizable(g))
    launch<Cfg, true>(g, s);
  else
    launch<Cfg, false>(g, s);
}

/// The tile shapes, in reg_tiled_shapes()'s order (reg_tiled_shape_for's index).
struct rt_shape {
  const char* name;
  void (*run)(const gemm_args&, bool pad_b, cudaStream_t);
};
constexpr rt_shape rt_shape_list[] = {{"128x128x8", run_shape<rt_config>}, {"64x64x16", run_shape<rt_small>}};

template <int I>
gemm_tile shape_entry() {
  return {rt_shape_list[I].name, [](const gemm_args& g, cudaStream_t s) { rt_shape_list[I].run(g, false, s); },
          [](const gemm_problem&) { return std::size_t(0); }};
}
}  // namespace

bool reg_tiled_vectorizable(const gemm_args& g) {
  return aligned16(g.a, g.lda, 4) && aligned16(g.b, g.ldb, 4);
}

const std::vector<gemm_tile>& reg_tiled_shapes() {
  static const std::vector<gemm_tile> list = {shape_entry<0>(), shape_entry<1>()};
  return list;
}

int reg_tiled_shape_for(const gemm_problem& p) {
  // The time of a call is that of its busiest SM, which runs ceil(tiles / SMs) tiles. A
  // 64x64 tile is a quarter of a 128x128 one's area and is done at 0.89 of its rate per
  // area, so 64x64x16 wins where ceil(t64 / SMs) < 4 * 0.89 * ceil(t128 / SMs): where the
  // 128x128 tiles leave SMs idle or their last round is a small part of the work, and
  // where they pad the edges more. On 22 measured shapes it picks the faster tile for 21
  // (the miss costs 1.8%); bench/history/tuning-notes-the-code-cites.md, note T2.
  const long sms = std::max(p.sm_count, 1);
  const bool small = 100L * ceil_div(rt_tiles<rt_small>(p), sms) < 356L * ceil_div(rt_tiles<rt_config>(p), sms);
  return small && ceil_div(p.m, rt_small::BM) <= 65535 ? 1 : 0;
}

reg_tiled_copy_rule rt_copy_rule;

namespace {
/// Which operands reg_tiled copies to a 16-byte pitch first: those whose rows are not 16-byte
/// aligned, in products large enough (rt_copy_rule: 2mnk >= 2e9 and K >= 512) that the 4-byte
/// loads the copies save outweigh them. The copies' rows are zero to their pitch, so the right
/// edge's tiles read a copy of B to the next multiple of 4 and move back inside like aligned
/// ones (reg_tiled_kernel's PadB). Measured on 15 shapes (H100; bench/history/tuning-notes-the-code-cites.md, note
/// T2): 4097^3 3.52 -> 3.34 ms, 3001^3 1.62 -> 1.37, 12345 x 678 x 910 520 -> 429 us, 777 x
/// 1234 x 4321 313 -> 277, 1001^3 85 -> 80; a copy costs 3-8 us, so smaller or short-K
/// products lost 1-12 us with them (513^3 29 -> 33, 701^3 36 -> 41, 1601 x 1603 x 200 53 ->
/// 55, 8191 x 8191 x 63 366 -> 369). The copies only speed the product up: none where
/// p.speed_extras is false.
struct rt_copies {
  bool a = false, b = false;
};
rt_copies reg_tiled_copies(const gemm_problem& p, bool a_aligned, bool b_aligned) {
  if (!p.speed_extras || p.m == 0 || p.n == 0 || p.k == 0 || (a_aligned && b_aligned)) return {};
  if (2.0 * p.m * p.n * p.k < rt_copy_rule.min_flops || p.k < rt_copy_rule.min_k) return {};
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
  const rt_shape& shape = rt_shape_list[reg_tiled_shape_for(p)];
  const rt_copies c = reg_tiled_copies(p, aligned16(g.a, g.lda, 4), aligned16(g.b, g.ldb, 4));
  // The copies go in the workspace (gemm(): the context's scratch), where it has room for them.
  if ((!c.a && !c.b) || !g.workspace || g.workspace_size < copies_bytes(p, c)) return shape.run(g, false, s);
  workspace_room room{static_cast<unsigned char*>(g.workspace), static_cast<unsigned char*>(g.workspace) + g.workspace_size};
  std::optional<pitched> pa, pb;
  gemm_args h = g;
  if (c.a) pa.emplace(g.a, g.lda, g.m, g.k, 4, 16, room, s), h.a = pa->p, h.lda = pa->ld;
  if (c.b) pb.emplace(g.b, g.ldb, g.k, g.n, 4, 16, room, s), h.b = pb->p, h.ldb = pb->ld;
  copy_operands(pa, pb, s);
  shape.run(h, c.b, s);  // a copy of B is read to its pitch (PadB)
}
}  // namespace la::gemm_detail
