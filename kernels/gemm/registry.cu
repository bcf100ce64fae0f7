// The registry of GEMM variants (each is also declared in variants.hpp and listed in
// CMakeLists.txt), the automatic choice, and the public entry points.
#include <algorithm>
#include <string>
#include <type_traits>

#include <la/kernels/gemm/detail/reg_tiled.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la {

const char* to_string(gemm_precision p) noexcept {
  switch (p) {
    case gemm_precision::fp32: return "fp32";
    case gemm_precision::tf32: return "tf32";
    case gemm_precision::tf32x3: return "tf32x3";
    case gemm_precision::fp16: return "fp16";
    case gemm_precision::bf16: return "bf16";
  }
  return "?";
}

namespace {
using namespace gemm_detail;
using detail::split_k_count;

/// Grid y (rows of tiles) is limited to 65535 blocks; the element-wise passes (split-K
/// reduction, beta scaling) launch M*N/256 blocks along x, limited to 2^31 - 1.
template <int RowsPerBlock>
bool fits_grid(const gemm_problem& p) {
  return p.m >= 0 && p.n >= 0 && p.k >= 0 && ceil_div(p.m, RowsPerBlock) <= 65535 &&
         static_cast<long>(p.m) * p.n / 256 < 2147483647L;
}
std::size_t no_workspace(const gemm_problem&) { return 0; }
/// 16-bit inputs with at most this many rows go to gemv: at 4 x 4096 x 4096 it took 18-19 us
/// against 24 for wgmma's split-K; at 8 rows 23 against 25 for wgmma, whose tensor cores then
/// outrun gemv's float multiply-adds (bench/history/tuning-notes-the-code-cites.md, note T1).
constexpr index_t gemv_auto_rows_16bit = 4;
}  // namespace

const std::vector<gemm_variant>& gemm_variants() {
  static const std::vector<gemm_variant> list = {
      {"naive", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<8>, no_workspace, run_naive},
      {"smem_tiled", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<32>, no_workspace, run_smem_tiled},
      {"joint_rs", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<128>, no_workspace, run_joint_rs},
      {"reg_tiled", gemm_input::f32, gemm_precision::fp32, false, nullptr, false, fits_grid<128>, reg_tiled_workspace_bytes,
       run_reg_tiled},
      {"split_k_atomic", gemm_input::f32, gemm_precision::fp32, false, split_k_count, false, fits_grid<128>, no_workspace, run_split_k_atomic},
      {"split_k_workspace", gemm_input::f32, gemm_precision::fp32, false, split_k_count, false, fits_grid<128>, split_k_workspace_bytes,
       run_split_k_workspace},
      {"gemv", gemm_input::f32, gemm_precision::fp32, false, nullptr, false, gemv_can_implement,
       gemv_workspace_bytes<float>, run_gemv<float>},
      {"wmma_tf32", gemm_input::f32, gemm_precision::tf32, false, nullptr, false, fits_grid<128>, no_workspace, run_wmma_tf32},
      {"wgmma_tf32", gemm_input::f32, gemm_precision::tf32, false, nullptr, true, wgmma_can_implement, wgmma_tf32_workspace_bytes,
       run_wgmma_tf32},
      {"wgmma_tf32_split_k", gemm_input::f32, gemm_precision::tf32, false, wgmma_tf32_split_count, true,
       wgmma_can_implement, wgmma_tf32_split_k_workspace_bytes, run_wgmma_tf32_split_k},
      {"wgmma_tf32x3", gemm_input::f32, gemm_precision::tf32x3, false, nullptr, true, wgmma_tf32x3_can_implement,
       wgmma_tf32x3_workspace_bytes, run_wgmma_tf32x3},
      {"wgmma_tf32x3_split_k", gemm_input::f32, gemm_precision::tf32x3, false, wgmma_tf32x3_split_count, true,
       wgmma_tf32x3_can_implement, wgmma_tf32x3_split_k_workspace_bytes, run_wgmma_tf32x3_split_k},
      {"gemv_f16", gemm_input::f16, gemm_precision::fp16, false, nullptr, false, gemv_can_implement,
       gemv_workspace_bytes<__half>, run_gemv<__half>},
      {"wmma_f16", gemm_input::f16, gemm_precision::fp16, false, nullptr, false, fits_grid<128>, no_workspace, run_wmma_f16},
      {"wgmma_f16", gemm_input::f16, gemm_precision::fp16, false, nullptr, true, wgmma_can_implement, wgmma_workspace_bytes,
       run_wgmma_f16},
      {"wgmma_f16_split_k", gemm_input::f16, gemm_precision::fp16, false, wgmma_split_count, true, wgmma_can_implement,
       wgmma_split_k_workspace_bytes, run_wgmma_f16_split_k},
      {"gemv_bf16", gemm_input::bf16, gemm_precision::bf16, false, nullptr, false, gemv_can_implement,
       gemv_workspace_bytes<__nv_bfloat16>, run_gemv<__nv_bfloat16>},
      {"wmma_bf16", gemm_input::bf16, gemm_precision::bf16, false, nullptr, false, fits_grid<128>, no_workspace, run_wmma_bf16},
      {"wgmma_bf16", gemm_input::bf16, gemm_precision::bf16, false, nullptr, true, wgmma_can_implement, wgmma_workspace_bytes,
       run_wgmma_bf16},
      {"wgmma_bf16_split_k", gemm_input::bf16, gemm_precision::bf16, false, wgmma_split_count, true, wgmma_can_implement,
       wgmma_split_k_workspace_bytes, run_wgmma_bf16_split_k},
  };
  return list;
}

