// The direct method for complex systems on the host (issue 69): sparse LDL^H for Hermitian A
// and LDL^T for complex symmetric A on a fill-reducing ordering (detail/complex_ldl.hpp), where
// no pivot needs perturbing; else la's sparse LU with static
// pivoting (sparse_lu_host, sparse_analysis.hpp: a maximum-product matching with its
// scalings, the METIS/AMD ordering of the matched pattern, tiny pivots perturbed to
// sqrt(eps) max|M| keeping their phase), refined classically with residuals of A summed in
// complex<long double> (detail::refine's stop rule: a backward error near 1e-16 and a relative
// residual below 1e-15, or two steps that halve neither). The same checks and verdict as every
// method: converged when ||b - Ax|| meets max(rtol ||b||, atol) within
// cg_options::true_residual_factor; a structurally singular A is a breakdown naming the
// column; NaN or Inf in A or b is non_finite.
#pragma once

#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la {

/// The GPU's direct method for complex systems factors A's dense form: at most this many rows.
inline constexpr index_t complex_dense_rows = 8192;

/// LU with partial pivoting of the column-major n x n complex<double> matrix at `a` (device
/// memory, leading dimension lda >= n), in place, on ctx's stream, by la's kernels
/// (solvers/direct/complex_dense.cu: outer panels of 256 columns, cooperative inner panels of
/// 32, the trailing updates as real GEMMs on the fp64 Tensor Cores; needs compute capability
/// 8.0, as la::dgemm). pivots (device, n entries): row j was swapped with row pivots[j]
/// (0-based), LAPACK's convention. Returns 0, or the first column (1-based) whose pivot is
/// exactly zero (the factors are then singular, as LAPACK's info says).
index_t dense_lu_device(context& ctx, std::complex<double>* a, index_t n, index_t lda, index_t* pivots);
/// b (device, n entries) overwritten by the solution of A x = b with dense_lu_device's factors.
void dense_lu_solve_device(context& ctx, const std::complex<double>* lu, index_t n, index_t lda, const index_t* pivots,
                           std::complex<double>* b);

/// The host oracle of dense_lu_device: the same algorithm (the pivot the largest |re| + |im|,
/// the first of equal ones) on a column-major n x n matrix, in place; returns its info.
inline index_t dense_lu_host(std::vector<std::complex<double>>& a, index_t n, std::vector<index_t>& pivots) {
  using z = std::complex<double>;
  const auto at = [&](index_t i, index_t j) -> z& { return a[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * n]; };
  const auto abs1 = [](const z& v) { return std::abs(v.real()) + std::abs(v.imag()); };
  pivots.assign(static_cast<std::size_t>(n), 0);
  index_t info = 0;
  for (index_t j = 0; j < n; ++j) {
    index_t p = j;
    for (index_t i = j + 1; i < n; ++i)
      if (abs1(at(i, j)) > abs1(at(p, j))) p = i;
    pivots[static_cast<std::size_t>(j)] = p;
    if (!(abs1(at(p, j)) > 0)) {
      if (info == 0) info = j + 1;
      continue;
    }
    if (p != j)
      for (index_t c = 0; c < n; ++c) std::swap(at(j, c), at(p, c));
    const z inv = z(1) / at(j, j);
    for (index_t i = j + 1; i < n; ++i) at(i, j) *= inv;
    for (index_t c = j + 1; c < n; ++c)
      for (index_t i = j + 1; i < n; ++i) at(i, c) -= at(i, j) * at(j, c);
  }
  return info;
}

/// Cholesky A = L L^H of the Hermitian positive definite column-major n x n complex<double>
/// matrix at `a` (device, lda >= n; its lower triangle read, L written over it; the strict
/// upper triangle is left holding what the trailing updates put there), in place, on ctx's
/// stream, by la's kernels (solvers/direct/complex_dense.cu: outer panels of 256 columns, each
/// 32-column diagonal block factored in one block, the column below it by a triangular solve,
/// the trailing updates as real GEMMs on the fp64 Tensor Cores). Returns 0, or the first
/// column (1-based) whose pivot is not positive (A is not positive definite; L stops there).
index_t dense_cholesky_device(context& ctx, std::complex<double>* a, index_t n, index_t lda);
/// b (device, n entries) overwritten by the solution of A x = b with dense_cholesky_device's L.
void dense_cholesky_solve_device(context& ctx, const std::complex<double>* l, index_t n, index_t lda, std::complex<double>* b);

/// The host oracle of dense_cholesky_device: the same column order on a column-major n x n
/// matrix's lower triangle, in place; 0 or the first column without a positive pivot.
inline index_t dense_cholesky_host(std::vector<std::complex<double>>& a, index_t n) {
  using z = std::complex<double>;
  const auto at = [&](index_t i, index_t j) -> z& { return a[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * n]; };
  for (index_t j = 0; j < n; ++j) {
    const double d = at(j, j).real();
    if (!(d > 0)) return j + 1;
    const double root = std::sqrt(d);
    at(j, j) = z(root, 0);
    for (index_t i = j + 1; i < n; ++i) at(i, j) /= root;
    for (index_t c = j + 1; c < n; ++c)
      for (index_t i = c; i < n; ++i) at(i, c) -= at(i, j) * std::conj(at(c, j));
  }
  return 0;
}

namespace complex_direct_detail {
template <typename O>
struct direct_backend;
}

/// The direct method for a complex<double> system factored once and solved for many
/// right-hand sides: on ctx's GPU, A's dense form (at most complex_dense_rows rows) by
/// dense_lu_device, each solve refined against the sparse A with the GPU's complex SpMV; or,
/// ctx null, on the host, la's sparse LU with static pivoting (above), refined with residuals
/// summed in complex<long double>. Every solve is judged as every method's: converged when
/// ||b - Ax|| meets max(rtol ||b||, atol) within cg_options::true_residual_factor. What the
/// factorization finds of A (not square, NaN or Inf, too large for the GPU, structurally
/// singular, a zero pivot) is status() and message(), and each solve's status (b = 0 is
/// answered x = 0 all the same). A must outlive the object.
template <typename O>
class complex_direct {
 public:
  complex_direct(context* ctx, const csr_matrix<std::complex<double>, O>& a, const cg_options& o = {});
  ~complex_direct();
  complex_direct(complex_direct&&) noexcept;
  complex_direct& operator=(complex_direct&&) noexcept;

  /// converged once A is factored; else why not (as a solve reports it).
  solve_status status() const noexcept { return factor_.status; }
  const std::string& message() const noexcept { return factor_.message; }
  /// The factorization's seconds (each solve's setup_seconds reports them: done once).
  double factor_seconds() const noexcept { return factor_.setup_seconds; }
  /// x = A^-1 b with the kept factors, refined and checked.
  solve_result solve(const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x);

 private:
  index_t rows_ = 0;
  double anorm_ = 0;
  bool refused_ = false;  // A itself refused (checks, size): every solve says so before looking at b
  solve_result factor_;
  std::unique_ptr<complex_direct_detail::direct_backend<O>> backend_;
};

/// One system on the GPU (complex_direct with ctx): the checks, statuses and verdict of
/// solve_complex_direct_host.
template <typename O>
solve_result solve_complex_direct_device(context& ctx, const csr_matrix<std::complex<double>, O>& a,
                                         const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                         const cg_options& o = {});

/// One system on the host (complex_direct without a context).
template <typename O>
solve_result solve_complex_direct_host(const csr_matrix<std::complex<double>, O>& a,
                                       const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                       const cg_options& o = {});

}  // namespace la
