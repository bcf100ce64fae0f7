// The control block and the stopping rule every Krylov method shares (CG, BiCGSTAB, GMRES),
// with CG's own scalars and steps.
//
// A backend keeps one cg_control in its own memory (a host struct, or device memory the
// GPU kernels read and write) and calls the same functions on it, so the host backend and
// every GPU path apply the same rule (the same stopping tests, thresholds and status codes)
// to their own dots: the host's are summed in long double (double for float solves) in
// index order, the GPU's are fma products in double summed per block and then in block
// order, so the numbers agree to rounding, not bit for bit. The host backend is the oracle
// for the GPU steps (iteration counts and residuals compared with a tolerance). Scalars are double for both value types (float solves keep
// their dots and step lengths in double).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define LA_HOST_DEVICE __host__ __device__
#else
#define LA_HOST_DEVICE
#endif

namespace la {

/// False for NaN and +-Inf (v - v is NaN for both); works the same on host and device.
LA_HOST_DEVICE inline bool cg_finite(double v) { return v - v == 0; }

/// What stops the iteration (fixed for one solve).
struct cg_limits {
  double threshold2 = 0;        // stop when ||r||^2 <= threshold2 (max(rtol*||b||, atol)^2)
  double bnorm = 1;             // ||b||, for the relative residual in the history
  std::int64_t max_iterations = 0;
  std::int64_t stagnation_window = 0;  // stop when ||r|| has not fallen 0.1% below its best for this many iterations
  /// A recurrence residual at or below sqrt(floor2) ends the iteration whatever the
  /// tolerance: far below what the precision resolves (krylov.hpp sets 1e-140 ||b||), and
  /// above where the recurrence's squares underflow, so a tolerance of 0 ends in
  /// precision_limit instead of a breakdown from underflowed dots.
  double floor2 = 0;
  /// The methods other than CG stop when r'r passes this (krylov.hpp sets (1e14 ||b||)^2, far
  /// above PETSc's 1e5: BiCGSTAB on convection-diffusion peaks at 2e10 ||b|| and converges):
  /// a status of stagnation whose message says the residual diverged.
  double divergence2 = 0;
};

/// Status codes in cg_control::status: running, or the stopping rule's outcome. solve_status
/// (cg.hpp) takes its values from these, so a status converts with a cast.
enum cg_code : int {
  cg_running = 0,
  cg_converged = 1,
  cg_max_iterations = 2,
  cg_breakdown = 3,
  cg_non_finite = 4,
  cg_stagnation = 5,
};

/// Which quantity broke down (cg_control::reason), for the message: CG's own tests leave it
/// 0 (p'Ap or r'z, told apart by their values); the other methods name theirs.
enum krylov_reason : int {
  reason_none = 0,
  reason_bicg_rho = 1,    // BiCGSTAB: rho = r0'r = 0 (r orthogonal to the shadow residual)
  reason_bicg_rv = 2,     // BiCGSTAB: r0'A M^-1 p = 0
  reason_bicg_omega = 3,  // BiCGSTAB: omega = 0 (t's = 0, or t = A M^-1 s = 0 with s != 0)
  reason_singular = 4,    // GMRES: A M^-1 v = 0 for a basis vector v (A or M^-1 is singular)
};

/// The iteration's scalars. Who writes what: start writes all; the direction step (x += alpha p, the new
/// direction p = z + beta p, q = A p and p'q) writes pq and clears x_pending; the residual step (alpha,
/// r -= alpha q, r'r and r'z, the decision) writes the rest.
struct cg_control {
  int status = cg_running;
  int x_pending = 0;           // the direction step owes x += alpha p for the iteration the residual step just ran
  std::int64_t iteration = 0;  // completed matrix-vector products in the loop
  double pq = 0;               // p'Ap of the current iteration
  double alpha = 0, beta = 0;
  double rz = 0;               // r'M^-1 r (r'r without a preconditioner)
  double rr = 0;               // r'r
  double best_rr = 0;          // smallest r'r so far, and when
  std::int64_t best_iteration = 0;
  int reason = reason_none;    // krylov_reason of a breakdown
};

/// The stop rule every method applies to its residual estimate r'r after an iteration:
/// non-finite, converged (at the tolerance or the floor), the limit, stagnation, else
/// running. The caller has counted the iteration.
LA_HOST_DEVICE inline void krylov_decide(cg_control& c, const cg_limits& l, double rr) {
  c.rr = rr;
  if (rr < 0.998 * c.best_rr) c.best_rr = rr, c.best_iteration = c.iteration;
  if (!cg_finite(rr)) c.status = cg_non_finite;
  else if (rr <= l.threshold2 || rr <= l.floor2) c.status = cg_converged;
  else if (c.iteration >= l.max_iterations) c.status = cg_max_iterations;
  else if (l.stagnation_window > 0 && c.iteration - c.best_iteration >= l.stagnation_window) c.status = cg_stagnation;
  else if (l.divergence2 > 0 && rr > l.divergence2) c.status = cg_stagnation;
  else c.status = cg_running;
}
/// The start of every method other than CG: the first residual's r'r decides.
LA_HOST_DEVICE inline void krylov_decide_start(cg_control& c, const cg_limits& l, double rr) {
  c.iteration = 0;
  c.x_pending = 0;
  c.reason = reason_none;
  c.rr = c.best_rr = rr;
  c.best_iteration = 0;
  if (!cg_finite(rr)) c.status = cg_non_finite;
  else if (rr <= l.threshold2 || rr <= l.floor2) c.status = cg_converged;
  else if (l.max_iterations <= 0) c.status = cg_max_iterations;
  else c.status = cg_running;
}

/// GMRES: whether the new column of H, after the earlier rotations, has (numerically) nothing
/// outside the earlier columns: its last entry d within 1e-14 of the column's norm (A M^-1 v_j
/// lies in the span of the earlier A M^-1 v_i, so A M^-1 is singular to double's precision; a
/// non-singular A gets there only with a condition number past 1e14). Solving with such a
/// d would scale the update by 1e14 or more (measured: diag(1,1,0,1,1) "diverged" to 4e15 ||b||).
LA_HOST_DEVICE inline bool gmres_column_singular(double d, double col2) {
  return !(d > 1e-14 * sqrt(col2));
}
/// GMRES: the new column of H is zero after the rotations (A M^-1 v = 0 for the new basis
/// vector v, so A or M^-1 is singular). The rotation then leaves the residual where it was
/// (|g_j|), so the zero that krylov_decide saw in g_{j+1} is not convergence: a breakdown,
/// unless the residual already met the tolerance.
LA_HOST_DEVICE inline void gmres_singular_column(cg_control& c, const cg_limits& l, double gj) {
  if (c.status != cg_running && c.status != cg_converged) return;
  c.rr = gj * gj;
  if (c.rr <= l.threshold2) return void(c.status = cg_converged);
  c.status = cg_breakdown;
  c.reason = reason_singular;
}

/// After the first residual: its r'r and r'z decide whether to iterate at all. alpha and
/// beta start at 0, so the first direction step makes p = z (the old direction is zero).
LA_HOST_DEVICE inline void cg_decide_start(cg_control& c, const cg_limits& l, double rr, double rz) {
  c.iteration = 0;
  c.x_pending = 0;
  c.rr = rr;
  c.rz = rz;
  c.best_rr = rr;
  c.best_iteration = 0;
  c.pq = c.alpha = c.beta = 0;
  if (!cg_finite(rr) || !cg_finite(rz)) c.status = cg_non_finite;
  else if (rr <= l.threshold2 || rr <= l.floor2) c.status = cg_converged;
  else if (!(rz > 0)) c.status = cg_breakdown;
  else if (l.max_iterations <= 0) c.status = cg_max_iterations;
  else c.status = cg_running;
}

/// The residual step's step length from the direction step's p'Ap: false (and a status set) when p'Ap is not a
/// positive finite number, in which case the iteration updates nothing.
LA_HOST_DEVICE inline bool cg_step_length(const cg_control& c, double& alpha) {
  if (!cg_finite(c.pq) || !(c.pq > 0)) return false;
  alpha = c.rz / c.pq;
  return true;
}
LA_HOST_DEVICE inline void cg_decide_bad_pq(cg_control& c) {
  c.iteration += 1;
  c.x_pending = 0;
  c.status = cg_finite(c.pq) ? cg_breakdown : cg_non_finite;
}

/// End of the residual step, with the updated residual's r'r and r'z: status, beta, the bookkeeping.
LA_HOST_DEVICE inline void cg_decide_step(cg_control& c, const cg_limits& l, double alpha, double rr, double rz) {
  c.iteration += 1;
  c.alpha = alpha;
  c.x_pending = 1;
  c.rr = rr;
  // Progress means ||r|| at least 0.1% below the best so far (0.998 ~ 0.999^2 on r'r), so
  // rounding noise on a plateau does not count as progress.
  if (rr < 0.998 * c.best_rr) c.best_rr = rr, c.best_iteration = c.iteration;
  if (!cg_finite(rr) || !cg_finite(rz)) c.status = cg_non_finite;
  else if (rr <= l.threshold2 || rr <= l.floor2) c.status = cg_converged;
  else if (!(rz > 0)) c.status = cg_breakdown;
  else if (c.iteration >= l.max_iterations) c.status = cg_max_iterations;
  else if (l.stagnation_window > 0 && c.iteration - c.best_iteration >= l.stagnation_window) c.status = cg_stagnation;
  else c.status = cg_running;
  c.beta = c.status == cg_running ? rz / c.rz : 0;
  if (c.status == cg_running) c.rz = rz;
}

/// The relative residual the history records for an iteration.
LA_HOST_DEVICE inline double cg_relative(const cg_control& c, const cg_limits& l) { return sqrt(c.rr) / l.bnorm; }

}  // namespace la
