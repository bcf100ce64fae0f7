// Iterative refinement's stop rule, one for every direct path (the sparse solver on the GPU
// and the host, the host's dense LU and float factors): steps until the backward error and the
// relative residual meet their targets, or two steps in a row halve neither, or a kind has
// used its steps; "auto" then turns to GMRES-based refinement from the best x.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

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

/// The same rule for k columns at once (X and the residuals n x k, column after column), where
/// the factors solve many columns in one pass: classical block steps while every open column's
/// measures halve. measure(c, r) puts column c's residual in r (n entries) and returns its
/// backward error and relative residual; solve_block(R) overwrites R with M^-1 R for all k
/// (closed columns' R zero). A column that meets the targets closes; the others are left open
/// (open[c] = 1) for the one-column rule, classical then GMRES-based. Returns each column's steps.
template <class Measure, class SolveBlock>
std::vector<int> refine_columns(const refine_rule& o, std::size_t n, std::size_t k, std::vector<double>& x,
                                std::vector<double>& be, std::vector<double>& rel, std::vector<char>& open,
                                Measure measure, SolveBlock solve_block) {
  std::vector<double> r(n * k, 0.0), best(n * k);
  std::vector<int> steps(k, 0);
  auto measure_open = [&] {
    for (std::size_t c = 0; c < k; ++c)
      if (open[c]) measure(c, r.data() + c * n, be[c], rel[c]);
  };
  auto met = [&](std::size_t c) { return be[c] <= o.backward && rel[c] <= o.relative; };
  measure_open();
  for (int step = 0; step < o.max_steps; ++step) {
    bool any = false;
    for (std::size_t c = 0; c < k; ++c) {
      if (open[c] && met(c)) open[c] = 0;
      if (!open[c]) std::fill(r.begin() + static_cast<std::ptrdiff_t>(c * n), r.begin() + static_cast<std::ptrdiff_t>((c + 1) * n), 0.0);
      any = any || open[c];
    }
    if (!any) break;
    best = x;
    const std::vector<double> be0 = be, rel0 = rel;
    solve_block(r.data());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += r[i];
    measure_open();
    bool halved_all = true;
    for (std::size_t c = 0; c < k; ++c) {
      if (!open[c]) continue;
      ++steps[c];
      if ((be[c] < 0.5 * be0[c] || rel[c] < 0.5 * rel0[c]) || met(c)) continue;
      halved_all = false;
      if (rel[c] > rel0[c] || (rel[c] == rel0[c] && be[c] > be0[c])) {  // worse: the best x back
        std::copy(best.begin() + static_cast<std::ptrdiff_t>(c * n), best.begin() + static_cast<std::ptrdiff_t>((c + 1) * n),
                  x.begin() + static_cast<std::ptrdiff_t>(c * n));
        be[c] = be0[c], rel[c] = rel0[c];
      }
    }
    if (!halved_all) break;
  }
  for (std::size_t c = 0; c < k; ++c)
    if (open[c] && met(c)) open[c] = 0;
  return steps;
}

}  // namespace la::detail
