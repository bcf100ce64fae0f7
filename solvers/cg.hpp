// Conjugate gradients, optionally Jacobi-preconditioned, as a backend-free loop.
//
// The loop only talks to a Backend (host_backend.hpp today, a device backend later):
//   using value_type; using vector;
//   index_t size(); vector make_vector();
//   void residual(const vector& b, const vector& x, vector& r);   // r = b - A*x
//   void spmv(const vector& p, vector& q);                         // q = A*p
//   value_type dot(const vector&, const vector&); value_type nrm2(const vector&);
//   void axpy(value_type a, const vector& x, vector& y);           // y += a*x
//   void xpay(const vector& x, value_type b, vector& y);           // y = x + b*y
//   void precondition(const vector& r, vector& z);                 // z = M^-1 r
//   void fill(vector&, value_type);
//   std::string check_input(const vector& b, const vector& x);     // "" when usable
//   std::string check_preconditioner();                            // "" when usable
// It follows Eigen's ConjugateGradient step for step so iteration counts can be compared,
// and reports non-convergence as a status, never as an exception.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "../la/types.hpp"

namespace la {

enum class preconditioner { none, jacobi };

enum class solve_status {
  converged,       // ||r|| <= max(rtol*||b||, atol)
  max_iterations,  // stopped at the iteration limit
  breakdown,       // p'Ap <= 0 or r'z <= 0: the matrix (or preconditioner) is not SPD
  non_finite,      // a NaN or Inf appeared during the iteration
  invalid_input,   // sizes disagree, or A, b or x0 hold NaN/Inf, or A is not square
};

const char* to_string(solve_status s) noexcept;
const char* to_string(preconditioner p) noexcept;

struct cg_options {
  double rtol = 1e-8;                    // relative to ||b||
  double atol = 0;                       // absolute floor on ||r||
  std::int64_t max_iterations = -1;      // -1: 2 * n, as Eigen (64-bit: n may exceed 2^30)
  preconditioner precond = preconditioner::none;
  bool record_history = false;           // keep ||r||/||b|| of every iteration
};

struct solve_result {
  solve_status status = solve_status::invalid_input;
  std::int64_t iterations = 0;           // matrix-vector products inside the loop
  double residual = 0;                   // recurrence residual ||r_k|| / ||b||
  double true_residual = 0;              // ||b - A x|| / ||b||, recomputed at the end
  std::string message;                   // one sentence for a person
  std::vector<double> history;           // per iteration, when asked for
  bool converged() const noexcept { return status == solve_status::converged; }
};

inline const char* to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::converged: return "converged";
    case solve_status::max_iterations: return "max_iterations";
    case solve_status::breakdown: return "breakdown";
    case solve_status::non_finite: return "non_finite";
    case solve_status::invalid_input: return "invalid_input";
  }
  return "unknown";
}
inline const char* to_string(preconditioner p) noexcept {
  return p == preconditioner::jacobi ? "jacobi" : "none";
}

/// The iteration limit when cg_options::max_iterations is -1: 2n, as Eigen (in 64 bits, so
/// it stays right for n above 2^30).
inline std::int64_t default_max_iterations(std::int64_t n) noexcept { return 2 * n; }

/// Solves A x = b; x holds the initial guess on entry and the solution on exit.
template <typename Backend>
solve_result cg(Backend& be, const typename Backend::vector& b, typename Backend::vector& x,
                const cg_options& opt) {
  using T = typename Backend::value_type;
  solve_result res;
  auto finish = [&](solve_status s, std::string msg, double bnorm) {
    res.status = s;
    res.message = std::move(msg);
    if (s != solve_status::invalid_input && bnorm > 0) {
      auto r = be.make_vector();
      be.residual(b, x, r);
      res.true_residual = static_cast<double>(be.nrm2(r)) / bnorm;
    }
    return res;
  };
  if (std::string why = be.check_input(b, x); !why.empty())
    return finish(solve_status::invalid_input, why, 0);
  for (auto [name, v] : {std::pair{"rtol", opt.rtol}, std::pair{"atol", opt.atol}})
    if (!(v >= 0) || !std::isfinite(v))
      return finish(solve_status::invalid_input,
                    std::string(name) + " = " + std::to_string(v) + ": tolerances must be finite and non-negative", 0);
  if (opt.max_iterations < -1)
    return finish(solve_status::invalid_input,
                  "max_iterations = " + std::to_string(opt.max_iterations) + ": use -1 (2n) or a count >= 0", 0);

  const double bnorm = static_cast<double>(be.nrm2(b));
  if (bnorm == 0) {  // the solution of A x = 0 is x = 0: no iteration needed
    be.fill(x, T(0));
    return finish(solve_status::converged, "right-hand side is zero; x = 0", 0);
  }
  if (std::string why = be.check_preconditioner(); !why.empty())
    return finish(solve_status::breakdown, why, bnorm);
  const std::int64_t maxit = opt.max_iterations >= 0 ? opt.max_iterations : default_max_iterations(be.size());
  const double threshold = std::max(opt.rtol * bnorm, opt.atol);

  auto r = be.make_vector(), z = be.make_vector(), p = be.make_vector(), q = be.make_vector();
  be.residual(b, x, r);
  double rnorm = static_cast<double>(be.nrm2(r));
  res.residual = rnorm / bnorm;
  if (!std::isfinite(rnorm))
    return finish(solve_status::non_finite, "initial residual is not finite", bnorm);
  if (rnorm <= threshold) return finish(solve_status::converged, "initial guess already solves the system", bnorm);

  be.precondition(r, z);
  be.xpay(z, T(0), p);  // p = z
  T rz = be.dot(r, z);
  if (!(rz > T(0)))
    return finish(solve_status::breakdown,
                  "r'M^-1 r <= 0 at the start: the preconditioner is not positive definite", bnorm);

  for (std::int64_t it = 1; it <= maxit; ++it) {
    be.spmv(p, q);
    const T pq = be.dot(p, q);
    if (!std::isfinite(static_cast<double>(pq)))
      return res.iterations = it, finish(solve_status::non_finite, "p'Ap is not finite at iteration " + std::to_string(it), bnorm);
    if (pq <= T(0))
      return res.iterations = it,
             finish(solve_status::breakdown,
                    "p'Ap = " + std::to_string(static_cast<double>(pq)) + " <= 0 at iteration " +
                        std::to_string(it) + ": matrix is not symmetric positive definite",
                    bnorm);
    const T alpha = rz / pq;
    be.axpy(alpha, p, x);
    be.axpy(-alpha, q, r);
    rnorm = static_cast<double>(be.nrm2(r));
    res.iterations = it;
    res.residual = rnorm / bnorm;
    if (opt.record_history) res.history.push_back(res.residual);
    if (!std::isfinite(rnorm))
      return finish(solve_status::non_finite, "residual is not finite at iteration " + std::to_string(it), bnorm);
    if (rnorm <= threshold)
      return finish(solve_status::converged, "||r|| <= max(rtol*||b||, atol)", bnorm);
    be.precondition(r, z);
    const T rz_new = be.dot(r, z);
    if (!(rz_new > T(0)))
      return finish(solve_status::breakdown,
                    "r'M^-1 r <= 0 at iteration " + std::to_string(it) +
                        ": matrix or preconditioner is not symmetric positive definite",
                    bnorm);
    be.xpay(z, rz_new / rz, p);  // p = z + beta p
    rz = rz_new;
  }
  return finish(solve_status::max_iterations,
                "stopped after " + std::to_string(maxit) + " iterations without reaching the tolerance", bnorm);
}

}  // namespace la
