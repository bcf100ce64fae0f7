// Dense factorizations on the host: LU with partial pivoting (LAPACK's getrf), Cholesky
// (potrf), their solves with many right-hand sides (getrs, potrs), and the 1-norm condition
// estimate (gecon: Hager's and Higham's estimator of ||A^-1||_1). Plain loops in the storage
// order of la's dense matrices (row-major): the oracle for the GPU factorizations and the
// host's direct solve (solvers/direct/method.cpp). Sums of products in wider_t.
//
// A singular matrix is not an exception: the factorization stops at the first column whose
// pivot is zero (LU) or whose diagonal is not positive (Cholesky), and says which (1-based).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <la/formats/dense.hpp>
#include <la/types.hpp>

namespace la {

/// What a factorization found: 0, or the first column (1-based) where it stopped.
struct dense_factor_status {
  index_t bad_column = 0;
  bool ok() const noexcept { return bad_column == 0; }
};

/// P A = L U in place (unit-diagonal L below the diagonal, U on and above); piv[k] is the row
/// swapped with row k at step k. Stops at the first column with no nonzero pivot.
template <typename T>
dense_factor_status lu_factor(dense_matrix<T>& a, std::vector<index_t>& piv) {
  const index_t n = a.rows();
  piv.assign(static_cast<std::size_t>(n), 0);
  for (index_t k = 0; k < n; ++k) {
    index_t p = k;
    T big = std::abs(a(k, k));
    for (index_t i = k + 1; i < n; ++i)
      if (std::abs(a(i, k)) > big) big = std::abs(a(i, k)), p = i;
    piv[static_cast<std::size_t>(k)] = p;
    if (!(big > T(0))) return {k + 1};  // zero (or NaN) column below the diagonal
    if (p != k)
      for (index_t j = 0; j < n; ++j) std::swap(a(k, j), a(p, j));
    const T inv = T(1) / a(k, k);
    const T* rk = &a(k, 0);
    for (index_t i = k + 1; i < n; ++i) {
      T* ri = &a(i, 0);
      const T l = ri[k] * inv;
      ri[k] = l;
      if (l != T(0))
        for (index_t j = k + 1; j < n; ++j) ri[j] -= l * rk[j];  // contiguous: the compiler vectorizes it
    }
  }
  return {};
}

/// A = L L^T, L in the lower triangle (the upper part is left as it was). Stops at the first
/// column whose pivot is not positive: A is not positive definite there.
template <typename T>
dense_factor_status cholesky_factor(dense_matrix<T>& a) {
  const index_t n = a.rows();
  using W = wider_t<T>;
  for (index_t j = 0; j < n; ++j) {
    const T* rj = &a(j, 0);
    W d = a(j, j);
    for (index_t k = 0; k < j; ++k) d -= static_cast<W>(rj[k]) * rj[k];
    if (!(d > 0)) return {j + 1};
    const T ljj = static_cast<T>(std::sqrt(d));
    a(j, j) = ljj;
    for (index_t i = j + 1; i < n; ++i) {
      T* ri = &a(i, 0);
      W s = ri[j];
      for (index_t k = 0; k < j; ++k) s -= static_cast<W>(ri[k]) * rj[k];
      ri[j] = static_cast<T>(s / ljj);
    }
  }
  return {};
}

namespace detail {
/// x = L^-1 x (unit: L's diagonal is 1).
template <typename T>
void lower_solve(const dense_matrix<T>& f, T* x, bool unit) {
  using W = wider_t<T>;
  for (index_t i = 0; i < f.rows(); ++i) {
    const T* ri = &f(i, 0);
    W s = x[i];
    for (index_t k = 0; k < i; ++k) s -= static_cast<W>(ri[k]) * x[k];
    x[i] = static_cast<T>(unit ? s : s / ri[i]);
  }
}
/// x = U^-1 x, U the upper triangle of f.
template <typename T>
void upper_solve(const dense_matrix<T>& f, T* x) {
  using W = wider_t<T>;
  for (index_t i = f.rows() - 1; i >= 0; --i) {
    const T* ri = &f(i, 0);
    W s = x[i];
    for (index_t k = i + 1; k < f.rows(); ++k) s -= static_cast<W>(ri[k]) * x[k];
    x[i] = static_cast<T>(s / ri[i]);
  }
}
/// x = M^-T x for M the lower (unit or not) or upper triangle of f: column sweeps.
template <typename T>
void lower_transpose_solve(const dense_matrix<T>& f, T* x, bool unit) {  // L^T x = b
  const index_t n = f.rows();
  for (index_t i = n - 1; i >= 0; --i) {
    if (!unit) x[i] /= f(i, i);
    for (index_t k = 0; k < i; ++k) x[k] -= f(i, k) * x[i];
  }
}
template <typename T>
void upper_transpose_solve(const dense_matrix<T>& f, T* x) {  // U^T x = b
  const index_t n = f.rows();
  for (index_t i = 0; i < n; ++i) {
    x[i] /= f(i, i);
    for (index_t k = i + 1; k < n; ++k) x[k] -= f(i, k) * x[i];
  }
}
}  // namespace detail

/// x = A^-1 x for each of the `count` right-hand sides stored one after another in x, from
/// lu_factor's factors.
template <typename T>
void lu_solve(const dense_matrix<T>& lu, const std::vector<index_t>& piv, T* x, index_t count = 1) {
  const index_t n = lu.rows();
  for (index_t c = 0; c < count; ++c) {
    T* v = x + static_cast<std::size_t>(c) * n;
    for (index_t k = 0; k < n; ++k) std::swap(v[k], v[piv[static_cast<std::size_t>(k)]]);
    detail::lower_solve(lu, v, true);
    detail::upper_solve(lu, v);
  }
}
/// x = A^-T x (the transposed system), from lu_factor's factors.
template <typename T>
void lu_transpose_solve(const dense_matrix<T>& lu, const std::vector<index_t>& piv, T* v) {
  detail::upper_transpose_solve(lu, v);
  detail::lower_transpose_solve(lu, v, true);
  for (index_t k = lu.rows() - 1; k >= 0; --k) std::swap(v[k], v[piv[static_cast<std::size_t>(k)]]);
}
/// x = A^-1 x for `count` right-hand sides, from cholesky_factor's L.
template <typename T>
void cholesky_solve(const dense_matrix<T>& l, T* x, index_t count = 1) {
  const index_t n = l.rows();
  for (index_t c = 0; c < count; ++c) {
    T* v = x + static_cast<std::size_t>(c) * n;
    detail::lower_solve(l, v, false);
    detail::lower_transpose_solve(l, v, false);
  }
}

/// An estimate of ||A^-1||_1 from the solves x = A^-1 x and x = A^-T x (Hager's method with
/// Higham's refinements, as LAPACK's dlacn2: at most 5 pairs of solves, and the alternative
/// vector that catches what the iteration misses). A lower bound, usually within a factor 3.
template <typename T, typename Solve, typename SolveT>
double inverse_norm1_estimate(index_t n, Solve&& solve, SolveT&& solve_t) {
  if (n == 0) return 0;
  std::vector<T> x(static_cast<std::size_t>(n), T(1) / static_cast<T>(n));
  double est = 0;
  std::vector<double> sign_old;
  index_t last = -1;
  for (int it = 0; it < 5; ++it) {
    solve(x.data());
    double s1 = 0;
    for (const T& v : x) s1 += std::abs(static_cast<double>(v));
    if (it > 0 && s1 <= est) break;
    est = s1;
    std::vector<double> sign(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) sign[i] = x[i] >= T(0) ? 1.0 : -1.0;
    if (sign == sign_old) break;
    sign_old = sign;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(sign[i]);
    solve_t(x.data());
    index_t j = 0;
    for (index_t i = 1; i < n; ++i)
      if (std::abs(x[static_cast<std::size_t>(i)]) > std::abs(x[static_cast<std::size_t>(j)])) j = i;
    if (j == last) break;
    last = j;
    std::fill(x.begin(), x.end(), T(0));
    x[static_cast<std::size_t>(j)] = T(1);
  }
  // Higham's alternative: b_i = (-1)^i (1 + i/(n-1)), whose solve catches cancellation.
  std::vector<T> b(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    b[static_cast<std::size_t>(i)] = static_cast<T>((i % 2 ? -1.0 : 1.0) * (1.0 + (n > 1 ? double(i) / (n - 1) : 0.0)));
  solve(b.data());
  double s = 0;
  for (const T& v : b) s += std::abs(static_cast<double>(v));
  return std::max(est, 2 * s / (3.0 * n));
}

}  // namespace la
