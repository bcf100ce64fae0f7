// Generated sparse matrices for tests, benchmarks and examples, all as CSR:
//   poisson_2d(n)   5-point Laplacian on an n x n grid (4 on the diagonal, -1 off it; SPD)
//   poisson_3d(n)   7-point Laplacian on an n^3 grid (6 and -1; SPD)
//   convdiff_2d(n, pe), convdiff_3d(n, pe)
//                   upwinded convection-diffusion -lap u + pe (1,1[,1]) . grad u on the unit
//                   square (cube), n interior points a side, h = 1/(n+1), scaled by h^2:
//                   diagonal 4 + 2 pe h (6 + 3 pe h), upwind neighbours -1 - pe h, downwind
//                   -1. Non-symmetric for pe > 0, an M-matrix, weakly diagonally dominant.
//   helmholtz(d, n, kappa, shift)
//                   complex values (issue 69): -lap u - kappa^2 (1 + i shift) u on the unit
//                   square (cube), n interior points a side, h = 1/(n+1), scaled by h^2, with a
//                   first-order absorbing boundary (du/dn = i kappa u, the ghost point
//                   eliminated): diagonal 2d - (kappa h)^2 (1 + i shift) - sum over the node's
//                   boundary faces of 1 / (1 - i kappa h), neighbours -1. Complex symmetric
//                   (A = A^T), not Hermitian; indefinite once (kappa h)^2 passes the smallest
//                   eigenvalue of the Laplacian, the shift and the boundary keep it nonsingular.
//   random_rows     every row exactly k distinct random columns
//   rmat            a power-law graph (R-MAT, Chakrabarti et al. 2004: a, b, c = 0.57,
//                   0.19, 0.19), duplicate edges summed
//   dense_rows      random rows of k entries plus a few rows of many entries
// Values off the diagonal of the random matrices are in [-1, -0.01] U [0.01, 1] (never 0).
// The same seed gives the same matrix on every machine (a fixed generator, no
// std::distribution).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include <la/formats/convert.hpp>

namespace la {
namespace detail {
/// splitmix64: a small generator whose output is fixed by the seed everywhere.
struct splitmix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  index_t below(index_t n) { return static_cast<index_t>(next() % static_cast<std::uint64_t>(n)); }
  template <typename T>
  T value() {
    const double m = 0.01 + 0.99 * uniform();
    return static_cast<T>(next() & 1 ? m : -m);
  }
};

/// Refuses a generated matrix whose rows or nonzeros do not fit before anything is
/// allocated; `what` names it for the message ("a 2D Poisson matrix on a 50000^2 grid").
template <typename T, typename O>
void check_generated(std::int64_t rows, std::int64_t nnz, const std::string& what) {
  if (rows < 0 || rows > max_index)
    throw size_overflow(what + " has " + std::to_string(rows) + " rows; la's row and column indices are 32-bit (at most " +
                        std::to_string(max_index) + " rows)");
  checked_offset<O>(nnz, (what + ": its nonzeros").c_str());
  check_host_memory(double(nnz) * (sizeof(T) + sizeof(index_t)) + (double(rows) + 1) * sizeof(O), "generating " + what);
}
}  // namespace detail

/// The largest grids whose rows fit 32-bit indices: 46340^2 and 1290^3 rows.
inline constexpr index_t poisson_2d_max_n = 46340;
inline constexpr index_t poisson_3d_max_n = 1290;

template <typename T, typename O = index_t>
csr_matrix<T, O> poisson_2d(index_t n) {
  LA_EXPECTS(n >= 0 && n <= poisson_2d_max_n, "poisson_2d(" + std::to_string(n) + "): the grid side must be in [0, " +
                                                  std::to_string(poisson_2d_max_n) + "] (n^2 rows fit 32-bit indices)");
  const std::int64_t rows = std::int64_t(n) * n;
  detail::check_generated<T, O>(rows, 5 * rows - 4 * std::int64_t(n),
                                "a 2D Poisson matrix on a " + std::to_string(n) + "^2 grid");
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  std::vector<T> v;
  ci.reserve(static_cast<std::size_t>(5 * rows));
  v.reserve(ci.capacity());
  auto add = [&](std::int64_t c, T x) { ci.push_back(static_cast<index_t>(c)), v.push_back(x); };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t r = i * n + j;
      if (i > 0) add(r - n, T(-1));
      if (j > 0) add(r - 1, T(-1));
      add(r, T(4));
      if (j + 1 < n) add(r + 1, T(-1));
      if (i + 1 < n) add(r + n, T(-1));
      rp[r + 1] = static_cast<O>(ci.size());
    }
  return {static_cast<index_t>(rows), static_cast<index_t>(rows), std::move(rp), std::move(ci), std::move(v)};
}

