// la::host_direct's state and steps (host_direct.hpp), shared by its files: host_direct.cpp
// (the public calls and the columns' solve). The steps are named functions of impl: screen,
// the sparse paths (SuiteSparse, la's fronts, float's up-looking factors), the dense fallback,
// the refined solve of a column and its verdict (detail/verdict.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/solvers/detail/norms.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/direct/dense_host.hpp>
#include <la/solvers/direct/detail/screen.hpp>
#include <la/solvers/direct/detail/setup.hpp>
#include <la/solvers/direct/detail/suitesparse.hpp>
#include <la/solvers/direct/detail/verdict.hpp>
#include <la/solvers/direct/host_direct.hpp>
#include <la/solvers/matrix_properties.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la {
namespace host_direct_detail {
using direct_detail::clock_type;
using direct_detail::plural;
using direct_detail::since;

using direct_detail::static_pivoting_backward;
using direct_detail::inf_norm;
using direct_detail::residual;
}  // namespace host_direct_detail
using namespace host_direct_detail;

template <typename T>
struct host_direct<T>::impl {
  enum class kind { none, sparse_spd, sparse_lu, dense_lu, suitesparse };

  const csr_matrix<T, count_t>* given = nullptr;
  csr_matrix<T, count_t> scaled;  // 2^e A where e != 0
  int e = 0;
  cg_options opt;
  index_t n = 0;
  solve_status st = solve_status::converged;
  std::string msg, how, before;
  double t_setup = 0, ainf = 0;
  kind used = kind::none;
  std::unique_ptr<sparse_direct_solver> sd;  // double's sparse factors (the host's threads)
  std::unique_ptr<direct_detail::suitesparse_factors> ss;  // double's CHOLMOD or UMFPACK factors, where built
  sparse_analysis sa;                         // float's
  sparse_cholesky<T> sl;
  sparse_lu<T> su;
  dense_matrix<T> f;
  std::vector<index_t> piv;
  double cond = std::nan("");
  bool cond_done = false;
  double solve_hint = 0;  // a column's solve time where several were solved together (the estimate's cost)

  const csr_matrix<T, count_t>& a() const { return e ? scaled : *given; }
  void fail(solve_status s, std::string m) { st = s, msg = std::move(m); }

  void setup() {
    const auto t0 = clock_type::now();
    st = solve_status::converged, msg.clear(), how.clear(), before.clear();
    used = kind::none, sd.reset(), ss.reset(), f = {}, piv.clear(), cond_done = false, cond = std::nan("");
    if (screen()) factor();
    t_setup = since(t0);
  }

  /// direct_detail::screen's checks, and 2^e A where A's largest entry is far from 1.
  bool screen() {
    n = given->rows();
    const direct_detail::screened s = direct_detail::screen(*given);
    if (s.status != solve_status::converged) return fail(s.status, s.message), false;
    e = s.exponent;
    if (e != 0) scaled = direct_detail::scaled(*given, e);
    ainf = direct_detail::inf_norm_of(a());
    return true;
  }

  void factor() {
    if (n == 0) return;
    const matrix_properties props = properties_of(a(), false, true);
    bool matching_gave_up = false;
    if constexpr (std::is_same_v<T, double>) matching_gave_up = !sparse_double(props.looks_spd());
    else matching_gave_up = !sparse_float(props.looks_spd(), props.diag_zero == 0);
    if (st != solve_status::converged) return;
    if (matching_gave_up) dense(true);
  }

  /// double: la::sparse_direct_solver on the host's threads (L D L^T where A looks SPD, the
  /// matched LU else or where a pivot is not positive). false: the matching gave up.
  bool sparse_double(bool looks_spd) {
    if constexpr (std::is_same_v<T, double>) {
      if (suitesparse(looks_spd)) return true;
      sparse_direct_options so = direct_detail::sparse_options_of(opt);
      so.factorization = looks_spd ? sparse_factorization::automatic : sparse_factorization::lu;
      try {
        sd = std::make_unique<sparse_direct_solver>(a(), so);
      } catch (const invalid_argument& x) {
        before = std::string("the sparse LU could not start (") + x.what() + "), so ";
        return false;
      }
      if (sd->ok()) sd->factor();  // (its fronts' memory refused there before they are allocated)
      sparse_factored(looks_spd);
    }
    return true;
  }

