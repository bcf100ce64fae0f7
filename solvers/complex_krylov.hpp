// Krylov methods for complex systems on the host (issue 69): the plain oracles the GPU forms
// will be checked against, sequential, every reduction in wider_t (complex<long double> for
// complex<double>), reruns bit-identical.
//
//   complex_method::cg        CG with the Hermitian inner product: A Hermitian positive definite
//   complex_method::cocg      conjugate orthogonal CG (van der Vorst and Melissen 1990): CG with
//                             the bilinear form x^T y in place of x^H y, for complex symmetric
//                             A = A^T (not Hermitian: Helmholtz with a complex shift or an
//                             absorbing boundary, electromagnetics); breaks down only on a
//                             quasi-null vector (r^T r = 0 with r != 0)
//   complex_method::bicgstab  BiCGSTAB for general A, shadow residual r0, x^H y
//   complex_method::gmres     GMRES(m), modified Gram-Schmidt, complex Givens rotations
//
// Preconditioning: none or Jacobi (cg_options::precond none, jacobi or automatic, which is
// Jacobi where the diagonal has no zero and none otherwise), and on the host ILU(0) (ilu0: on
// A's pattern in wider_t, after a maximum-product matching where the diagonal has a missing or
// zero entry; refused for CG, which needs a Hermitian preconditioner). CG and COCG apply it in
// their inner products (z = M^-1 r), BiCGSTAB and GMRES on the right. The other preconditioners
// are refused (invalid_input) until they take complex values; the GPU forms take none and Jacobi.
//
// The result is la::solve_result: converged when the recurrence residual met max(rtol ||b||,
// atol) and the true residual ||b - Ax|| / ||b||, recomputed at the end, is within
// cg_options::true_residual_factor of it (else precision_limit); non_finite for NaN or Inf
// in A, b or x0; breakdown as each method defines it (the message says which quantity).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <string_view>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/vector.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la {

enum class complex_method { cg, cocg, bicgstab, gmres };

inline const char* to_string(complex_method m) noexcept {
  switch (m) {
    case complex_method::cg: return "cg";
    case complex_method::cocg: return "cocg";
    case complex_method::bicgstab: return "bicgstab";
    case complex_method::gmres: return "gmres";
  }
  return "unknown";
}

/// Solves A x = b for complex A (std::complex<float> or std::complex<double>) on the host
/// with `method`; x is the initial guess (empty: zero) and the result. Options read:
/// rtol, atol, max_iterations (-1: 2n matrix-vector products), restart (GMRES), precond
/// (none, jacobi, automatic), true_residual_factor.
template <typename T, typename O>
solve_result solve_complex_host(const csr_matrix<T, O>& a, const std::vector<T>& b, std::vector<T>& x, complex_method method,
                                const cg_options& o = {});

/// The same methods on the GPU of ctx (solvers/krylov/complex_device.cu): A, b and x on the
/// device (x: the initial guess, and the result), the product by the SpMV registry's CSR
/// `kernel` for A (auto: select_spmv_complex's format and kernel, which may hold a converted
/// copy of A, SELL-32 on large stencils; the method string names it). The GPU forms follow the oracle above step for step; their
/// sums run in double in a fixed order, so reruns are bit-identical and the result agrees with
/// the oracle's to rounding. GMRES orthogonalizes by classical Gram-Schmidt run twice (two
/// kernels a pass, whatever the basis size) where the oracle runs modified Gram-Schmidt.
/// Options and statuses as solve_complex_host's; the message and status of a refused input
/// are the same.
template <typename T, typename O>
solve_result solve_complex_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                                  complex_method method, const cg_options& o = {}, std::string_view kernel = "auto");
/// The same from host arrays: A, b and x0 (empty: zero) uploaded, x downloaded.
template <typename T, typename O>
solve_result solve_complex_device(context& ctx, const csr_matrix<T, O>& a, const std::vector<T>& b, std::vector<T>& x,
                                  complex_method method, const cg_options& o = {}, std::string_view kernel = "auto");

}  // namespace la
