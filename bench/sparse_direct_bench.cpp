// The sparse direct solver against the C and C++ libraries people use, in one process: la's
// GPU multifrontal LU (where a GPU is present), la's host multifrontal LU (the direct method
// with --device cpu), CHOLMOD's supernodal Cholesky (SPD systems) and UMFPACK's LU (where
// CMake found SuiteSparse's), Eigen's SimplicialLLT (SPD) and SparseLU (COLAMD). For each:
// analysis (symbolic), factorization and solve seconds, the factor's nonzeros where the
// library says, and the relative residual ||b - Ax|| / ||b|| (b = A * ones), checked: a row
// above 1e-10 says MISS, and any miss (la's or a peer's) makes the exit status 1. The BLAS the
// SuiteSparse peers ran on, and its threads, is printed last (OpenBLAS names itself).
//
//   sparse_direct_bench [--systems LIST] [--out FILE.csv] [--threads N] [--solvers LIST]
//     --solvers: comma-separated, of la-gpu, la-gpu-one-stream (front_streams = 0: a level's
//     blocked fronts one after another), la-host, la-default, eigen, cholmod, umfpack (default
//     all that were built but la-gpu-one-stream; one-thread Eigen and UMFPACK take minutes on
//     the 3D grids).
//     LIST: comma-separated .mtx files and generated specs (poisson2d:N, poisson3d:N,
//     convdiff2d:N, ...); default the SPD and general systems of data/ and 2D Poisson 300^2.
// The SuiteSparse libraries run on the BLAS they were linked with (Debian's: the reference
// BLAS unless OpenBLAS is installed; the set-up installs OpenBLAS); Eigen on one thread.
// "la host" is la's own fronts on the host's threads; "la host default" the direct method as
// --device cpu runs it (SuiteSparse where built).
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#if defined(LA_BENCH_HAVE_CHOLMOD)
#include <cholmod.h>
#endif
#if defined(LA_BENCH_HAVE_UMFPACK)
#include <umfpack.h>
#endif

#include <la/context.hpp>
#include <la/formats/convert.hpp>
#include <la/parallel.hpp>
#include <la/solvers/direct/detail/suitesparse.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

#include "systems.hpp"

using namespace la;

namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

struct row {
  std::string system, solver;
  index_t n = 0;
  double analyze = 0, factor = 0, solve = 0, relres = 0, factor_nnz = 0;
  std::string note;
};

double relres(const csr_matrix<double, count_t>& a, const std::vector<double>& b, const std::vector<double>& x) {
  long double r2 = 0, b2 = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    long double s = b[static_cast<std::size_t>(i)];
    for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) s -= static_cast<long double>(a.values()[p]) * x[a.col_idx()[p]];
    r2 += s * s, b2 += static_cast<long double>(b[static_cast<std::size_t>(i)]) * b[static_cast<std::size_t>(i)];
  }
  return static_cast<double>(std::sqrt(r2 / (b2 > 0 ? b2 : 1)));
}

}  // namespace