  /// The host's default where this build has them (direct_options::host_factor): CHOLMOD
  /// where A looks SPD (UMFPACK where a pivot is not positive), else UMFPACK; false where
  /// neither applies or UMFPACK finds A singular (la's own chain then says where).
  bool suitesparse(bool looks_spd) {
    if constexpr (std::is_same_v<T, double>) return suitesparse_double<T>(looks_spd);
    return false;
  }
  template <typename U>  // a member template: not instantiated for float with the class
  bool suitesparse_double(bool looks_spd) {
    if (opt.direct.host_factor == host_factorization::la) return false;
    bool spd = looks_spd;
    // A row or column far denser than the rest: UMFPACK's analysis crawls there (arrow, 46,500
    // rows, one full row and column: 0.62 s of UMFPACK's symbolic analysis against 0.03 s for
    // la's whole solve, bench/RESULTS.md "Sparse direct solver on the host"), la's fronts do not.
    if (!spd && opt.direct.host_factor == host_factorization::automatic && has_dense_line()) return false;
    if (spd && !direct_detail::suitesparse_available(true)) spd = false;
    if (!direct_detail::suitesparse_available(spd)) {
      if (opt.direct.host_factor == host_factorization::suitesparse)
        throw not_supported("the direct method's host factorization 'suitesparse' needs CHOLMOD and UMFPACK, which this "
                            "build did not find (install libsuitesparse-dev and reconfigure)");
      return false;
    }
    check_host_memory(48.0 * double(a().values().size()) + 64.0 * n, "copying A for SuiteSparse");
    ss = std::make_unique<direct_detail::suitesparse_factors>(a(), spd, opt.direct.ordering);
    if (!ss->ok() && spd) {
      before = "CHOLMOD met a pivot that is not positive in column " + std::to_string(ss->bad_column()) + ", so ";
      ss.reset();
      if (direct_detail::suitesparse_available(false)) ss = std::make_unique<direct_detail::suitesparse_factors>(a(), false, opt.direct.ordering);
    }
    if (!ss || !ss->ok()) {
      before += ss ? "UMFPACK found A singular, so " : "";
      ss.reset();
      return false;
    }
    used = kind::suitesparse;
    how = before + ss->description();
    before.clear();
    return true;
  }

  /// A row or column of more than max(1000, n / 20) entries.
  bool has_dense_line() const {
    const index_t limit = std::max<index_t>(1000, n / 20);
    std::vector<index_t> col(static_cast<std::size_t>(n), 0);
    for (index_t i = 0; i < n; ++i) {
      if (a().row_ptr()[i + 1] - a().row_ptr()[i] > limit) return true;
      for (count_t k = a().row_ptr()[i]; k < a().row_ptr()[i + 1]; ++k) ++col[static_cast<std::size_t>(a().col_idx()[k])];
    }
    for (index_t c : col)
      if (c > limit) return true;
    return false;
  }

  /// What the sparse solver's factorization came to: the kind used and its description, or
  /// a structurally singular A.
  void sparse_factored(bool looks_spd) {
    if constexpr (std::is_same_v<T, double>) {
      if (!sd->ok())
        return fail(solve_status::breakdown, "A is singular: structurally, no ordering of its rows puts a nonzero on the "
                                             "diagonal of column " + std::to_string(sd->singular_column()) +
                                                 " (a maximum matching of rows to columns leaves it out)"),
               void();
      used = sd->matched() || !looks_spd ? kind::sparse_lu : kind::sparse_spd;
      if (looks_spd && used == kind::sparse_lu) before = "A looks SPD but its L D L^T met a pivot that is not positive, so ";
      how = before + sd->description() + " (" + sd->analysis().summary() + ", " + plural(long(sd->perturbed()), "pivot") + " perturbed)";
      before.clear();
    }
  }

