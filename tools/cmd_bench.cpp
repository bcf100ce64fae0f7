#include <unistd.h>

#include <cstdio>
#include <string>

#include <la/kernels/detail/vendor/vendor.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "common.hpp"
#include <la/kernels/detail/vendor/spmv_suite.hpp>

namespace la::cli {
namespace {
const char* usage =
    "usage: la bench spmv [A.mtx | gen:SPEC]... [--generated] [--precision float|double|both]\n"
    "                     [--reps N] [--out FILE.json|FILE.csv]\n"
    "\n"
    "Runs every la SpMV kernel that takes a sparse format, the auto-selected one, and the\n"
    "cuSPARSE peers (CSR ALG1 and ALG2, COO, CSC, sliced ELL) on each matrix, side by side in\n"
    "one process. Each is validated first (y poisoned with NaN, every row against the host\n"
    "reference), then timed (median of --reps CUDA-event timings). Prints a table per matrix\n"
    "with time, GB/s under the CSR minimum-bytes model, the share of the device-to-device copy\n"
    "bandwidth measured in the same run and the ratio to cuSPARSE CSR ALG1, then the winners.\n"
    "  gen:SPEC              a generated matrix: poisson2d:N, poisson3d:N, random:ROWS:K,\n"
    "                        rmat:SCALE:EDGES_PER_VERTEX, denserows:ROWS:K:COUNT:LEN\n"
    "  --generated           the standard generated set: gen:poisson2d:4000, gen:poisson3d:256,\n"
    "                        gen:random:4000000:16, gen:rmat:22:16, gen:denserows:4000000:8:16:200000\n"
    "  --precision P         double (default), float or both\n"
    "  --reps N              timed runs per kernel (default 20)\n"
    "  --out FILE            also write every row as JSON (.json) or CSV (other names)\n"
    "  --quiet               no progress line (it is shown only on a terminal anyway)\n"
    "%s"
    "Exit status: 0 every kernel validated, 1 one failed validation, 2 bad usage or input,\n"
    "3 no usable GPU, or a CUDA or internal failure.\n";

template <typename T>
void bench_one(context& ctx, vendor_handles& vh, const args& a, const std::string& m, const spmv_bench_options& opt,
               std::vector<spmv_row>& rows) {
  std::vector<spmv_row> r;
  if (m.rfind("gen:", 0) == 0) {
    r = with_generated<T>(gen_option(m), offsets_option(a),
                          [&](const auto& g) { return bench_spmv(ctx, vh, m.substr(4), g, opt); });
  } else {
    r = with_csr_file<T>(m, a, [&](const auto& host) { return bench_spmv(ctx, vh, m, host, opt); });
  }
  rows.insert(rows.end(), r.begin(), r.end());
}
}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]) != "spmv") {
    if (argc >= 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h"))
      return std::printf(usage, reader_usage), 0;
    throw usage_error("expected 'la bench spmv ...' (the benchmark suites: spmv)");
  }
  args a(argc, argv, 3, {"--precision", "--reps", "--out", "--threads", "--offsets"}, {"--generated", "--quiet"});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  const std::string prec = a.get_choice("--precision", "double", {"double", "float", "both"});
  std::vector<std::string> matrices;
  if (a.has("--generated"))
    for (const auto& g : standard_generated()) matrices.push_back("gen:" + g);
  for (const auto& p : a.positional()) matrices.push_back(p);
  if (matrices.empty()) throw usage_error("no matrices: give files, gen:SPEC or --generated");
  spmv_bench_options opt;
  opt.reps = static_cast<int>(a.get_int("--reps", 20, 1, 100000));
  opt.progress = !a.has("--quiet") && isatty(2);
  const std::string out = a.get("--out", "");
  for (const auto& m : matrices)
    if (is_gen(m)) (void)gen_option(m);  // usage errors before the GPU is looked for
  require_gpu();
  context ctx;
  vendor_handles vh(ctx);
  opt.copy_gbs = copy_bandwidth_gbs(ctx);
  std::vector<spmv_row> rows;
  const int runs = static_cast<int>(matrices.size()) * (prec == "both" ? 2 : 1);
  int k = 0;
  for (const auto& m : matrices)
    for (const char* p : {"double", "float"}) {
      if (prec != "both" && prec != p) continue;
      opt.progress_prefix = "[" + std::to_string(++k) + "/" + std::to_string(runs) + "] " + p + " ";
      if (std::string(p) == "double") bench_one<double>(ctx, vh, a, m, opt, rows);
      else bench_one<float>(ctx, vh, a, m, opt, rows);
    }
  print_spmv_table(rows, opt.copy_gbs, ctx.properties().name);
  if (!out.empty()) write_spmv_rows(rows, out, opt.copy_gbs, ctx.properties().name);
  for (const auto& r : rows)
    if (r.ms > 0 && !r.ok) return 1;
  return 0;
}

}  // namespace la::cli
