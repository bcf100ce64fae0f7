// Host conversions between every pair of the six formats. CSR is the hub: each format has
// an exact conversion to and from CSR, and every other pair goes through it. Values are
// never changed; duplicates in COO are summed (in input order); converting a dense matrix
// to a sparse format keeps its nonzero entries (an explicit zero in a sparse matrix does
// not survive a trip through dense).
#pragma once

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <utility>

#include "formats/coo.hpp"
#include "formats/csc.hpp"
#include "formats/csr.hpp"
#include "formats/dense.hpp"
#include "formats/ell.hpp"
#include "formats/jds.hpp"

namespace la {

template <typename M> struct is_format : std::false_type {};
template <typename T> struct is_format<dense_matrix<T>> : std::true_type {};
template <typename T> struct is_format<coo_matrix<T>> : std::true_type {};
template <typename T> struct is_format<csr_matrix<T>> : std::true_type {};
template <typename T> struct is_format<csc_matrix<T>> : std::true_type {};
template <typename T> struct is_format<ell_matrix<T>> : std::true_type {};
template <typename T> struct is_format<jds_matrix<T>> : std::true_type {};

namespace detail {
/// Transposes compressed storage: (ptr over n_major, idx in n_minor) -> (ptr over n_minor,
/// idx in n_major). A counting sort, so the output's indices come out sorted.
template <typename T>
void transpose_compressed(index_t n_major, index_t n_minor, const std::vector<index_t>& ptr,
                          const std::vector<index_t>& idx, const std::vector<T>& val,
                          std::vector<index_t>& out_ptr, std::vector<index_t>& out_idx,
                          std::vector<T>& out_val) {
  out_ptr.assign(static_cast<std::size_t>(n_minor) + 1, 0);
  for (index_t j : idx) ++out_ptr[j + 1];
  std::partial_sum(out_ptr.begin(), out_ptr.end(), out_ptr.begin());
  out_idx.resize(idx.size());
  out_val.resize(val.size());
  std::vector<index_t> next(out_ptr.begin(), out_ptr.end() - 1);
  for (index_t i = 0; i < n_major; ++i)
    for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      const index_t dst = next[idx[k]]++;
      out_idx[dst] = i;
      out_val[dst] = val[k];
    }
}
}  // namespace detail

// ---- to CSR (the hub) --------------------------------------------------------------------

template <typename T>
csr_matrix<T> to_csr(const csr_matrix<T>& a) { return a; }