int main(int argc, char** argv) {
  std::string systems, out = "sparse_direct.csv", solvers = ",la-gpu,la-host,la-default,eigen,cholmod,umfpack,";
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--systems" && i + 1 < argc) systems = argv[++i];
    else if (s == "--out" && i + 1 < argc) out = argv[++i];
    else if (s == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (s == "--solvers" && i + 1 < argc) solvers = "," + std::string(argv[++i]) + ",";
    else {
      std::fprintf(stderr, "usage: sparse_direct_bench [--systems LIST] [--out FILE.csv] [--threads N] [--solvers LIST]\n");
      return 2;
    }
  }
  if (systems.empty()) {
    const std::string d = LA_DATA_DIR;
    for (const char* f : {"bcsstk09.mtx", "bcsstk21.mtx", "1138_bus.mtx", "gr_30_30.mtx", "Trefethen_2000.mtx", "west2021.mtx",
                          "rajat19.mtx", "adder_dcop_05.mtx"})
      systems += d + "/" + f + ",";
    systems += "poisson2d:300";
  }
  const bool gpu = cuda_available();
  std::unique_ptr<context> ctx;
  if (gpu) ctx = std::make_unique<context>();
  std::vector<row> rows;
  std::printf("%-22s %-28s %8s %9s %9s %9s %10s %9s\n", "system", "solver", "rows", "analyze", "factor", "solve", "nnz(L)", "relres");
  for (const std::string& spec : bench::split(systems)) {
    const csr_matrix<double, count_t> a = to_csr<count_t>(bench::load<double>(spec));
    if (a.rows() != a.cols()) continue;
    const index_t n = a.rows();
    const std::string name = spec.substr(spec.find_last_of('/') + 1);
    std::vector<double> ones(static_cast<std::size_t>(n), 1.0), b(ones.size(), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) b[static_cast<std::size_t>(i)] += a.values()[p];
    const bool spd = properties_of(a, false, true).looks_spd();  // CHOLMOD and SimplicialLLT where A looks SPD
    auto add = [&](row r) {
      r.system = name, r.n = n;
      std::printf("%-22s %-28s %8d %9.4f %9.4f %9.4f %10.3g %9.1e%s %s\n", name.c_str(), r.solver.c_str(), static_cast<int>(n),
                  r.analyze, r.factor, r.solve, r.factor_nnz, r.relres, r.relres <= 1e-10 ? "" : " MISS", r.note.c_str());
      std::fflush(stdout);
      rows.push_back(std::move(r));
    };
    auto use = [&](const char* what) { return solvers.find(std::string(",") + what + ",") != std::string::npos; };
    for (const char* variant : {"la-gpu", "la-gpu-one-stream"}) {
    if (gpu && use(variant)) {  // la on the GPU, the analysis apart from the factorization
      row r;
      const bool one_stream = std::string(variant) == "la-gpu-one-stream";
      r.solver = one_stream ? "la GPU multifrontal 1 stream" : "la GPU multifrontal";
      try {
        auto t0 = clock_type::now();
        sparse_direct_options so;
        if (one_stream) so.front_streams = 0;
        sparse_direct_solver s(*ctx, a, so);
        r.analyze = since(t0);
        t0 = clock_type::now();
        s.factor();
        r.factor = since(t0);
        std::vector<double> x = b;
        t0 = clock_type::now();
        sparse_direct_report sr;
        if (s.ok()) sr = s.solve(x);
        r.solve = since(t0);
        r.relres = s.ok() ? relres(a, b, x) : INFINITY;
        if (s.ok()) {  // the same solve again: what a kept factor's later solves take
          std::vector<double> x2 = b;
          t0 = clock_type::now();
          s.solve(x2);
          const double again = since(t0);
          device_vector<double> db = to_device(*ctx, b);  // and with b on the device: no copies to and from the host
          ctx->synchronize();
          t0 = clock_type::now();
          s.solve(db);
          const double on_device = since(t0);
          char buf[160];
          std::snprintf(buf, sizeof buf, "solve again %.4f s, device b %.4f s (%d refinement step%s)", again, on_device,
                        sr.refinement_steps, sr.refinement_steps == 1 ? "" : "s");
          r.note = buf;
        }
        r.factor_nnz = static_cast<double>(s.analysis().factor_nnz);
      } catch (const std::exception& e) {
        r.relres = INFINITY, r.note = e.what();
      }
      add(r);
    }
    }
    // la's direct method on the host (the whole call: analysis, factorization, solve with
    // refinement): "la-host" on la's own fronts (the host's threads), "la-default" with the
    // defaults (SuiteSparse's CHOLMOD or UMFPACK where built, as --device cpu takes them).
    for (const char* which : {"la-host", "la-default"}) {
      if (!use(which)) continue;
      row r;
      const bool own = std::string(which) == "la-host";
      r.solver = own ? "la host" : "la host default";
      cg_options o;
      o.method = krylov_method::direct;
      o.rtol = 1e-12;
      if (own) o.direct.host_factor = host_factorization::la;
      std::vector<double> x(b.size(), std::nan(""));  // poisoned: an unwritten entry misses
      const auto t0 = clock_type::now();
      const solve_result res = solve_host(a, b, x, o);
      const double whole = since(t0);  // the call: the checks, the condition estimate and the report included
      r.factor = res.setup_seconds, r.solve = whole - res.setup_seconds;
      r.relres = x.empty() ? INFINITY : relres(a, b, x);
      r.note = std::to_string(thread_count(threads)) + " threads" +
               (own ? std::string() : "; " + res.message.substr(res.message.find("; ") + 2, 90));
      add(r);
    }
    // Eigen: SimplicialLLT for SPD, SparseLU (COLAMD) for the rest; one thread.
    if (use("eigen")) {
      Eigen::SparseMatrix<double> m(n, n);
      std::vector<Eigen::Triplet<double>> tr;
      tr.reserve(a.values().size());
      for (index_t i = 0; i < n; ++i)
        for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) tr.emplace_back(i, a.col_idx()[p], a.values()[p]);
      m.setFromTriplets(tr.begin(), tr.end());
      m.makeCompressed();
      Eigen::Map<const Eigen::VectorXd> eb(b.data(), n);
      row r;
      auto run = [&](auto& solver, const char* what) {
        r.solver = what;
        auto t0 = clock_type::now();
        solver.analyzePattern(m);
        r.analyze = since(t0);
        t0 = clock_type::now();
        solver.factorize(m);
        r.factor = since(t0);
        t0 = clock_type::now();
        const Eigen::VectorXd x = solver.solve(eb);
        r.solve = since(t0);
        r.relres = solver.info() == Eigen::Success ? relres(a, b, std::vector<double>(x.data(), x.data() + n)) : INFINITY;
      };
      if (spd) {
        Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> llt;
        run(llt, "Eigen SimplicialLLT");
      } else {
        Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> lu;
        run(lu, "Eigen SparseLU (COLAMD)");
      }
      add(r);
    }
    // The CSC arrays SuiteSparse takes (32-bit).
    const csc_matrix<double, count_t> c = to_csc<count_t>(a);
    std::vector<int> cp(c.col_ptr().begin(), c.col_ptr().end()), ci(c.row_idx().begin(), c.row_idx().end());
#if defined(LA_BENCH_HAVE_CHOLMOD)
    if (spd && use("cholmod")) {
      row r;
      r.solver = "CHOLMOD supernodal";
      cholmod_common cm;
      cholmod_start(&cm);
      cm.supernodal = CHOLMOD_SUPERNODAL;
      cholmod_sparse* A = cholmod_allocate_sparse(static_cast<size_t>(n), static_cast<size_t>(n), c.values().size(), 1, 1, 1,
                                                  CHOLMOD_REAL, &cm);  // stype 1: the upper triangle is read
      std::copy(cp.begin(), cp.end(), static_cast<int*>(A->p));
      std::copy(ci.begin(), ci.end(), static_cast<int*>(A->i));
      std::copy(c.values().begin(), c.values().end(), static_cast<double*>(A->x));
      auto t0 = clock_type::now();
      cholmod_factor* L = cholmod_analyze(A, &cm);
      r.analyze = since(t0);
      t0 = clock_type::now();
      cholmod_factorize(A, L, &cm);
      r.factor = since(t0);
      cholmod_dense* B = cholmod_allocate_dense(static_cast<size_t>(n), 1, static_cast<size_t>(n), CHOLMOD_REAL, &cm);
      std::copy(b.begin(), b.end(), static_cast<double*>(B->x));
      t0 = clock_type::now();
      cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &cm);
      r.solve = since(t0);
      const double* xp = static_cast<const double*>(X->x);
      r.relres = relres(a, b, std::vector<double>(xp, xp + n));
      r.factor_nnz = cm.lnz;
      cholmod_free_dense(&X, &cm), cholmod_free_dense(&B, &cm), cholmod_free_factor(&L, &cm), cholmod_free_sparse(&A, &cm);
      cholmod_finish(&cm);
      add(r);
    }
