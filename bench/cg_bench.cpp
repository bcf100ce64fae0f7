// CG time per iteration: la's GPU solver against the vendor-library CG (cusparseSpMV +
// cuBLAS with host scalars, kernels/detail/vendor/vendor_cg.hpp) and Eigen's ConjugateGradient on
// the host, all in one run, with the bytes-model floor at the copy bandwidth measured in
// the same run.
//
// usage: cg_bench [--systems LIST] [--precision float|double|both] [--iterations N]
//                 [--eigen-iterations N] [--no-eigen] [--out FILE.csv]
//                 [--path auto|graph|persistent|plain] [--kernel NAME]
//   --path, --kernel force la's iteration path and CSR SpMV kernel (default: the solver's
//   own choice, as `la solve` makes it).
//   LIST: comma-separated gen specs (poisson2d:N, poisson3d:N) and .mtx files; default the
//   issue's set: 2D Poisson 256^2, 1024^2, 4000^2, 3D Poisson 128^3, 256^3 and the bundled
//   SPD systems on which CG without a preconditioner converges (gr_30_30, bcsstk09,
//   Trefethen_2000; bcsstk21 and 1138_bus need Jacobi, and the vendor CG has none).
//
// Bytes model (per iteration, unpreconditioned): the CSR matrix once (values, column
// indices, row pointers) plus 9 n values, what la's fused iteration must move (step 1: r
// and the old p read, the new p and q written, x read and written; step 2: r and q read, r
// written). A textbook CG moves 10 n or more (the "about 10n" of a textbook count); the floor here is
// the tighter one. The floor is those bytes at the measured copy bandwidth; a system that
// fits in L2 can beat it.
//
// Every solver runs to ||r|| <= rtol ||b|| (1e-8 in double, 1e-5 in float) or N iterations
// (2000 up to 100k rows, 500 up to 2M, 200 above), from x = 0, and each solve is validated
// against the vendor CG (the same algorithm in exact arithmetic): when both stop at N, their
// recurrence residuals agree to 1e-6 (double) or 1e-2 (float); when either converges, both
// converge, within 10% (25% in float; or 2) iterations of each other, and la's true
// residual is within 10x rtol or at most twice the vendor CG's (in float, rounding x alone
// leaves about eps cond(A)). A row that fails is marked ok = 0. Time per iteration is the
// loop's time over its iterations (la: every chunk's status read included).
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/kernels/detail/vendor/vendor_cg.hpp>
#include <la/kernels/detail/vendor/spmv_suite.hpp>
#include "systems.hpp"

