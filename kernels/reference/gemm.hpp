// Sequential host GEMM oracle: C = alpha*A*B + beta*C on row-major dense matrices,
// accumulated in wider_t<T>; beta == 0 never reads C.
#pragma once

#include <la/formats/dense.hpp>

namespace la::reference {

template <typename T>
void gemm(T alpha, const dense_matrix<T>& a, const dense_matrix<T>& b, T beta, dense_matrix<T>& c) {
  LA_EXPECTS(a.cols() == b.rows(), "gemm: A is " + std::to_string(a.rows()) + "x" +
                                       std::to_string(a.cols()) + " but B has " +
                                       std::to_string(b.rows()) + " rows");
  LA_EXPECTS(c.rows() == a.rows() && c.cols() == b.cols(), "gemm: C must be A.rows x B.cols");
  using W = wider_t<T>;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t j = 0; j < b.cols(); ++j) {
      W acc = 0;
      for (index_t k = 0; k < a.cols(); ++k) acc += static_cast<W>(a(i, k)) * b(k, j);
      W r = static_cast<W>(alpha) * acc;
      if (beta != T(0)) r += static_cast<W>(beta) * c(i, j);
      c(i, j) = static_cast<T>(r);
    }
}

}  // namespace la::reference
