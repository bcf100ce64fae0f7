// The registry of GEMM variants (each is also declared in variants.hpp and listed in
// CMakeLists.txt), the automatic choice, and the public entry points.
#include <algorithm>
#include <string>

#include <la/kernels/gemm/detail/reg_tiled.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la {

const char* to_string(gemm_precision p) noexcept {
  return p == gemm_precision::fp32 ? "fp32" : p == gemm_precision::tf32 ? "tf32" : "fp16";
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
}  // namespace

const std::vector<gemm_variant>& gemm_variants() {
  static const std::vector<gemm_variant> list = {
      {"naive", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<8>, no_workspace, run_naive},
      {"smem_tiled", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<32>, no_workspace, run_smem_tiled},
      {"joint_rs", gemm_input::f32, gemm_precision::fp32, true, nullptr, false, fits_grid<128>, no_workspace, run_joint_rs},
      {"reg_tiled", gemm_input::f32, gemm_precision::fp32, false, nullptr, false, fits_grid<128>, no_workspace, run_reg_tiled},
      {"split_k_atomic", gemm_input::f32, gemm_precision::fp32, false, split_k_count, false, fits_grid<128>, no_workspace, run_split_k_atomic},
      {"split_k_workspace", gemm_input::f32, gemm_precision::fp32, false, split_k_count, false, fits_grid<128>, split_k_workspace_bytes,
       run_split_k_workspace},
      {"wmma_tf32", gemm_input::f32, gemm_precision::tf32, false, nullptr, false, fits_grid<128>, no_workspace, run_wmma_tf32},
      {"wmma_f16", gemm_input::f16, gemm_precision::fp16, false, nullptr, false, fits_grid<128>, no_workspace, run_wmma_f16},
      {"wgmma_f16", gemm_input::f16, gemm_precision::fp16, false, nullptr, true, wgmma_can_implement, no_workspace,
       run_wgmma_f16},
      {"wgmma_f16_split_k", gemm_input::f16, gemm_precision::fp16, false, wgmma_split_count, true, wgmma_can_implement,
       wgmma_split_k_workspace_bytes, run_wgmma_f16_split_k},
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
  // Half inputs: wgmma on a 9.0 device (0.96-0.91x cuBLAS at 4096^3-8192^3 against WMMA's
  // 0.46x, bench/RESULTS.md), split over K where its tiles leave multiprocessors idle and K
  // is long (wgmma_split_count > 1); WMMA elsewhere.
  if (input == gemm_input::f16) {
    if (!wgmma_can_implement(p)) return find_gemm("wmma_f16");
    return find_gemm(wgmma_split_count(p) > 1 ? "wgmma_f16_split_k" : "wgmma_f16");
  }
  // Split-K when the output has fewer 128x128 tiles than the GPU has SMs and K is long
  // enough to split (bench/RESULTS.md, tuning note T1). The workspace
  // form is deterministic, and its size stays small under this rule (splits * M * N is about
  // 2 * SMs * 128 * 128 floats, ~17 MB on 132 SMs), so auto never needs the atomic form.
  if (rt_tiles(p) < p.sm_count && p.k >= 1024) return find_gemm("split_k_workspace");
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
  const gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count()};
  LA_EXPECTS(v.can_implement(p), "gemm: algorithm '" + std::string(v.name) + "' cannot run " + std::to_string(p.m) +
                                     "x" + std::to_string(p.n) + "x" + std::to_string(p.k));
  if (p.m == 0 || p.n == 0) return;
  // The context owns the workspace (split-K partials) and keeps it for the next call.
  const std::size_t ws_bytes = v.workspace_bytes(p);
  void* ws = ws_bytes ? ctx.scratch(ws_bytes) : nullptr;
  const gemm_args g{p.m,   p.n,  p.k,       a.view().values, a.ld(), b.view().values, b.ld(), c.view().values,
                    c.ld(), alpha, beta, ws, p.sm_count};
  v.run(g, ctx.stream());
}

__global__ void to_half_kernel(const float* in, index_t ld_in, __half* out, index_t rows, index_t cols) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(rows) * cols) return;
  out[e] = __float2half_rn(in[(e / cols) * ld_in + e % cols]);
}
}  // namespace

device_dense<__half> to_half(context& ctx, const device_dense<float>& a) {
  device_dense<__half> h(ctx, a.rows(), a.cols());
  const long n = static_cast<long>(a.rows()) * a.cols();
  if (n > 0) {
    to_half_kernel<<<ceil_div(n, 256), 256, 0, ctx.stream()>>>(a.view().values, a.ld(), h.view().values, a.rows(), a.cols());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  return h;
}

void gemm(context& ctx, const device_dense<float>& a, const device_dense<float>& b, device_dense<float>& c, float alpha,
          float beta, std::string_view algo, bool allow_reduced_precision) {
  const gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count()};
  const gemm_variant& v = algo == "auto" ? select_gemm(p, gemm_input::f32, allow_reduced_precision) : find_gemm(algo);
  if (v.input == gemm_input::f16) {
    const auto ah = to_half(ctx, a), bh = to_half(ctx, b);
    run_gemm(ctx, ah, bh, c, alpha, beta, v);
  } else {
    run_gemm(ctx, a, b, c, alpha, beta, v);
  }
}

void gemm(context& ctx, const device_dense<__half>& a, const device_dense<__half>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo) {
  const gemm_problem p{a.rows(), b.cols(), a.cols(), ctx.sm_count()};
  const gemm_variant& v = algo == "auto" ? select_gemm(p, gemm_input::f16, true) : find_gemm(algo);
  LA_EXPECTS(v.input == gemm_input::f16, "gemm: algorithm '" + std::string(v.name) +
                                             "' takes float inputs; pass float matrices or use wmma_f16");
  run_gemm(ctx, a, b, c, alpha, beta, v);
}

}  // namespace la
