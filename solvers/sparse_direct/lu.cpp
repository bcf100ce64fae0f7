// LU with static pivoting on the host (sparse_analysis.hpp's sparse_lu): the matching and
// scalings of matching/matching.hpp, the symbolic analysis of the matched matrix's symmetrized
// pattern, and an up-looking factorization: row k of L and column k of U from the elimination
// tree's reach of row and column k (the same set: the structure is Cholesky's of M + M^T), each
// node's update applied in the tree's order, descendants first.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <la/solvers/precond/factored.hpp>
#include <la/solvers/matching/matching.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la {

template <typename T, typename O>
sparse_lu<T> sparse_lu_host(const csr_matrix<T, O>& a, fill_ordering o, bool match) {
  using W = wider_t<T>;
  using WR = real_of_t<W>;
  LA_EXPECTS(a.rows() == a.cols(), "sparse LU: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  const index_t n = a.rows();
  sparse_lu<T> f;
  diagonal_matching m;
  if (match) {
    m = max_product_matching(a);
  } else {
    m.perm.resize(static_cast<std::size_t>(n));
    std::iota(m.perm.begin(), m.perm.end(), 0);
    m.row_scale.assign(static_cast<std::size_t>(n), 1.0), m.col_scale.assign(static_cast<std::size_t>(n), 1.0);
  }
  if (m.unmatched > 0) {
    f.singular_column = m.first_unmatched + 1;
    return f;
  }
  f.row_perm = m.perm, f.row_scale = m.row_scale, f.col_scale = m.col_scale;
  const csr_matrix<T, O> mm = matched_matrix(a, m);  // M = Dr P A Dc (row j of M is row perm[j] of A)
  f.analysis = analyze_pattern(mm, o, 1e9);
  const sparse_analysis& s = f.analysis;
  // Mq = Q M Q^T by rows and by columns.
  const csc_matrix<T, O> mc = to_csc<O>(mm);
  f.l_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t j = 0; j < n; ++j) f.l_ptr[j + 1] = f.l_ptr[j] + s.col_count[j] - 1;
  f.u_ptr = f.l_ptr;
  f.l_idx.assign(static_cast<std::size_t>(f.l_ptr[n]), 0), f.u_idx = f.l_idx;
  f.l_val.assign(f.l_idx.size(), T(0)), f.u_val = f.l_val;
  f.u_diag.assign(static_cast<std::size_t>(n), T(0));
  std::vector<count_t> lnext(f.l_ptr.begin(), f.l_ptr.end() - 1), unext = lnext;
  std::vector<W> xl(static_cast<std::size_t>(n), W(0)), xu(static_cast<std::size_t>(n), W(0));
  std::vector<index_t> mark(static_cast<std::size_t>(n), -1), stack(static_cast<std::size_t>(n)), path;
  // M's entries are at most 1 after the matching's scaling; unscaled, tiny is relative to max |M|.
  WR mmax = 0;
  for (const T& v : mm.values()) mmax = std::max(mmax, static_cast<WR>(std::abs(v)));
  const WR tiny = std::sqrt(static_cast<WR>(std::numeric_limits<real_of_t<T>>::epsilon())) * (mmax > 0 ? mmax : WR(1));
  for (index_t k = 0; k < n; ++k) {
    const index_t old = s.perm[k];
    index_t top = n;
    mark[k] = k;
    W d = 0;
    auto reach = [&](index_t j) {
      path.clear();
      for (index_t i = j; mark[i] != k; i = s.parent[i]) path.push_back(i), mark[i] = k;
      while (!path.empty()) stack[--top] = path.back(), path.pop_back();
    };
    for (O p = mm.row_ptr()[old]; p < mm.row_ptr()[old + 1]; ++p) {  // row k of Mq
      const index_t j = s.inverse[mm.col_idx()[p]];
      if (j == k) d += static_cast<W>(mm.values()[p]);
      else if (j < k) xl[j] += static_cast<W>(mm.values()[p]), reach(j);
    }
    for (O p = mc.col_ptr()[old]; p < mc.col_ptr()[old + 1]; ++p) {  // column k of Mq
      const index_t i = s.inverse[mc.row_idx()[p]];
      if (i < k) xu[i] += static_cast<W>(mc.values()[p]), reach(i);
    }
    for (; top < n; ++top) {  // descendants before ancestors
      const index_t i = stack[top];
      const W ui = xu[i];                                            // U(i, k)
      const W li = xl[i] / static_cast<W>(f.u_diag[i]);              // L(k, i)
      xu[i] = 0, xl[i] = 0;
      for (count_t p = f.l_ptr[i]; p < lnext[i]; ++p) xu[f.l_idx[p]] -= static_cast<W>(f.l_val[p]) * ui;
      for (count_t p = f.u_ptr[i]; p < unext[i]; ++p) xl[f.u_idx[p]] -= static_cast<W>(f.u_val[p]) * li;
      d -= li * ui;
      const count_t pl = lnext[i]++, pu = unext[i]++;
      f.l_idx[pl] = k, f.l_val[pl] = static_cast<T>(li);
      f.u_idx[pu] = k, f.u_val[pu] = static_cast<T>(ui);
    }
    if (!(std::abs(d) >= tiny)) {  // tiny or NaN: static pivoting's perturbation
      if constexpr (is_complex_v<T>) d = std::abs(d) > 0 ? d * (tiny / std::abs(d)) : W(tiny);  // d's phase kept
      else d = d < 0 ? -tiny : tiny;
      ++f.perturbed;
    }
    f.u_diag[k] = static_cast<T>(d);
  }
  return f;
}

template <typename T>
void sparse_lu<T>::solve(T* b) const {
  using W = wider_t<T>;
  const sparse_analysis& s = analysis;
  const index_t n = s.n;
  std::vector<W> c(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) c[j] = static_cast<real_of_t<W>>(row_scale[row_perm[j]]) * widen(b[row_perm[j]]);  // Dr P b
  for (index_t k = 0; k < n; ++k) y[k] = c[s.perm[k]];                                                // Q
  for (index_t j = 0; j < n; ++j)  // L z = y (unit)
    for (count_t p = l_ptr[j]; p < l_ptr[j + 1]; ++p) y[l_idx[p]] -= static_cast<W>(l_val[p]) * y[j];
  for (index_t i = n - 1; i >= 0; --i) {  // U w = z, U by rows
    W v = y[i];
    for (count_t p = u_ptr[i]; p < u_ptr[i + 1]; ++p) v -= static_cast<W>(u_val[p]) * y[u_idx[p]];
    y[i] = v / static_cast<W>(u_diag[i]);
  }
  for (index_t k = 0; k < n; ++k) c[s.perm[k]] = y[k];                                     // Q^T
  for (index_t j = 0; j < n; ++j) b[j] = static_cast<T>(static_cast<real_of_t<W>>(col_scale[j]) * c[j]);  // x = Dc y
}

#define LA_SPARSE_LU(T, O) template sparse_lu<T> sparse_lu_host<T, O>(const csr_matrix<T, O>&, fill_ordering, bool);
LA_SPARSE_LU(float, std::int32_t)
LA_SPARSE_LU(double, std::int32_t)
LA_SPARSE_LU(float, std::int64_t)
LA_SPARSE_LU(double, std::int64_t)
LA_SPARSE_LU(std::complex<double>, std::int32_t)
LA_SPARSE_LU(std::complex<double>, std::int64_t)
template struct sparse_lu<float>;
template struct sparse_lu<double>;
template struct sparse_lu<std::complex<double>>;

}  // namespace la
