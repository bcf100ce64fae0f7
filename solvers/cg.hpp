// Preconditioned conjugate gradients (precond_options.hpp: none, Jacobi, block-Jacobi, FSAI,
// IC(0), ILU(0)): the Krylov skeleton's loop (krylov.hpp) over a CG Backend.
//
// A CG Backend meets krylov.hpp's contract with steps in the shape of Ginkgo's CG
// (initialize, then two steps an iteration), scalars in the backend's own memory
// (cg_control.hpp). In the order they run: start (the start step and the first direction
// step), then per iteration the residual step and the direction step:
//   void start(const vector& b, vector& x, const cg_limits&);  // r = b - A x, z = M^-1 r,
//                                              // the start decision, then a direction step (p = z)
//   void iterate(std::int64_t k, vector& x);   // queues k iterations (residual step, direction
//                                              // step); each does nothing once a status is set
//       residual step:  alpha = r'z / p'q, r -= alpha q, r'r and r'z, the stopping decision
//       direction step: x += alpha p (owed by the residual step); while running,
//                       p = z + beta p, q = A p, p'q (on the GPU one kernel for variants
//                       with a row walk: the SpMV reads z + beta p on the fly)
// The host never waits inside a chunk of k iterations: it reads the control block (the
// status, iteration and residual) once per chunk, and k adapts to the convergence rate and
// to the time a chunk takes. Iterations queued past the stop do nothing, so the reported
// count is exact. The loop follows Eigen's ConjugateGradient step for step so iteration
// counts can be compared, and reports non-convergence as a status, never as an exception.
// detail::check_backend<Backend>() holds every backend to this contract at compile time.
#pragma once

#include <la/solvers/krylov.hpp>
#include <la/solvers/registry.hpp>

namespace la {

/// Solves A x = b by CG; x holds the initial guess on entry and the solution on exit.
template <typename Backend>
solve_result cg(Backend& be, const typename Backend::vector& b, typename Backend::vector& x, const cg_options& opt) {
  // What the preconditioner's entry refuses for CG (with auto: what any it may pick refuses;
  // it picks only fixed ones).
  for (const preconditioner_entry& e : preconditioners()) {
    if (opt.precond != preconditioner::automatic ? e.kind != opt.precond : !e.fixed) continue;
    if (std::string why = e.refuses ? e.refuses(krylov_method::cg, opt) : std::string(); !why.empty()) {
      solve_result refused;  // invalid_input
      refused.solver = krylov_method::cg;
      refused.message = std::move(why);
      return refused;
    }
  }
  solve_result r = krylov_solve(be, b, x, opt);
  r.solver = krylov_method::cg;
  return r;
}

}  // namespace la
