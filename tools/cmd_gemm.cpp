#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <la/kernels/detail/vendor/cublas_gemm.hpp>
#include <la/event_timer.hpp>
#include "args.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la gemm M N K [--algo NAME|auto] [--reduced-precision] [--reps N] [--rounds R] [--alpha A]\n"
    "               [--beta B] [--nonnegative]\n"
    "\n"
    "Runs C = alpha*A*B + beta*C (row-major, A MxK, B KxN, random inputs in [-1,1]) on the GPU with\n"
    "one GEMM variant, validates 512 sampled entries against a double-precision host reference\n"
    "(and reports cuBLAS's error on the same entries), and times it (median of --reps runs, CUDA\n"
    "events) next to the cuBLAS call of the same precision class in the same run (tf32x3: the\n"
    "float GEMM it stands in for).\n"
    "  --algo NAME           auto (default) or one of the registry's variants:\n"
    "%s"
    "  --reduced-precision   let auto pick tensor-core TF32\n"
    "  --reps N              timed runs (default 20)\n"
    "  --rounds R            time la and cuBLAS R times, alternating (default 1), and report the\n"
    "                        median ratio with its range: at tens of microseconds either side\n"
    "                        moves by several percent from one timing to the next\n"
    "  --input f32|f16|bf16  the element type auto picks for (default f32); a named --algo\n"
    "                        brings its own\n"
    "  --nonnegative         inputs in [0,1] instead: no cancellation, so rounding errors that\n"
    "                        lean one way add up (the harder case for accuracy)\n"
    "The 16-bit variants (fp16, bf16) get A and B rounded to their type once, before timing;\n"
    "the sm_90a ones run on compute capability 9.0 devices (H100, H200) only.\n"
    "Exit status: 0 validated, 1 validation failed, 2 bad usage, 3 no usable GPU, or a CUDA or\n"
    "internal failure.\n";

}  // namespace

