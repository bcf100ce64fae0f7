// Factorized sparse approximate inverse (FSAI, Kolotilina and Yeremin) on the host: a lower
// triangular G with a chosen sparsity pattern such that G A G^T is close to the identity,
// so M^-1 = G^T G preconditions CG on an SPD matrix A. The host oracle the GPU setup is
// compared with.
//
// Row i of G, with pattern P_i (columns j <= i, i included, sorted): solve the small dense
// SPD system A[P_i, P_i] y = e_i (Cholesky, in long double) and scale, g_i = y / sqrt(y_i).
// Then (G A)_ij = 0 for j in P_i other than i, and (G A G^T)_ii = 1 exactly in exact
// arithmetic. A[P_i, P_i] is a principal submatrix of A, so it is SPD when A is; a pivot
// that is not positive means A is not SPD (la::invalid_argument, naming the row).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/precond_options.hpp>

namespace la {

/// The pattern of G: row i's columns, sorted, ending at i; how many rows the fill budget
/// trimmed, and the setup's estimated cost (sum of p^3 / 3 over the rows).
template <typename O>
struct fsai_sparsity {
  std::vector<O> ptr{0};
  std::vector<index_t> idx;
  index_t trimmed = 0;
  double flops = 0;
};

namespace detail {
/// The row's pattern cut to the `budget` - 1 heaviest columns of `ranked` (the diagonal is
/// added after); ties by column, so the cut is the same on every machine.
template <typename W>
void trim(std::vector<std::pair<W, index_t>>& ranked, std::vector<index_t>& pattern, int budget, index_t& trimmed) {
  const std::size_t keep = static_cast<std::size_t>(std::max(budget - 1, 0));
  std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  if (ranked.size() > keep) ranked.resize(keep), ++trimmed;
  pattern.clear();
  for (const auto& r : ranked) pattern.push_back(r.second);
}
}  // namespace detail

/// What a report says of the fill budget: "" when no row was cut.
inline std::string fsai_budget_note(index_t trimmed, int max_row, double flops) {
  std::string s;
  if (trimmed > 0)
    s = ", " + std::to_string(trimmed) + " rows cut to the fill budget of " + std::to_string(max_row) +
        " entries ({fsai-max-row})";
  if (flops > 0) s += ", setup about " + std::to_string(static_cast<long long>(flops / 1e6)) + " Mflop";
  return s;
}

/// G's pattern for `opt` (la::invalid_argument for a bad drop or a matrix that is not square).
template <typename T, typename O>
fsai_sparsity<O> fsai_pattern_of(const csr_matrix<T, O>& a, const fsai_options& opt = {}) {
  LA_EXPECTS(a.rows() == a.cols(), "fsai: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; FSAI needs a square (SPD) matrix");
  LA_EXPECTS(opt.drop >= 0 && std::isfinite(opt.drop), "fsai: drop must be finite and non-negative");
  LA_EXPECTS(opt.max_row >= 0, "fsai: the fill budget (entries a row) must be 0 (none) or positive");
  const index_t n = a.rows();
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& va = a.values();
  fsai_sparsity<O> sp;
  std::vector<long double> diag(static_cast<std::size_t>(n), 0);
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] == i) diag[i] = std::abs(static_cast<long double>(va[k]));
  std::vector<std::pair<long double, index_t>> ranked;  // (weight, column) of a row over budget
  sp.ptr.reserve(static_cast<std::size_t>(n) + 1);
  std::vector<long double> work(static_cast<std::size_t>(n), 0);  // a dense row, scattered
  std::vector<char> seen(opt.pattern == fsai_pattern::lower_squared ? static_cast<std::size_t>(n) : 0, 0);
  std::vector<index_t> pattern, touched;
  for (index_t i = 0; i < n; ++i) {
    pattern.clear();
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] <= i) pattern.push_back(ci[k]);
    if (opt.pattern == fsai_pattern::lower_squared) {
      // (|A| |A|)_ij for j <= i, through the rows k of row i.
      touched.clear();
      for (O k = rp[i]; k < rp[i + 1]; ++k) {
        const index_t r = ci[k];
        for (O l = rp[r]; l < rp[r + 1]; ++l) {
          const index_t j = ci[l];
          if (j > i) continue;
          if (!seen[j]) seen[j] = 1, touched.push_back(j);
          work[j] += std::abs(static_cast<long double>(va[k])) * std::abs(static_cast<long double>(va[l]));
        }
      }
      long double most = 0;
      for (index_t j : touched) most = std::max(most, work[j]);
      for (index_t j : touched)
        if (work[j] >= opt.drop * most) pattern.push_back(j);
      if (opt.max_row > 0 && pattern.size() + 1 > static_cast<std::size_t>(opt.max_row)) {
        // Over budget: tril(A)'s columns rank first (weight 2 + scaled |a_ij|), then the
        // squared pattern's by (|A|^2)_ij / its largest; each column once.
        ranked.clear();
        for (O k = rp[i]; k < rp[i + 1]; ++k)
          if (ci[k] < i)
            seen[ci[k]] = 2, ranked.emplace_back(2 + std::abs(static_cast<long double>(va[k])) /
                                                         std::sqrt(std::max(diag[i] * diag[ci[k]],
                                                                            static_cast<long double>(1e-300))),
                                                 ci[k]);
        for (index_t j : touched)
          if (seen[j] == 1 && j != i && work[j] >= opt.drop * most) ranked.emplace_back(work[j] / most, j);
        detail::trim(ranked, pattern, opt.max_row, sp.trimmed);
        for (O k = rp[i]; k < rp[i + 1]; ++k)
          if (ci[k] < i) seen[ci[k]] = 0;
      }
      for (index_t j : touched) work[j] = 0, seen[j] = 0;
    } else if (opt.max_row > 0 && pattern.size() > static_cast<std::size_t>(opt.max_row)) {
      ranked.clear();
      for (O k = rp[i]; k < rp[i + 1]; ++k)
        if (ci[k] < i)
          ranked.emplace_back(std::abs(static_cast<long double>(va[k])) /
                                  std::sqrt(std::max(diag[i] * diag[ci[k]], static_cast<long double>(1e-300))),
                              ci[k]);
      detail::trim(ranked, pattern, opt.max_row, sp.trimmed);
    }
    pattern.push_back(i);
    std::sort(pattern.begin(), pattern.end());
    pattern.erase(std::unique(pattern.begin(), pattern.end()), pattern.end());
    sp.flops += std::pow(static_cast<double>(pattern.size()), 3) / 3;
    sp.idx.insert(sp.idx.end(), pattern.begin(), pattern.end());
    sp.ptr.push_back(checked_offset<O>(static_cast<std::int64_t>(sp.idx.size()), "FSAI nonzeros"));
  }
  return sp;
}

