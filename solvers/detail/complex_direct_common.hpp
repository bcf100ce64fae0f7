// What the complex direct methods share (issue 69): the host's sparse LU
// (direct/complex_direct_host.cpp) and the GPU's dense LU (direct/complex_dense.cu): the
// checks of A and b, the refinement's measures, the verdict. Private to la's sources.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/detail/norms.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la {
namespace complex_direct_detail {
using z = std::complex<double>;

/// ||v||_2 without overflow or underflow.
inline double safe_norm(const std::vector<z>& v) { return detail::safe_norm2(v.data(), v.size()); }

/// What the direct methods know of A and b once checked.

struct input {
  double bnorm = 0, bmax = 0, anorm = 0;  // ||b||_2, ||b||_inf, ||A||_inf
};

/// The direct methods' checks of A (at the factorization), in the Krylov oracle's words: false
/// with r's status and message set where it cannot be factored; in.anorm set.
template <typename O>
bool check_matrix(const csr_matrix<z, O>& a, solve_result& r, input& in) {
  const auto fail = [&](solve_status s, std::string why) {
    r.status = s;
    r.message = std::move(why);
    return false;
  };
  if (a.rows() != a.cols())
    return fail(solve_status::invalid_input, "A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                                 "; a direct solve needs a square matrix");
  for (const z& v : a.values())
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return fail(solve_status::non_finite, "A holds a NaN or Inf value");
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s += std::abs(a.values()[k]);
    in.anorm = std::max(in.anorm, s);
  }
  return true;
}

/// The checks of b (at each solve): false with r's status and message set where the solve
/// cannot start; in.bnorm and in.bmax set.
inline bool check_rhs(index_t rows, const std::vector<z>& b, solve_result& r, input& in) {
  const auto fail = [&](solve_status s, std::string why) {
    r.status = s;
    r.message = std::move(why);
    return false;
  };
  if (b.size() != static_cast<std::size_t>(rows))
    return fail(solve_status::invalid_input, "b has " + std::to_string(b.size()) + " entries, A has " + std::to_string(rows) + " rows");
  in.bmax = 0;
  for (const z& v : b) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return fail(solve_status::non_finite, "b holds a NaN or Inf value");
    in.bmax = std::max(in.bmax, std::abs(v));
  }
  in.bnorm = safe_norm(b);
  return true;
}

/// A result named `method` with no residual yet.
inline solve_result named(const std::string& method) {
  solve_result r;
  r.solver = krylov_method::direct;
  r.method = method;
  r.true_residual = std::nan("");
  return r;
}

/// A solve's start: b checked, x zero; false where r is already the answer (a refused b, or b
/// = 0: x = 0, converged).
inline bool start_solve(index_t rows, const std::vector<z>& b, std::vector<z>& x, solve_result& r, input& in) {
  if (!check_rhs(rows, b, r, in)) return false;
  x.assign(b.size(), z(0));
  if (in.bnorm == 0) {
    r.status = solve_status::converged, r.message = "converged", r.true_residual = 0, r.residual = 0;
    return false;
  }
  return true;
}

/// The factored state a backend keeps (host: the sparse LU; GPU: the dense factors), solved
/// and refined per right-hand side.
template <typename O>
struct direct_backend {
  virtual ~direct_backend() = default;
  /// x = A^-1 b refined and judged; r named, b checked, x sized (start_solve done).
  virtual void solve(const std::vector<z>& b, std::vector<z>& x, solve_result& r, const input& in) = 0;
};

/// The host's and the GPU's factorizations (direct/complex_direct_host.cpp,
/// direct/complex_dense.cu): r's status and message set where A cannot be factored (null
/// returned); in: A's measures.
template <typename O>
std::unique_ptr<direct_backend<O>> factor_host(const csr_matrix<z, O>& a, const cg_options& o, solve_result& r, const input& in);
template <typename O>
std::unique_ptr<direct_backend<O>> factor_device(context& ctx, const csr_matrix<z, O>& a, const cg_options& o, solve_result& r,
                                                 const input& in);

/// The refinement both direct methods run: classical steps, at most o.direct.max_refinement.
inline detail::refine_rule classical_rule(const cg_options& o) {
  detail::refine_rule rule;
  rule.how = refinement_kind::classical;
  rule.max_steps = o.direct.max_refinement;
  return rule;
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
}  // namespace la
