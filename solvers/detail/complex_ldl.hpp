// Sparse LDL^T (complex symmetric A) and LDL^H (Hermitian A) on the host (issue 69): the
// complex direct method's factorization where A has either symmetry, half the sparse LU's
// storage and work. P A P^T = L D L^T (or L D L^H), P the analysis's fill-reducing ordering
// (analyze_pattern: METIS or AMD), L unit lower by columns, up-looking (row k of L from the
// elimination tree's reach of row k of A, as sparse_cholesky_host), sums in complex<long
// double>; a pivot below sqrt(eps) max|a_ij| is set to that size keeping its phase (its sign
// for LDL^H) and counted: the caller refines, or takes the matched LU where any was. Private to
// la's sources.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la::complex_direct_detail {

struct sparse_ldl {
  using z = std::complex<double>;
  sparse_analysis analysis;
  bool hermitian = false;           // L D L^H (D real), else L D L^T
  std::vector<count_t> col_ptr;     // L's strict lower part by columns
  std::vector<index_t> row_idx;
  std::vector<z> values, d;
  int perturbed = 0;

  /// b (A's numbering) overwritten with A^-1 b.
  void solve(z* b) const {
    using W = std::complex<long double>;
    const index_t n = analysis.n;
    std::vector<W> x(static_cast<std::size_t>(n));
    for (index_t k = 0; k < n; ++k) x[k] = W(b[analysis.perm[k]]);
    for (index_t j = 0; j < n; ++j)  // L y = P b
      for (count_t p = col_ptr[j]; p < col_ptr[j + 1]; ++p) x[row_idx[p]] -= W(values[p]) * x[j];
    for (index_t j = 0; j < n; ++j) x[j] /= W(d[j]);
    for (index_t j = n - 1; j >= 0; --j)  // L^T or L^H
      for (count_t p = col_ptr[j]; p < col_ptr[j + 1]; ++p)
        x[j] -= (hermitian ? std::conj(W(values[p])) : W(values[p])) * x[row_idx[p]];
    for (index_t k = 0; k < n; ++k) b[analysis.perm[k]] = z(x[k]);
  }
};

/// The factorization of A, taken as symmetric (hermitian false) or Hermitian: its lower
/// triangle is read.
template <typename O>
sparse_ldl sparse_ldl_host(const csr_matrix<std::complex<double>, O>& a, bool hermitian, fill_ordering o) {
  using W = std::complex<long double>;
  sparse_ldl f;
  f.hermitian = hermitian;
  f.analysis = analyze_pattern(a, o, 1e9);
  const sparse_analysis& s = f.analysis;
  const index_t n = s.n;
  double amax = 0;
  for (const auto& v : a.values()) amax = std::max(amax, std::abs(v));
  const double tiny = std::sqrt(std::numeric_limits<double>::epsilon()) * amax;
  f.col_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t j = 0; j < n; ++j) f.col_ptr[j + 1] = f.col_ptr[j] + s.col_count[j] - 1;  // col_count holds the diagonal
  f.row_idx.assign(static_cast<std::size_t>(f.col_ptr[n]), 0);
  f.values.assign(static_cast<std::size_t>(f.col_ptr[n]), sparse_ldl::z(0));
  f.d.assign(static_cast<std::size_t>(n), sparse_ldl::z(0));
  std::vector<count_t> next(f.col_ptr.begin(), f.col_ptr.end() - 1);
  std::vector<W> y(static_cast<std::size_t>(n), W(0));
  std::vector<index_t> mark(static_cast<std::size_t>(n), -1), stack(static_cast<std::size_t>(n)), path;
  for (index_t k = 0; k < n; ++k) {
    // Row k of P A P^T left of and on the diagonal: y_j = a_kj (LDL^T) or conj(a_kj) = a_jk (LDL^H).
    index_t top = row_reach(a, s, k, mark, stack, path, [&](index_t j, const std::complex<double>& a_kj) {
      y[j] += hermitian && j < k ? std::conj(W(a_kj)) : W(a_kj);
    });
    W dk = y[k];
    y[k] = 0;
    for (; top < n; ++top) {  // descendants before ancestors: y = L11^-1 A(0:k, k)
      const index_t j = stack[top];
      const W yj = y[j];
      y[j] = 0;
      for (count_t p = f.col_ptr[j]; p < next[j]; ++p) y[f.row_idx[p]] -= W(f.values[p]) * yj;
      const W q = yj / W(f.d[j]);
      const W lkj = hermitian ? std::conj(q) : q;
      dk -= lkj * yj;
      const count_t p = next[j]++;
      f.row_idx[p] = k;
      f.values[p] = sparse_ldl::z(lkj);
    }
    sparse_ldl::z dv(dk);
    if (hermitian) dv = sparse_ldl::z(dv.real(), 0);
    if (!(std::abs(dv) >= tiny) || tiny == 0) {  // tiny, zero or NaN: static pivot, phase (sign) kept
      const double m = std::abs(dv);
      const double t = tiny > 0 ? tiny : 1.0;
      dv = m > 0 && std::isfinite(m) ? dv * (t / m) : sparse_ldl::z(t, 0);
      ++f.perturbed;
    }
    f.d[k] = dv;
  }
  return f;
}

/// Whether A equals its transpose exactly (complex symmetric), entry by entry.
template <typename O>
bool complex_symmetric(const csr_matrix<std::complex<double>, O>& a) {
  return a.rows() == a.cols() && complex_krylov_detail::first_asymmetry(a, false).first < 0;
}

}  // namespace la::complex_direct_detail
