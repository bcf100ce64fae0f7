// What the CG benchmarks (cg_bench, precond_bench) share: their option and --systems
// parsing, how a system is loaded (a .mtx file, or a gen: spec of the SpMV suite), the true
// residual of a peer's answer, and the matrix in Eigen's form.
#pragma once

#include <Eigen/Sparse>

#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/detail/vendor/spmv_suite.hpp>

namespace la::bench {

/// The comma-separated items of s (empty items dropped).
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

/// A system: a Matrix Market file (".mtx") or a generator spec (poisson2d:N, ...).
template <typename T>
csr_matrix<T> load(const std::string& spec) {
  if (spec.size() > 4 && spec.substr(spec.size() - 4) == ".mtx") return to_csr(read_matrix_market<T>(spec));
  return cli::generated_matrix<T>(spec);
}

/// A system's name in tables: the file name without its folder, or the gen: spec.
inline std::string system_name(const std::string& spec) {
  return spec.find('/') != std::string::npos ? spec.substr(spec.rfind('/') + 1) : spec;
}

/// The value of option argv[i] (argv[i + 1], and i moves past it).
inline std::string option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw invalid_argument(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

/// ||b - A x|| / ||b|| with the host reference kernels (sums in wider_t<T>).
template <typename T, typename O>
double true_residual(const csr_matrix<T, O>& a, const std::vector<T>& b, const std::vector<T>& x) {
  std::vector<T> r = b;
  reference::spmv(T(-1), a, x, T(1), r);
  return double(reference::nrm2(r)) / double(reference::nrm2(b));
}

/// The matrix as Eigen's row-major sparse matrix.
template <typename T, typename O>
Eigen::SparseMatrix<T, Eigen::RowMajor> to_eigen(const csr_matrix<T, O>& a) {
  std::vector<Eigen::Triplet<T>> t;
  t.reserve(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t.emplace_back(i, a.col_idx()[k], a.values()[k]);
  Eigen::SparseMatrix<T, Eigen::RowMajor> m(a.rows(), a.cols());
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

}  // namespace la::bench
