// The direct method's verdict on a column, the same on the host and the GPU (host_direct.cpp,
// device_direct.cpp): converged only where ||b - Ax|| met max(rtol ||b||, atol), recomputed in
// wider precision by the caller; a residual that is not finite is non_finite; a miss after
// refinement is precision_limit. The report names what factored A, the refinement, the
// backward error and the condition estimate (or why there is none).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/norms.hpp>

#include <la/solvers/krylov_options.hpp>

namespace la::direct_detail {

/// The reports' times: seconds since t.
using clock_type = std::chrono::steady_clock;
inline double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

inline std::string plural(long v, const char* what) { return std::to_string(v) + " " + what + (v == 1 ? "" : "s"); }

struct column_report {
  std::string how;            // what factored A
  int steps = 0;              // refinement steps
  int gmres_iterations = 0;   // GMRES-based refinement's
  double backward = 0;        // ||b - Ax||_inf / (||A||_inf ||x||_inf + ||b||_inf)
  double condition = NAN;     // NaN: not estimated, for the reason below
  std::string no_condition;   // ", condition not estimated (...)"
  int exponent = 0;           // A factored as 2^exponent A
};

inline std::string report_of(const column_report& c) {
  return c.how + ", " + plural(c.steps, "refinement step") +
         (c.gmres_iterations > 0 ? " (GMRES-based, " + plural(c.gmres_iterations, "GMRES iteration") + ")" : std::string()) +
         ": backward error " + short_number(c.backward) +
         (std::isnan(c.condition) ? c.no_condition : ", condition estimate " + short_number(c.condition)) +
         (c.exponent != 0 ? ", A scaled by 2^" + std::to_string(c.exponent) + " to factor (its largest entry was far from 1)"
                          : std::string());
}

/// r's status and message from the residual's norm rn against target (max(rtol ||b||, atol)).
inline void set_verdict(solve_result& r, double rn, double target, const column_report& c) {
  const std::string report = report_of(c);
  if (rn <= target) {
    r.status = solve_status::converged;
    r.message = "||b - Ax|| <= max(rtol*||b||, atol); " + report;
  } else if (!std::isfinite(rn)) {
    r.status = solve_status::non_finite;
    r.message = "the residual ||b - Ax|| is not finite; " + report;
  } else {
    r.status = solve_status::precision_limit;
    r.message = "||b - Ax|| / ||b|| = " + short_number(r.residual) + " misses the tolerance after refinement; " + report +
                " (the tolerance is below what the precision resolves for this condition)";
  }
}

/// r = b - A x in wider_t (long double for double: no overflow for double's range); returns
/// ||r||_2 (scale-safe) and sets rinf = ||r||_inf (NaN where a sum is).
template <typename T>
double residual(const csr_matrix<T, count_t>& a, const T* b, const T* x, std::vector<T>& r, double& rinf) {
  using W = wider_t<T>;
  rinf = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    W s = b[i];
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s -= static_cast<W>(a.values()[k]) * x[a.col_idx()[k]];
    r[static_cast<std::size_t>(i)] = static_cast<T>(s);
    rinf = std::max(rinf, static_cast<double>(std::abs(s)));
    if (std::isnan(static_cast<double>(s))) rinf = std::nan("");
  }
  return detail::safe_norm2(r.data(), r.size());
}

template <typename T>
double inf_norm(const T* v, index_t n) {
  double m = 0;
  for (index_t i = 0; i < n; ++i) m = std::max(m, std::abs(static_cast<double>(v[i])));
  return m;
}

/// ||A||_inf.
template <typename T>
double inf_norm_of(const csr_matrix<T, count_t>& a) {
  double m = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    double sum = 0;
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) sum += std::abs(static_cast<double>(a.values()[k]));
    m = std::max(m, sum);
  }
  return m;
}

/// ||A||_1, the largest column sum.
template <typename T>
double one_norm_of(const csr_matrix<T, count_t>& a) {
  std::vector<double> col(static_cast<std::size_t>(a.cols()), 0.0);
  for (std::size_t k = 0; k < a.values().size(); ++k)
    col[static_cast<std::size_t>(a.col_idx()[k])] += std::abs(static_cast<double>(a.values()[k]));
  return col.empty() ? 0.0 : *std::max_element(col.begin(), col.end());
}

/// x's entries scaled back (x of A x = b is 2^e y for y of (2^e A) y = b) and checked: false,
/// with r's status and message set, where one does not fit in T.
template <typename T>
bool scale_back(T* x, index_t n, int e, solve_result& r) {
  for (index_t i = 0; i < n; ++i) {
    if (e != 0) x[i] = static_cast<T>(std::ldexp(static_cast<double>(x[i]), e));
    if (!std::isfinite(static_cast<double>(x[i]))) {
      r.status = solve_status::non_finite;
      r.message = "x = A^-1 b does not fit in the working precision (entry " + std::to_string(i + 1) +
                  " is not finite); scale b (or A) towards 1";
      return false;
    }
  }
  return true;
}

}  // namespace la::direct_detail