int cmd_gemm(int argc, char** argv) {
  args a(argc, argv, 2, {"--algo", "--reps", "--rounds", "--alpha", "--beta", "--input"}, {"--reduced-precision", "--nonnegative"});
  if (a.help()) {
    std::string list;
    for (const auto& v : gemm_variants())
      list += "                          " + std::string(v.name) + std::string(22 - std::min<std::size_t>(v.name.size(), 21), ' ') +
              to_string(v.precision) + (v.teaching ? ", teaching rung" : "") + (v.splits ? ", splits K" : "") +
              (v.sm90a ? ", sm_90a" : "") + "\n";
    return std::printf(usage, list.c_str()), 0;
  }
  if (a.positional().size() != 3) throw usage_error("expected M N K");
  index_t dims[3];
  for (int i = 0; i < 3; ++i) {
    const std::string& t = a.positional()[i];
    long long v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v < 1 || v > max_index)
      throw usage_error("M, N and K must be integers in [1, " + std::to_string(max_index) + "], got '" + t + "'");
    dims[i] = static_cast<index_t>(v);
  }
  const int reps = static_cast<int>(a.get_int("--reps", 20, 1, 100000));
  const int rounds = static_cast<int>(a.get_int("--rounds", 1, 1, 1000));
  const double fmax = std::numeric_limits<float>::max();
  const float alpha = static_cast<float>(a.get_double("--alpha", 1.0, -fmax, fmax));
  const float beta = static_cast<float>(a.get_double("--beta", 0.0, -fmax, fmax));
  const std::string algo = a.get("--algo", "auto");
  if (algo != "auto") {  // a usage error, before the GPU is looked for
    try {
      (void)find_gemm(algo);
    } catch (const invalid_argument& e) {
      throw usage_error(e.what());
    }
    if (a.has("--input")) throw usage_error("--input chooses what auto picks for; --algo " + algo + " brings its own");
  }
  const std::string input_name = a.get("--input", "f32");
  if (input_name != "f32" && input_name != "f16" && input_name != "bf16")
    throw usage_error("--input must be f32, f16 or bf16, got '" + input_name + "'");
  const gemm_input input = input_name == "f16" ? gemm_input::f16 : input_name == "bf16" ? gemm_input::bf16 : gemm_input::f32;
  require_gpu();

  context ctx;
  vendor_handles vendor(ctx);
  const index_t m = dims[0], n = dims[1], k = dims[2];
  const gemm_problem p{m, n, k, ctx.sm_count()};
  const gemm_variant& v = algo == "auto" ? select_gemm(p, input, a.has("--reduced-precision")) : find_gemm(algo);
  if (v.sm90a && !sm90a_kernels_available())
    throw not_supported("algorithm '" + std::string(v.name) + "' needs a compute capability 9.0 GPU (H100, H200) and a build "
                        "whose CMAKE_CUDA_ARCHITECTURES holds 90; this GPU is " + ctx.properties().name);
  LA_EXPECTS(v.can_implement(p), "algorithm '" + std::string(v.name) + "' cannot run this shape");

  std::mt19937 g(1);
  std::uniform_real_distribution<float> u(a.has("--nonnegative") ? 0.0f : -1.0f, 1.0f);
  auto rnd = [&](index_t r, index_t c) {
    std::vector<float> x(static_cast<std::size_t>(r) * c);
    for (float& e : x) e = u(g);
    return dense_matrix<float>(r, c, c, std::move(x));
  };
  const auto ha = rnd(m, k), hb = rnd(k, n), hc = rnd(m, n);
  const auto da = to_device(ctx, ha), db = to_device(ctx, hb);
  auto dc = to_device(ctx, hc);
  // 16-bit inputs are rounded once, outside the timed runs.
  device_dense<__half> ah, bh;
  device_dense<__nv_bfloat16> abf, bbf;
  const void* a_in = da.view().values;
  const void* b_in = db.view().values;
  if (v.input == gemm_input::f16)
    ah = to_half(ctx, da), bh = to_half(ctx, db), a_in = ah.view().values, b_in = bh.view().values;
  if (v.input == gemm_input::bf16)
    abf = to_bf16(ctx, da), bbf = to_bf16(ctx, db), a_in = abf.view().values, b_in = bbf.view().values;

  device_buffer<unsigned char> ws = ctx.allocate<unsigned char>(v.workspace_bytes(p));
  const gemm_args ga{m, n, k, a_in, k, b_in, n, dc.view().values, n, alpha, beta, ws.data(), p.sm_count, ws.size()};

  v.run(ga, ctx.stream());
  const auto got = to_host(ctx, dc);
  // cuBLAS's result on the same inputs (into a fresh copy of C), for its error on the same entries.
  auto vc = to_device(ctx, hc);
  gemm_args gv = ga;
  gv.c = vc.view().values;
  cublas_gemm(vendor, v.precision, gv);
  const auto vendor_got = to_host(ctx, vc);
  // Validate sampled entries against a double-precision dot product of the inputs the
  // kernel saw (rounded to its 16-bit input type), with the one GEMM tolerance rule.
  const double tol = gemm_tolerance(v.precision, k);
  auto in = [&](float x) { return double(round_to_input(v.input, x)); };
  double worst = 0, vendor_worst = 0;
  std::uniform_int_distribution<index_t> ri(0, m - 1), ci(0, n - 1);
  for (int s = 0; s < 512; ++s) {
    const index_t i = ri(g), j = ci(g);
    double dot = 0, mag = 0;
    for (index_t q = 0; q < k; ++q) dot += in(ha(i, q)) * in(hb(q, j)), mag += std::abs(in(ha(i, q)) * in(hb(q, j)));
    const double want = alpha * dot + (beta != 0 ? double(beta) * hc(i, j) : 0.0);
    const double scale = std::abs(alpha) * mag + std::abs(double(beta) * hc(i, j));
    const double err = std::abs(got(i, j) - want) / (scale > 0 ? scale : 1.0);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    const double vendor_err = std::abs(vendor_got(i, j) - want) / (scale > 0 ? scale : 1.0);
    vendor_worst = std::isnan(vendor_err) ? INFINITY : std::max(vendor_worst, vendor_err);
  }

  const double flops = 2.0 * m * n * k;
  // Rounds alternate la and cuBLAS, so that a drift of the clocks or the memory's state
  // between the two shows as spread instead of as a ratio.
  std::vector<double> own, ref, ratio;
  for (int r = 0; r < rounds; ++r) {
    own.push_back(median_ms(ctx.stream(), reps, [&] { v.run(ga, ctx.stream()); }));
    ref.push_back(median_ms(ctx.stream(), reps, [&] { cublas_gemm(vendor, v.precision, ga); }));
    ratio.push_back(ref.back() / own.back());
  }
  auto median = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x.size() % 2 ? x[x.size() / 2] : (x[x.size() / 2 - 1] + x[x.size() / 2]) / 2;
  };
  const double t_own = median(own), t_ref = median(ref);
  std::printf("device:      %s, %d SMs\n", ctx.properties().name, p.sm_count);
  std::printf("problem:     %d x %d x %d, alpha %g, beta %g\n", m, n, k, alpha, beta);
  std::printf("algorithm:   %s (%s%s)\n", std::string(v.name).c_str(), to_string(v.precision),
              algo == "auto" ? ", chosen by auto" : "");
  std::printf("validation:  max sampled error %.2e of sum|a*b| (tolerance %.1e): %s; cuBLAS's: %.2e\n", worst, tol,
              worst <= tol ? "ok" : "FAILED", vendor_worst);
  std::printf("la:          %10.3f ms  %8.2f TFLOP/s\n", t_own, flops / t_own * 1e-9);
  const gemm_precision peer = v.precision == gemm_precision::tf32x3 ? gemm_precision::fp32 : v.precision;
  std::printf("cuBLAS %-5s %10.3f ms  %8.2f TFLOP/s\n", (std::string(to_string(peer)) + ":").c_str(), t_ref,
              flops / t_ref * 1e-9);
  if (rounds == 1)
    std::printf("ratio:       %.2fx cuBLAS (median of %d runs each)\n", t_ref / t_own, reps);
  else
    std::printf("ratio:       %.2fx cuBLAS (median of %d alternating rounds, range %.2f-%.2fx; a round: median of %d "
                "runs each)\n",
                median(ratio), rounds, *std::min_element(ratio.begin(), ratio.end()),
                *std::max_element(ratio.begin(), ratio.end()), reps);
  return worst <= tol ? 0 : 1;
}

}  // namespace la::cli
