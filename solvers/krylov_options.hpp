// What every Krylov solve is asked and answers (krylov.hpp runs it): the methods, the
// statuses, the options, the result, and the default limits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <la/types.hpp>
#include <la/solvers/direct_options.hpp>
#include <la/solvers/method_kind.hpp>
#include <la/solvers/cg_control.hpp>
#include <la/solvers/precond_options.hpp>

namespace la {


/// The outcome of a solve. The statuses a backend's stopping rule sets take their values
/// from cg_code (cg_control.hpp), so a control block's status converts with a cast; the
/// others are decided on the host.
enum class solve_status : int {
  converged = cg_converged,            // ||r|| <= max(rtol*||b||, atol), and the true residual too (see below)
  max_iterations = cg_max_iterations,  // stopped at the iteration limit
  breakdown = cg_breakdown,            // CG: p'Ap <= 0 or r'z <= 0 (not SPD); BiCGSTAB: rho, r0'v or omega = 0
  non_finite = cg_non_finite,          // a NaN or Inf in A, b, the initial guess or an iterate
  stagnation = cg_stagnation,          // ||r|| did not fall 0.1% below its best for cg_options::stagnation_window iterations
  invalid_input = cg_stagnation + 1,   // sizes disagree, A is not square, or an option is out of range
  precision_limit, // the recurrence met the tolerance, the true residual ||b - Ax|| did not (by more than
                   // cg_options::true_residual_factor): the tolerance is below what the precision resolves
};

const char* to_string(solve_status s) noexcept;

/// Progress of a running solve, reported once per chunk of iterations (see cg_options).
struct cg_progress {
  std::int64_t iteration = 0;
  double residual = 0;  // ||r|| / ||b||
  double seconds = 0;   // since the iteration started
};

struct sparse_analysis;  // sparse_analysis.hpp

struct cg_options {
  double rtol = 1e-8;                    // relative to ||b||
  double atol = 0;                       // absolute floor on ||r||
  std::int64_t max_iterations = -1;      // -1: 2 * n, as Eigen (64-bit: n may exceed 2^30)
  std::int64_t stagnation_window = -1;   // -1: max(1000, 10 sqrt(n)); 0: never
  /// The method (krylov.hpp). cg_host/cg_device run CG whatever this says; solve_host and
  /// solve_device (method.hpp) take it, resolving automatic from the matrix.
  krylov_method method = krylov_method::cg;
  int restart = 30;                      // GMRES(m) and FGMRES(m): the basis size m, 1 to 1000
  /// method automatic on a double A that does not look SPD and has at most this many rows:
  /// the sparse direct solver first, the Krylov methods where it does not solve A (0: never).
  std::int64_t auto_direct_rows = 20000;
  /// method automatic on a double A that looks SPD and has at most auto_direct_spd_nnz
  /// nonzeros: the sparse analysis predicts the factorization's multiply-adds, and at most this
  /// many take the direct method first (0: never; method.hpp says what was measured).
  double auto_direct_flops = 2e5;
  /// Set by that rule where it picks the direct method: its analysis of A's pattern, which the
  /// host's direct method then uses instead of making it again (null: none).
  std::shared_ptr<const sparse_analysis> spd_analysis;
  /// The direct method's options: its ordering and refinement (solvers/direct/method.cpp declares them).
  direct_options direct;
  /// solve_host/solve_device refuse CG on a matrix whose values are not symmetric (an
  /// invalid_input naming the alternative) unless this is set.
  bool force = false;
  /// The caller knows A's values are symmetric (a Matrix Market file declared symmetric, which
  /// the reader expands): the host's auto choice then checks only the diagonal, not the mirror
  /// of every entry.
  bool known_symmetric = false;
  /// automatic: select_preconditioner's rule for CG, auto_precond_for's for the others (method.hpp).
  preconditioner precond = preconditioner::automatic;
  precond_options precond_opt;           // the pattern, shift or block size of precond
  /// converged means the true residual ||b - Ax||, recomputed at the end, is within this
  /// factor of the tolerance max(rtol*||b||, atol); a recurrence that met the tolerance
  /// while the true residual did not is precision_limit. The tests hold the solvers to the
  /// same factor.
  double true_residual_factor = 100;
  bool record_history = false;           // keep ||r||/||b|| of every iteration
  /// Called between chunks of iterations (on the calling thread, when the host has read the
  /// control block anyway: it costs the device nothing).
  std::function<void(const cg_progress&)> progress;
  /// The numeric options of methods added at run time (registry.hpp, add_method), by declared
  /// name: their option_spec's set stores them here.
  std::map<std::string, double, std::less<>> extra;
};

struct solve_result {
  solve_status status = solve_status::invalid_input;
  std::int64_t iterations = 0;           // matrix-vector products inside the loop
  double residual = 0;                   // recurrence residual ||r_k|| / ||b||
  double true_residual = 0;              // ||b - A x|| / ||b||, recomputed at the end (NaN: not
                                         // computed, when b or A holds NaN or the input was refused)
  std::string message;                   // one sentence for a person
  std::string method;                    // where and how it ran (method, backend, format, kernel, path)
  krylov_method solver = krylov_method::cg;  // the method that ran (automatic resolved)
  std::string solver_choice;             // why that method (solve_host/solve_device), for a person
  /// auto's first method where it handed over to GMRES (method.hpp); automatic where it did not.
  krylov_method handed_over_from = krylov_method::automatic;
  std::vector<double> history;           // per iteration, when asked for
  double analysis_seconds = 0;           // auto's look at A (symmetry, diagonal) before the method is chosen
  double setup_seconds = 0;              // checks, workspace, preconditioner, first residual
  precond_report precond;                // the preconditioner built: its kind, setup time, memory, shift
  bool precond_failed = false;           // the preconditioner does not exist for A (the message says why)
  double iterate_seconds = 0;            // the loop, to the last status read
  bool converged() const noexcept { return status == solve_status::converged; }
};

inline const char* to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::converged: return "converged";
    case solve_status::max_iterations: return "max_iterations";
    case solve_status::breakdown: return "breakdown";
    case solve_status::non_finite: return "non_finite";
    case solve_status::stagnation: return "stagnation";
    case solve_status::invalid_input: return "invalid_input";
    case solve_status::precision_limit: return "precision_limit";
  }
  return "unknown";
}

/// The iteration limit when cg_options::max_iterations is -1: 2n, as Eigen (in 64 bits, so
/// it stays right for n above 2^30); at least 20000 for the methods other than CG, whose
/// counts on small non-symmetric systems pass 2n (PETSc's BiCGSTAB needs 14233 on a
/// 5242-row graph matrix: bench/RESULTS.md, "Non-symmetric systems").
inline std::int64_t default_max_iterations(std::int64_t n, bool cg = true) noexcept {
  return cg ? 2 * n : std::max<std::int64_t>(2 * n, 20000);
}
/// The stagnation window when cg_options::stagnation_window is -1: for the methods other
/// than CG 5x longer, since BiCGSTAB's residual plateaus for thousands of iterations before it
/// converges on some real systems (fidapex6: no 0.1% progress from iteration 1221 to 2221,
/// converged at 8195 by the vendor recipe: bench/RESULTS.md, "Non-symmetric systems").
inline std::int64_t default_stagnation_window(std::int64_t n, bool cg = true) noexcept {
  return (cg ? 1 : 5) * std::max<std::int64_t>(1000, static_cast<std::int64_t>(10 * std::sqrt(static_cast<double>(n))));
}

/// A ratio or tolerance for a message: short scientific form ("2.4e-06", "0", "inf").
inline std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace la