template <typename T, typename O = index_t>
csr_matrix<T, O> poisson_3d(index_t n) {
  LA_EXPECTS(n >= 0 && n <= poisson_3d_max_n, "poisson_3d(" + std::to_string(n) + "): the grid side must be in [0, " +
                                                  std::to_string(poisson_3d_max_n) + "] (n^3 rows fit 32-bit indices)");
  const std::int64_t rows = std::int64_t(n) * n * n, nn = std::int64_t(n) * n;
  detail::check_generated<T, O>(rows, 7 * rows - 6 * nn, "a 3D Poisson matrix on a " + std::to_string(n) + "^3 grid");
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  std::vector<T> v;
  ci.reserve(static_cast<std::size_t>(7 * rows));
  v.reserve(ci.capacity());
  auto add = [&](std::int64_t c, T x) { ci.push_back(static_cast<index_t>(c)), v.push_back(x); };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t r = (i * n + j) * n + k;
        if (i > 0) add(r - nn, T(-1));
        if (j > 0) add(r - n, T(-1));
        if (k > 0) add(r - 1, T(-1));
        add(r, T(6));
        if (k + 1 < n) add(r + 1, T(-1));
        if (j + 1 < n) add(r + n, T(-1));
        if (i + 1 < n) add(r + nn, T(-1));
        rp[r + 1] = static_cast<O>(ci.size());
      }
  return {static_cast<index_t>(rows), static_cast<index_t>(rows), std::move(rp), std::move(ci), std::move(v)};
}

/// Upwinded convection-diffusion on an n^d grid (d = 2 or 3), Peclet number pe (see the top).
template <typename T, typename O = index_t>
csr_matrix<T, O> convdiff(int d, index_t n, double pe) {
  const index_t most = d == 2 ? poisson_2d_max_n : poisson_3d_max_n;
  LA_EXPECTS(n >= 0 && n <= most, "convdiff" + std::to_string(d) + "d(" + std::to_string(n) +
                                      "): the grid side must be in [0, " + std::to_string(most) + "]");
  LA_EXPECTS(pe >= 0 && pe < 1e12, "convdiff: the Peclet number must be in [0, 1e12)");
  const std::int64_t rows = d == 2 ? std::int64_t(n) * n : std::int64_t(n) * n * n;
  const std::int64_t nnz = d == 2 ? 5 * rows - 4 * std::int64_t(n) : 7 * rows - 6 * std::int64_t(n) * n;
  detail::check_generated<T, O>(rows, nnz, "a " + std::to_string(d) + "D convection-diffusion matrix on a " +
                                               std::to_string(n) + "^" + std::to_string(d) + " grid");
  const double h = 1.0 / (double(n) + 1), c = pe * h;
  const T diag = static_cast<T>(2 * d + d * c), up = static_cast<T>(-1 - c), down = T(-1);
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  std::vector<T> v;
  ci.reserve(static_cast<std::size_t>(nnz));
  v.reserve(ci.capacity());
  const std::int64_t nz = d == 3 ? n : 1, s1 = n, s2 = std::int64_t(n) * n;
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t r = k * s2 + i * s1 + j;
        auto add = [&](std::int64_t col, T x) { ci.push_back(static_cast<index_t>(col)), v.push_back(x); };
        if (d == 3 && k > 0) add(r - s2, up);
        if (i > 0) add(r - s1, up);
        if (j > 0) add(r - 1, up);
        add(r, diag);
        if (j + 1 < n) add(r + 1, down);
        if (i + 1 < n) add(r + s1, down);
        if (d == 3 && k + 1 < n) add(r + s2, down);
        rp[r + 1] = static_cast<O>(ci.size());
      }
  return {static_cast<index_t>(rows), static_cast<index_t>(rows), std::move(rp), std::move(ci), std::move(v)};
}