/// G for an SPD matrix A (square; a missing diagonal or a non-positive pivot throws
/// la::invalid_argument naming the row).
/// `trimmed` and `flops`, when given: fsai_sparsity's (the rows the fill budget cut, the
/// estimated setup cost).
template <typename T, typename O>
csr_matrix<T, O> fsai_factor(const csr_matrix<T, O>& a, const fsai_options& opt = {}, index_t* trimmed = nullptr,
                             double* flops = nullptr) {
  const fsai_sparsity<O> sp = fsai_pattern_of(a, opt);
  if (trimmed) *trimmed = sp.trimmed;
  if (flops) *flops = sp.flops;
  const index_t n = a.rows();
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& va = a.values();
  std::vector<O> g_ptr{0};
  std::vector<index_t> g_idx;
  std::vector<T> g_val;
  std::vector<long double> work(static_cast<std::size_t>(n), 0);  // a dense row, scattered
  std::vector<index_t> pattern;
  std::vector<long double> m, y;
  for (index_t i = 0; i < n; ++i) {
    pattern.assign(sp.idx.begin() + sp.ptr[i], sp.idx.begin() + sp.ptr[i + 1]);
    const std::size_t p = pattern.size();
    // M = A[P, P], row by row through the scattered dense row.
    m.assign(p * p, 0);
    bool has_diagonal = false;
    for (std::size_t r = 0; r < p; ++r) {
      const index_t row = pattern[r];
      for (O k = rp[row]; k < rp[row + 1]; ++k) work[ci[k]] = va[k];
      for (std::size_t c = 0; c < p; ++c) m[r * p + c] = work[pattern[c]];
      for (O k = rp[row]; k < rp[row + 1]; ++k) work[ci[k]] = 0;
      if (row == i) has_diagonal = m[r * p + r] != 0;
    }
    LA_EXPECTS(has_diagonal, "fsai: A(" + std::to_string(i + 1) + "," + std::to_string(i + 1) +
                                 ") is missing or zero, so the matrix is not symmetric positive definite");
    // Cholesky M = L L^T in place (lower triangle).
    for (std::size_t c = 0; c < p; ++c) {
      long double d = m[c * p + c];
      for (std::size_t k = 0; k < c; ++k) d -= m[c * p + k] * m[c * p + k];
      LA_EXPECTS(d > 0 && std::isfinite(static_cast<double>(d)),
                 "fsai: row " + std::to_string(i + 1) + ": the block of A on columns " +
                     std::to_string(pattern.front() + 1) + ".." + std::to_string(i + 1) +
                     " is not positive definite, so the matrix is not symmetric positive definite");
      d = std::sqrt(d);
      m[c * p + c] = d;
      for (std::size_t r = c + 1; r < p; ++r) {
        long double s = m[r * p + c];
        for (std::size_t k = 0; k < c; ++k) s -= m[r * p + k] * m[c * p + k];
        m[r * p + c] = s / d;
      }
    }
    // M y = e_last (i is the last column of P): L z = e_last gives z = e_last / L_ll, then
    // L^T y = z.
    y.assign(p, 0);
    y[p - 1] = 1 / m[(p - 1) * p + (p - 1)];
    for (std::size_t r = p; r-- > 0;) {
      long double s = y[r];
      for (std::size_t k = r + 1; k < p; ++k) s -= m[k * p + r] * y[k];
      y[r] = s / m[r * p + r];
    }
    const long double scale = 1 / std::sqrt(y[p - 1]);  // y_last = (M^-1)_ii > 0
    for (std::size_t r = 0; r < p; ++r) {
      g_idx.push_back(pattern[r]);
      g_val.push_back(static_cast<T>(y[r] * scale));
    }
    g_ptr.push_back(static_cast<O>(g_idx.size()));
  }
  return csr_matrix<T, O>(n, n, std::move(g_ptr), std::move(g_idx), std::move(g_val));
}

}  // namespace la
