// A heavy, zero-free diagonal for a square sparse matrix, shared by the families that need one
// (the incomplete factorizations' rows, the sparse direct solver's static pivoting; it is
// neither's, so it lives apart): a maximum-product bipartite
// matching of rows to columns with the scalings of its dual (Duff and Koster's MC64, job 5),
// by shortest augmenting paths (Dijkstra over reduced costs) from each column in turn.
//
// Costs c_ij = log(max_i |a_ij|) - log|a_ij| >= 0 on the stored non-zero entries; the matching
// minimizes their sum, i.e. maximizes the product of the matched |a_ij|. Duals u (rows), v
// (columns) keep every reduced cost c_ij - u_i - v_j non-negative and the matched ones zero,
// so with Dr_i = exp(u_i) and Dc_j = exp(v_j) / max_i |a_ij| the scaled matrix Dr A Dc has
// entries of magnitude at most 1 and exactly 1 on the matching. Row perm[j] of A becomes row j
// of P A, so P A has the matched entries on its diagonal.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/error.hpp>

namespace la {

struct diagonal_matching {
  std::vector<index_t> perm;       // row perm[j] of A is row j of P A (its diagonal entry is A(perm[j], j))
  std::vector<double> row_scale;   // Dr
  std::vector<double> col_scale;   // Dc
  index_t unmatched = 0;           // columns left without a row: A is structurally singular when > 0
  index_t first_unmatched = -1;    // the first such column (0-based), or -1
};

/// The maximum-product matching of A's rows to its columns and its scalings (see the top). A
/// structurally singular A leaves columns unmatched (counted; perm then holds -1 there).
///
/// The augmenting paths' search is bounded: past 10 entries examined per stored entry (plus two
/// million), as on a large random pattern whose paths wander the whole graph (a 1M-row random
/// matrix with 10 entries a row ran over 12 minutes), it stops with la::invalid_argument saying
/// so, which precond auto turns into Jacobi. The real systems of data/ and ../shared/data need
/// 1.4 (adder_dcop_05) to 20 (fidapex6, 49,533 entries: inside the two million) per entry.
/// The budget ILU(0)'s matching takes (a preconditioner the Krylov method can do without:
/// Jacobi follows where it gives up): one entry examined per stored entry plus a million, not
/// the direct solver's ten. A 1M-row random pattern with an empty diagonal spent 45.8 s in the
/// direct solver's budget (102M entries) before auto's Jacobi; the real systems need 1.4-20 per
/// entry, inside the million on every one of them but the largest, which then run with Jacobi.
inline std::int64_t ilu_matching_budget(std::int64_t nnz) { return nnz + 1000000; }

template <typename T, typename O>
diagonal_matching max_product_matching(const csr_matrix<T, O>& a,
                                       std::int64_t budget = -1) {
  LA_EXPECTS(a.rows() == a.cols(), "matching: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; a diagonal needs a square matrix");
  const index_t n = a.rows();
  const csc_matrix<T, O> c = to_csc<O>(a);
  const auto& cp = c.col_ptr();
  const auto& ri = c.row_idx();
  const auto& cv = c.values();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> colmax(static_cast<std::size_t>(n), 0), cost(cv.size(), inf);
  for (index_t j = 0; j < n; ++j)
    for (O k = cp[j]; k < cp[j + 1]; ++k) colmax[j] = std::max(colmax[j], magnitude(cv[k]));
  for (index_t j = 0; j < n; ++j)
    for (O k = cp[j]; k < cp[j + 1]; ++k) {
      const double x = magnitude(cv[k]);
      if (x > 0 && std::isfinite(x)) cost[k] = std::log(colmax[j]) - std::log(x);
    }
  std::vector<double> u(static_cast<std::size_t>(n), 0), v(static_cast<std::size_t>(n), 0);
  for (index_t j = 0; j < n; ++j) {  // v_j = the column's least cost: reduced costs start >= 0
    double m = inf;
    for (O k = cp[j]; k < cp[j + 1]; ++k) m = std::min(m, cost[k]);
    v[j] = std::isfinite(m) ? m : 0;
  }
  std::vector<index_t> row_of(static_cast<std::size_t>(n), -1), col_of(static_cast<std::size_t>(n), -1), pred(static_cast<std::size_t>(n), -1);
  // MC64's start: u_i = the row's least cost - v_j (the duals stay feasible: every reduced cost
  // c - u - v >= 0), then each column takes a free row on a tight entry (reduced cost 0). The
  // searches below then run only from the columns left: on arrow's 46,500 rows the searches
  // from every column wandered through its dense row and gave up; a diagonally heavy matrix
  // is matched here whole.
  {
    std::vector<double> least(static_cast<std::size_t>(n), inf);
    for (index_t j = 0; j < n; ++j)
      for (O k = cp[j]; k < cp[j + 1]; ++k)
        if (std::isfinite(cost[k])) least[ri[k]] = std::min(least[ri[k]], cost[k] - v[j]);
    for (index_t i = 0; i < n; ++i) u[i] = std::isfinite(least[i]) ? least[i] : 0;
    for (index_t j = 0; j < n; ++j)
      for (O k = cp[j]; k < cp[j + 1]; ++k) {
        const index_t i = ri[k];
        if (col_of[i] < 0 && std::isfinite(cost[k]) && cost[k] - v[j] == u[i]) {
          row_of[j] = i, col_of[i] = j;
          break;
        }
      }
  }
  std::vector<double> drow(static_cast<std::size_t>(n), inf), dcol(static_cast<std::size_t>(n), inf);
  std::vector<char> settled(static_cast<std::size_t>(n), 0);
  std::vector<index_t> rows_touched, cols_settled, rows_settled;
  using item = std::pair<double, index_t>;
  diagonal_matching m;
  if (budget < 0) budget = 10 * static_cast<std::int64_t>(a.nnz()) + 2000000;
  std::int64_t work = 0;  // entries examined by the searches so far
  for (index_t j0 = 0; j0 < n; ++j0) {
    if (row_of[j0] >= 0) continue;  // matched at the start
    std::priority_queue<item, std::vector<item>, std::greater<item>> q;
    auto relax = [&](index_t j) {  // column j settled at dcol[j]
      work += static_cast<std::int64_t>(cp[j + 1] - cp[j]) + 1;
      if (work > budget)
        throw invalid_argument("the row matching gave up after examining " + std::to_string(work) +
                               " entries with " + std::to_string(j0) + " of " + std::to_string(n) +
                               " columns matched: its augmenting paths wander this pattern (a random one, or a "
                               "dense row?)");
      cols_settled.push_back(j);
      for (O k = cp[j]; k < cp[j + 1]; ++k) {
        if (!std::isfinite(cost[k])) continue;
        const index_t i = ri[k];
        if (settled[i]) continue;
        const double d = dcol[j] + std::max(0.0, cost[k] - u[i] - v[j]);
        if (d < drow[i]) {
          if (drow[i] == inf) rows_touched.push_back(i);
          drow[i] = d, pred[i] = j, q.emplace(d, i);
        }
      }
    };
    dcol[j0] = 0;
    relax(j0);
    index_t end = -1;
    double delta = inf;
    while (!q.empty()) {
      const auto [d, i] = q.top();
      q.pop();
      if (settled[i] || d > drow[i]) continue;
      settled[i] = 1, rows_settled.push_back(i);
      if (col_of[i] < 0) {  // a free row: the shortest augmenting path ends here
        end = i, delta = d;
        break;
      }
      const index_t j = col_of[i];
      dcol[j] = d;  // the matched edge's reduced cost is 0
      relax(j);
    }
    if (end >= 0) {
      for (index_t j : cols_settled) v[j] += delta - dcol[j];
      for (index_t i : rows_settled) u[i] -= delta - drow[i];
      for (index_t i = end;;) {  // augment along pred
        const index_t j = pred[i], prev = row_of[j];
        row_of[j] = i, col_of[i] = j;
        if (j == j0) break;
        i = prev;
      }
    } else {
      if (m.unmatched++ == 0) m.first_unmatched = j0;
    }
    for (index_t i : rows_touched) drow[i] = inf, settled[i] = 0, pred[i] = -1;
    for (index_t i : rows_settled) settled[i] = 0;
    for (index_t j : cols_settled) dcol[j] = inf;
    rows_touched.clear(), rows_settled.clear(), cols_settled.clear();
  }
  m.perm = row_of;
  m.row_scale.resize(static_cast<std::size_t>(n));
  m.col_scale.resize(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) m.row_scale[i] = std::exp(u[i]);
  for (index_t j = 0; j < n; ++j) m.col_scale[j] = colmax[j] > 0 ? std::exp(v[j]) / colmax[j] : 1;
  return m;
}

}  // namespace la
