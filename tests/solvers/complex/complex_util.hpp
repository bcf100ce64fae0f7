// What the complex solver tests share (issue 69): a dense complex LU in long double (the
// oracles' oracle), A x by the host reference, the relative max error, a Hermitian positive
// definite matrix on the 2D Laplacian's pattern.
#pragma once

#include <complex>
#include <vector>

#include <la/formats/generate.hpp>
#include <la/kernels/reference/spmv.hpp>

namespace la::test {

using zd = std::complex<double>;

/// x solving A x = b by dense LU with partial pivoting in complex<long double>.
inline std::vector<zd> dense_solve(const csr_matrix<zd>& a, const std::vector<zd>& b) {
  using zl = std::complex<long double>;
  const auto n = static_cast<std::size_t>(a.rows());
  std::vector<zl> m(n * n, zl(0)), x(b.begin(), b.end());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) m[i * n + a.col_idx()[k]] += zl(a.values()[k]);
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    for (std::size_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[p * n + k]);
    std::swap(x[c], x[p]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const zl f = m[r * n + c] / m[c * n + c];
      for (std::size_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      x[r] -= f * x[c];
    }
  }
  for (std::size_t c = n; c-- > 0;) {
    for (std::size_t k = c + 1; k < n; ++k) x[c] -= m[c * n + k] * x[k];
    x[c] /= m[c * n + c];
  }
  return {x.begin(), x.end()};
}

/// A x by the host reference.
template <typename T>
std::vector<T> times(const csr_matrix<T>& a, const std::vector<T>& x) {
  std::vector<T> y(static_cast<std::size_t>(a.rows()));
  reference::spmv(T(1), a, x, T(0), y);
  return y;
}

/// max |x_i - want_i| / max |want_i| (the absolute error where want is zero).
template <typename T>
double max_error(const std::vector<T>& x, const std::vector<zd>& want) {
  double e = 0, m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) e = std::max(e, std::abs(zd(x[i]) - want[i])), m = std::max(m, std::abs(want[i]));
  return m > 0 ? e / m : e;
}

/// Hermitian positive definite: the 2D Laplacian's pattern, 4.5 on the diagonal, -1 + 0.3i
/// above it and its conjugate below (Gershgorin: 4.5 > 4 |-1 + 0.3i|).
inline csr_matrix<zd> hpd(index_t n) {
  auto a = poisson_2d<zd>(n);
  std::vector<zd> v = a.values();
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t j = a.col_idx()[k];
      v[k] = j == i ? zd(4.5, 0) : j > i ? zd(-1, 0.3) : zd(-1, -0.3);
    }
  return csr_matrix<zd>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), std::move(v));
}

}  // namespace la::test
