// What the direct method's two sides (host_direct, device_direct) make alike from the caller's
// options: la::sparse_direct_solver's options, and the backward error its static pivoting must
// reach before the dense LU takes over.
#pragma once

#include <algorithm>

#include <la/solvers/krylov_options.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la::direct_detail {

/// The backward error a sparse LU with static pivoting (or UMFPACK's threshold pivoting) must
/// reach, or the dense LU with partial pivoting takes over where it fits.
constexpr double static_pivoting_backward = 1e-13;

/// The sparse solver's options from the direct method's: the ordering and refinement asked for,
/// and refinement that stops at a relative residual a thousandth of the caller's tolerance (the
/// solver's 1e-15 default took five steps, GMRES-based ones included, on a 2D Poisson 300^2
/// whose first solve already met 1e-8). auto's analysis of A's pattern is reused where the
/// ordering is the automatic one it was made with.
inline sparse_direct_options sparse_options_of(const cg_options& opt) {
  sparse_direct_options so;
  so.refine_residual = std::max(so.refine_residual, 1e-3 * opt.rtol);
  so.ordering = opt.direct.ordering, so.refinement = opt.direct.refinement, so.max_refinement = opt.direct.max_refinement;
  if (opt.direct.ordering == fill_ordering::automatic) so.pattern_analysis = opt.spd_analysis;
  return so;
}

}  // namespace la::direct_detail
