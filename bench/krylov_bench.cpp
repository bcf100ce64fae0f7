// The non-symmetric methods, time to solution: la's GPU BiCGSTAB and GMRES(30) with each
// preconditioner against the vendor recipe (cusparseSpMV + cuBLAS BiCGSTAB, csrilu02 +
// cusparseSpSV for ILU(0): kernels/detail/vendor/vendor_bicgstab.hpp) and Eigen's BiCGSTAB
// with IncompleteLUT on the host's cores, in one run; double, tol 1e-8, b = A ones, x0 = 0.
// CuPy's gmres is measured by bench/cupy_krylov.py on the same systems.
//
// usage: krylov_bench [--systems LIST] [--methods LIST] [--no-eigen] [--no-vendor]
//                     [--out FILE.csv]
//   LIST (systems): comma-separated .mtx files and gen specs (convdiff2d:N[:PECLET], ...).
//   LIST (methods): of METHOD:PRECOND with METHOD bicgstab, gmres, fgmres or auto and PRECOND
//                   none, jacobi, ilu0[+FACT+SOLVE] (systems.hpp's factor_spec; plain ilu0 is
//                   what `la solve` runs) or auto; default bicgstab and gmres with
//                   none, jacobi and ILU(0) variants, and auto:auto (what `la solve --precond
//                   auto` runs).
//
// Per row: setup (la: everything the call does outside its loop: statistics, kernel choice,
// checks, preconditioner; the vendor's and Eigen's: factorization and analyses), iterations,
// time per iteration, time to solution (the second of two solves; the first warms up) and
// the memory the solve holds beyond A, b and x (la and the vendor: vectors and factors by
// count; Eigen's ILUT factors). ok = 0 marks a row that did not reach the tolerance (true
// residual at most 100x it); on systems up to 300000 rows la's count is also checked
// against the host oracle's (within 10% or 2, `oracle` column).
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <la/kernels/detail/vendor/vendor_bicgstab.hpp>
#include <la/solvers/device_solve.hpp>
#include "systems.hpp"

