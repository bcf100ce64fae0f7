// What the complex direct methods share (issue 69): the host's sparse LU
// (direct/complex_direct_host.cpp) and the GPU's dense LU (direct/complex_dense.cu): the
// checks of A and b, the refinement's measures, the verdict. Private to la's sources.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/norms.hpp>
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

/// The start both direct methods make: r named `method`, A and b checked, then `extra()` (a
/// method's own limit: "" or why it cannot run), x zero. False where r is already the answer: a
/// refused input, or b = 0 (x = 0, converged).
template <typename O, typename Extra>
bool start(const csr_matrix<z, O>& a, const std::vector<z>& b, std::vector<z>& x, const char* method, solve_result& r,
           input& in, Extra extra) {
  r.solver = krylov_method::direct;
  r.method = method;
  r.true_residual = std::nan("");
  if (!check_input(a, b, r, in)) return false;
  if (std::string why = extra(); !why.empty()) {
    r.status = solve_status::invalid_input;
    r.message = std::move(why);
    return false;
  }
  x.assign(b.size(), z(0));
  if (in.bnorm == 0) {
    r.status = solve_status::converged, r.message = "converged", r.true_residual = 0, r.residual = 0;
    return false;
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
}  // namespace la
