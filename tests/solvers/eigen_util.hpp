// Eigen helpers the dense-solver tests share (direct_test, dense_solver_test): random dense
// matrices and the conversion to la's dense_matrix.
#pragma once

#include <Eigen/Dense>

#include <random>

#include <la/formats/dense.hpp>

namespace la::test {
/// n x n, entries uniform in [-1, 1).
inline Eigen::MatrixXd random_matrix(int n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd m(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m(i, j) = u(g);
  return m;
}
/// m as la's row-major dense matrix of T.
template <typename T = double>
dense_matrix<T> from_eigen(const Eigen::MatrixXd& m) {
  dense_matrix<T> d(static_cast<index_t>(m.rows()), static_cast<index_t>(m.cols()));
  for (index_t i = 0; i < d.rows(); ++i)
    for (index_t j = 0; j < d.cols(); ++j) d(i, j) = static_cast<T>(m(i, j));
  return d;
}
}  // namespace la::test