namespace {
using namespace la;
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

constexpr double rtol = 1e-8;
constexpr index_t oracle_rows = 300000;

struct row_t {
  std::string system, impl, method, precond, detail;
  long long rows = 0, nnz = 0, iterations = 0, oracle = -1;
  double setup_ms = 0, us_per_it = 0, tts_ms = 0, mbytes = 0, true_residual = 0;
  bool ok = false;
};

void print(const row_t& r, std::FILE* f, bool csv) {
  if (csv)
    std::fprintf(f, "%s,%lld,%lld,%s,%s,%s,%.4f,%lld,%.3f,%.4f,%.3f,%.3e,%lld,%d,\"%s\"\n", r.system.c_str(), r.rows,
                 r.nnz, r.impl.c_str(), r.method.c_str(), r.precond.c_str(), r.setup_ms, r.iterations, r.us_per_it,
                 r.tts_ms, r.mbytes, r.true_residual, r.oracle, int(r.ok), r.detail.c_str());
  else
    std::fprintf(f, "%-22s %-7s %-9s %-7s %9.3f %7lld %9.2f %10.3f %8.2f %9.2e %6lld %s %s\n", r.system.c_str(),
                 r.impl.c_str(), r.method.c_str(), r.precond.c_str(), r.setup_ms, r.iterations, r.us_per_it, r.tts_ms,
                 r.mbytes, r.true_residual, r.oracle, r.ok ? "ok" : "FAIL", r.detail.c_str());
  std::fflush(f);
}

row_t run_la(context& ctx, const std::string& name, const csr_matrix<double>& a, const std::vector<double>& b,
             const std::string& method, const std::string& pc) {
  row_t row;
  row.system = name, row.impl = "la", row.method = method, row.precond = pc, row.rows = a.rows(), row.nnz = a.nnz();
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  cg_options o;
  o.rtol = rtol;
  o.method = *parse_method(method);
  std::string pc_name;
  if (!bench::factor_spec(pc, pc_name, o.precond_opt) || !parse_preconditioner(pc_name))
    throw invalid_argument("unknown preconditioner '" + pc + "' (none, jacobi, ilu0[+FACT+SOLVE], auto)");
  o.precond = *parse_preconditioner(pc_name);
  solve_result r;
  device_vector<double> dx;
  for (int rep = 0; rep < 2; ++rep) {
    dx = device_vector<double>();
    ctx.synchronize();
    const auto t0 = clock_type::now();
    r = solve_device(ctx, da, db, dx, o);
    ctx.synchronize();
    row.tts_ms = 1e3 * seconds_since(t0);
  }
  row.iterations = r.iterations;
  row.setup_ms = 1e3 * r.setup_seconds;
  row.us_per_it = r.iterations ? 1e6 * r.iterate_seconds / r.iterations : 0;
  const std::vector<double> x = to_host(ctx, dx);
  row.true_residual = bench::true_residual(a, b, x);
  const double n = a.rows();
  const double vectors = r.solver == krylov_method::bicgstab ? 10 : r.solver == krylov_method::cg ? 6 : 31 + 4 + (r.solver == krylov_method::fgmres ? 30 : 0);
  row.mbytes = (vectors * n * 8 + r.precond.bytes) / 1e6;
  row.method = to_string(r.solver);
  row.precond = pc.find('+') == std::string::npos ? std::string(to_string(r.precond.kind)) : pc;
  row.detail = r.status == solve_status::converged ? r.solver_choice : std::string(to_string(r.status)) + ": " + r.message;
  if (r.precond.kind == preconditioner::ilu0) {
    row.detail += " [" + r.precond.detail;
    try {
      const bench::apply_costs c = bench::measure_costs(ctx, da, preconditioner::ilu0, o.precond_opt);
      char buf[96];
      std::snprintf(buf, sizeof buf, "; setup %.1f (factorization %.1f), apply %.2f SpMVs", c.setup_spmvs, c.factor_spmvs,
                    c.apply_spmvs);
      row.detail += buf;
    } catch (const invalid_argument&) {
    }
    row.detail += "]";
  }
  row.ok = r.converged() && row.true_residual <= 100 * rtol;
  if (a.rows() <= oracle_rows && r.solver != krylov_method::cg &&
      (r.precond.kind != preconditioner::ilu0 || bench::oracle_comparable(o.precond_opt))) {
    std::vector<double> xh;
    cg_options h = o;
    h.method = r.solver, h.precond = r.precond.kind;
    const solve_result hr = solve_host(a, b, xh, h);
    row.oracle = hr.iterations;
    if (row.ok && std::abs(double(hr.iterations - r.iterations)) > std::max(2.0, 0.1 * hr.iterations))
      row.detail += " [iterations differ from the host oracle's by more than 10%]";
  }
  return row;
}

row_t run_vendor(vendor_handles& h, const std::string& name, const csr_matrix<double>& a, const std::vector<double>& b,
                 const std::string& pc) {
  row_t row;
  row.system = name, row.impl = "vendor", row.method = "bicgstab", row.precond = pc, row.rows = a.rows(), row.nnz = a.nnz();
  context& ctx = h.ctx();
  const auto db = to_device(ctx, b);
  device_vector<double> dx(ctx, a.rows());
  vendor_bicgstab_result r;
  for (int rep = 0; rep < 2; ++rep) {
    ctx.synchronize();
    const auto t0 = clock_type::now();
    r = vendor_bicgstab(h, a, db, dx, pc, std::max<std::int64_t>(2 * a.rows(), 20000), rtol);
    row.tts_ms = 1e3 * seconds_since(t0);
  }
  if (!r.factored) {
    row.detail = "csrilu02: " + r.why;
    return row;
  }
  row.setup_ms = 1e3 * r.setup_seconds;
  row.iterations = r.iterations;
  row.us_per_it = r.iterations ? 1e6 * r.iterate_seconds / r.iterations : 0;
  row.true_residual = bench::true_residual(a, b, to_host(ctx, dx));
  row.mbytes = (9.0 * a.rows() * 8 + (pc == "ilu0" ? a.nnz() * 12.0 : 0)) / 1e6;
  row.ok = r.converged && row.true_residual <= 100 * rtol;
  if (!row.ok) row.detail = "stopped at ||r||/||b|| = " + short_number(r.residual);
  return row;
}

row_t run_eigen(const std::string& name, const csr_matrix<double>& a, const std::vector<double>& b) {
  row_t row;
  row.system = name, row.impl = "eigen", row.method = "bicgstab", row.precond = "ilut", row.rows = a.rows(), row.nnz = a.nnz();
  const Eigen::SparseMatrix<double, Eigen::RowMajor> m = bench::to_eigen(a);
  Eigen::BiCGSTAB<Eigen::SparseMatrix<double, Eigen::RowMajor>, Eigen::IncompleteLUT<double>> s;
  s.setTolerance(rtol);
  s.setMaxIterations(std::max<long>(2 * a.rows(), 20000));
  const auto t0 = clock_type::now();
  s.compute(m);
  row.setup_ms = 1e3 * seconds_since(t0);
  if (s.info() != Eigen::Success) {
    row.detail = "IncompleteLUT failed";
    return row;
  }
  const Eigen::VectorXd eb = Eigen::Map<const Eigen::VectorXd>(b.data(), a.rows());
  const auto t1 = clock_type::now();
  const Eigen::VectorXd ex = s.solve(eb);
  const double it = seconds_since(t1);
  row.tts_ms = row.setup_ms + 1e3 * it;
  row.iterations = s.iterations();
  row.us_per_it = row.iterations ? 1e6 * it / row.iterations : 0;
  row.true_residual = bench::true_residual(a, b, std::vector<double>(ex.data(), ex.data() + ex.size()));
  row.detail = std::to_string(Eigen::nbThreads()) + " threads, default drop tolerance and fill";
  row.ok = s.info() == Eigen::Success && row.true_residual <= 100 * rtol;
  return row;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string systems = "convdiff2d:256,convdiff2d:1024,convdiff3d:64,convdiff3d:128,data/adder_dcop_05.mtx,"
                        "data/ca-GrQc.mtx,bench/data-large/fidapex6.mtx,bench/data-large/arrow.mtx";
  std::string methods =
      "bicgstab:none,bicgstab:jacobi,bicgstab:ilu0+exact+exact,bicgstab:ilu0+sweeps+isai,bicgstab:ilu0+sweeps+jacobi,"
      "bicgstab:ilu0,gmres:none,gmres:jacobi,gmres:ilu0,auto:auto";
  std::string out;
  bool eigen = true, vendor = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--systems") systems = bench::option_value(argc, argv, i);
    else if (a == "--methods") methods = bench::option_value(argc, argv, i);
    else if (a == "--out") out = bench::option_value(argc, argv, i);
    else if (a == "--no-eigen") eigen = false;
    else if (a == "--no-vendor") vendor = false;
    else throw invalid_argument("unknown option " + a);
  }
  std::FILE* csv = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (csv)
    std::fprintf(csv, "system,rows,nnz,impl,method,precond,setup_ms,iterations,us_per_it,tts_ms,mbytes,true_residual,"
                      "oracle_iterations,ok,detail\n");
  context ctx;
  vendor_handles h(ctx);
  std::printf("%-22s %-7s %-9s %-7s %9s %7s %9s %10s %8s %9s %6s\n", "system", "impl", "method", "precond",
              "setup_ms", "its", "us/it", "tts_ms", "MB", "true_res", "oracle");
  for (const std::string& spec : bench::split(systems)) {
    const csr_matrix<double> a = bench::load<double>(spec);
    std::vector<double> b(a.rows(), 0.0);
    reference::spmv(1.0, a, std::vector<double>(a.rows(), 1.0), 0.0, b);
    const std::string name = bench::system_name(spec);
    auto emit = [&](const row_t& r) {
      print(r, stdout, false);
      if (csv) print(r, csv, true);
    };
    for (const std::string& mp : bench::split(methods)) {
      const std::size_t c = mp.find(':');
      emit(run_la(ctx, name, a, b, mp.substr(0, c), mp.substr(c + 1)));
    }
    if (vendor)
      for (const char* pc : {"none", "jacobi", "ilu0"}) emit(run_vendor(h, name, a, b, pc));
    if (eigen && a.rows() <= 100000) emit(run_eigen(name, a, b));  // ILUT took 44 s at 262K rows
  }
  if (csv) std::fclose(csv);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "krylov_bench: %s\n", e.what());
  return 1;
}