  /// float: the up-looking sparse Cholesky, else the sparse LU with static pivoting.
  bool sparse_float(bool looks_spd, bool zero_free_diagonal) {
    const double rate = 1e9 * thread_count();
    if (looks_spd) {
      sa = analyze_pattern(a(), opt.direct.ordering, rate);
      check_host_memory(sa.factor_bytes + 8.0 * n, "the sparse Cholesky factor (" + sa.summary() + ")");
      sl = sparse_cholesky_host(a(), sa);
      sl.analysis = &sa;
      if (sl.ok()) {
        used = kind::sparse_spd, how = "sparse Cholesky (" + sa.summary() + ")";
        return true;
      }
      before = "Cholesky met a pivot that is not positive in column " + std::to_string(sl.bad_column) + ", so ";
    }
    {
      // The LU's factors, L and U, about twice the symmetrized pattern's Cholesky factor:
      // refused before the factorization allocates them.
      const sparse_analysis guess = analyze_pattern(a(), opt.direct.ordering, rate);
      check_host_memory(2 * guess.factor_bytes + 32.0 * n, "the sparse LU's factors (about twice " + guess.summary() + ")");
    }
    try {
      su = sparse_lu_host(a(), opt.direct.ordering, true);
    } catch (const invalid_argument&) {
      if (!zero_free_diagonal) {
        before += "the sparse LU's row matching gave up on this pattern, so ";
        return false;
      }
      su = sparse_lu_host(a(), opt.direct.ordering, false);
      before += "the row matching gave up on this pattern (A's diagonal is zero-free: rows kept), ";
    }
    if (!su.ok())
      return fail(solve_status::breakdown, "A is singular: structurally, no ordering of its rows puts a nonzero on the "
                                           "diagonal of column " + std::to_string(su.singular_column) +
                                               " (a maximum matching of rows to columns leaves it out)"),
             true;
    used = kind::sparse_lu;
    how = before + "sparse LU with static pivoting (" + su.analysis.summary() + ", " + plural(long(su.perturbed), "pivot") + " perturbed)";
    before.clear();
    return true;
  }

  /// A's dense form by LU with partial pivoting, where it fits (half the host's free memory;
  /// `must`: the sparse path could not start, so a factor that does not fit is the answer).
  bool dense(bool must) {
    const double need = 2.0 * double(n) * double(n) * sizeof(T);
    if (must) check_host_memory(need, "the direct solve (A's dense form and its factors, " + std::to_string(n) + " x " + std::to_string(n) + ")");
    if (need > 0.5 * static_cast<double>(host_memory_available())) return false;
    f = to_dense(a());
    const dense_factor_status s = lu_factor(f, piv);
    if (!s.ok()) {
      fail(solve_status::breakdown, "A is singular: " + before + "LU with partial pivoting finds no nonzero pivot in column " +
                                        std::to_string(s.bad_column) +
                                        " (every entry at or below the diagonal there is zero after the earlier eliminations)");
      f = {};
      return false;
    }
    used = kind::dense_lu, sd.reset(), ss.reset(), cond_done = false;
    how = before + "LU with partial pivoting of A's dense form";
    return true;
  }

  /// x = A^-1 x by the factors as they are (no refinement).
  void plain_solve(T* v) const {
    if constexpr (std::is_same_v<T, double>) {
      if (used == kind::suitesparse) return ss->solve(v);
    }
    if (used == kind::dense_lu) lu_solve(f, piv, v);
    else if (used == kind::sparse_spd) sl.solve(v);
    else su.solve(v);
  }

  /// y's backward error and relative residual for b (its residual left in r), in wider precision.
  void measure(const T* b, const T* y, std::vector<T>& r, double& be, double& rel) const {
    double rinf = 0;
    const double rn = residual(a(), b, y, r, rinf);
    be = rinf / (ainf * inf_norm(y, n) + inf_norm(b, n));
    rel = rn / detail::safe_norm2(b, static_cast<std::size_t>(n));
  }