bool sm90a_kernels_available() noexcept { return wgmma_supported(); }

const gemm_variant& find_gemm(std::string_view name) {
  for (const auto& v : gemm_variants())
    if (v.name == name) return v;
  std::string names;
  for (const auto& v : gemm_variants()) names += (names.empty() ? "" : ", ") + std::string(v.name);
  throw invalid_argument("unknown GEMM algorithm '" + std::string(name) + "'; choose auto or one of: " + names);
}

const gemm_variant& select_gemm(const gemm_problem& p, gemm_input input, bool allow_reduced_precision) {
  // Half and bfloat16 inputs: wgmma on a 9.0 device (about twice WMMA's rate; bench/history/gemm-ladder-against-cublas.md,
  // "Hopper rung"), split over K where its 128x128 tiles (64x64 where M fits in 64 rows:
  // wgmma_short_tile) leave at least half the multiprocessors idle and K is long
  // (wgmma_split_count > 1); WMMA elsewhere.
  if (input != gemm_input::f32) {
    const bool bf = input == gemm_input::bf16;
    // A matrix times a vector or a few: gemv reads the matrix once (below).
    if (gemv_can_implement(p) && (p.n == 1 || p.m <= gemv_auto_rows_16bit)) return find_gemm(bf ? "gemv_bf16" : "gemv_f16");
    if (!wgmma_can_implement(p)) return find_gemm(bf ? "wmma_bf16" : "wmma_f16");
    if (wgmma_split_count(p) > 1) return find_gemm(bf ? "wgmma_bf16_split_k" : "wgmma_f16_split_k");
    return find_gemm(bf ? "wgmma_bf16" : "wgmma_f16");
  }
  // A matrix times a vector or a few (N == 1, M <= 16): gemv reads the matrix once at DRAM's
  // rate, in full float precision, also where TF32 is allowed (a tile would do a 128-wide
  // tile's work per output; 4096 x 1 x 4096 on reg_tiled's split-K ran at 0.44x cuBLAS, on
  // gemv 1.06x: bench/history/tuning-notes-the-code-cites.md, note T1).
  if (gemv_can_implement(p)) return find_gemm("gemv");
  // TF32 allowed, on a 9.0 device: wgmma_tf32, split over K by the rule of the 16-bit forms
  // (bench/history/tuning-notes-the-code-cites.md, note T1).
  if (allow_reduced_precision && wgmma_can_implement(p))
    return find_gemm(wgmma_tf32_split_count(p) > 1 ? "wgmma_tf32_split_k" : "wgmma_tf32");
  // Split-K when even reg_tiled's small 64x64 tiles leave SMs idle and K is long enough to
  // split, or they leave three quarters idle and K is half as long (31 x 33 x 1000: 14-17 us
  // split, 50 unsplit; 700^3, 121 tiles, is faster unsplit: bench/history/tuning-notes-the-code-cites.md, note T1).
  // The workspace form is deterministic, and its size stays small under this rule (splits * M
  // * N is at most about 2 * SMs * 128 * 128 floats, ~17 MB on 132 SMs), so auto never needs
  // the atomic form.
  const long small_tiles = rt_tiles<rt_small>(p);
  if (small_tiles < p.sm_count && (p.k >= 1024 || (4 * small_tiles <= p.sm_count && p.k >= 512)))
    return find_gemm("split_k_workspace");
  if (allow_reduced_precision) return find_gemm("wmma_tf32");
  return find_gemm("reg_tiled");
}

