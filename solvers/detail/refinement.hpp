// Iterative refinement's stop rule, one for every direct path (the sparse solver on the GPU
// and the host, the host's dense LU and float factors): steps until the backward error and the
// relative residual meet their targets, or two steps in a row halve neither, or a kind has
// used its steps; "auto" then turns to GMRES-based refinement from the best x.
#pragma once

#include <cmath>

#include <la/solvers/direct_options.hpp>

namespace la::detail {

struct refine_rule {
  using kind = refinement_kind;
  kind how = kind::automatic;
  int max_steps = 10;          // per kind
  double backward = 2e-16;     // ||b - Ax||_inf / (||A||_inf ||x||_inf + ||b||_inf) to stop at
  double relative = 1e-15;     // ||b - Ax||_2 / ||b||_2 to stop at
};

/// be and rel come in as the first solution's backward error and relative residual and go out
/// as the best x's. step(gmres, be, rel) takes one step (x += M^-1 r, or one GMRES cycle's
/// correction), leaves the new x's residual where the caller keeps it and sets its be and rel;
/// keep() saves x as the best; restore() puts the best x back. Returns the steps taken.
template <class Step, class Keep, class Restore>
int refine(const refine_rule& o, double& be, double& rel, Step step, Keep keep, Restore restore) {
  double best_be = be, best_rel = rel;
  bool gmres = o.how == refine_rule::kind::gmres;
  int steps = 0, in_kind = 0, slow = 0;
  while (best_be > o.backward || best_rel > o.relative) {
    if (in_kind >= o.max_steps || slow >= 2 || !std::isfinite(be)) {
      if (gmres || o.how != refine_rule::kind::automatic) break;
      gmres = true, in_kind = 0, slow = 0;
      restore();
      be = best_be, rel = best_rel;
    }
    const double prev = be, prev_rel = rel;
    step(gmres, be, rel);
    ++steps, ++in_kind;
    if (rel < best_rel || (rel == best_rel && be < best_be)) {
      best_be = be, best_rel = rel;
      keep();
    }
    slow = be < 0.5 * prev || rel < 0.5 * prev_rel ? 0 : slow + 1;
  }
  be = best_be, rel = best_rel;
  return steps;
}

}  // namespace la::detail
