// Dense Cholesky (A = L L^H, Hermitian positive definite) for complex<double> on the GPU
// (issue 69), on the LU's plan (complex_dense.cu) without pivoting: each 32-column diagonal
// block factored in one block's shared memory, the column below it by a triangular solve, the
// trailing updates as one real GEMM on the fp64 Tensor Cores (detail/complex_gemm.cuh). The
// solve is L y = b, then L^H x = y, by one block. Every sum runs in a fixed order, so reruns
// are bit-identical. The host oracle is dense_cholesky_host (complex_direct.hpp).
#include <algorithm>
#include <climits>

#include <la/solvers/complex_direct.hpp>
#include <la/solvers/direct/detail/complex_gemm.cuh>
#include <la/solvers/direct/detail/phase_timer.hpp>

namespace la {
namespace complex_dense_detail {
namespace {

/// The w x w diagonal block at (j0, j0) as L L^H, in one block's shared memory (its lower
/// triangle); the first non-positive pivot's column (1-based) into info, where it is still 0
/// (a block after a failed one leaves its columns as they are).
__global__ void __launch_bounds__(256) potrf_block(C* a, long long lda, int j0, int w, index_t* info) {
  __shared__ C M[nb][nb + 1];
  __shared__ int stop;
  if (threadIdx.x == 0) stop = *info != 0;
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
    const int r = e % w, c = e / w;
    if (r >= c) M[r][c] = at(a, lda, j0 + r, j0 + c);
  }
  __syncthreads();
  if (stop) return;
  int done = w;
  for (int c = 0; c < w; ++c) {
    const double d = M[c][c].re;
    if (!(d > 0)) {  // every thread read the same d
      if (threadIdx.x == 0) *info = j0 + c + 1;
      done = c;
      break;
    }
    __syncthreads();
    const double root = sqrt(d);
    if (threadIdx.x == 0) M[c][c] = C(root, 0);
    for (int r = c + 1 + threadIdx.x; r < w; r += blockDim.x) M[r][c] = C(M[r][c].re / root, M[r][c].im / root);
    __syncthreads();
    const int rest = w - c - 1;
    for (int e = threadIdx.x; e < rest * rest; e += blockDim.x) {
      const int r = c + 1 + e % rest, q = c + 1 + e / rest;
      if (r >= q) M[r][q] -= M[r][c] * conjugate(M[q][c]);
    }
    __syncthreads();
  }
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
    const int r = e % w, c = e / w;
    if (r >= c && c < done) a[j0 + r + static_cast<long long>(j0 + c) * lda] = M[r][c];
  }
}

/// Rows [r0, n) x columns [j0, j0 + w) = (those) L11^-H, L11 the lower w x w block at (j0, j0):
/// a thread a row.
__global__ void __launch_bounds__(256) trsm_right_lh(C* a, long long lda, int j0, int w, int r0, int n) {
  __shared__ C L[nb][nb];
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
    const int r = e % w, c = e / w;
    if (r >= c) L[r][c] = at(a, lda, j0 + r, j0 + c);
  }
  __syncthreads();
  const int r = r0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  C x[nb];
  for (int k = 0; k < w; ++k) {
    C s = at(a, lda, r, j0 + k);
    for (int p = 0; p < k; ++p) s -= x[p] * conjugate(L[k][p]);
    x[k] = C(s.re / L[k][k].re, s.im / L[k][k].re);
  }
  for (int k = 0; k < w; ++k) a[r + static_cast<long long>(j0 + k) * lda] = x[k];
}

/// The solve with L, one block: L y = b, then L^H x = y.
__global__ void __launch_bounds__(1024) cholesky_solve(const C* l, long long lda, int n, C* b) {
  for (int j = 0; j < n; ++j) {
    if (threadIdx.x == 0) b[j] = C(b[j].re / at(l, lda, j, j).re, b[j].im / at(l, lda, j, j).re);
    __syncthreads();
    const C xj = b[j];
    for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) b[i] -= at(l, lda, i, j) * xj;
    __syncthreads();
  }
  for (int j = n - 1; j >= 0; --j) {
    if (threadIdx.x == 0) b[j] = C(b[j].re / at(l, lda, j, j).re, b[j].im / at(l, lda, j, j).re);
    __syncthreads();
    const C xj = b[j];
    for (int i = threadIdx.x; i < j; i += blockDim.x) b[i] -= conjugate(at(l, lda, j, i)) * xj;
    __syncthreads();
  }
}

}  // namespace
}  // namespace complex_dense_detail

index_t dense_cholesky_device(context& ctx, std::complex<double>* a_, index_t n, index_t lda) {
  using namespace complex_dense_detail;
  factor_workspace::check("dense_cholesky_device", n, lda);
  if (n == 0) return 0;
  C* a = detail::device_ptr(a_);
  const cudaStream_t s = ctx.stream();
  factor_workspace ws(ctx, n);
  const auto blk = [&](int i, int j) { return a + i + static_cast<long long>(j) * lda; };
  const int N = static_cast<int>(n);
  dense_detail::phase_timer pt(s);
  for (int J = 0; J < N; J += NB) {
    const int JE = std::min(N, J + NB);
    for (int j = J; j < JE; j += nb) {
      const int w = std::min(nb, JE - j);
      potrf_block<<<1, 256, 0, s>>>(a, lda, j, w, ws.info.data());
      LA_CHECK_LAUNCH(s);
      pt.mark("potrf");
      if (j + w < N) {
        trsm_right_lh<<<detail::grid_for(N - j - w), 256, 0, s>>>(a, lda, j, w, j + w, N);
        LA_CHECK_LAUNCH(s);
        pt.mark("trsm");
      }
      // The outer panel right of this block: A[j+w.., j+w..JE) -= L21 L(j+w..JE)^H.
      ws.minus(s, N - j - w, JE - j - w, w, blk(j + w, j), lda, blk(j + w, j), lda, blk(j + w, j + w), lda, true);
      pt.mark("update inner");
    }
    ws.minus(s, N - JE, N - JE, JE - J, blk(JE, J), lda, blk(JE, J), lda, blk(JE, JE), lda, true);
    pt.mark("update trailing");
  }
  return ws.first_failure(ctx);
}

void dense_cholesky_solve_device(context& ctx, const std::complex<double>* l, index_t n, index_t lda, std::complex<double>* b) {
  using namespace complex_dense_detail;
  if (n == 0) return;
  cholesky_solve<<<1, 1024, 0, ctx.stream()>>>(detail::device_ptr(l), lda, n, detail::device_ptr(b));
  LA_CHECK_LAUNCH(ctx.stream());
}

}  // namespace la