template <typename T>
csr_matrix<T> to_csr(const coo_matrix<T>& a) {
  const index_t m = a.rows();
  const auto& ri = a.row_idx();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  // Bucket by row (stable), then sort each row by column keeping input order among equal
  // columns, so duplicates are summed in the order they were given.
  std::vector<index_t> start(static_cast<std::size_t>(m) + 1, 0);
  for (index_t r : ri) ++start[r + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<index_t> order(ri.size());
  {
    std::vector<index_t> next(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < ri.size(); ++k) order[next[ri[k]]++] = static_cast<index_t>(k);
  }
  std::vector<index_t> row_ptr(static_cast<std::size_t>(m) + 1, 0), col_idx;
  std::vector<T> values;
  col_idx.reserve(ri.size());
  values.reserve(ri.size());
  for (index_t i = 0; i < m; ++i) {
    auto b = order.begin() + start[i], e = order.begin() + start[i + 1];
    std::stable_sort(b, e, [&](index_t x, index_t y) { return ci[x] < ci[y]; });
    for (auto it = b; it != e; ++it) {
      if (it != b && ci[*it] == col_idx.back()) {
        values.back() += v[*it];
      } else {
        col_idx.push_back(ci[*it]);
        values.push_back(v[*it]);
      }
    }
    row_ptr[i + 1] = static_cast<index_t>(col_idx.size());
  }
  return csr_matrix<T>(m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

template <typename T>
csr_matrix<T> to_csr(const csc_matrix<T>& a) {
  std::vector<index_t> p, i;
  std::vector<T> v;
  detail::transpose_compressed(a.cols(), a.rows(), a.col_ptr(), a.row_idx(), a.values(), p, i, v);
  return csr_matrix<T>(a.rows(), a.cols(), std::move(p), std::move(i), std::move(v));
}

template <typename T>
csr_matrix<T> to_csr(const ell_matrix<T>& a) {
  const index_t m = a.rows();
  std::vector<index_t> row_ptr(static_cast<std::size_t>(m) + 1, 0), col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < m; ++i) {
    for (index_t k = 0; k < a.width(); ++k) {
      const std::size_t s = static_cast<std::size_t>(k) * m + i;
      if (a.col_idx()[s] == ell_padding) break;
      col_idx.push_back(a.col_idx()[s]);
      values.push_back(a.values()[s]);
    }
    row_ptr[i + 1] = static_cast<index_t>(col_idx.size());
  }
  return csr_matrix<T>(m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

template <typename T>
csr_matrix<T> to_csr(const jds_matrix<T>& a) {
  const index_t m = a.rows();
  const auto& dp = a.diag_ptr();
  std::vector<index_t> len(static_cast<std::size_t>(m), 0);  // by sorted row
  for (index_t d = 0; d < a.num_diagonals(); ++d)
    for (index_t k = 0; k < dp[d + 1] - dp[d]; ++k) ++len[k];
  std::vector<index_t> row_ptr(static_cast<std::size_t>(m) + 1, 0);
  for (index_t k = 0; k < m; ++k) row_ptr[a.perm()[k] + 1] = len[k];
  std::partial_sum(row_ptr.begin(), row_ptr.end(), row_ptr.begin());
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(col_idx.size());
  for (index_t d = 0; d < a.num_diagonals(); ++d)
    for (index_t k = 0; k < dp[d + 1] - dp[d]; ++k) {
      const index_t dst = row_ptr[a.perm()[k]] + d;
      col_idx[dst] = a.col_idx()[dp[d] + k];
      values[dst] = a.values()[dp[d] + k];
    }
  return csr_matrix<T>(m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

template <typename T>
csr_matrix<T> to_csr(const dense_matrix<T>& a) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0), col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < a.rows(); ++i) {
    for (index_t j = 0; j < a.cols(); ++j)
      if (a(i, j) != T(0)) {  // NaN != 0, so NaN entries are kept
        col_idx.push_back(j);
        values.push_back(a(i, j));
      }
    row_ptr[i + 1] = checked_index(static_cast<std::int64_t>(col_idx.size()), "nonzeros of dense matrix");
  }
  return csr_matrix<T>(a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

// ---- from CSR ----------------------------------------------------------------------------

template <typename T>
coo_matrix<T> to_coo(const csr_matrix<T>& a) {
  std::vector<index_t> ri(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    std::fill(ri.begin() + a.row_ptr()[i], ri.begin() + a.row_ptr()[i + 1], i);
  return coo_matrix<T>(a.rows(), a.cols(), std::move(ri), a.col_idx(), a.values());
}

template <typename T>
csc_matrix<T> to_csc(const csr_matrix<T>& a) {
  std::vector<index_t> p, i;
  std::vector<T> v;
  detail::transpose_compressed(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), a.values(), p, i, v);
  return csc_matrix<T>(a.rows(), a.cols(), std::move(p), std::move(i), std::move(v));
}

template <typename T>
ell_matrix<T> to_ell(const csr_matrix<T>& a) {
  const index_t m = a.rows();
  index_t width = 0;
  for (index_t i = 0; i < m; ++i) width = std::max(width, a.row_ptr()[i + 1] - a.row_ptr()[i]);
  const index_t slots = checked_index(static_cast<std::int64_t>(m) * width,
                                      "ELL slots (rows x longest row)");
  std::vector<index_t> col_idx(static_cast<std::size_t>(slots), ell_padding);
  std::vector<T> values(static_cast<std::size_t>(slots), T(0));
  for (index_t i = 0; i < m; ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const std::size_t s = static_cast<std::size_t>(k - a.row_ptr()[i]) * m + i;
      col_idx[s] = a.col_idx()[k];
      values[s] = a.values()[k];
    }
  return ell_matrix<T>(m, a.cols(), width, std::move(col_idx), std::move(values));
}

template <typename T>
jds_matrix<T> to_jds(const csr_matrix<T>& a) {
  const index_t m = a.rows();
  const auto& rp = a.row_ptr();
  std::vector<index_t> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](index_t x, index_t y) {
    return rp[x + 1] - rp[x] > rp[y + 1] - rp[y];
  });
  const index_t nd = m ? rp[perm[0] + 1] - rp[perm[0]] : 0;
  std::vector<index_t> diag_ptr(static_cast<std::size_t>(nd) + 1, 0);
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(col_idx.size());
  index_t pos = 0, rows_in_diag = m;
  for (index_t d = 0; d < nd; ++d) {
    while (rows_in_diag > 0 && rp[perm[rows_in_diag - 1] + 1] - rp[perm[rows_in_diag - 1]] <= d)
      --rows_in_diag;
    for (index_t k = 0; k < rows_in_diag; ++k, ++pos) {
      col_idx[pos] = a.col_idx()[rp[perm[k]] + d];
      values[pos] = a.values()[rp[perm[k]] + d];
    }
    diag_ptr[d + 1] = pos;
  }
  return jds_matrix<T>(m, a.cols(), std::move(perm), std::move(diag_ptr), std::move(col_idx),
                       std::move(values));
}

template <typename T>
dense_matrix<T> to_dense(const csr_matrix<T>& a) {
  dense_matrix<T> d(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) d(i, a.col_idx()[k]) = a.values()[k];
  return d;
}

// ---- every other pair goes through CSR ---------------------------------------------------

template <typename M, typename = std::enable_if_t<is_format<M>::value>>
auto to_coo(const M& a) { return to_coo(to_csr(a)); }
template <typename T>
coo_matrix<T> to_coo(const coo_matrix<T>& a) { return a; }

template <typename M, typename = std::enable_if_t<is_format<M>::value>>
auto to_csc(const M& a) { return to_csc(to_csr(a)); }
template <typename T>
csc_matrix<T> to_csc(const csc_matrix<T>& a) { return a; }

template <typename M, typename = std::enable_if_t<is_format<M>::value>>
auto to_ell(const M& a) { return to_ell(to_csr(a)); }
template <typename T>
ell_matrix<T> to_ell(const ell_matrix<T>& a) { return a; }

template <typename M, typename = std::enable_if_t<is_format<M>::value>>
auto to_jds(const M& a) { return to_jds(to_csr(a)); }
template <typename T>
jds_matrix<T> to_jds(const jds_matrix<T>& a) { return a; }

template <typename M, typename = std::enable_if_t<is_format<M>::value>>
auto to_dense(const M& a) { return to_dense(to_csr(a)); }
template <typename T>
dense_matrix<T> to_dense(const dense_matrix<T>& a) { return a; }

/// convert<csc_matrix<double>>(coo): the target named as a type, for generic code.
template <typename To, typename From>
To convert(const From& a) {
  using T = std::decay_t<decltype(a.values()[0])>;
  if constexpr (std::is_same_v<To, dense_matrix<T>>) return to_dense(a);
  else if constexpr (std::is_same_v<To, coo_matrix<T>>) return to_coo(a);
  else if constexpr (std::is_same_v<To, csr_matrix<T>>) return to_csr(a);
  else if constexpr (std::is_same_v<To, csc_matrix<T>>) return to_csc(a);
  else if constexpr (std::is_same_v<To, ell_matrix<T>>) return to_ell(a);
  else {
    static_assert(std::is_same_v<To, jds_matrix<T>>, "convert: unknown target format");
    return to_jds(a);
  }
}

}  // namespace la
