// ILU(0) for complex values on the host (issue 69): the host Krylov oracles' (complex_krylov.hpp)
// preconditioner ilu0, and the oracle a GPU form will be checked against. Private to la's sources.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/matching/matching.hpp>
#include <la/solvers/precond/factored.hpp>

namespace la::complex_krylov_detail {

/// L (unit, strictly lower) and U on M's pattern in `lu`, M = A, or M = Dr P A Dc after a
/// maximum-product matching where A's diagonal has a missing or zero entry (perm, dr, dc).
template <typename T, typename O>
struct ilu0_factors {
  csr_matrix<T, O> lu;
  std::vector<O> diag_at;
  std::vector<index_t> perm;  // empty: no matching
  std::vector<double> dr, dc;
  mutable std::vector<wider_t<T>> work;

  bool matched() const noexcept { return !perm.empty(); }
  /// y = M^-1 x by ILU(0)'s factors: c = Dr P x, L U w = c, y = Dc w (sums in wider_t).
  void solve(const std::vector<T>& x, std::vector<T>& y) const {
    using W = wider_t<T>;
    const index_t n = lu.rows();
    work.resize(static_cast<std::size_t>(n));
    for (index_t j = 0; j < n; ++j)
      work[j] = perm.empty() ? widen(x[j]) : static_cast<real_of_t<W>>(dr[j]) * widen(x[perm[j]]);
    const auto& rp = lu.row_ptr();
    const auto& ci = lu.col_idx();
    const auto& v = lu.values();
    for (index_t i = 0; i < n; ++i)  // L (unit)
      for (O k = rp[i]; k < diag_at[i]; ++k) work[i] -= widen(v[k]) * work[ci[k]];
    for (index_t i = n - 1; i >= 0; --i) {  // U
      W s = work[i];
      for (O k = diag_at[i] + 1; k < rp[i + 1]; ++k) s -= widen(v[k]) * work[ci[k]];
      work[i] = s / widen(v[diag_at[i]]);
    }
    y.resize(static_cast<std::size_t>(n));
    for (index_t j = 0; j < n; ++j)
      y[j] = static_cast<T>(perm.empty() ? work[j] : static_cast<real_of_t<W>>(dc[j]) * work[j]);
  }
  /// ILU(0) on A's pattern (IKJ, in wider_t), after the matching where A's diagonal has a
  /// missing or zero entry. "" or why it does not exist.
  std::string build(const csr_matrix<T, O>& a) {
    using W = wider_t<T>;
    const index_t n = a.rows();
    bool gaps = false;
    for (index_t i = 0; i < n && !gaps; ++i) {
      bool has = false;
      for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) has = has || (a.col_idx()[k] == i && a.values()[k] != T(0));
      gaps = !has;
    }
    if (gaps) {
      diagonal_matching m;
      try {  // the matching's search budget; matched_matrix's empty row
        m = max_product_matching(a);
        if (m.unmatched > 0)
          return "A is structurally singular: no row can be matched to column " + std::to_string(m.first_unmatched + 1);
        lu = matched_matrix(a, m);
      } catch (const invalid_argument& e) {
        return std::string("its row matching failed: ") + e.what();
      }
      perm = m.perm;
      dr.resize(m.perm.size()), dc = m.col_scale;
      for (std::size_t j = 0; j < m.perm.size(); ++j) dr[j] = m.row_scale[m.perm[j]];
    } else {
      lu = a;
    }
    const auto& rp = lu.row_ptr();
    const auto& ci = lu.col_idx();
    auto& v = lu.values();
    diag_at.assign(static_cast<std::size_t>(n), O(-1));
    std::vector<O> at(static_cast<std::size_t>(n), O(-1));  // row i's position of each column
    std::vector<W> row;
    for (index_t i = 0; i < n; ++i) {
      for (O k = rp[i]; k < rp[i + 1]; ++k) {
        at[ci[k]] = k;
        if (ci[k] == i) diag_at[i] = k;
      }
      if (diag_at[i] < 0) return "row " + std::to_string(i + 1) + " stores no diagonal entry after the matching";
      row.assign(static_cast<std::size_t>(rp[i + 1] - rp[i]), W(0));
      for (O k = rp[i]; k < rp[i + 1]; ++k) row[k - rp[i]] = widen(v[k]);
      for (O k = rp[i]; k < diag_at[i]; ++k) {  // columns j < i, in order
        const index_t j = ci[k];
        const W l = row[k - rp[i]] / widen(v[diag_at[j]]);
        row[k - rp[i]] = l;
        for (O q = diag_at[j] + 1; q < rp[j + 1]; ++q)
          if (const O p = at[ci[q]]; p >= 0) row[p - rp[i]] -= l * widen(v[q]);
      }
      for (O k = rp[i]; k < rp[i + 1]; ++k) v[k] = static_cast<T>(row[k - rp[i]]), at[ci[k]] = -1;
      if (!(std::abs(v[diag_at[i]]) > 0) || !finite(v[diag_at[i]]))
        return "its pivot in row " + std::to_string(i + 1) + " is zero or not finite";
    }
    return {};
  }
};

}  // namespace la::complex_krylov_detail
