// The direct method (`--method direct`, method='direct'). double: the sparse direct solver's
// multifrontal LU (sparse_direct_solver.hpp; no pivoting where A looks SPD, static pivoting
// after a max-product matching otherwise), on the GPU or on the host's threads
// (sparse_direct/detail/fronts.hpp); float: on the host the up-looking sparse Cholesky or LU
// (sparse_analysis.hpp), on the GPU A's dense form (la::dense_solver). Where the sparse LU
// cannot start or misses after refinement, A's dense form by LU with partial pivoting
// (dense_host.hpp, dense_device.cu) where it fits. Refined with residuals of the sparse A in
// wider precision, reported with the backward error and (but for the GPU's sparse LU) a
// condition estimate. Exit 0 means ||b - A x|| met the tolerance, as for every method; a
// singular A is a breakdown naming the column.
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/device_convert.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/memory.hpp>
#include <la/solvers/direct/dense_host.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>
#include <la/parallel.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la {
namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

/// r = b - A x in wider_t; returns ||r||_2 (and ||r||_inf in rinf).
template <typename T>
double residual(const csr_matrix<T, count_t>& a, const std::vector<T>& b, const std::vector<T>& x, std::vector<T>& r,
                double& rinf) {
  using W = wider_t<T>;
  W s2 = 0;
  rinf = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    W s = b[static_cast<std::size_t>(i)];
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s -= static_cast<W>(a.values()[k]) * x[a.col_idx()[k]];
    r[static_cast<std::size_t>(i)] = static_cast<T>(s);
    s2 += s * s;
    rinf = std::max(rinf, static_cast<double>(std::abs(s)));
  }
  return static_cast<double>(std::sqrt(s2));
}

/// A solution with entries outside T's range: the result says so (non_finite), or empty.
template <typename T>
bool solution_out_of_range(const std::vector<T>& x, solve_result& r, double seconds) {
  const std::string bad = detail::first_non_finite(x, "solution");
  if (bad.empty()) return false;
  r.status = solve_status::non_finite;
  r.iterate_seconds = seconds;
  r.message = "x = A^-1 b does not fit in the working precision (" + bad + "); scale b (or A) towards 1";
  return true;
}

/// The direct method's verdict: converged where ||b - Ax|| met the tolerance, else the
/// precision limit, with the factorization's report.
void set_outcome(solve_result& r, bool met, const std::string& report) {
  if (met) {
    r.status = solve_status::converged;
    r.message = "||b - Ax|| <= max(rtol*||b||, atol); " + report;
  } else {
    r.status = solve_status::precision_limit;
    r.message = "||b - Ax|| / ||b|| = " + short_number(r.residual) + " misses the tolerance after refinement; " + report +
                " (the tolerance is below what the precision resolves for this condition)";
  }
}

template <typename T>
double inf_norm(const std::vector<T>& v) {
  double m = 0;
  for (const T& x : v) m = std::max(m, std::abs(static_cast<double>(x)));
  return m;
}

