// The direct method for complex systems on the host (issue 69): la's sparse LU with static
// pivoting (sparse_lu_host, sparse_analysis.hpp: a maximum-product matching with its
// scalings, the METIS/AMD ordering of the matched pattern, tiny pivots perturbed to
// sqrt(eps) max|M| keeping their phase), refined classically with residuals of A summed in
// complex<long double> (detail::refine's stop rule: a backward error near 1e-16 and a relative
// residual below 1e-15, or two steps that halve neither). The same checks and verdict as every
// method: converged when ||b - Ax|| meets max(rtol ||b||, atol) within
// cg_options::true_residual_factor; a structurally singular A is a breakdown naming the
// column; NaN or Inf in A or b is non_finite.
#pragma once

#include <chrono>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/detail/norms.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/krylov_options.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la {

/// The GPU's direct method for complex systems factors A's dense form: at most this many rows.
inline constexpr index_t complex_dense_rows = 8192;

/// LU with partial pivoting of the column-major n x n complex<double> matrix at `a` (device
/// memory, leading dimension lda >= n), in place, on ctx's stream, by la's kernels
/// (solvers/direct/complex_dense.cu: panels of 32 columns, a tiled complex GEMM for the
/// trailing matrix). pivots (device, n entries): row j was swapped with row pivots[j]
/// (0-based), LAPACK's convention. Returns 0, or the first column (1-based) whose pivot is
/// exactly zero (the factors are then singular, as LAPACK's info says).
index_t dense_lu_device(context& ctx, std::complex<double>* a, index_t n, index_t lda, index_t* pivots);
/// b (device, n entries) overwritten by the solution of A x = b with dense_lu_device's factors.
void dense_lu_solve_device(context& ctx, const std::complex<double>* lu, index_t n, index_t lda, const index_t* pivots,
                           std::complex<double>* b);

/// The host oracle of dense_lu_device: the same algorithm (the pivot the largest |re| + |im|,
/// the first of equal ones) on a column-major n x n matrix, in place; returns its info.
inline index_t dense_lu_host(std::vector<std::complex<double>>& a, index_t n, std::vector<index_t>& pivots) {
  using z = std::complex<double>;
  const auto at = [&](index_t i, index_t j) -> z& { return a[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * n]; };
  const auto abs1 = [](const z& v) { return std::abs(v.real()) + std::abs(v.imag()); };
  pivots.assign(static_cast<std::size_t>(n), 0);
  index_t info = 0;
  for (index_t j = 0; j < n; ++j) {
    index_t p = j;
    for (index_t i = j + 1; i < n; ++i)
      if (abs1(at(i, j)) > abs1(at(p, j))) p = i;
    pivots[static_cast<std::size_t>(j)] = p;
    if (!(abs1(at(p, j)) > 0)) {
      if (info == 0) info = j + 1;
      continue;
    }
    if (p != j)
      for (index_t c = 0; c < n; ++c) std::swap(at(j, c), at(p, c));
    const z inv = z(1) / at(j, j);
    for (index_t i = j + 1; i < n; ++i) at(i, j) *= inv;
    for (index_t c = j + 1; c < n; ++c)
      for (index_t i = j + 1; i < n; ++i) at(i, c) -= at(i, j) * at(j, c);
  }
  return info;
}

/// The direct method for complex systems on the GPU: A's dense form (at most
/// complex_dense_rows rows) by dense_lu_device, refined against the sparse A with the GPU's
/// complex SpMV; the checks, statuses and verdict of solve_complex_direct_host.
template <typename O>
solve_result solve_complex_direct_device(context& ctx, const csr_matrix<std::complex<double>, O>& a,
                                         const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                         const cg_options& o = {});

namespace complex_direct_detail {
using z = std::complex<double>;

/// ||v||_2 without overflow or underflow.
inline double safe_norm(const std::vector<z>& v) { return detail::safe_norm2(v.data(), v.size()); }

/// What the direct methods know of A and b once checked.

struct input {
  double bnorm = 0, bmax = 0, anorm = 0;  // ||b||_2, ||b||_inf, ||A||_inf
};

/// The direct methods' checks of A and b, in the Krylov oracle's words: false with r's status
/// and message set where the solve cannot start.
template <typename O>
bool check_input(const csr_matrix<z, O>& a, const std::vector<z>& b, solve_result& r, input& in) {
  const auto fail = [&](solve_status s, std::string why) {
    r.status = s;
    r.message = std::move(why);
    return false;
  };
  if (a.rows() != a.cols())
    return fail(solve_status::invalid_input, "A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                                 "; a direct solve needs a square matrix");
  if (b.size() != static_cast<std::size_t>(a.rows()))
    return fail(solve_status::invalid_input,
                "b has " + std::to_string(b.size()) + " entries, A has " + std::to_string(a.rows()) + " rows");
  for (const z& v : a.values())
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return fail(solve_status::non_finite, "A holds a NaN or Inf value");
  for (const z& v : b) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return fail(solve_status::non_finite, "b holds a NaN or Inf value");
    in.bmax = std::max(in.bmax, std::abs(v));
  }
  in.bnorm = safe_norm(b);
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s += std::abs(a.values()[k]);
    in.anorm = std::max(in.anorm, s);
  }
  return true;
}

