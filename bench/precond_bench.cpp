// Preconditioned CG, time to solution: la's GPU solver with each preconditioner against
// la's Jacobi CG, the vendor recipe (cusparseDcsric02 + cusparseSpSV inside the vendor CG
// loop, kernels/detail/vendor/vendor_pcg.hpp) and Eigen's ConjugateGradient with
// IncompleteCholesky on the host's cores, all in one run, double, tol 1e-8, b smooth and
// nonzero, x0 = 0.
//
// usage: precond_bench [--systems LIST] [--methods LIST] [--no-eigen] [--no-vendor]
//                      [--max-iterations N] [--out FILE.csv]
//   LIST (systems): comma-separated .mtx files and gen specs (poisson2d:N, poisson3d:N).
//   LIST (methods): of jacobi, block-jacobi, fsai, fsai2 (tril(|A|^2)), ic0, auto; default all.
//                   ic0+FACT+SOLVE picks IC(0)'s factorization (exact, sweeps, sweepsK) and
//                   apply (exact, isai, jacobi, jacobiK); plain ic0 is what `la solve` runs.
//                   amg+coarseN: AMG with coarse size N (levels up to N rows solved densely);
//                   amg+scalar: AMG with the constant vector alone (elasticity:N systems carry
//                   their coordinates, so amg there uses the rigid-body modes); amg+w: the
//                   W-cycle.
// setupS, factS and applyS: the preconditioner's whole setup, IC(0)'s factorization part
// (with L^T) and one apply, in SpMVs with A (the yardsticks: apply within 4, factorization
// within 20).
//
// Per system and method: the preconditioner's setup time and memory, iterations, time per
// iteration, and time to solution = everything cg_device does (statistics, kernel choice,
// checks, preconditioner setup, the loop, the true residual), the second of two solves
// (the first warms up). The vendor recipe's and Eigen's time to solution are their setup
// (factorization, analyses) plus their loop.
//
// Validation (ok = 0 marks a row that fails): la's solve converged (true residual within
// cg_options::true_residual_factor of the tolerance); on systems up to `oracle_rows` rows
// the iteration count is within 10% (or 2) of the host solver's with the same
// preconditioner (host_backend, the oracle); the vendor recipe's and Eigen's true residual
// ||b - Ax|| / ||b|| is at most 100x the tolerance.
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
#include <la/solvers/host_backend.hpp>
#include <la/solvers/precond.hpp>
#include <la/kernels/detail/vendor/vendor_pcg.hpp>
#include <la/kernels/detail/vendor/spmv_suite.hpp>
#include "systems.hpp"