template <typename T>
solve_result direct_host(const csr_matrix<T, count_t>& a, const std::vector<T>& b, std::vector<T>& x,
                         const cg_options& o) {
  const auto t0 = clock_type::now();
  solve_result r;
  r.solver = krylov_method::direct;
  const index_t n = a.rows();
  r.method = "direct, host";
  r.true_residual = std::nan("");
  if (b.size() != static_cast<std::size_t>(n) || (!x.empty() && x.size() != b.size())) {
    r.message = "right-hand side has " + std::to_string(b.size()) + " entries and the initial guess " +
                std::to_string(x.size()) + ", matrix has " + std::to_string(n) + " rows";
    return r;
  }
  for (const std::string& why : {detail::first_non_finite(a.values(), "matrix"), detail::first_non_finite(b, "right-hand side")})
    if (!why.empty()) {
      r.status = solve_status::non_finite;
      r.message = why;
      return r;
    }
  // The factorization: where A looks SPD (symmetric values, positive diagonal), the sparse
  // Cholesky of issue 57's analysis (a fill-reducing ordering, sparse_analysis.hpp); else (or
  // where a pivot is not positive) the sparse LU with static pivoting (a max-product matching
  // and scalings, the analysis of the matched matrix, tiny pivots perturbed), refined; where
  // that misses (backward error above 1e-13 after refinement) and A's dense form fits, the
  // dense LU with partial pivoting.
  const matrix_properties props = properties_of(a, false, true);
  const double bn = [&] {
    double s = 0;
    for (const T& v : b) s += static_cast<double>(v) * v;
    return std::sqrt(s);
  }();
  double ainf = 0;
  std::vector<double> col(static_cast<std::size_t>(n), 0);
  for (index_t i = 0; i < n; ++i) {
    double s = 0;
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const double v = std::abs(static_cast<double>(a.values()[k]));
      s += v, col[static_cast<std::size_t>(a.col_idx()[k])] += v;
    }
    ainf = std::max(ainf, s);
  }
  sparse_analysis sa;
  sparse_cholesky<T> sl;
  sparse_lu<T> su;
  dense_matrix<T> f;
  std::vector<index_t> piv;
  enum class kind { sparse_cholesky, sparse_lu, dense_lu } used = kind::dense_lu;
  std::string how;
  // double: the multifrontal factorization of the GPU's solver, on the host's threads
  // (sparse_direct/detail/fronts.hpp; 5x the up-looking oracle's speed on one thread); float:
  // the up-looking sparse Cholesky and LU.
  sparse_detail::front_symbols fs;
  std::vector<double> fronts_f;
  const int threads = thread_count();
  auto sparse_solve = [&](T* v) {
    if constexpr (std::is_same_v<T, double>) solve_fronts_host(fs, fronts_f, v);
    else if (used == kind::sparse_cholesky) sl.solve(v);
    else su.solve(v);
  };
  auto solve = [&](T* v) {
    if (used == kind::dense_lu) lu_solve(f, piv, v);
    else sparse_solve(v);
  };
  auto solve_t = [&](T* v) {  // the fronts' transposed solve (double); float: A^T = A where it looks SPD
    if constexpr (std::is_same_v<T, double>) {
      if (used != kind::dense_lu) return solve_fronts_host(fs, fronts_f, v, true);
    }
    if (used == kind::sparse_cholesky) sparse_solve(v);
    else lu_transpose_solve(f, piv, v);
  };
  // The fronts of A (matched or not) factored on the host's threads: their symbols' memory
  // checked first; bad: the first column without a positive pivot (A taken as SPD).
  index_t fronts_bad = 0, fronts_perturbed = 0;
  // One thread below 1e6 multiply-adds: starting the others costs more there (bcsstk02, 66 rows:
  // 0.34 ms on one thread, 0.50 on two or sixteen, the 2-core host).
  auto fronts_threads = [&] { return fs.an.factor_flops < 1e6 ? 1 : threads; };
  auto fronts_factor = [&](const auto& aa) {
    check_host_memory(8.0 * double(fs.front_total) + 16.0 * double(fs.vec_total),
                      "the sparse factorization's fronts (" + fs.an.summary() + ")");
    fronts_f = sparse_detail::factor_fronts_threaded(fs, aa.values(), fronts_threads(), fronts_perturbed, fronts_bad);
  };
  auto fronts_summary = [&] {
    const int t = fronts_threads();
    return fs.an.summary() + ", " + std::to_string(fs.f_m.size()) + " fronts, " + std::to_string(t) + " thread" + (t == 1 ? "" : "s");
  };
  std::vector<T> res(b.size());
  double rinf = 0, rn = 0;
  int steps = 0;
  // x = A^-1 b refined: x += A^-1 (b - A x), the residual in wider_t, while it halves.
  auto solve_and_refine = [&](int max_steps) {
    x = b;
    solve(x.data());
    rn = residual(a, b, x, res, rinf);
    for (steps = 0; steps < max_steps && rn > 0; ++steps) {
      std::vector<T> y = x, d = res;
      solve(d.data());
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += d[i];
      double yinf = 0;
      std::vector<T> ry(b.size());
      const double yn = residual(a, b, y, ry, yinf);
      if (!(yn < 0.5 * rn)) break;
      x = std::move(y), res = std::move(ry), rn = yn, rinf = yinf;
    }
  };
  // double's fronts: refined as la::sparse_direct_solver's solve is (classical, then
  // GMRES-based where classical stalls: static pivots can leave the factors too far from A
  // for classical refinement), the residual in long double.
  int gmres_iterations = 0;
  auto fronts_refine = [&] {
    if constexpr (std::is_same_v<T, double>) {
      sparse_direct_options so;
      sparse_detail::host_refinement work(a, ainf, fs, fronts_f, so);
      const sparse_direct_report rep = work.solve(b.data(), x);
      steps = rep.refinement_steps, gmres_iterations = rep.gmres_iterations;
      rn = residual(a, b, x, res, rinf);
    }
  };
  auto backward_error = [&] { return rinf / (ainf * inf_norm(x) + inf_norm(b)); };
  std::string before;  // what a first attempt did, where the dense LU took over
  const double rate = 1e9 * threads;  // the host's flop rate, for the ordering's choice
  if (props.looks_spd()) {
    if constexpr (std::is_same_v<T, double>) {
      fs = sparse_detail::build_fronts(a, false, fill_ordering::automatic, rate, o.spd_analysis.get());
      fronts_factor(a);
      if (fronts_bad == 0) used = kind::sparse_cholesky, how = "multifrontal sparse L D L^T without pivoting, A looks SPD (" + fronts_summary() + ")";
      else before = "the L D L^T without pivoting met a pivot that is not positive in column " + std::to_string(fronts_bad) + "; ";
    } else {
      sa = analyze_pattern(a, fill_ordering::automatic, rate);
      check_host_memory(sa.factor_bytes + 8.0 * n, "the sparse Cholesky factor (" + sa.summary() + ")");
      sl = sparse_cholesky_host(a, sa);
      sl.analysis = &sa;
      if (sl.ok()) used = kind::sparse_cholesky, how = "sparse Cholesky (" + sa.summary() + ")";
      else before = "Cholesky met a pivot that is not positive in column " + std::to_string(sl.bad_column) + "; ";
    }
  }
  bool matching_gave_up = false;
  index_t singular_column = 0;
  if (used != kind::sparse_cholesky) {
    // The matching's search budget (a pattern its paths wander): a zero-free diagonal needs no
    // matching, static pivoting on the rows as they are.
    auto lu = [&](bool match) {
      if constexpr (std::is_same_v<T, double>) {
        fs = sparse_detail::build_fronts(a, match, fill_ordering::automatic, rate);
        fs.spd = false;
        singular_column = fs.singular;
        if (!singular_column) fronts_factor(a);
      } else {
        su = sparse_lu_host(a, fill_ordering::automatic, match);
        singular_column = su.singular_column;
      }
    };
    try {
      lu(true);
    } catch (const invalid_argument&) {
      if (props.diag_zero == 0) {
        lu(false);
        before += "the row matching gave up on this pattern (A's diagonal is zero-free: rows kept), ";
      } else {
        matching_gave_up = true;
        before += "the sparse LU's row matching gave up on this pattern, so ";
      }
    }
  }
  if (used != kind::sparse_cholesky && !matching_gave_up) {
    if (singular_column) {
      r.status = solve_status::breakdown;
      r.setup_seconds = since(t0);
      r.message = "A is singular: structurally, no ordering of its rows puts a nonzero on the diagonal of column " +
                  std::to_string(singular_column) + " (a maximum matching of rows to columns leaves it out)";
      return r;
    }
    used = kind::sparse_lu;
    if constexpr (std::is_same_v<T, double>)
      how = before + "multifrontal sparse LU with static pivoting (" + fronts_summary() + ", " +
            std::to_string(fronts_perturbed) + " pivots perturbed)";
    else
      how = before + "sparse LU with static pivoting (" + su.analysis.summary() + ", " + std::to_string(su.perturbed) +
            " pivots perturbed)";
  }
  r.method = std::string("direct, host, ") +
             (used == kind::sparse_cholesky ? (std::is_same_v<T, double> ? "sparse L D L^T " : "sparse Cholesky ")
                                            : "sparse LU ") +
             std::to_string(n) + " x " + std::to_string(n);
  r.setup_seconds = since(t0);
  const auto t1 = clock_type::now();
  if (!matching_gave_up) {
    if (std::is_same_v<T, double>) fronts_refine();
    else solve_and_refine(used == kind::sparse_lu ? 10 : 3);
  }
  const double target = std::max(o.rtol * bn, o.atol);
  if (matching_gave_up || (used == kind::sparse_lu && !(rn <= target && backward_error() <= 1e-13))) {
    // Static pivoting fell short (or could not start): the dense LU with partial pivoting, where it fits.
    const double need = 2.0 * double(n) * double(n) * sizeof(T);
    if (matching_gave_up) check_host_memory(need, "the direct solve (A's dense form and its factors)");
    if (need <= 0.5 * static_cast<double>(host_memory_available())) {
      if (!matching_gave_up)
        before += "sparse LU with static pivoting reached backward error " + short_number(backward_error()) +
                  " after " + std::to_string(steps) + " refinement steps, so ";
      f = to_dense(a);
      const dense_factor_status st = lu_factor(f, piv);
      if (!st.ok()) {
        r.status = solve_status::breakdown;
        r.setup_seconds = since(t0);
        r.message = "A is singular: " + before + "LU with partial pivoting finds no nonzero pivot in column " +
                    std::to_string(st.bad_column) + " (every entry at or below the diagonal there is zero after the earlier eliminations)";
        return r;
      }
      used = kind::dense_lu;
      how = before + "LU with partial pivoting of A's dense form";
      r.method = "direct, host, dense " + std::to_string(n) + " x " + std::to_string(n);
      solve_and_refine(3);
    }
  }
  if (solution_out_of_range(x, r, since(t1))) return r;
  // ||A||_1 from the sparse A; the condition estimate from the factors (the transposed
  // solves need the dense LU's or the Cholesky's: for the sparse LU, ||A^-1||_1 from the
  // solves alone is not estimated, and the report says so).
  const double a1 = col.empty() ? 0 : *std::max_element(col.begin(), col.end());
  const double cond = used == kind::sparse_lu && !std::is_same_v<T, double> ? std::nan("")
                                                                             : a1 * inverse_norm1_estimate<T>(n, solve, solve_t);
  const double backward = backward_error();
  r.iterate_seconds = since(t1);
  r.iterations = steps;
  r.residual = r.true_residual = bn > 0 ? rn / bn : 0;
  const std::string report = how + ", " + std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") +
                             (gmres_iterations > 0 && used != kind::dense_lu
                                  ? " (GMRES-based, " + std::to_string(gmres_iterations) + " GMRES iterations)"
                                  : "") +
                             ": backward error " + short_number(bn > 0 ? backward : 0) +
                             (std::isnan(cond) ? std::string(", condition not estimated (float's sparse LU)")
                                               : ", condition estimate " + short_number(cond));
  set_outcome(r, rn <= target, report);
  return r;
}