namespace {
template <typename In>
void run_gemm(context& ctx, const device_dense<In>& a, const device_dense<In>& b, device_dense<float>& c, float alpha,
              float beta, const gemm_variant& v) {
  LA_EXPECTS(a.cols() == b.rows(), "gemm: A is " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                                       " but B is " + std::to_string(b.rows()) + "x" + std::to_string(b.cols()));
  LA_EXPECTS(c.rows() == a.rows() && c.cols() == b.cols(),
             "gemm: C is " + std::to_string(c.rows()) + "x" + std::to_string(c.cols()) + ", expected " +
                 std::to_string(a.rows()) + "x" + std::to_string(b.cols()));
  gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count(), a.ld(), b.ld()};
  LA_EXPECTS(v.can_implement(p), "gemm: algorithm '" + std::string(v.name) + "' cannot run " + std::to_string(p.m) +
                                     "x" + std::to_string(p.n) + "x" + std::to_string(p.k));
  if (p.m == 0 || p.n == 0) return;
  // The context owns the workspace (split-K partials, operand copies, a tail's partials) and
  // keeps it for the next call. Where it does not fit, what only speeds the product up is left out.
  std::size_t ws_bytes = v.workspace_bytes(p);
  void* ws = nullptr;
  try {
    ws = ws_bytes ? ctx.scratch(ws_bytes) : nullptr;
  } catch (const out_of_memory&) {
    p.speed_extras = false;
    if (v.workspace_bytes(p) == ws_bytes) throw;
    ws_bytes = v.workspace_bytes(p);
    ws = ws_bytes ? ctx.scratch(ws_bytes) : nullptr;
  }
  gemm_args g{p.m,   p.n,  p.k,       a.view().values, a.ld(), b.view().values, b.ld(), c.view().values,
              c.ld(), alpha, beta, ws, p.sm_count};
  g.workspace_size = ws_bytes;
  v.run(g, ctx.stream());
}

template <typename Out>
__global__ void round_kernel(const float* in, index_t ld_in, Out* out, index_t rows, index_t cols) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(rows) * cols) return;
  const float x = in[(e / cols) * ld_in + e % cols];
  if constexpr (std::is_same_v<Out, __half>)
    out[e] = __float2half_rn(x);
  else
    out[e] = __float2bfloat16_rn(x);
}

/// a rounded to Out (__half or __nv_bfloat16) on the device, round to nearest.
template <typename Out>
device_dense<Out> round_to(context& ctx, const device_dense<float>& a) {
  device_dense<Out> h(ctx, a.rows(), a.cols());
  const long n = static_cast<long>(a.rows()) * a.cols();
  if (n > 0) {
    round_kernel<Out><<<ceil_div(n, 256), 256, 0, ctx.stream()>>>(a.view().values, a.ld(), h.view().values, a.rows(), a.cols());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  return h;
}

/// The 16-bit overloads: In is __half (gemm_input::f16) or __nv_bfloat16 (bf16).
template <typename In>
void gemm_16bit(context& ctx, const device_dense<In>& a, const device_dense<In>& b, device_dense<float>& c, float alpha,
                float beta, std::string_view algo) {
  constexpr gemm_input input = std::is_same_v<In, __half> ? gemm_input::f16 : gemm_input::bf16;
  const gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count()};
  const gemm_variant& v = algo == "auto" ? select_gemm(p, input, true) : find_gemm(algo);
  if (v.input != input) {
    std::string takes;
    for (const auto& w : gemm_variants())
      if (w.input == input) takes += (takes.empty() ? "" : ", ") + std::string(w.name);
    throw invalid_argument("gemm: algorithm '" + std::string(v.name) + "' takes " +
                           (v.input == gemm_input::f32 ? "float" : v.input == gemm_input::f16 ? "half" : "bfloat16") +
                           " inputs; for these use auto or one of: " + takes);
  }
  run_gemm(ctx, a, b, c, alpha, beta, v);
}
}  // namespace

device_dense<__half> to_half(context& ctx, const device_dense<float>& a) { return round_to<__half>(ctx, a); }
device_dense<__nv_bfloat16> to_bf16(context& ctx, const device_dense<float>& a) { return round_to<__nv_bfloat16>(ctx, a); }

void gemm(context& ctx, const device_dense<float>& a, const device_dense<float>& b, device_dense<float>& c, float alpha,
          float beta, std::string_view algo, bool allow_reduced_precision) {
  const gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count()};
  const gemm_variant& v = algo == "auto" ? select_gemm(p, gemm_input::f32, allow_reduced_precision) : find_gemm(algo);
  if (v.input == gemm_input::f16)
    run_gemm(ctx, to_half(ctx, a), to_half(ctx, b), c, alpha, beta, v);
  else if (v.input == gemm_input::bf16)
    run_gemm(ctx, to_bf16(ctx, a), to_bf16(ctx, b), c, alpha, beta, v);
  else
    run_gemm(ctx, a, b, c, alpha, beta, v);
}

void gemm(context& ctx, const device_dense<__half>& a, const device_dense<__half>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo) {
  gemm_16bit(ctx, a, b, c, alpha, beta, algo);
}
void gemm(context& ctx, const device_dense<__nv_bfloat16>& a, const device_dense<__nv_bfloat16>& b,
          device_dense<float>& c, float alpha, float beta, std::string_view algo) {
  gemm_16bit(ctx, a, b, c, alpha, beta, algo);
}

}  // namespace la