/// kappa for `ppw` grid points per wavelength on an n-point side (h = 1/(n+1)): 2 pi / (ppw h).
inline double helmholtz_kappa(index_t n, double ppw) { return 2 * 3.14159265358979323846 * (double(n) + 1) / ppw; }

/// The complex-shifted Helmholtz operator with an absorbing boundary on an n^d grid (d = 2 or
/// 3; see the top). T: std::complex<float> or std::complex<double>.
template <typename T, typename O = index_t>
csr_matrix<T, O> helmholtz(int d, index_t n, double kappa, double shift) {
  static_assert(is_complex_v<T>, "helmholtz: the operator has complex values (std::complex<float> or <double>)");
  using R = real_of_t<T>;
  LA_EXPECTS(d == 2 || d == 3, "helmholtz: the dimension must be 2 or 3");
  const index_t most = d == 2 ? poisson_2d_max_n : poisson_3d_max_n;
  LA_EXPECTS(n >= 0 && n <= most, "helmholtz" + std::to_string(d) + "d(" + std::to_string(n) +
                                      "): the grid side must be in [0, " + std::to_string(most) + "]");
  LA_EXPECTS(kappa >= 0 && kappa < 1e12, "helmholtz: the wavenumber must be in [0, 1e12)");
  LA_EXPECTS(shift >= 0 && shift < 1e6, "helmholtz: the shift must be in [0, 1e6)");
  const std::int64_t rows = d == 2 ? std::int64_t(n) * n : std::int64_t(n) * n * n;
  const std::int64_t nnz = d == 2 ? 5 * rows - 4 * std::int64_t(n) : 7 * rows - 6 * std::int64_t(n) * n;
  detail::check_generated<T, O>(rows, nnz, "a " + std::to_string(d) + "D Helmholtz matrix on a " + std::to_string(n) +
                                               "^" + std::to_string(d) + " grid");
  const double h = 1.0 / (double(n) + 1), kh = kappa * h;
  // In real arithmetic written out (a library's complex division may round differently
  // between builds): the interior 2d - kh^2 (1 + i shift), a boundary face's share
  // 1 / (1 - i kh) = (1 + i kh) / (1 + kh^2).
  const double interior_re = 2.0 * d - kh * kh, interior_im = -kh * kh * shift;
  const double face_re = 1.0 / (1.0 + kh * kh), face_im = kh / (1.0 + kh * kh);
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  std::vector<T> v;
  ci.reserve(static_cast<std::size_t>(nnz));
  v.reserve(ci.capacity());
  const T off(R(-1), R(0));
  const std::int64_t nz = d == 3 ? n : 1, s1 = n, s2 = std::int64_t(n) * n;
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t r = k * s2 + i * s1 + j;
        const int faces = (i == 0) + (i + 1 == n) + (j == 0) + (j + 1 == n) + (d == 3 ? (k == 0) + (k + 1 == n) : 0);
        const double diag_re = interior_re - faces * face_re, diag_im = interior_im - faces * face_im;
        auto add = [&](std::int64_t col, T x) { ci.push_back(static_cast<index_t>(col)), v.push_back(x); };
        if (d == 3 && k > 0) add(r - s2, off);
        if (i > 0) add(r - s1, off);
        if (j > 0) add(r - 1, off);
        add(r, T(static_cast<R>(diag_re), static_cast<R>(diag_im)));
        if (j + 1 < n) add(r + 1, off);
        if (i + 1 < n) add(r + s1, off);
        if (d == 3 && k + 1 < n) add(r + s2, off);
        rp[r + 1] = static_cast<O>(ci.size());
      }
  return {static_cast<index_t>(rows), static_cast<index_t>(rows), std::move(rp), std::move(ci), std::move(v)};
}

namespace detail {
/// k distinct sorted random columns in [0, cols) appended to ci (k <= cols).
inline void random_columns(index_t cols, index_t k, splitmix& g, std::vector<index_t>& ci) {
  const std::size_t start = ci.size();
  while (static_cast<index_t>(ci.size() - start) < k) {
    for (std::size_t need = k - (ci.size() - start); need > 0; --need) ci.push_back(g.below(cols));
    std::sort(ci.begin() + static_cast<std::ptrdiff_t>(start), ci.end());
    ci.erase(std::unique(ci.begin() + static_cast<std::ptrdiff_t>(start), ci.end()), ci.end());
  }
}
}  // namespace detail