template <typename T, typename O>
solve_result direct_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                           const cg_options& o) {
  const auto t0 = clock_type::now();
  solve_result r;
  r.solver = krylov_method::direct;
  const index_t n = a.rows();
  r.method = "direct, gpu, dense " + std::to_string(n) + " x " + std::to_string(n);
  r.true_residual = std::nan("");
  if (b.size() != n || (x.size() != 0 && x.size() != b.size())) {
    r.message = "right-hand side has " + std::to_string(b.size()) + " entries and the initial guess " +
                std::to_string(x.size()) + ", matrix has " + std::to_string(n) + " rows";
    return r;
  }
  std::vector<T> hb(static_cast<std::size_t>(n));
  if (n > 0)
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), b.data(), sizeof(T) * n, cudaMemcpyDeviceToHost, ctx.stream()));
  ctx.synchronize();
  if (const std::string why = detail::first_non_finite(hb, "right-hand side"); !why.empty()) {
    r.status = solve_status::non_finite;
    r.message = why;
    return r;
  }
  // double: the sparse direct solver first (supernodal multifrontal LU on the GPU); where it
  // cannot start (the matching gives up on a pattern with zeros on the diagonal) or misses
  // (relative residual or backward error after refinement), A's dense form where it fits.
  std::string before;
  if constexpr (std::is_same_v<T, double>) {
    const csr_matrix<double, count_t> ha = to_csr<count_t>(to_host(ctx, a));
    try {
      sparse_direct_solver sd(ctx, ha);
      sd.factor();
      r.method = "direct, gpu, sparse " + std::to_string(n) + " x " + std::to_string(n);
      if (!sd.ok()) {
        r.status = solve_status::breakdown;
        r.setup_seconds = since(t0);
        r.message = "A is singular: " +
                    std::string(sd.matched() ? "structurally, no ordering of its rows puts a nonzero on the diagonal of column "
                                             : "a pivot that is not positive in column ") +
                    std::to_string(sd.singular_column()) +
                    (sd.matched() ? " (a maximum matching of rows to columns leaves it out)" : "");
        return r;
      }
      r.setup_seconds = since(t0);
      const auto t1 = clock_type::now();
      if (x.size() != n) x = device_vector<T>(ctx, n);
      if (n > 0) LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(T) * n, cudaMemcpyDeviceToDevice, ctx.stream()));
      const sparse_direct_report rep = sd.solve(x);
      const double bn = std::sqrt([&] {
        double v = 0;
        for (const T& e : hb) v += static_cast<double>(e) * e;
        return v;
      }());
      const bool met = rep.relative_residual * bn <= std::max(o.rtol * bn, o.atol) && rep.backward_error <= 1e-13;
      const double dense_bytes = 3.0 * double(n) * n * sizeof(T);
      std::size_t free_b = 0, total_b = 0;
      LA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
      if (met || dense_bytes > 0.5 * static_cast<double>(free_b)) {
        std::vector<T> hx(static_cast<std::size_t>(n));
        if (n > 0) LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), x.data(), sizeof(T) * n, cudaMemcpyDeviceToHost, ctx.stream()));
        ctx.synchronize();
        if (solution_out_of_range(hx, r, since(t1))) return r;
        r.iterate_seconds = since(t1);
        r.iterations = rep.refinement_steps;
        r.residual = r.true_residual = rep.relative_residual;
        const std::string report = sd.description() + " (" + sd.analysis().summary() + "; analysis and fronts " +
                                   short_number(sd.analyze_seconds()) + " s, factorization " +
                                   short_number(sd.factor_seconds()) + " s, solve " + short_number(rep.seconds) + " s), " + std::to_string(rep.refinement_steps) +
                                   " refinement step" + (rep.refinement_steps == 1 ? "" : "s") + ": backward error " +
                                   short_number(rep.backward_error) + ", " + std::to_string(sd.perturbed()) +
                                   " pivots perturbed, condition not estimated (the GPU's sparse LU has no transposed solve yet)";
        set_outcome(r, rep.relative_residual * bn <= std::max(o.rtol * bn, o.atol), report);
        return r;
      }
      before = "the sparse LU reached relative residual " + short_number(rep.relative_residual) + " (backward error " +
               short_number(rep.backward_error) + "), so ";
    } catch (const invalid_argument& e) {
      before = std::string("the sparse LU could not start (") + e.what() + "), so ";
    }
    r.method = "direct, gpu, dense " + std::to_string(n) + " x " + std::to_string(n);
  }
  // A's dense form (n^2), its copy in the solver and the padded factors: refused up front
  // in the direct method's words when they cannot fit.
  const index_t padded = (n + 63) / 64 * 64;
  check_device_memory(ctx, (2.0 * double(n) * n + double(padded) * padded) * sizeof(T),
                      "the direct solve (A's dense form, its copy and the factors, " + std::to_string(n) + " x " +
                          std::to_string(n) + ")");
  std::unique_ptr<dense_solver<T>> s;
  {
    device_dense<T> d = to_dense(ctx, a);
    try {
      s = std::make_unique<dense_solver<T>>(ctx, d);
    } catch (const invalid_argument& e) {
      r.status = solve_status::non_finite;
      r.message = std::string("the matrix: ") + e.what();
      return r;
    }
  }
  r.method += ", " + s->description();
  if (!s->ok()) {
    r.status = solve_status::breakdown;
    r.setup_seconds = since(t0);
    r.message = "A is singular: " + before + std::string(s->cholesky() ? "Cholesky" : "LU with partial pivoting") +
                " finds no nonzero pivot in column " + std::to_string(s->status().bad_column) +
                " (every entry at or below the diagonal there is zero after the earlier eliminations)";
    return r;
  }
  r.setup_seconds = since(t0);
  const auto t1 = clock_type::now();
  if (x.size() != n) x = device_vector<T>(ctx, n);
  if (n > 0)
    LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(T) * n, cudaMemcpyDeviceToDevice, ctx.stream()));
  const dense_solve_report rep = s->solve(x);
  {
    std::vector<T> hx(static_cast<std::size_t>(n));
    if (n > 0) LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), x.data(), sizeof(T) * n, cudaMemcpyDeviceToHost, ctx.stream()));
    ctx.synchronize();
    if (solution_out_of_range(hx, r, since(t1))) return r;
  }
  const double cond = s->condition_estimate();
  r.iterate_seconds = since(t1);
  r.iterations = rep.refinement_steps;
  const double bn = std::sqrt([&] {
    double v = 0;
    for (const T& e : hb) v += static_cast<double>(e) * e;
    return v;
  }());
  r.residual = r.true_residual = rep.relative_residual;
  const std::string report = before + s->description() + ", " + std::to_string(rep.refinement_steps) + " refinement step" +
                             (rep.refinement_steps == 1 ? "" : "s") + ": backward error " +
                             short_number(rep.backward_error) + ", condition estimate " + short_number(cond);
  set_outcome(r, rep.relative_residual * bn <= std::max(o.rtol * bn, o.atol), report);
  return r;
}
}  // namespace

namespace registry_detail {
method_entry direct_entry() {
  return {"direct", krylov_method::direct,
          "A sparse factorization (METIS/AMD ordering): on\n"
          "the GPU a supernodal multifrontal LU (static\n"
          "pivoting after a max-product matching; none for\n"
          "SPD), fronts on the fp64 Tensor Core GEMM; on the\n"
          "host the same on its threads (float: up-looking\n"
          "sparse Cholesky or LU). Refined to a backward\n"
          "error near 1e-16; where it misses and A's dense\n"
          "form fits, dense LU with partial pivoting. A\n"
          "singular A is named by its column",
          false, false, false, true, LA_METHOD_SOLVERS(direct_host, direct_device), true};
}
}  // namespace registry_detail

}  // namespace la
