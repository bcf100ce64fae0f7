// What the complex dense LU (complex_dense.cu) and Cholesky (complex_cholesky.cu) on the GPU
// share: the complex type and panel widths, and the trailing update A -= L U as one real GEMM
// on the fp64 Tensor Cores (la::dgemm). Private.
#pragma once

#include <climits>
#include <string>

#include <la/detail/device_complex.cuh>
#include <la/grid.cuh>
#include <la/kernels/gemm/gemm.hpp>

namespace la::complex_dense_detail {
namespace {  // each file its own copy of the kernels

using C = detail::dcomplex<double>;
constexpr int nb = 32;   // inner panel width
constexpr int NB = 256;  // outer panel width: the trailing update's K (512 real columns)

__device__ __forceinline__ C at(const C* a, long long lda, long long i, long long j) { return a[i + j * lda]; }
__device__ __forceinline__ C conjugate(const C& v) { return C(v.re, -v.im); }

/// L (m x k complex, ld) as the real 2m x 2k column-major matrix [Re -Im; Im Re] with the rows of
/// each complex row interleaved: out[2i + p 2m] = Re, [2i+1 + p 2m] = Im, [2i + (k+p) 2m] = -Im,
/// [2i+1 + (k+p) 2m] = Re.
__global__ void pack_l(const C* L, long long ldl, int m, int k, double* out) {
  LA_GRID_STRIDE(e, static_cast<long long>(m) * k) {
    const long long i = e % m, p = e / m;
    const C v = L[i + p * ldl];
    const long long m2 = 2LL * m;
    out[2 * i + p * m2] = v.re, out[2 * i + 1 + p * m2] = v.im;
    out[2 * i + (k + p) * m2] = -v.im, out[2 * i + 1 + (k + p) * m2] = v.re;
  }
}

/// U (k x n complex, ld) as the real 2k x n column-major matrix [Re; Im]; or, `herm`, U = V^H
/// for the n x k V at U: Re V^T and -Im V^T.
__global__ void pack_u(const C* U, long long ldu, int k, int n, bool herm, double* out) {
  LA_GRID_STRIDE(e, static_cast<long long>(k) * n) {
    const long long p = e % k, c = e / k;
    const C v = herm ? U[c + p * ldu] : U[p + c * ldu];
    out[p + c * 2LL * k] = v.re, out[k + p + c * 2LL * k] = herm ? -v.im : v.im;
  }
}

/// What the LU and the Cholesky share around their kernels: the argument checks, the info
/// word (the first failing column, 1-based; 0: none), zeroed on ctx's stream, and the trailing
/// update with its packed operands (L21 as 2m x 2k, U12 as 2k x n doubles; m, n < n, k <= NB).
struct factor_workspace {
  device_buffer<index_t> info;
  device_buffer<double> lw, uw;

  /// n >= 0 and n <= lda < 2^30, in the caller's name.
  static void check(const char* who, index_t n, index_t lda) {
    LA_EXPECTS(n >= 0 && lda >= (n > 1 ? n : 1), std::string(who) + ": n must be >= 0 and lda >= n");
    LA_EXPECTS(lda <= INT_MAX / 2, std::string(who) + ": lda must be below 2^30");
  }
  factor_workspace(context& ctx, index_t n) : info(ctx.allocate<index_t>(1)) {
    LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(index_t), ctx.stream()));
    const std::size_t kmax = static_cast<std::size_t>(n < NB ? n : NB);
    lw = ctx.allocate<double>(4 * kmax * static_cast<std::size_t>(n));
    uw = ctx.allocate<double>(2 * kmax * static_cast<std::size_t>(n));
  }
  /// A (m x n, ld) -= L (m x k, ld) U (k x n, ld), all complex column-major, as one real GEMM
  /// on the fp64 Tensor Cores; `herm`: U = V^H for the n x k V at U (Cholesky's update).
  /// la::dgemm is row-major, so it computes the transposes: A's doubles as the row-major
  /// n x 2m matrix (ld 2 lda) -= [Re U; Im U]^T (n x 2k) [Re -Im; Im Re]^T (2k x 2m).
  void minus(cudaStream_t s, int m, int n, int k, const C* L, long long ldl, const C* U, long long ldu, C* A, long long lda,
             bool herm = false) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    pack_l<<<detail::grid_for(static_cast<long long>(m) * k), 256, 0, s>>>(L, ldl, m, k, lw.data());
    LA_CHECK_LAUNCH(s);
    pack_u<<<detail::grid_for(static_cast<long long>(k) * n), 256, 0, s>>>(U, ldu, k, n, herm, uw.data());
    LA_CHECK_LAUNCH(s);
    dgemm_args g;
    g.m = n, g.n = 2 * m, g.k = 2 * k;
    g.a = uw.data(), g.lda = 2 * k, g.b = lw.data(), g.ldb = 2 * m;
    g.c = reinterpret_cast<double*>(A), g.ldc = 2 * lda;
    g.alpha = -1, g.beta = 1;
    dgemm(g, s);
  }
  /// The info word once ctx's stream has done the factorization.
  index_t first_failure(context& ctx) const {
    index_t first = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&first, info.data(), sizeof first, cudaMemcpyDeviceToHost, ctx.stream()));
    ctx.synchronize();
    return first;
  }
};

}  // namespace
}  // namespace la::complex_dense_detail
