// The sequential host oracle of C = A B for CSR matrices (Gustavson's row-by-row product):
// row i of C is the sum over the entries a_ik of row i of A of a_ik times row k of B,
// accumulated in wider_t<T> in a dense accumulator with a marker per column, then written in
// increasing column order. Entries that cancel to zero are kept (the pattern is the
// symbolic product's, as a GPU SpGEMM's symbolic pass computes it). C's offsets are OC, so a
// product past 2^31 entries can be formed with 64-bit offsets; a C that needs more than OC
// can hold is la::invalid_argument naming the count.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/kernels/reference/transpose.hpp>

namespace la::reference {

template <typename OC = count_t, typename T, typename OA, typename OB>
csr_matrix<T, OC> spgemm(const csr_matrix<T, OA>& a, const csr_matrix<T, OB>& b) {
  LA_EXPECTS(a.cols() == b.rows(), "spgemm: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       " and B is " + std::to_string(b.rows()) + " x " + std::to_string(b.cols()) +
                                       "; A's columns must match B's rows");
  const index_t m = a.rows(), n = b.cols();
  std::vector<index_t> marker(static_cast<std::size_t>(n), -1);
  std::vector<wider_t<T>> acc(static_cast<std::size_t>(n));
  std::vector<index_t> cols;
  std::vector<OC> ptr{0};
  std::vector<index_t> idx;
  std::vector<T> val;
  long long total = 0;
  for (index_t i = 0; i < m; ++i) {
    cols.clear();
    for (OA p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) {
      const index_t k = a.col_idx()[p];
      const wider_t<T> x = a.values()[p];
      for (OB q = b.row_ptr()[k]; q < b.row_ptr()[k + 1]; ++q) {
        const index_t j = b.col_idx()[q];
        if (marker[j] != i) marker[j] = i, acc[j] = 0, cols.push_back(j);
        acc[j] += x * static_cast<wider_t<T>>(b.values()[q]);
      }
    }
    std::sort(cols.begin(), cols.end());
    total += static_cast<long long>(cols.size());
    LA_EXPECTS(total <= static_cast<long long>(std::numeric_limits<OC>::max()),
               "spgemm: C has more than " + std::to_string(static_cast<long long>(std::numeric_limits<OC>::max())) +
                   " entries; use 64-bit offsets for C");
    for (index_t j : cols) idx.push_back(j), val.push_back(static_cast<T>(acc[j]));
    ptr.push_back(static_cast<OC>(idx.size()));
  }
  return csr_matrix<T, OC>(::la::detail::trusted, m, n, std::move(ptr), std::move(idx), std::move(val));
}

}  // namespace la::reference
