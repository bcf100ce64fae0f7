// The Krylov skeleton every method shares (CG in cg.hpp, BiCGSTAB in bicgstab.hpp, GMRES and
// flexible GMRES in gmres.hpp): the statuses' messages and the backend-free loop that drives a
// method's Backend (the options, statuses and result it uses: krylov_options.hpp).
//
// The loop talks to a Backend in step operations whose scalars stay in the backend's own
// memory (cg_control.hpp: a host struct, or device memory for the GPU):
//   using value_type; using vector;
//   index_t size();
//   std::string check_input(const vector& b, const vector& x);   // "" or why: invalid_input
//   std::string check_values(const vector& b, const vector& x);  // "" or where A, b or x holds NaN/Inf
//   std::string check_preconditioner();     // builds M^-1 (precond.hpp): "" or why it does not exist
//   precond_report describe_preconditioner();  // what was built, its setup time and memory
//   double nrm2(const vector&);             // scale-safe: right for entries near under- or overflow
//   void set_zero(vector&); void scale(vector&, double);
//   vector scaled_copy(const vector&, double);
//   static constexpr std::int64_t largest_chunk;  // the most iterations iterate() queues at once
//   void start(const vector& b, vector& x, const cg_limits&);  // the first residual and decision
//   void iterate(std::int64_t k, vector& x);   // queues k iterations; each does nothing once a
//                                              // status is set, and x is settled at the stop
//   const cg_control& report();                // waits, then reads the control block
//   void history(std::int64_t first, std::int64_t last, std::vector<double>& out);
//   double residual_norm(const vector& b, const vector& x);    // ||b - A x||, recomputed
// The host never waits inside a chunk of k iterations: it reads the control block (the
// status, iteration and residual) once per chunk, and k adapts to the convergence rate and
// to the time a chunk takes. Iterations queued past the stop do nothing, so the reported
// count is exact. detail::check_backend<Backend>() holds every backend to this contract at
// compile time.
//
// Scale: a right-hand side whose norm is below 2^-100 or above 2^100 is scaled by a power of
// two (exact) before the loop and the solution scaled back after it, so no method's dots
// underflow or overflow; the relative residuals are those of the system as given.
//
// Status or exception, one rule for every solver: what the solver finds in the data it was
// given (sizes that disagree, a matrix that is not square, NaN or Inf, a preconditioner that
// does not exist for the matrix, options out of range, and every way of not converging) is
// a status in solve_result; what it cannot do as asked (a path or kernel this device or
// format does not support: la::not_supported) and failures of the machine (CUDA errors, out
// of memory: la::device_error) are exceptions.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <la/types.hpp>
#include <la/solvers/cg_control.hpp>
#include <la/solvers/krylov_options.hpp>
#include <la/solvers/registry.hpp>
#include <la/solvers/precond_options.hpp>

namespace la {

namespace detail {
/// Chunk sizes for the host's reads of the control block: start small, double while the
/// residual is far from the tolerance, stay near the predicted remaining count (queued
/// iterations past the stop cost a launch each on the plain path), and keep a chunk under
/// about 0.1 s so progress and the stop are seen promptly.
class cg_chunks {
 public:
  explicit cg_chunks(std::int64_t largest) : largest_(largest) {}
  std::int64_t next(const cg_control& c, const cg_limits& l, double start_rr, double chunk_seconds) {
    if (chunk_seconds > 0.1) k_ = std::max<std::int64_t>(1, k_ / 2);
    else if (chunk_seconds < 0.05) k_ = std::min(largest_, 2 * k_);
    std::int64_t k = k_;
    // Iterations left at the average rate so far (log of r'r falls by `rate` per iteration).
    if (c.iteration > 0 && c.rr > 0 && start_rr > c.rr && l.threshold2 > 0) {
      const double rate = std::log(start_rr / c.rr) / static_cast<double>(c.iteration);
      const double left = std::log(c.rr / l.threshold2) / rate;
      if (left < static_cast<double>(k)) k = std::max<std::int64_t>(4, static_cast<std::int64_t>(left) + 1);
    }
    return std::max<std::int64_t>(1, std::min(k, l.max_iterations - c.iteration));
  }