namespace {
using namespace la;
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

constexpr double rtol = 1e-8;
constexpr index_t oracle_rows = 300000;

struct row_t {
  std::string system, method, detail;
  long long rows = 0, nnz = 0, iterations = 0, oracle_iterations = -1;
  double setup_ms = 0, us_per_it = 0, tts_ms = 0, mbytes = 0, true_residual = 0;
  double setup_spmvs = 0, apply_spmvs = 0, factor_spmvs = 0;  // setup, one apply, the factorization: SpMVs with A
  bool ok = false;
};

using bench::split;
csr_matrix<double> load(const std::string& spec) { return bench::load<double>(spec); }

using bench::true_residual;

struct method_t {
  std::string name;
  preconditioner pc;
  precond_options opt;
};

std::vector<method_t> methods_of(const std::string& list) {
  std::vector<method_t> out;
  for (const std::string& m : split(list)) {
    method_t t{m, preconditioner::none, {}};
    std::string name;
    if (m == "fsai2") t.pc = preconditioner::fsai, t.opt.fsai.pattern = fsai_pattern::lower_squared;
    else if (auto p = parse_preconditioner(bench::factor_spec(m, name, t.opt) ? name : ""); p && *p != preconditioner::none) t.pc = *p;
    else throw invalid_argument("unknown method '" + m + "' (jacobi, block-jacobi, fsai, fsai2, ic0[+FACT+SOLVE], amg[+coarseN], auto)");
    out.push_back(t);
  }
  return out;
}

row_t run_la(context& ctx, const std::string& name, const csr_matrix<double>& a, const device_csr<double>& da,
             const std::vector<double>& b, const device_vector<double>& db, const method_t& m, long long max_its) {
  row_t row;
  row.system = name, row.method = "la " + m.name, row.rows = a.rows(), row.nnz = a.nnz();
  cg_options opt;
  opt.rtol = rtol;
  opt.max_iterations = max_its;
  opt.precond = m.pc;
  opt.precond_opt = m.opt;
  bench::attach_coordinates(name, opt.precond_opt.amg);
  opt.stagnation_window = 0;  // Jacobi CG's residual rises for over 1000 iterations on bcsstk13
  solve_result r;
  device_vector<double> dx(ctx, a.rows());
  for (int k = 0; k < 2; ++k) {
    LA_CUDA_TRY(cudaMemsetAsync(dx.data(), 0, sizeof(double) * dx.size(), ctx.stream()));
    ctx.synchronize();
    const auto t0 = clock_type::now();
    r = cg_device(ctx, da, db, dx, opt);
    row.tts_ms = 1e3 * seconds_since(t0);
  }
  row.iterations = r.iterations;
  row.setup_ms = 1e3 * r.precond.setup_seconds;
  row.us_per_it = 1e6 * r.iterate_seconds / std::max<long long>(1, r.iterations);
  row.mbytes = r.precond.bytes / 1e6;
  row.true_residual = r.true_residual;
  row.detail = (m.pc == preconditioner::automatic ? std::string(to_string(r.precond.kind)) + ": " : std::string()) +
               r.precond.detail;
  row.ok = r.converged();
  if (!row.ok) row.detail += " [" + std::string(to_string(r.status)) + ": " + r.message + "]";
  if (m.pc != preconditioner::jacobi && m.pc != preconditioner::automatic) try {
      const bench::apply_costs c = bench::measure_costs(ctx, da, m.pc, opt.precond_opt);
      row.setup_spmvs = c.setup_spmvs, row.apply_spmvs = c.apply_spmvs, row.factor_spmvs = c.factor_spmvs;
    } catch (const invalid_argument&) {  // a preconditioner that does not exist: the solve said so
    }
  if (m.pc == preconditioner::amg && row.ok) {
    // Setup reuse: new values on the same pattern (here the same values) rerun the numeric phases.
    auto t0 = clock_type::now();
    device_preconditioner<double> p(ctx, da, preconditioner::amg, opt.precond_opt);
    const double first = 1e3 * seconds_since(t0);
    t0 = clock_type::now();
    p.update_values(da);
    ctx.synchronize();
    const double again = 1e3 * seconds_since(t0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "; re-setup %.1f ms = %.0f%% of a first setup (%.1f ms)", again, 100 * again / first, first);
    row.detail += buf;
  }
  const bool factored = m.pc == preconditioner::ic0 || m.pc == preconditioner::ilu0;
  if (a.rows() <= oracle_rows && (!factored || bench::oracle_comparable(m.opt))) {
    std::vector<double> x;
    const solve_result h = cg_host(a, b, x, opt);
    row.oracle_iterations = h.iterations;
    row.ok = row.ok && h.converged() &&
             std::abs(double(h.iterations - r.iterations)) <= std::max(2.0, 0.1 * double(h.iterations));
  }
  return row;
}

row_t run_vendor(context& ctx, vendor_handles& vh, const std::string& name, const csr_matrix<double>& a,
                 const device_csr<double>& da, const std::vector<double>& b, const device_vector<double>& db,
                 long long max_its) {
  row_t row;
  row.system = name, row.method = "vendor ic0", row.rows = a.rows(), row.nnz = a.nnz();
  auto no_ic0 = [&](const std::string& why) {  // a breakdown the recipe reports is a result, not a failure
    row.detail = "no IC(0): " + why;
    row.ok = true;
    row.iterations = -1;
    return row;
  };
  csr_matrix<double, std::int32_t> lower;  // tril(A), the diagonal last
  try {
    lower = lower_triangle(a, "vendor ic0");
  } catch (const invalid_argument& e) {  // a diagonal that is not positive
    return no_ic0(e.what());
  }
  device_vector<double> dx(ctx, a.rows());
  vendor_pcg_result v;
  for (int k = 0; k < 2; ++k) v = vendor_pcg_ic0(vh, da, lower, db, dx, max_its, rtol);
  if (!v.factored) return no_ic0(v.why);
  row.iterations = v.iterations;
  row.setup_ms = 1e3 * v.setup_seconds;
  row.us_per_it = 1e6 * v.iterate_seconds / std::max<long long>(1, v.iterations);
  row.tts_ms = 1e3 * (v.setup_seconds + v.iterate_seconds);
  row.mbytes = 1e-6 * double(lower.nnz()) * 12;
  row.true_residual = true_residual(a, b, to_host(ctx, dx));
  row.detail = "csric02 + SpSV, no shift";
  row.ok = v.residual <= rtol && row.true_residual <= 100 * rtol;
  return row;
}

row_t run_eigen(const std::string& name, const csr_matrix<double>& a, const std::vector<double>& b, long long max_its) {
  row_t row;
  row.system = name, row.method = "eigen ic", row.rows = a.rows(), row.nnz = a.nnz();
  const Eigen::SparseMatrix<double, Eigen::RowMajor> m = bench::to_eigen(a);
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double, Eigen::RowMajor>, Eigen::Lower | Eigen::Upper,
                           Eigen::IncompleteCholesky<double>>
      cg;
  cg.setMaxIterations(max_its);
  cg.setTolerance(rtol);
  const auto t0 = clock_type::now();
  cg.compute(m);
  row.setup_ms = 1e3 * seconds_since(t0);
  const Eigen::VectorXd eb = Eigen::Map<const Eigen::VectorXd>(b.data(), a.rows());
  const auto t1 = clock_type::now();
  const Eigen::VectorXd ex = cg.solve(eb);
  const double it_s = seconds_since(t1);
  row.iterations = cg.iterations();
  row.us_per_it = 1e6 * it_s / std::max<long long>(1, row.iterations);
  row.tts_ms = row.setup_ms + 1e3 * it_s;
  row.true_residual = true_residual(a, b, std::vector<double>(ex.data(), ex.data() + ex.size()));
  row.detail = "IncompleteCholesky, " + std::to_string(Eigen::nbThreads()) + " threads";
  row.ok = cg.info() == Eigen::Success && row.true_residual <= 100 * rtol;
  return row;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string systems = LA_DATA_DIR "/1138_bus.mtx," LA_DATA_DIR "/bcsstk09.mtx," LA_DATA_DIR "/bcsstk21.mtx," LA_DATA_DIR
                                    "/gr_30_30.mtx,poisson2d:1000,poisson3d:100";
  std::string methods = "jacobi,block-jacobi,fsai,fsai2,ic0+exact+exact,ic0+sweeps+exact,ic0+sweeps+jacobi,ic0+sweeps+isai,ic0,auto", out;
  bool eigen = true, vendor = true;
  long long max_its = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&] { return la::bench::option_value(argc, argv, i); };
    if (k == "--systems") systems = value();
    else if (k == "--methods") methods = value();
    else if (k == "--no-eigen") eigen = false;
    else if (k == "--no-vendor") vendor = false;
    else if (k == "--max-iterations") max_its = std::stoll(value());
    else if (k == "--out") out = value();
    else throw la::invalid_argument("unknown option '" + k + "' (see the comment at the top of bench/precond_bench.cpp)");
  }
  const std::vector<method_t> ms = methods_of(methods);
  if (!la::cuda_available()) {
    std::printf("precond_bench: no GPU (%s); nothing to measure\n", la::cuda_status().c_str());
    return 0;
  }
  la::context ctx;
  la::vendor_handles vh(ctx);
  std::printf("device: %s, Eigen threads %d, tol %g, double\n", ctx.properties().name, Eigen::nbThreads(), rtol);
  std::vector<row_t> rows;
  for (const std::string& s : split(systems)) {
    const std::string name = la::bench::system_name(s);
    const csr_matrix<double> a = load(s);
    std::vector<double> b(static_cast<std::size_t>(a.rows()));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + 0.5 * std::sin(0.001 * double(i));
    const auto da = to_device(ctx, a);
    const auto db = to_device(ctx, b);
    for (const method_t& m : ms) {
      rows.push_back(run_la(ctx, name, a, da, b, db, m, max_its));
      std::fprintf(stderr, "%s %s: %lld its, %.3f ms\n", name.c_str(), rows.back().method.c_str(),
                   rows.back().iterations, rows.back().tts_ms);
    }
    if (vendor) rows.push_back(run_vendor(ctx, vh, name, a, da, b, db, max_its));
    if (eigen && a.rows() <= oracle_rows) rows.push_back(run_eigen(name, a, b, max_its));
  }
  std::printf("\n%-16s %-22s %9s %6s %6s %10s %9s %10s %8s %7s %6s %6s %6s  %s\n", "system", "method", "rows", "its",
              "oracle", "setup ms", "us/it", "tts ms", "MB", "x jac", "setupS", "factS", "applyS", "ok  detail");
  bool all_ok = true;
  double jacobi_ms = 0;
  for (const auto& r : rows) {
    if (r.method == "la jacobi") jacobi_ms = r.tts_ms;
    std::printf("%-16s %-22s %9lld %6lld %6lld %10.3f %9.2f %10.3f %8.3f %6.2fx %6.1f %6.1f %6.2f  %-3s %s\n",
                r.system.c_str(), r.method.c_str(), r.rows, r.iterations, r.oracle_iterations, r.setup_ms, r.us_per_it,
                r.tts_ms, r.mbytes, r.tts_ms > 0 && jacobi_ms > 0 ? jacobi_ms / r.tts_ms : 0.0, r.setup_spmvs, r.factor_spmvs,
                r.apply_spmvs,
                r.ok ? "ok" : "BAD", r.detail.c_str());
    all_ok = all_ok && r.ok;
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "system,method,rows,nnz,iterations,oracle_iterations,setup_ms,us_per_iteration,time_to_solution_ms,mbytes,"
         "true_residual,setup_spmvs,factor_spmvs,apply_spmvs,ok,detail\n";
    for (const auto& r : rows)
      f << r.system << ',' << r.method << ',' << r.rows << ',' << r.nnz << ',' << r.iterations << ','
        << r.oracle_iterations << ',' << r.setup_ms << ',' << r.us_per_it << ',' << r.tts_ms << ',' << r.mbytes << ','
        << r.true_residual << ',' << r.setup_spmvs << ',' << r.factor_spmvs << ',' << r.apply_spmvs << ','
        << (r.ok ? 1 : 0) << ",\""
        << r.detail << "\"\n";
    if (!f) throw la::io_error("cannot write '" + out + "'");
  }
  if (!all_ok) std::printf("\nsome rows failed validation (ok = BAD)\n");
  return all_ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "precond_bench: %s\n", e.what());
  return 3;
}