/// The refinement's measures of x with residual res: the backward error
/// ||res||_inf / (||A||_inf ||x||_inf + ||b||_inf) and the relative residual ||res|| / ||b||.
inline void measures(const std::vector<z>& res, const std::vector<z>& x, const input& in, double& be, double& rel) {
  double rmax = 0, xmax = 0;
  for (const z& v : res) rmax = std::max(rmax, std::abs(v));
  for (const z& v : x) xmax = std::max(xmax, std::abs(v));
  rel = safe_norm(res) / in.bnorm;
  const double den = in.anorm * xmax + in.bmax;
  be = den > 0 ? rmax / den : rmax;
}

/// The verdict on the refined x, as every method's: converged where ||b - Ax|| meets
/// max(rtol ||b||, atol) within true_residual_factor; `how` says what the factorization and
/// refinement did.
inline void verdict(solve_result& r, const std::vector<z>& x, double rel, const input& in, const cg_options& o,
                    const std::string& how) {
  r.residual = r.true_residual = rel;
  const double target = std::max(o.rtol * in.bnorm, o.atol);
  bool finite = true;
  for (const z& v : x) finite = finite && std::isfinite(v.real()) && std::isfinite(v.imag());
  if (!finite) {
    r.status = solve_status::non_finite;
    r.message = "the solution holds a NaN or Inf value (" + how + ")";
  } else if (rel * in.bnorm <= std::max(target * o.true_residual_factor, target)) {
    r.status = solve_status::converged;
    r.message = "converged (" + how + ")";
  } else {
    r.status = solve_status::precision_limit;
    r.message = "the factorization and refinement reached a relative residual of " + short_number(rel) +
                ", above the tolerance (" + how + "): A is singular or too ill-conditioned for double";
  }
}
}  // namespace complex_direct_detail

template <typename O>
solve_result solve_complex_direct_host(const csr_matrix<std::complex<double>, O>& a,
                                       const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                       const cg_options& o = {}) {
  using z = std::complex<double>;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  solve_result r;
  r.solver = krylov_method::direct;
  r.method = "direct (sparse LU, static pivoting), host, csr";
  r.true_residual = std::nan("");
  const auto fail = [&](solve_status s, std::string why) {
    r.status = s;
    r.message = std::move(why);
    return r;
  };
  complex_direct_detail::input in;
  if (!complex_direct_detail::check_input(a, b, r, in)) return r;
  const std::size_t n = b.size();
  const double bnorm = in.bnorm;
  x.assign(n, z(0));
  if (bnorm == 0) {
    r.status = solve_status::converged, r.message = "converged", r.true_residual = 0, r.residual = 0;
    return r;
  }
  sparse_lu<z> f;
  try {
    f = sparse_lu_host(a, o.direct.ordering);
  } catch (const invalid_argument& e) {  // the matching gave up on this pattern
    return fail(solve_status::breakdown, std::string("the sparse LU could not start: ") + e.what());
  }
  if (!f.ok())
    return fail(solve_status::breakdown, "A is structurally singular: no row can be matched to column " +
                                             std::to_string(f.singular_column) + ", so no LU factorization exists");
  const auto t1 = clock::now();
  r.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  reference::accumulator<z> acc;
  std::vector<z> res(n), best;
  double be = 0, rel = 0;
  const auto measure = [&] {  // res = b - A x (summed in complex<long double>), be and rel
    reference::spmv(z(-1), a, x, z(0), res, acc);
    for (std::size_t i = 0; i < n; ++i) res[i] += b[i];
    complex_direct_detail::measures(res, x, in, be, rel);
  };
  x = b;
  f.solve(x.data());
  measure();
  best = x;  // the best x so far (refine keeps a better one, and the end takes it)
  detail::refine_rule rule;
  rule.how = refinement_kind::classical;
  rule.max_steps = o.direct.max_refinement;
  const int steps = detail::refine(
      rule, be, rel,
      [&](bool, double& be_out, double& rel_out) {
        std::vector<z> d = res;
        f.solve(d.data());
        for (std::size_t i = 0; i < n; ++i) x[i] += d[i];
        measure();
        be_out = be, rel_out = rel;
      },
      [&] { best = x; }, [&] { x = best; });
  x = best;
  measure();
  r.iterations = steps;
  r.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  complex_direct_detail::verdict(r, x, rel, in, o,
                                 std::to_string(f.perturbed) + " pivot" + (f.perturbed == 1 ? "" : "s") + " perturbed, " +
                                     std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") +
                                     ", backward error " + short_number(be));
  return r;
}

}  // namespace la
