// The host oracle of A^T for CSR: a counting sort of the entries by column, so each row of
// A^T lists its columns in increasing order (the restriction P^T of a Galerkin product, the
// L^T of an incomplete Cholesky factor).
#pragma once

#include <vector>

#include <la/formats/csr.hpp>

namespace la::reference {

template <typename T, typename O>
csr_matrix<T, O> transpose(const csr_matrix<T, O>& a) {
  std::vector<O> ptr(static_cast<std::size_t>(a.cols()) + 1, 0);
  for (index_t c : a.col_idx()) ++ptr[static_cast<std::size_t>(c) + 1];
  for (std::size_t j = 1; j < ptr.size(); ++j) ptr[j] += ptr[j - 1];
  std::vector<O> next(ptr.begin(), ptr.end() - 1);
  std::vector<index_t> idx(a.col_idx().size());
  std::vector<T> val(a.values().size());
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const O at = next[a.col_idx()[k]]++;
      idx[at] = i, val[at] = a.values()[k];
    }
  return csr_matrix<T, O>(::la::detail::trusted, a.cols(), a.rows(), std::move(ptr), std::move(idx), std::move(val));
}

}  // namespace la::reference
