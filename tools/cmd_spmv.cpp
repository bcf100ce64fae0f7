#include <cstdio>
#include <string>

#include <la/kernels/spmv/select.hpp>
#include <la/event_timer.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "common.hpp"
#include <la/kernels/detail/vendor/spmv_check.hpp>

namespace la::cli {
namespace {
const char* usage =
    "usage: la spmv A.mtx|gen:SPEC [--kernel NAME|auto] [--tune] [--precision float|double] [--reps N]\n"
    "\n"
    "Runs y = A*x on the GPU (x fixed, entries in [-1,-0.01] U [0.01,1]) with one SpMV kernel,\n"
    "checks every y_i against the host reference (tolerance (k_i+2) eps sum_j |a_ij x_j| for a\n"
    "row of k_i entries), and prints the kernel, the median time of --reps runs (CUDA events)\n"
    "and the effective bandwidth (the CSR arrays + x + y moved once, whatever the format).\n"
    "  --kernel NAME         a kernel (%s),\n"
    "                        or auto (default): format and kernel chosen from the row lengths\n"
    "  --tune                time every candidate format and kernel on this matrix and run the\n"
    "                        fastest (instead of the rule that auto applies)\n"
    "  --precision P         double (default) or float\n"
    "  --reps N              timed runs (default 20)\n"
    "  gen:SPEC              a generated matrix: poisson2d:N, poisson3d:N, random:ROWS:K,\n"
    "                        rmat:SCALE:EDGES_PER_VERTEX, denserows:ROWS:K:COUNT:LEN\n"
    "%s"
    "Exit status: 0 validated, 1 validation failed, 2 bad usage or input, 3 no usable GPU, or a\n"
    "CUDA or internal failure.\n";


/// The choice for a named kernel: its format with default parameters.
template <typename T>
spmv_choice named_choice(const std::string& kernel) {
  const spmv_variant<T>* v = nullptr;
  for (const auto& c : spmv_variants<T>())
    if (c.name == kernel && c.fmt != format::dense) v = &c;
  if (!v) throw usage_error("unknown SpMV kernel '" + printable(kernel) + "'; the kernels: " + spmv_variant_names(true) + ", auto");
  spmv_choice c;
  c.fmt = v->fmt;
  c.kernel = kernel;
  c.why = "named";
  return c;
}

template <typename T>
int run_spmv(const args& a, const std::string& path) {
  const int reps = static_cast<int>(a.get_int("--reps", 20, 1, 100000));
  const std::string kernel = a.get("--kernel", "auto");
  const bool tune = a.has("--tune");
  if (tune && kernel != "auto") throw usage_error("--tune chooses the kernel; it does not go with --kernel " + kernel);
  const spmv_choice named = kernel == "auto" ? spmv_choice{} : named_choice<T>(kernel);  // usage errors first
  if (is_gen(path)) (void)gen_option(path);
  require_gpu();
  context ctx;
  return with_matrix<T>(path, a, [&](const auto& host) {
    using O = typename std::decay_t<decltype(host)>::offset_type;
    const device_csr<T, O> dev = to_device(ctx, host);
    const spmv_choice choice = tune ? tune_spmv(ctx, dev) : kernel == "auto" ? select_spmv(row_stats(ctx, dev)) : named;
    const spmv_operator<T> op(ctx, dev, choice);
    const std::vector<T> x = spmv_input<T>(host.cols());
    const auto dx = to_device(ctx, x);
    device_vector<T> dy(ctx, host.rows());
    auto run = [&] { op.apply(dx.data(), dy.data(), T(1), T(0), ctx.stream()); };
    run();
    const double worst = spmv_check<T, O>(host, x).worst(to_host(ctx, dy));
    const double ms = median_ms(ctx.stream(), reps, run);
    const double bytes = (double(host.rows()) + 1) * sizeof(O) + double(host.nnz()) * (sizeof(index_t) + sizeof(T)) +
                         (double(host.rows()) + host.cols()) * sizeof(T);
    const spmv_variant<T>& v = op.variant();
    std::printf("device:      %s\n", ctx.properties().name);
    std::printf("matrix:      %s (%d x %d, %lld nonzeros, %d-bit offsets), %s\n", printable(path).c_str(), host.rows(),
                host.cols(), static_cast<long long>(host.nnz()), int(sizeof(O) * 8), sizeof(T) == 8 ? "double" : "float");
    std::string params;
    if (v.fmt == format::sell) {
      const matrix_view<T>& m = op.matrix();
      params = ", C " + std::to_string(m.wide ? m.sell64.slice_height : m.sell32.slice_height) + ", sigma " +
               std::to_string(m.wide ? m.sell64.sigma : m.sell32.sigma);
    }
    std::printf("kernel:      %s (%s%s%s)\n", std::string(v.name).c_str(), to_string(v.fmt),
                v.deterministic ? ", deterministic" : ", atomics", params.c_str());
    std::printf("chosen by:   %s\n", kernel != "auto" ? "--kernel" : tune ? choice.why.c_str() : ("auto: " + choice.why).c_str());
    std::printf("validation:  max error %.2f of the row tolerance: %s\n", worst, worst <= 1 ? "ok" : "FAILED");
    std::printf("time:        %.4f ms (median of %d), %.1f GB/s effective\n", ms, reps, bytes / (ms * 1e6));
    return worst <= 1 ? 0 : 1;
  });
}
}  // namespace

int cmd_spmv(int argc, char** argv) {
  args a(argc, argv, 2, {"--kernel", "--precision", "--reps", "--threads", "--offsets"}, {"--tune"});
  if (a.help()) return std::printf(usage, spmv_variant_names(true).c_str(), reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string prec = a.get_choice("--precision", "double", {"double", "float"});
  return prec == "float" ? run_spmv<float>(a, a.positional()[0]) : run_spmv<double>(a, a.positional()[0]);
}

}  // namespace la::cli