 private:
  std::int64_t largest_;
  std::int64_t k_ = 4;
};

/// What may help a solve that stagnated or diverged, naming the options as {name} (registry.hpp).
inline constexpr const char* stagnation_hint =
    "; what may help: a stronger preconditioner ({precond} ilu0 or amg; ic0 or fsai for an SPD A), gmres with a "
    "larger basis ({method} gmres {restart} 100)";

inline std::string stop_message(const cg_control& c, const cg_limits& l) {
  const std::string at = " at iteration " + std::to_string(c.iteration);
  switch (c.status) {
    case cg_converged:
      if (c.iteration == 0) return "initial guess already solves the system";
      if (c.rr > l.threshold2) return "the recurrence residual fell below 1e-140 ||b||, far below what the precision resolves";
      return "||r|| <= max(rtol*||b||, atol)";
    case cg_max_iterations:
      return "stopped after " + std::to_string(l.max_iterations) + " iterations at ||r||/||b|| = " +
             short_number(std::sqrt(c.rr) / l.bnorm) +
             " without reaching the tolerance: a preconditioner ({precond}) or a higher limit ({maxit}) may get there";
    case cg_breakdown:
      switch (c.reason) {
        case reason_bicg_rho:
          return "BiCGSTAB breakdown" + at + ": rho = r0'r = 0 (the residual is orthogonal to the shadow residual); "
                 "gmres does not break down this way";
        case reason_bicg_rv:
          return "BiCGSTAB breakdown" + at + ": r0'A M^-1 p = 0; gmres does not break down this way";
        case reason_bicg_omega:
          return "BiCGSTAB breakdown" + at + ": omega = t's / t't = 0 (the stabilizing step makes no progress, or "
                 "A M^-1 s = 0: A may be singular); gmres does not break down this way";
        case reason_singular:
          return "GMRES breakdown" + at + ": A M^-1 v lies, to double's precision, in the span of the earlier basis vectors' images, so A is "
                 "singular (a singular system has no unique solution) or nearly so (condition past 1e14)";
        default: break;
      }
      if (c.iteration == 0)
        return "r'M^-1 r <= 0 at the start: the preconditioner is not positive definite";
      if (!(c.pq > 0))
        return "p'Ap = " + short_number(c.pq) + " <= 0" + at +
               ": matrix is not symmetric positive definite (for a non-symmetric or indefinite matrix use "
               "bicgstab or gmres: {method} auto picks one)";
      return "r'M^-1 r <= 0" + at + ": matrix or preconditioner is not symmetric positive definite";
    case cg_non_finite:
      if (c.iteration == 0) return "initial residual is not finite";
      return (cg_finite(c.pq) ? std::string("residual") : std::string("p'Ap")) + " is not finite" + at;
    case cg_stagnation:
      if (l.divergence2 > 0 && c.rr > l.divergence2)
        return "diverged: ||r|| grew to " + short_number(std::sqrt(c.rr) / l.bnorm) + " ||b||" + at +
               " (more than 1e14 ||b||; a preconditioner, or gmres, whose residual never grows, may help)";
      if (c.rr > l.bnorm * l.bnorm)
        return "diverging: ||r|| grew to " + short_number(std::sqrt(c.rr) / l.bnorm) + " ||b|| and has not fallen 0.1% below its best (iteration " +
               std::to_string(c.best_iteration) + ") for " + std::to_string(l.stagnation_window) + " iterations" +
               stagnation_hint;
      return "no progress: the residual has not fallen 0.1% below its best (iteration " +
             std::to_string(c.best_iteration) + ") for " +
             std::to_string(l.stagnation_window) + " iterations" + stagnation_hint;
  }
  return "running";
}
/// The status a control block ended with (not cg_running).
inline solve_status status_of(int code) { return static_cast<solve_status>(code); }
}  // namespace detail


namespace detail {
/// The Backend contract of the header comment, checked at compile time.
template <typename B>
constexpr bool check_backend() {
  using V = typename B::vector;
  using T = typename B::value_type;
  static_assert(std::is_arithmetic_v<T>, "Backend::value_type: float or double");
  static_assert(std::is_convertible_v<decltype(B::largest_chunk), std::int64_t>,
                "Backend::largest_chunk: the most iterations iterate() queues at once");
  static_assert(std::is_convertible_v<decltype(std::declval<B&>().size()), std::int64_t>, "Backend::size()");
  static_assert(std::is_same_v<decltype(std::declval<B&>().check_input(std::declval<const V&>(), std::declval<const V&>())),
                               std::string>,
                "Backend::check_input(b, x) -> std::string");
  static_assert(std::is_same_v<decltype(std::declval<B&>().check_values(std::declval<const V&>(), std::declval<const V&>())),
                               std::string>,
                "Backend::check_values(b, x) -> std::string");
  static_assert(std::is_same_v<decltype(std::declval<B&>().check_preconditioner()), std::string>,
                "Backend::check_preconditioner() -> std::string");
  static_assert(std::is_convertible_v<decltype(std::declval<B&>().describe_preconditioner()), precond_report>,
                "Backend::describe_preconditioner() -> precond_report");
  static_assert(std::is_same_v<decltype(std::declval<B&>().nrm2(std::declval<const V&>())), double>,
                "Backend::nrm2(v) -> double");
  static_assert(std::is_void_v<decltype(std::declval<B&>().set_zero(std::declval<V&>()))>, "Backend::set_zero(x)");
  static_assert(std::is_void_v<decltype(std::declval<B&>().scale(std::declval<V&>(), 1.0))>, "Backend::scale(x, s)");
  static_assert(std::is_same_v<decltype(std::declval<B&>().scaled_copy(std::declval<const V&>(), 1.0)), V>,
                "Backend::scaled_copy(b, s) -> vector");
  static_assert(std::is_void_v<decltype(std::declval<B&>().start(std::declval<const V&>(), std::declval<V&>(),
                                                                 std::declval<const cg_limits&>()))>,
                "Backend::start(b, x, limits)");
  static_assert(std::is_void_v<decltype(std::declval<B&>().iterate(std::int64_t{}, std::declval<V&>()))>,
                "Backend::iterate(k, x)");
  static_assert(std::is_convertible_v<decltype(std::declval<B&>().report()), cg_control>,
                "Backend::report() -> the control block");
  static_assert(std::is_void_v<decltype(std::declval<B&>().history(std::int64_t{}, std::int64_t{},
                                                                   std::declval<std::vector<double>&>()))>,
                "Backend::history(first, last, out)");
  static_assert(std::is_same_v<decltype(std::declval<B&>().residual_norm(std::declval<const V&>(), std::declval<const V&>())),
                               double>,
                "Backend::residual_norm(b, x) -> double");
  return true;
}

/// The power of two that brings ||b|| near 1 when it is outside [2^-100, 2^100], else 1. At
/// most 2^1000, which is finite: a subnormal ||b|| (down to 2^-1074) is brought to 2^-74 or
/// more, well inside the range where the loop's dots neither underflow nor overflow.
inline double rhs_scale(double bnorm) {
  if (bnorm >= 0x1p-100 && bnorm <= 0x1p100) return 1;
  return std::ldexp(1.0, std::min(-std::ilogb(bnorm), 1000));
}

/// A hint for a breakdown that a preconditioner, not the matrix, may have caused.
inline std::string precond_hint(preconditioner p, const cg_control& c) {
  if (c.status == cg_breakdown && c.reason == reason_singular && form_of(p) != precond_form::identity)
    return std::string("; or the preconditioner is: with {precond} ") + to_string(p) +
           " the product A M^-1 is what is singular, and {precond} jacobi or none tells A's part";
  if (c.status != cg_breakdown || c.reason != reason_none) return {};
  return std::string(entry_of(p).cg_breakdown_hint);
}
}  // namespace detail

/// Runs a method's Backend from x's initial guess to a status; x holds the solution on exit.
template <typename Backend>
solve_result krylov_solve(Backend& be, const typename Backend::vector& b_in, typename Backend::vector& x,
                          const cg_options& opt) {
  static_assert(detail::check_backend<Backend>());
  using clock = std::chrono::steady_clock;
  using vector = typename Backend::vector;
  const auto t_setup = clock::now();
  auto seconds_since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  solve_result res;
  double bnorm = 0;      // of the system the loop solves (scaled)
  double threshold = 0;  // max(rtol*||b||, atol), scaled likewise
  double scale = 1;      // b and x are scaled by this during the loop
  double bnorm_given = 0;  // ||b|| of the system as given
  std::optional<vector> b_scaled;
  const vector* b = &b_in;
  auto finish = [&](solve_status s, std::string msg) {
    res.status = s;
    res.message = std::move(msg);
    if (s != solve_status::converged && !(s != solve_status::invalid_input && bnorm > 0 && std::isfinite(bnorm)))
      res.true_residual = std::numeric_limits<double>::quiet_NaN();  // not computed: no finite ||b|| to measure by
    if (s != solve_status::invalid_input && bnorm > 0 && std::isfinite(bnorm)) {
      res.true_residual = be.residual_norm(*b, x) / bnorm;
      // The recurrence drifts from the true residual in finite precision. Converged means
      // the true residual meets the tolerance (within the stated factor); otherwise the
      // precision's limit is the status, and the message says how far off it is.
      const double ratio = res.true_residual / std::max(res.residual, 1e-300);
      if (s == solve_status::converged && res.iterations > 0 &&
          !(res.true_residual * bnorm <= opt.true_residual_factor * threshold)) {
        res.status = solve_status::precision_limit;
        res.message = "the recurrence met the tolerance, but the true residual ||b-Ax||/||b|| = " +
                      short_number(res.true_residual) + " is more than " + short_number(opt.true_residual_factor) +
                      "x the tolerance (" + short_number(threshold / bnorm) + ") and " + short_number(ratio) +
                      "x the recurrence residual (rounding: the tolerance is below what this precision resolves)";
      } else if (s == solve_status::converged && res.true_residual * bnorm > threshold &&
                 res.true_residual > 10 * std::max(res.residual, 1e-300)) {
        res.message += "; the true residual is " + short_number(ratio) +
                       "x the recurrence residual (rounding: the tolerance may be below what this precision resolves)";
      }
    }
    if (scale != 1) {
      be.scale(x, 1 / scale);
      // The loop solved the scaled system; x = A^-1 b itself may lie outside double's range.
      // An overflowed entry is a non-finite solution; an underflowed one shows in the true
      // residual of the system as given.
      if (s != solve_status::invalid_input && res.status != solve_status::non_finite) {
        if (!std::isfinite(be.nrm2(x))) {  // nrm2 is scale-safe: not finite only where an entry is not
          res.status = solve_status::non_finite;
          res.message = "x = A^-1 b does not fit in double: its entries pass double's largest (about 1.8e308) "
                        "after scaling back by 2^" + std::to_string(-std::ilogb(scale)) + " (||b|| = " +
                        short_number(bnorm_given) + "); scale b (or A) towards 1";
        } else if (bnorm_given > 0 && std::isfinite(bnorm_given)) {
          const double given = be.residual_norm(b_in, x) / bnorm_given;
          if (given > res.true_residual) res.true_residual = given;
          if (res.status == solve_status::converged &&
              !(given * bnorm_given <= opt.true_residual_factor * std::max(opt.rtol * bnorm_given, opt.atol))) {
            res.status = solve_status::precision_limit;
            res.message = "the scaled system converged, but scaled back to ||b|| = " + short_number(bnorm_given) +
                          " the true residual is " + short_number(given) +
                          " of ||b||: x's entries fall below double's normal range (about 2.2e-308) and lose "
                          "their digits; scale b (or A) towards 1";
          }
        }
      }
    }
    return res;
  };
  if (std::string why = be.check_input(b_in, x); !why.empty()) return finish(solve_status::invalid_input, why);
  for (auto [name, v] : {std::pair{"rtol", opt.rtol}, std::pair{"atol", opt.atol}})
    if (!(v >= 0) || !std::isfinite(v))
      return finish(solve_status::invalid_input,
                    std::string(name) + " = " + short_number(v) + ": tolerances must be finite and non-negative");
  if (!(opt.true_residual_factor >= 1) || !std::isfinite(opt.true_residual_factor))
    return finish(solve_status::invalid_input, "true_residual_factor = " + short_number(opt.true_residual_factor) +
                                                   ": it must be finite and at least 1");
  if (opt.max_iterations < -1)
    return finish(solve_status::invalid_input,
                  "max_iterations = " + std::to_string(opt.max_iterations) + ": use -1 (2n) or a count >= 0");
  if (opt.stagnation_window < -1)
    return finish(solve_status::invalid_input, "stagnation_window = " + std::to_string(opt.stagnation_window) +
                                                   ": use -1 (automatic), 0 (never) or a count > 0");
  if (opt.restart < 1 || opt.restart > 1000)
    return finish(solve_status::invalid_input,
                  "restart = " + std::to_string(opt.restart) + ": the GMRES basis size must be 1 to 1000");
  if (std::string why = be.check_values(b_in, x); !why.empty()) return finish(solve_status::non_finite, why);

  bnorm = bnorm_given = be.nrm2(b_in);
  if (bnorm == 0) {  // the solution of A x = 0 is x = 0: no iteration needed
    be.set_zero(x);
    return finish(solve_status::converged, "right-hand side is zero; x = 0");
  }
  if (!std::isfinite(bnorm))
    return finish(solve_status::non_finite, "||b|| is not finite");
  scale = detail::rhs_scale(bnorm);
  if (scale != 1) {
    b_scaled.emplace(be.scaled_copy(b_in, scale));
    b = &*b_scaled;
    be.scale(x, scale);
    bnorm *= scale;
  }
  {
    const std::string why = be.check_preconditioner();
    res.precond = be.describe_preconditioner();
    if (!why.empty()) {
      res.precond_failed = true;
      res.setup_seconds = seconds_since(t_setup);  // the attempt's time counts as setup
      return finish(solve_status::breakdown, why);
    }
  }

  cg_limits lim;
  lim.bnorm = bnorm;
  threshold = std::max(opt.rtol * bnorm, opt.atol * scale);
  lim.threshold2 = threshold * threshold;
  lim.floor2 = (1e-140 * bnorm) * (1e-140 * bnorm);
  lim.max_iterations = opt.max_iterations >= 0 ? opt.max_iterations
                                               : default_max_iterations(be.size(), opt.method == krylov_method::cg);
  const bool is_cg = opt.method == krylov_method::cg;
  lim.stagnation_window = opt.stagnation_window >= 0 ? opt.stagnation_window : default_stagnation_window(be.size(), is_cg);
  if (!is_cg) lim.divergence2 = (1e14 * bnorm) * (1e14 * bnorm);

  be.start(*b, x, lim);
  cg_control c = be.report();
  const double start_rr = c.rr;
  res.residual = std::sqrt(c.rr) / bnorm;
  res.setup_seconds = seconds_since(t_setup);
  const auto t_loop = clock::now();
  std::int64_t done = 0;  // iterations of the segments before this one (restarts)
  auto run = [&] {
    detail::cg_chunks chunks(Backend::largest_chunk);
    double chunk_seconds = 0;
    while (c.status == cg_running) {
      const auto t_chunk = clock::now();
      be.iterate(chunks.next(c, lim, start_rr, chunk_seconds), x);
      const std::int64_t before = c.iteration;
      c = be.report();
      chunk_seconds = seconds_since(t_chunk);
      if (opt.record_history && c.iteration > before) be.history(before + 1, c.iteration, res.history);
      if (opt.progress) opt.progress({done + c.iteration, std::sqrt(c.rr) / bnorm, seconds_since(t_loop)});
    }
  };
  run();
  // BiCGSTAB's and GMRES's recurrences drift from the true residual where the residual
  // passes through large values (BiCGSTAB on convection-diffusion: a recurrence at 1e-8
  // with the true residual at 1e-4). Where the recurrence met the tolerance and the true
  // residual did not, the method restarts from x with r = b - A x (residual replacement),
  // while each restart at least halves the true residual, at most 5 times.
  int restarts = 0;
  double last_true = HUGE_VAL;
  const std::int64_t limit = lim.max_iterations;
  while (!is_cg && c.status == cg_converged && c.iteration > 0 && restarts < 5 && done + c.iteration < limit) {
    const double tr = be.residual_norm(*b, x);
    if (tr <= threshold || !(tr < 0.5 * last_true)) break;
    last_true = tr;
    ++restarts;
    done += c.iteration;
    lim.max_iterations = limit - done;
    be.start(*b, x, lim);
    c = be.report();
    run();
  }
  lim.max_iterations = limit;
  c.iteration += done;
  res.iterate_seconds = seconds_since(t_loop);
  res.iterations = c.iteration;
  res.residual = std::sqrt(c.rr) / bnorm;
  if (restarts > 0)
    return finish(detail::status_of(c.status),
                  detail::stop_message(c, lim) + "; restarted " + std::to_string(restarts) +
                      (restarts == 1 ? " time" : " times") +
                      " from x with the true residual, which the recurrence had drifted from");
  return finish(detail::status_of(c.status), detail::stop_message(c, lim) + detail::precond_hint(opt.precond, c));
}

}  // namespace la
