// Eigen's ConjugateGradient as the outside reference for la's CG tests (host and GPU).
#pragma once

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>
#include <cmath>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/cg.hpp>
#include "test_util.hpp"

namespace la::test {

inline Eigen::SparseMatrix<double, Eigen::RowMajor> to_eigen(const csr_matrix<double>& a) {
  std::vector<Eigen::Triplet<double>> t;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t.emplace_back(i, a.col_idx()[k], a.values()[k]);
  Eigen::SparseMatrix<double, Eigen::RowMajor> m(a.rows(), a.cols());
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

struct eigen_result {
  std::vector<double> x;
  int iterations;
  bool converged;
};

template <typename Precond>
eigen_result eigen_cg(const csr_matrix<double>& a, const std::vector<double>& b, double tol, int maxit) {
  const auto m = to_eigen(a);
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double, Eigen::RowMajor>, Eigen::Lower | Eigen::Upper, Precond> cg;
  cg.setTolerance(tol);
  cg.setMaxIterations(maxit);
  cg.compute(m);
  Eigen::VectorXd eb = Eigen::Map<const Eigen::VectorXd>(b.data(), b.size());
  Eigen::VectorXd x = cg.solve(eb);
  // Eigen counts an iteration only after its convergence test (ConjugateGradient.h
  // increments i at the end of the loop body), so its count is one less than the number
  // of matrix-vector products in the loop, which is what la reports.
  return {std::vector<double>(x.data(), x.data() + x.size()), static_cast<int>(cg.iterations()) + 1,
          cg.info() == Eigen::Success};
}

/// The options the comparisons with Eigen use: tolerance `tol`, up to 10n iterations.
inline cg_options eigen_comparison_options(double tol, preconditioner pc, index_t n) {
  cg_options opt;
  opt.rtol = tol;
  opt.precond = pc;
  opt.max_iterations = 10 * static_cast<std::int64_t>(n);
  return opt;
}

inline double rel_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d += (x[i] - y[i]) * (x[i] - y[i]), n += y[i] * y[i];
  return std::sqrt(d / n);
}

}  // namespace la::test