#endif
#if defined(LA_BENCH_HAVE_UMFPACK)
    if (use("umfpack")) {
      row r;
      r.solver = "UMFPACK";
      void *sym = nullptr, *num = nullptr;
      double info[UMFPACK_INFO];
      auto t0 = clock_type::now();
      int st = umfpack_di_symbolic(n, n, cp.data(), ci.data(), c.values().data(), &sym, nullptr, info);
      r.analyze = since(t0);
      t0 = clock_type::now();
      if (st == UMFPACK_OK) st = umfpack_di_numeric(cp.data(), ci.data(), c.values().data(), sym, &num, nullptr, info);
      r.factor = since(t0);
      std::vector<double> x(static_cast<std::size_t>(n));
      t0 = clock_type::now();
      if (st == UMFPACK_OK) st = umfpack_di_solve(UMFPACK_A, cp.data(), ci.data(), c.values().data(), x.data(), b.data(), num, nullptr, info);
      r.solve = since(t0);
      r.relres = st == UMFPACK_OK ? relres(a, b, x) : INFINITY;
      r.factor_nnz = info[UMFPACK_LNZ] + info[UMFPACK_UNZ];
      if (st != UMFPACK_OK) r.note = "status " + std::to_string(st);
      if (num) umfpack_di_free_numeric(&num);
      if (sym) umfpack_di_free_symbolic(&sym);
      add(r);
    }
#endif
  }
  // Every answer timed was checked (relres <= 1e-10): a miss, la's or a peer's, fails the run.
  int misses = 0;
  for (const row& r : rows)
    if (!(r.relres <= 1e-10)) ++misses, std::printf("MISS: %s %s (relres %.2g)\n", r.system.c_str(), r.solver.c_str(), r.relres);
  std::printf("BLAS: %s (CHOLMOD's and UMFPACK's dense blocks)\n", direct_detail::blas_description().c_str());
  std::ofstream f(out);
  f << "system,rows,solver,analyze_s,factor_s,solve_s,factor_nnz,relres,note\n";
  for (const row& r : rows)
    f << r.system << ',' << r.n << ',' << r.solver << ',' << r.analyze << ',' << r.factor << ',' << r.solve << ','
      << r.factor_nnz << ',' << r.relres << ",\"" << r.note << "\"\n";
  return misses ? 1 : 0;
}
