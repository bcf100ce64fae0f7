// The sparse direct solver's fronts (sparse_direct_solver.hpp): the symbols the host builds
// once per analysis, which the GPU's multifrontal factorization and solve read, and the host
// oracle that factors the same fronts sequentially. detail/solver_impl.hpp says what each array
// holds.
#pragma once

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la::sparse_detail {

struct front_symbols {
  index_t n = 0;
  bool spd = false;        // no matching: M = A
  index_t singular = 0;    // structurally singular: the column (1-based, A's) the matching leaves
  double tiny = 0;         // static pivoting's threshold, sqrt(eps) max |M|
  sparse_analysis an;
  // The solve: y[k] = in_scale[k] b[in_idx[k]]; x[out_idx[k]] = out_scale[k] y[k].
  std::vector<index_t> in_idx, out_idx;
  std::vector<double> in_scale, out_scale;
  // A's entries in the fronts: F[ent_pos[e]] = A.values()[ent_src[e]] * ent_scale[e].
  std::vector<count_t> ent_src;
  std::vector<double> ent_scale;
  std::vector<long> ent_pos;
  // Front s: F + f_off[s], f_m[s] x f_m[s], its columns [f_first[s], f_first[s] + f_nc[s]);
  // its rows f_rows[f_vec[s] ...] (R_s); its map into the parent's front f_rel[f_map[s] ...].
  std::vector<long> f_off, f_vec, f_map;
  std::vector<int> f_m, f_nc, f_first, f_rows, f_rel;
  long front_total = 0, vec_total = 0;
  std::vector<int> level_list;            // fronts by level, leaves first
  std::vector<std::size_t> level_ptr;
  // The extend-add's items: (front, row) receiving the (child, child row) pairs
  // con_*[item_ptr[i] ...]; a level's items are [level_items[l], level_items[l + 1]).
  std::vector<int> item_front, item_row, con_child, con_row;
  std::vector<long> item_ptr;
  std::vector<std::size_t> level_items;
  double seconds = 0;
  std::size_t levels() const noexcept { return level_ptr.empty() ? 0 : level_ptr.size() - 1; }
};

/// The GPU solve's levels whose fronts all have at most this many rows run a warp a front, the
/// whole front in it (detail/solve_kernels.cuh; such levels have no split fronts).
constexpr int warp_front_rows = 32;
/// The solve's split fronts: where a front's off-diagonal block (L21, U12) holds split_at
/// entries or more (big_front^2), its products run as their own launch over many blocks
/// (detail/solve_kernels.cuh), the triangular part on one; below it the whole front is one
/// block's work.
constexpr bool split_solve(long m, long nc, long split_at) { return (m - nc) * nc >= split_at; }

/// The matching (matched) or none, the analysis of M's pattern, the supernodes' row
/// structures (checked against the analysis's column counts), levels, maps and items.
/// flop_rate: the factorization's speed, for the automatic ordering's choice (analyze_pattern).
/// given: an analysis of A's own pattern to use where not matched (auto's, cg_options::
/// spd_analysis), instead of making it.
front_symbols build_fronts(const csr_matrix<double, count_t>& a, bool matched, fill_ordering o, double flop_rate = 2e11,
                           const sparse_analysis* given = nullptr);

/// The host oracle of the numeric factorization: the fronts of A's values factored one after
/// another (children before parents), without pivoting, the static pivot rule of the GPU's
/// (spd: a pivot that is not positive sets bad_column, 1-based in A's numbering, first one).
std::vector<double> factor_fronts_host(const front_symbols& f, const std::vector<double>& values, index_t& perturbed,
                                       index_t& bad_column);

/// The same factorization blocked and on `threads` host threads (a level's fronts shared out
/// where it has many, a big front's rows where it has few): bit for bit the oracle's factors
/// (each entry's operations in the oracle's order). The host's direct method runs it.
std::vector<double> factor_fronts_threaded(const front_symbols& f, const std::vector<double>& values, int threads,
                                           index_t& perturbed, index_t& bad_column);

/// b (n, A's numbering) overwritten with the fronts' solution of A x = b (transposed: A^T x = b,
/// for the condition estimate).
void solve_fronts_host(const front_symbols& f, const std::vector<double>& F, double* b, bool transposed = false);

/// The same for k right-hand sides (b n x k, column after column) through the fronts together:
/// each front is read once for all k. Not transposed.
void solve_fronts_host_columns(const front_symbols& f, const std::vector<double>& F, double* b, index_t k);

/// r = b - A x summed in long double; returns the backward error ||r||_inf / (a_inf ||x||_inf +
/// ||b||_inf) and sets rel = ||r||_2 / ||b||_2 (the host solve's refinement).
double residual_host(const csr_matrix<double, count_t>& a, double a_inf, const double* b, const std::vector<double>& x,
                     std::vector<double>& r, double& rel);

/// The refinement's stop rule from the solver's options (detail/refinement.hpp: the same on the
/// GPU and the host, and for every direct path).
inline detail::refine_rule refine_rule_of(const sparse_direct_options& o) {
  detail::refine_rule r;
  r.how = o.refinement;
  r.max_steps = o.max_refinement, r.backward = o.refine_tolerance, r.relative = o.refine_residual;
  return r;
}
template <class Step, class Keep, class Restore>
int refine(const sparse_direct_options& o, double& be, double& rel, Step step, Keep keep, Restore restore) {
  return detail::refine(refine_rule_of(o), be, rel, step, keep, restore);
}
/// The host's solve of one right-hand side with the fronts F, refined against A as the GPU's
/// is (sparse_detail::refine: classical, then GMRES-based per the options). The GMRES basis is
/// made at its first use and kept for the next solve.
class host_refinement {
 public:
  host_refinement(const csr_matrix<double, count_t>& a, double a_inf, const front_symbols& f, const std::vector<double>& F,
                  const sparse_direct_options& o);
  ~host_refinement();
  /// x (n) = A^-1 b, refined; the report's steps, GMRES iterations, backward error and relative residual.
  sparse_direct_report solve(const double* b, std::vector<double>& x);
  struct basis;

 private:
  const csr_matrix<double, count_t>& a_;
  double a_inf_;
  const front_symbols& f_;
  const std::vector<double>& F_;
  const sparse_direct_options& o_;
  std::unique_ptr<basis> basis_;
  std::vector<double> r_, best_;
};

/// The factors in the fronts F, in sparse_lu's layout.
sparse_direct_solver::host_factors fronts_to_factors(const front_symbols& f, const std::vector<double>& F);

}  // namespace la::sparse_detail