  /// The shared refinement rule (detail/refinement.hpp) for the factors in use: classical,
  /// to a few eps where the factors are backward stable (partial pivoting, Cholesky: a step below
  /// what their first solve reaches buys nothing), to eps with static pivoting's, and to a
  /// relative residual a thousandth of rtol (as the sparse solver's).
  detail::refine_rule rule() const {
    detail::refine_rule r;
    r.how = detail::refine_rule::kind::classical;
    r.max_steps = used == kind::sparse_lu ? opt.direct.max_refinement : std::min(3, opt.direct.max_refinement);
    r.backward = (used == kind::sparse_lu ? 1 : 8) * std::numeric_limits<T>::epsilon();
    r.relative = std::max(10.0 * double(std::numeric_limits<T>::epsilon()), 1e-3 * opt.rtol);
    return r;
  }

  /// y = A^-1 b refined by rule(); double's sparse solver refines inside its own solve. Returns
  /// the refinement steps; gmres_its GMRES iterations.
  int solve_refined(const T* b, T* y, int& gmres_its) {
    gmres_its = 0;
    if constexpr (std::is_same_v<T, double>) {
      if (used == kind::sparse_lu || (used == kind::sparse_spd && sd)) {
        std::vector<double> c(b, b + n);
        const sparse_direct_report rep = sd->solve(c, 1);
        std::copy(c.begin(), c.end(), y);
        gmres_its = rep.gmres_iterations;
        return rep.refinement_steps;
      }
    }
    std::copy(b, b + n, y);
    plain_solve(y);
    std::vector<T> r(static_cast<std::size_t>(n)), best(y, y + n), d(r.size());
    double be = 0, rel = 0;
    measure(b, y, r, be, rel);
    return detail::refine(
        rule(), be, rel,
        [&](bool, double& sbe, double& srel) {
          d = r;
          plain_solve(d.data());
          for (index_t i = 0; i < n; ++i) y[i] += d[static_cast<std::size_t>(i)];
          measure(b, y, r, sbe, srel);
        },
        [&] { std::copy(y, y + n, best.begin()); }, [&] { std::copy(best.begin(), best.end(), y); });
  }

  /// ||A||_1 ||A^-1||_1 estimated once per factorization (Hager and Higham); float's sparse LU
  /// has no transposed solve: not estimated.
  double condition() {
    if (cond_done) return cond;
    cond_done = true;
    if constexpr (std::is_same_v<T, double>) {
      if (sd && used != kind::dense_lu) return cond = sd->condition_estimate();
      if (used == kind::suitesparse) {
        return cond = direct_detail::one_norm_of(a()) * inverse_norm1_estimate<double>(n, [&](double* v) { ss->solve(v); },
                                                          [&](double* v) { ss->solve(v, true); });
      }
    }
    if (used == kind::sparse_lu) return cond = std::nan("");
    auto solve = [&](T* v) {
      if (used == kind::dense_lu) lu_solve(f, piv, v);
      else sl.solve(v);
    };
    auto solve_t = [&](T* v) {
      if (used == kind::dense_lu) lu_transpose_solve(f, piv, v);
      else sl.solve(v);  // A^T = A
    };
    return cond = direct_detail::one_norm_of(a()) * inverse_norm1_estimate<T>(n, solve, solve_t);
  }

  std::string method_line() const {
    const char* k = used == kind::dense_lu      ? "dense "
                    : used == kind::suitesparse ? (how.rfind("CHOLMOD", 0) == 0 ? "CHOLMOD " : "UMFPACK ")
                    : used == kind::sparse_spd ? (std::is_same_v<T, double> ? "sparse L D L^T " : "sparse Cholesky ")
                                                : "sparse LU ";
    return std::string("direct, host, ") + k + std::to_string(n) + " x " + std::to_string(n);
  }