namespace {
using namespace la;
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

struct bench_row {
  std::string system, precision, method;
  long long rows = 0, nnz = 0;
  long long iterations = 0, vendor_iterations = 0;
  double la_true_residual = 0, vendor_true_residual = 0;
  double la_us = 0, floor_us = 0, vendor_us = 0, eigen_us = 0;
  int eigen_threads = 0;
  double la_residual = 0, vendor_residual = 0;
  bool ok = false;
};

using bench::split;
using bench::load;

/// Iterations for a system: enough that a run takes well over the launch and sync overheads.
long long iterations_for(long long rows, long long requested) {
  if (requested > 0) return requested;
  return rows <= 100000 ? 2000 : rows <= 2000000 ? 500 : 200;
}

struct la_config {
  cg_path path = cg_path::automatic;
  std::string kernel;  // "" = the solver's choice
};

template <typename T>
bench_row run(context& ctx, vendor_handles& vh, const std::string& name, const csr_matrix<T>& a, double copy_gbs,
              long long requested, long long eigen_requested, bool eigen, const la_config& cfg) {
  bench_row row;
  row.system = name;
  row.precision = sizeof(T) == 8 ? "double" : "float";
  row.rows = a.rows();
  row.nnz = a.nnz();
  const long long n = a.rows(), its = iterations_for(n, requested);
  std::vector<T> b(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) b[i] = static_cast<T>(1.0 + 0.5 * std::sin(0.001 * i));  // smooth, never zero

  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  device_vector<T> dx(ctx, static_cast<index_t>(n));

  // la; the first, short solve warms up.
  // Float's true residual bottoms out near eps * cond(A) (1e-6 on the small real systems,
  // 5e-3 on 2D Poisson 256^2), so its target is 1e-5.
  const double rtol = sizeof(T) == 8 ? 1e-8 : 1e-5;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.rtol = rtol;
  opt.max_iterations = its;
  opt.stagnation_window = 0;
  cg_options warm = opt;
  warm.max_iterations = 20;
  solve_result r;
  device_cg_options dopt;
  dopt.path = cfg.path;
  if (!cfg.kernel.empty()) {
    dopt.choice = cg_choice_for("csr", row_stats(a));
    dopt.choice->kernel = cfg.kernel;
  }
  for (const cg_options* o : {&warm, &opt}) {
    LA_CUDA_TRY(cudaMemsetAsync(dx.data(), 0, sizeof(T) * n, ctx.stream()));
    r = cg_device(ctx, da, db, dx, *o, dopt);
  }
  row.method = r.method;
  row.iterations = r.iterations;
  row.la_us = 1e6 * r.iterate_seconds / std::max<long long>(1, r.iterations);
  row.la_residual = r.residual;
  const double bytes = double(a.nnz()) * (sizeof(T) + sizeof(index_t)) + double(n + 1) * sizeof(index_t) +
                       9.0 * double(n) * sizeof(T);
  row.floor_us = bytes / (copy_gbs * 1e9) * 1e6;

  // The vendor CG: a short warm-up, then the same iteration count.
  vendor_cg(vh, da, db, dx, 5, rtol);
  const auto t0 = clock_type::now();
  const vendor_cg_result v = vendor_cg(vh, da, db, dx, its, rtol);
  row.vendor_us = 1e6 * seconds_since(t0) / std::max<long long>(1, v.iterations);
  row.vendor_residual = v.residual;
  row.vendor_iterations = v.iterations;
  row.la_true_residual = r.true_residual;
  row.vendor_true_residual = bench::true_residual(a, b, to_host(ctx, dx));
  if (r.iterations == its && v.iterations == its) {
    const double agree = sizeof(T) == 8 ? 1e-6 : 1e-2;
    row.ok = r.status == solve_status::max_iterations && std::abs(r.residual - v.residual) <= agree * v.residual;
  } else {
    // Float iteration counts differ more: cuBLAS sums float dots in float, la in double.
    const double spread = sizeof(T) == 8 ? 0.1 : 0.25;
    // The true residual: within 10x rtol, or (float, where rounding x alone leaves about
    // eps * cond(A): 5e-3 on 2D Poisson 256^2) no worse than twice the vendor CG's. la
    // reports that second case as precision_limit (the recurrence met rtol, the true
    // residual did not), which passes when the vendor CG's true residual is as far off.
    const bool as_far_as_vendor = r.status == solve_status::precision_limit &&
                                  r.true_residual <= 2 * row.vendor_true_residual;
    row.ok = (r.status == solve_status::converged || as_far_as_vendor) && v.residual <= rtol &&
             r.true_residual <= std::max(10 * rtol, 2 * row.vendor_true_residual) &&
             std::abs(r.iterations - v.iterations) <= std::max(2.0, spread * double(v.iterations));
  }

  if (eigen) {
    const Eigen::SparseMatrix<T, Eigen::RowMajor> m = bench::to_eigen(a);
    Eigen::ConjugateGradient<Eigen::SparseMatrix<T, Eigen::RowMajor>, Eigen::Lower | Eigen::Upper> cg;
    // A fixed count, small on large systems so the host baseline stays a few seconds.
    const long long eits = eigen_requested > 0 ? eigen_requested
                                               : std::max<long long>(3, std::min<long long>(its, 200000000LL / a.nnz()));
    cg.setMaxIterations(eits);
    cg.setTolerance(rtol);
    cg.compute(m);
    const Eigen::Matrix<T, Eigen::Dynamic, 1> eb = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(b.data(), n);
    const auto te = clock_type::now();
    const Eigen::Matrix<T, Eigen::Dynamic, 1> ex = cg.solve(eb);
    row.eigen_us = 1e6 * seconds_since(te) / std::max<long long>(1, cg.iterations());
    row.eigen_threads = Eigen::nbThreads();
    if (!std::isfinite(static_cast<double>(ex.norm()))) row.ok = false;  // Eigen's answer must be a number too
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string systems =
      "poisson2d:256,poisson2d:1024,poisson2d:4000,poisson3d:128,poisson3d:256," LA_DATA_DIR "/gr_30_30.mtx," LA_DATA_DIR
      "/bcsstk09.mtx," LA_DATA_DIR "/Trefethen_2000.mtx";
  std::string precision = "both", out;
  long long iterations = 0, eigen_iterations = 0;
  bool eigen = true;
  la_config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&] { return la::bench::option_value(argc, argv, i); };
    if (k == "--systems") systems = value();
    else if (k == "--precision") precision = value();
    else if (k == "--iterations") iterations = std::stoll(value());
    else if (k == "--eigen-iterations") eigen_iterations = std::stoll(value());
    else if (k == "--no-eigen") eigen = false;
    else if (k == "--out") out = value();
    else if (k == "--kernel") cfg.kernel = value();
    else if (k == "--path") {
      const std::string p = value();
      cfg.path = p == "graph" ? la::cg_path::graph : p == "persistent" ? la::cg_path::persistent
               : p == "plain" ? la::cg_path::plain : la::cg_path::automatic;
    }
    else throw la::invalid_argument("unknown option '" + k + "' (see the comment at the top of bench/cg_bench.cpp)");
  }
  if (!la::cuda_available()) {
    std::printf("cg_bench: no GPU (%s); nothing to measure\n", la::cuda_status().c_str());
    return 0;
  }
  la::context ctx;
  la::vendor_handles vh(ctx);
  const double copy_gbs = la::cli::copy_bandwidth_gbs(ctx);
  std::printf("device: %s, copy bandwidth %.0f GB/s (measured), Eigen threads %d\n", ctx.properties().name, copy_gbs,
              Eigen::nbThreads());
  std::vector<bench_row> rows;
  for (const std::string& s : split(systems)) {
    const std::string name = la::bench::system_name(s);
    if (precision != "float") rows.push_back(run<double>(ctx, vh, name, load<double>(s), copy_gbs, iterations, eigen_iterations, eigen, cfg));
    if (precision != "double") rows.push_back(run<float>(ctx, vh, name, load<float>(s), copy_gbs, iterations, eigen_iterations, eigen, cfg));
    const auto& r = rows.back();
    std::fprintf(stderr, "%s %s: la %.2f us/it, vendor %.2f us/it\n", r.system.c_str(), r.precision.c_str(), r.la_us,
                 r.vendor_us);
  }
  std::printf("\n%-22s %-6s %10s %6s %9s %9s %7s %9s %8s %10s %8s  %s\n", "system", "prec", "rows", "its", "la us/it",
              "floor us", "%floor", "vendor us", "x vendor", "eigen us", "x eigen", "ok  la method");
  bool all_ok = true;
  for (const auto& r : rows) {
    std::printf("%-22s %-6s %10lld %6lld %9.2f %9.2f %6.1f%% %9.2f %7.2fx %10.1f %7.1fx  %-3s %s\n", r.system.c_str(),
                r.precision.c_str(), r.rows, r.iterations, r.la_us, r.floor_us, 100 * r.floor_us / r.la_us, r.vendor_us,
                r.vendor_us / r.la_us, r.eigen_us, r.eigen_us / r.la_us, r.ok ? "ok" : "BAD", r.method.c_str());
    all_ok = all_ok && r.ok;
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "system,precision,rows,nnz,iterations,la_us,floor_us,floor_share,vendor_us,speedup_vendor,eigen_us,eigen_threads,"
         "speedup_eigen,la_residual,vendor_residual,vendor_iterations,la_true_residual,vendor_true_residual,ok,method\n";
    for (const auto& r : rows)
      f << r.system << ',' << r.precision << ',' << r.rows << ',' << r.nnz << ',' << r.iterations << ',' << r.la_us << ','
        << r.floor_us << ',' << r.floor_us / r.la_us << ',' << r.vendor_us << ',' << r.vendor_us / r.la_us << ','
        << r.eigen_us << ',' << r.eigen_threads << ',' << (r.eigen_us > 0 ? r.eigen_us / r.la_us : 0) << ','
        << r.la_residual << ',' << r.vendor_residual << ',' << r.vendor_iterations << ',' << r.la_true_residual << ','
        << r.vendor_true_residual << ','
        << (r.ok ? 1 : 0) << ",\"" << r.method << "\"\n";
    if (!f) throw la::io_error("cannot write '" + out + "'");
  }
  if (!all_ok) std::printf("\nsome rows failed validation (ok = BAD): la and the vendor CG disagree\n");
  return all_ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cg_bench: %s\n", e.what());
  return 3;
}
