// Sequential host SpMV oracles, one per format: y = alpha*A*x + beta*y.
// Each walks its format in the format's own order (so it also checks the format's meaning),
// accumulates in wider_t<T>, and never reads y when beta == 0 (y may hold NaN then).
// The overloads taking `acc` reuse that accumulator (resized to y's length, no allocation
// once it has the capacity): the form for loops such as the host CG.
#pragma once

#include <vector>

#include <la/formats/convert.hpp>

namespace la::reference {

template <typename T>
using accumulator = std::vector<wider_t<T>>;

namespace detail {
template <typename T>
void check_spmv_sizes(index_t rows, index_t cols, const std::vector<T>& x, const std::vector<T>& y) {
  LA_EXPECTS(static_cast<std::size_t>(cols) == x.size(),
             "spmv: x has " + std::to_string(x.size()) + " elements, matrix has " + std::to_string(cols) + " columns");
  LA_EXPECTS(static_cast<std::size_t>(rows) == y.size(),
             "spmv: y has " + std::to_string(y.size()) + " elements, matrix has " + std::to_string(rows) + " rows");
}
/// Every oracle's prologue: the sizes checked, the accumulator zeroed (one sum per row, or
/// per sorted row).
template <typename M, typename T>
void begin(const M& a, const std::vector<T>& x, const std::vector<T>& y, accumulator<T>& acc) {
  check_spmv_sizes(a.rows(), a.cols(), x, y);
  acc.assign(y.size(), wider_t<T>(0));
}
/// y[i] = alpha*acc[k] + beta*y[i] with i = perm[k] (i = k without perm: formats whose sums
/// are by sorted row pass their permutation), skipping the read of y when beta == 0.
template <typename T>
void finish(T alpha, const accumulator<T>& acc, T beta, std::vector<T>& y, const index_t* perm = nullptr) {
  for (std::size_t k = 0; k < y.size(); ++k) {
    const std::size_t i = perm ? static_cast<std::size_t>(perm[k]) : k;
    wider_t<T> r = widen(alpha) * acc[k];
    if (beta != T(0)) r += widen(beta) * widen(y[i]);
    y[i] = static_cast<T>(r);
  }
}
/// acc += the ELL matrix times x (padding skipped), and the same for COO entries: the parts
/// of ELL, COO and HYB.
template <typename T>
void add_ell(accumulator<T>& acc, const ell_matrix<T>& a, const std::vector<T>& x) {
  for (index_t k = 0; k < a.width(); ++k)
    for (index_t i = 0; i < a.rows(); ++i) {
      const std::size_t s = static_cast<std::size_t>(k) * a.rows() + i;
      if (a.col_idx()[s] != ell_padding) acc[i] += widen(a.values()[s]) * widen(x[a.col_idx()[s]]);
    }
}
template <typename T>
void add_coo(accumulator<T>& acc, const coo_matrix<T>& a, const std::vector<T>& x) {
  for (count_t k = 0; k < a.nnz(); ++k)
    acc[a.row_idx()[k]] += widen(a.values()[k]) * widen(x[a.col_idx()[k]]);
}
}  // namespace detail

template <typename T, typename O>
void spmv(T alpha, const csr_matrix<T, O>& a, const std::vector<T>& x, T beta, std::vector<T>& y,
          accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      acc[i] += widen(a.values()[k]) * widen(x[a.col_idx()[k]]);
  detail::finish(alpha, acc, beta, y);
}

template <typename T, typename O>
void spmv(T alpha, const csc_matrix<T, O>& a, const std::vector<T>& x, T beta, std::vector<T>& y,
          accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  for (index_t j = 0; j < a.cols(); ++j)
    for (O k = a.col_ptr()[j]; k < a.col_ptr()[j + 1]; ++k)
      acc[a.row_idx()[k]] += widen(a.values()[k]) * widen(x[j]);
  detail::finish(alpha, acc, beta, y);
}

template <typename T>
void spmv(T alpha, const coo_matrix<T>& a, const std::vector<T>& x, T beta, std::vector<T>& y, accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  detail::add_coo(acc, a, x);
  detail::finish(alpha, acc, beta, y);
}

template <typename T>
void spmv(T alpha, const ell_matrix<T>& a, const std::vector<T>& x, T beta, std::vector<T>& y, accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  detail::add_ell(acc, a, x);
  detail::finish(alpha, acc, beta, y);
}

/// Accumulates by sorted row, then writes each sum to its original row through perm.
template <typename T, typename O>
void spmv(T alpha, const jds_matrix<T, O>& a, const std::vector<T>& x, T beta, std::vector<T>& y,
          accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  // acc holds sums by sorted row; y is written through perm.
  for (index_t d = 0; d < a.num_diagonals(); ++d)
    for (O k = a.diag_ptr()[d]; k < a.diag_ptr()[d + 1]; ++k)
      acc[k - a.diag_ptr()[d]] += widen(a.values()[k]) * widen(x[a.col_idx()[k]]);
  detail::finish(alpha, acc, beta, y, a.perm().data());
}

template <typename T>
void spmv(T alpha, const hyb_matrix<T>& a, const std::vector<T>& x, T beta, std::vector<T>& y, accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  detail::add_ell(acc, a.ell(), x);
  detail::add_coo(acc, a.coo(), x);
  detail::finish(alpha, acc, beta, y);
}

/// Walks the slices slot by slot; sums by sorted row, written to y through perm.
template <typename T, typename O>
void spmv(T alpha, const sell_matrix<T, O>& a, const std::vector<T>& x, T beta, std::vector<T>& y,
          accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  const count_t C = a.slice_height();
  for (count_t s = 0; s < a.slices(); ++s)
    for (O q = a.slice_ptr()[s]; q < a.slice_ptr()[s + 1]; ++q) {
      const count_t k = s * C + (q - a.slice_ptr()[s]) % C;  // sorted row of this slot
      if (a.col_idx()[q] != ell_padding) acc[k] += widen(a.values()[q]) * widen(x[a.col_idx()[q]]);
    }
  detail::finish(alpha, acc, beta, y, a.perm().data());
}

template <typename T>
void spmv(T alpha, const dense_matrix<T>& a, const std::vector<T>& x, T beta, std::vector<T>& y,
          accumulator<T>& acc) {
  detail::begin(a, x, y, acc);
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t j = 0; j < a.cols(); ++j) acc[i] += widen(a(i, j)) * widen(x[j]);
  detail::finish(alpha, acc, beta, y);
}

/// The same, with a fresh accumulator (one allocation per call).
template <typename M, typename T, std::enable_if_t<is_host_matrix_v<M>, int> = 0>
void spmv(T alpha, const M& a, const std::vector<T>& x, T beta, std::vector<T>& y) {
  accumulator<T> acc;
  spmv(alpha, a, x, beta, y, acc);
}

}  // namespace la::reference