  /// One column: checks, the refined solve (where `solved` is -1; else x holds the solution
  /// the multi-column solve made, with that many refinement steps), the fallback where static
  /// pivoting fell short, and the verdict from the residual recomputed here.
  solve_result column(const T* b, T* x, int solved = -1) {
    const auto t0 = clock_type::now();
    solve_result r;
    r.solver = krylov_method::direct;
    r.method = method_line();
    r.setup_seconds = t_setup;
    r.true_residual = std::nan("");
    if (st != solve_status::converged) return r.status = st, r.message = msg, r;
    for (index_t i = 0; i < n; ++i)
      if (!std::isfinite(static_cast<double>(b[i])))
        return r.status = solve_status::non_finite,
               r.message = "right-hand side holds a non-finite value (" + std::to_string(double(b[i])) + ") at entry " +
                           std::to_string(i + 1) + " (1-based)",
               r;
    const double bn = detail::safe_norm2(b, static_cast<std::size_t>(n));
    if (bn == 0) {  // x = 0 is the answer, whatever A is
      std::fill(x, x + n, T(0));
      r.status = solve_status::converged, r.residual = r.true_residual = 0;
      r.message = "b = 0, so x = 0 (nothing factored for it)";
      return r;
    }
    int gmres_its = 0;
    int steps = solved >= 0 ? solved : solve_refined(b, x, gmres_its);
    std::vector<T> res(static_cast<std::size_t>(n));
    double rinf = 0, rn = residual(a(), b, x, res, rinf);
    auto backward = [&] { return rinf / (ainf * inf_norm(x, n) + inf_norm(b, n)); };
    const double target = std::max(opt.rtol * bn, opt.atol);
    if ((used == kind::sparse_lu || used == kind::suitesparse) && !(rn <= target && backward() <= static_pivoting_backward)) {
      // Static pivoting (or UMFPACK's threshold pivoting) fell short: the dense LU with partial
      // pivoting, where it fits (kept for the later columns). fidapex6: UMFPACK's x had relative
      // residual 1e2 (condition 4.9e21), the dense LU's 1e-13.
      before = (used == kind::sparse_lu ? "sparse LU with static pivoting" : how.substr(0, how.find(" ("))) +
               " reached backward error " + short_number(backward()) + " after " + plural(steps, "refinement step") + ", so ";
      if (dense(false)) {
        steps = solve_refined(b, x, gmres_its);
        rn = residual(a(), b, x, res, rinf);
      } else if (st != solve_status::converged) {
        r.status = st, r.message = msg, r.method = method_line();
        return r;
      }
      before.clear();
    }
    r.method = method_line();
    r.iterations = steps;
    r.iterate_seconds = since(t0);
    // x of A x = b is 2^e y for y of (2^e A) y = b; the residual b - A x = b - (2^e A) y.
    direct_detail::column_report c;
    c.backward = backward();
    if (!direct_detail::scale_back(x, n, e, r)) return r;
    r.residual = r.true_residual = rn / bn;
    // The estimate takes up to 11 solves: by default only where that is at most a tenth of the
    // setup, predicted from this column's solve (2D Poisson 500^2 on the host: 0.18 s against a
    // 0.70 s factorization, where CHOLMOD alone takes 0.76 s in all).
    const double one_solve = std::max(r.iterate_seconds / double(steps + 1), solve_hint);
    const bool estimate = opt.direct.condition == condition_estimate::yes ||
                          (opt.direct.condition == condition_estimate::automatic && (cond_done || 11 * one_solve <= 0.1 * t_setup));
    c.condition = estimate ? condition() : std::nan("");
    c.no_condition = !estimate ? ", condition not estimated (about " + short_number(11 * one_solve) +
                                     " s of solves; {condition} yes estimates it)"
                               : ", condition not estimated (float's sparse LU has no transposed solve)";
    c.how = how, c.steps = steps, c.gmres_iterations = gmres_its, c.exponent = e;
    direct_detail::set_verdict(r, rn, target, c);
    return r;
  }
};

}  // namespace la
