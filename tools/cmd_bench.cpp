#include <unistd.h>

#include <cstdio>
#include <string>

#include <la/kernels/detail/vendor/vendor.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "common.hpp"
#include <la/kernels/detail/vendor/gesv_suite.hpp>
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

const char* gesv_usage =
    "usage: la bench gesv [--sizes N,N,...] [--reps N] [--only lu|cholesky] [--no-mixed] [--ablate] [--out FILE.csv]\n"
    "       la bench gesv --batch [--sizes N,N,...] [--count C,C,...] [--reps N] [--only lu|cholesky] [--out FILE.csv]\n"
    "       la bench dgemm [--sizes N,N,...] [--reps N] [--out FILE.csv]\n"
    "\n"
    "gesv: la's dense LU (getrf) and Cholesky (potrf) on the fp64 Tensor Cores beside cuSOLVER's,\n"
    "and la's mixed-precision solves (float factors with 3xTF32, TF32 or float updates, refined\n"
    "to fp64) beside cuSOLVER's fp64 getrf+getrs and its iterative-refinement solver IRS (float\n"
    "and TF32; classical and GMRES-based refinement, GMRES also with half factors), on random\n"
    "matrices (uniform in [-1, 1); SPD: symmetric plus n I) in one process.\n"
    "Every solve is validated by its backward error ||b - Ax||_inf / (||A||_inf ||x||_inf +\n"
    "||b||_inf) computed the same way (cuBLAS DGEMV) for every row: 1e-14 or better, or the row\n"
    "says NO. Times are wall clock around device syncs, median of --reps runs after a warm-up\n"
    "(one run from n = 16384, two from 4096); la's factorization time includes copying A.\n"
    "gesv --batch: batches of small systems, factor + solve of one right-hand side each:\n"
    "la::batched_dense_solver (lu, cholesky on SPD batches, and auto) beside cuBLAS's\n"
    "getrfBatched + getrsBatched and cuSOLVER's potrfBatched + potrsBatched (la's time includes\n"
    "copying A; the vendor's does not); every system's backward error recomputed on the host in\n"
    "long double, the worst at most 1e-13 or the row says NO.\n"
    "dgemm: every fp64 GEMM rung beside cuBLAS DGEMM on n x n x n, validated against it.\n"
    "  --sizes LIST    n values (default gesv: 32,64,128,256,512,1024,2048,4096,8192,16384;\n"
    "                  gesv --batch: 8,16,32,64,128,256; dgemm: 1024,2048,4096,8192)\n"
    "  --count LIST    --batch: the systems in each batch, one per size or one for all\n"
    "                  (default 10000 up to n = 64, 1000 above)\n"
    "  --reps N        timed runs below n = 4096 (default 5)\n"
    "  --only K        lu or cholesky alone\n"
    "  --no-mixed      leave out the mixed-precision rows\n"
    "  --ablate        also la's fp64 factorization with look-ahead off (la:fp64-no-lookahead, n > 512)\n"
    "                  and with the memory pool keeping freed memory (la:fp64-pool-kept, n <= 1024)\n"
    "  --out FILE      also write the rows as CSV\n"
    "Exit status: 0 every row validated, 1 one failed, 2 bad usage, 3 no usable GPU.\n";

int cmd_bench_dense(int argc, char** argv, bool gesv) {
  args a(argc, argv, 3, {"--sizes", "--reps", "--only", "--out", "--count"}, {"--no-mixed", "--quiet", "--batch", "--ablate"});
  if (a.help()) return std::printf("%s", gesv_usage), 0;
  gesv_bench_options o;
  const bool batch = a.has("--batch");
  if (batch && !gesv) throw usage_error("--batch belongs to 'la bench gesv'");
  if (!batch && a.has("--count")) throw usage_error("--count needs --batch");
  auto list = [](const std::string& text, const char* flag, long hi) {
    std::vector<index_t> out;
    for (std::size_t p = 0; p < text.size();) {
      const std::size_t q = std::min(text.find(',', p), text.size());
      const std::string item = text.substr(p, q - p);
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end || v < 1 || v > hi)
        throw usage_error(std::string(flag) + ": '" + item + "' is not a number from 1 to " + std::to_string(hi));
      out.push_back(static_cast<index_t>(v));
      p = q + 1;
    }
    return out;
  };
  o.sizes = list(a.get("--sizes", batch ? "8,16,32,64,128,256" : gesv ? "32,64,128,256,512,1024,2048,4096,8192,16384" : "1024,2048,4096,8192"),
                 "--sizes", batch ? 1024 : 200000);
  const std::vector<index_t> counts = batch ? list(a.get("--count", ""), "--count", 10000000) : std::vector<index_t>{};
  if (counts.size() > 1 && counts.size() != o.sizes.size())
    throw usage_error("--count: one count for every size, or one for all (" + std::to_string(o.sizes.size()) + " sizes)");
  o.reps = static_cast<int>(a.get_int("--reps", 5, 1, 1000));
  const std::string only = a.get_choice("--only", "both", {"lu", "cholesky", "both"});
  o.lu = only != "cholesky", o.cholesky = only != "lu";
  o.mixed = !a.has("--no-mixed");
  o.ablate = a.has("--ablate");
  o.progress = !a.has("--quiet") && isatty(2);
  const std::string out = a.get("--out", "");
  require_gpu();
  context ctx;
  vendor_handles vh(ctx);
  int clock_khz = 0;
  (void)cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ctx.device());
  // fp64 Tensor Cores: 256 flops a clock a multiprocessor on compute capability 9.0 (64 on 8.0).
  const double per_sm = ctx.properties().major >= 9 ? 256 : 64;
  const double peak = per_sm * ctx.sm_count() * clock_khz * 1e3 / 1e12;
  const std::vector<gesv_row> rows = batch ? bench_gesv_batched(ctx, vh, o, counts) : gesv ? bench_gesv(ctx, vh, o) : bench_dgemm(ctx, vh, o);
  print_gesv_table(rows, ctx.properties().name, peak);
  if (!out.empty()) write_gesv_csv(rows, out, ctx.properties().name);
  for (const auto& r : rows)
    if (!r.ok) return 1;
  return 0;
}

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
  if (argc >= 3 && (std::string(argv[2]) == "gesv" || std::string(argv[2]) == "dgemm"))
    return cmd_bench_dense(argc, argv, std::string(argv[2]) == "gesv");
  if (argc < 3 || std::string(argv[2]) != "spmv") {
    if (argc >= 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h"))
      return std::printf(usage, reader_usage), std::printf("\n%s", gesv_usage), 0;
    throw usage_error("expected 'la bench spmv|gesv|dgemm ...' (the benchmark suites)");
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