/// Every row exactly k distinct random columns (k <= cols).
template <typename T, typename O = index_t>
csr_matrix<T, O> random_rows(index_t rows, index_t cols, index_t k, std::uint64_t seed = 1) {
  LA_EXPECTS(rows >= 0 && cols >= 0, "random_rows: the size must not be negative");
  LA_EXPECTS(k >= 0 && k <= cols, "random_rows: " + std::to_string(k) + " distinct entries a row do not fit in " +
                                      std::to_string(cols) + " columns");
  detail::check_generated<T, O>(rows, std::int64_t(rows) * k, "a random matrix with " + std::to_string(rows) + " rows");
  detail::splitmix g{seed};
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  ci.reserve(static_cast<std::size_t>(rows) * k);
  for (index_t i = 0; i < rows; ++i) {
    detail::random_columns(cols, k, g, ci);
    rp[i + 1] = static_cast<O>(ci.size());
  }
  std::vector<T> v(ci.size());
  for (T& x : v) x = g.value<T>();
  return {rows, cols, std::move(rp), std::move(ci), std::move(v)};
}

/// R-MAT graph of 2^scale vertices and edge_factor * 2^scale edges (duplicates summed).
template <typename T, typename O = index_t>
csr_matrix<T, O> rmat(int scale, int edge_factor, std::uint64_t seed = 1) {
  LA_EXPECTS(scale >= 1 && scale <= 30, "rmat: the scale must be in [1, 30]");
  LA_EXPECTS(edge_factor >= 1, "rmat: the edge factor must be at least 1");
  const index_t n = index_t(1) << scale;
  const std::int64_t edges = std::int64_t(edge_factor) * n;
  check_host_memory(double(edges) * (2 * sizeof(index_t) + sizeof(T)), "generating an R-MAT graph of 2^" +
                                                                           std::to_string(scale) + " vertices");
  detail::check_generated<T, O>(n, 0, "an R-MAT graph");
  detail::splitmix g{seed};
  std::vector<index_t> r(static_cast<std::size_t>(edges)), c(r.size());
  std::vector<T> v(r.size());
  for (std::size_t e = 0; e < r.size(); ++e) {
    index_t i = 0, j = 0;
    for (int b = scale - 1; b >= 0; --b) {
      const double u = g.uniform();  // quadrants a | b / c | d
      if (u >= 0.57 + 0.19 + 0.19) i |= index_t(1) << b, j |= index_t(1) << b;
      else if (u >= 0.57 + 0.19) i |= index_t(1) << b;
      else if (u >= 0.57) j |= index_t(1) << b;
    }
    r[e] = i, c[e] = j, v[e] = g.value<T>();
  }
  return to_csr<O>(coo_matrix<T>(detail::trusted, n, n, std::move(r), std::move(c), std::move(v)));
}

/// rows x rows, k random entries per row, and `dense` rows (spread evenly) of `dense_len`.
template <typename T, typename O = index_t>
csr_matrix<T, O> dense_rows(index_t rows, index_t k, index_t dense, index_t dense_len, std::uint64_t seed = 1) {
  LA_EXPECTS(rows >= 0 && k >= 0 && dense_len >= 0 && k <= rows && dense_len <= rows && dense >= 0 && dense <= rows,
             "dense_rows: every count must be in [0, rows]");
  detail::check_generated<T, O>(rows, std::int64_t(rows) * k + std::int64_t(dense) * dense_len,
                                "a matrix with dense rows and " + std::to_string(rows) + " rows");
  detail::splitmix g{seed};
  std::vector<O> rp(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> ci;
  ci.reserve(static_cast<std::size_t>(rows) * k + static_cast<std::size_t>(dense) * dense_len);
  const index_t every = dense ? rows / dense : rows + 1;
  for (index_t i = 0; i < rows; ++i) {
    detail::random_columns(rows, dense && i % every == every / 2 && i / every < dense ? dense_len : k, g, ci);
    rp[i + 1] = static_cast<O>(ci.size());
  }
  std::vector<T> v(ci.size());
  for (T& x : v) x = g.value<T>();
  return {rows, rows, std::move(rp), std::move(ci), std::move(v)};
}

}  // namespace la
