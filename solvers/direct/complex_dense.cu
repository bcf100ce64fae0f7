// Dense LU with partial pivoting for complex<double> on the GPU (issue 69), la's own kernels,
// right-looking, column-major, blocked on two levels as the real LU (dense_lu.cuh): outer panels
// of NB = 256 columns, each factored as inner panels of nb = 32:
//   panel     one cooperative kernel an inner panel: the blocks hold its rows in shared memory;
//             a column costs one grid barrier (every block posts its best row, by |re| + |im|,
//             the first of equal ones as LAPACK's izamax, and the old row j; each then reads the
//             winner, swaps, scales and updates its own rows)
//   laswp     the panel's swaps on the other columns (the outer panel's at once, the rest of
//             the matrix once per outer panel)
//   trsm      U12 = L11^-1 A12 for 32 rows at a time, a thread per column
//   update    A22 -= L21 U12 as one real GEMM on the fp64 Tensor Cores (la::dgemm): A22 read
//             as the real 2m x n matrix of its interleaved parts, L21 packed as [Re -Im; Im Re]
//             by rows (2m x 2k), U12 as [Re; Im] (2k x n): 8mnk real flops, as the complex
//             product's. The outer update's K is 512 real columns.
// The solve: the swaps, then the factors, by one block. The Cholesky on the same plan is
// complex_cholesky.cu; the update's GEMM, shared, detail/complex_gemm.cuh. Every sum runs in a
// fixed order, so reruns are bit-identical. The host oracle is dense_lu_host (the same pivots,
// complex_direct.hpp); the factors agree to rounding.
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <string>

#include <cooperative_groups.h>

#include <la/solvers/complex_direct.hpp>
#include <la/solvers/direct/detail/complex_gemm.cuh>
#include <la/solvers/direct/detail/phase_timer.hpp>

namespace la {
namespace complex_dense_detail {

namespace cgx = cooperative_groups;
constexpr int panel_threads = 256;

__device__ __forceinline__ double abs1(const C& v) { return fabs(v.re) + fabs(v.im); }

/// 1 / v by Smith's scaling (no overflow for |v| near the range's ends).
__device__ __forceinline__ C reciprocal(const C& v) {
  if (fabs(v.re) >= fabs(v.im)) {
    const double r = v.im / v.re, d = v.re + v.im * r;
    return C(1 / d, -r / d);
  }
  const double r = v.re / v.im, d = v.re * r + v.im;
  return C(r / d, -1 / d);
}

/// The better of two (magnitude, row) candidates: the larger, the lower row where equal.
__device__ __forceinline__ void better(double& v, int& vi, double ov, int oi) {
  if (ov > v || (ov == v && oi < vi)) v = ov, vi = oi;
}

/// The inner panel of w columns at j0 over rows [j0, n), a cooperative launch: block b holds
/// rows [j0 + b rpb, j0 + (b + 1) rpb) of it in shared memory (column c of its rows at P + c rpb).
/// cand_v, cand_r: 2 x gridDim.x; cand_rows: 2 x gridDim.x x nb; crow: 2 x nb (two of each, by
/// the column's parity: a block writes column j + 1's while another may still read column j's,
/// never column j + 2's, which is behind column j + 1's barrier).
__global__ void __launch_bounds__(panel_threads) panel_kernel(C* a, long long lda, int n, int j0, int w, int rpb,
                                                              index_t* piv, index_t* info, double* cand_v, int* cand_r,
                                                              C* cand_rows, C* crow) {
  extern __shared__ C P[];
  __shared__ double red_v[panel_threads / 32];
  __shared__ int red_i[panel_threads / 32];
  __shared__ C prow[nb];
  __shared__ int s_best, s_pivot, s_winner, s_ok;
  cgx::grid_group grid = cgx::this_grid();
  const int blocks = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
  const int r0 = j0 + b * rpb, mine = max(0, min(rpb, n - r0));
  for (int e = threadIdx.x; e < mine * w; e += blockDim.x) {
    const int r = e % mine, c = e / mine;
    P[c * rpb + r] = a[r0 + r + static_cast<long long>(j0 + c) * lda];
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int jj = 0; jj < w; ++jj) {
    const int j = j0 + jj, par = jj & 1;
    // This block's best row at or below j (NaN never wins; rows ascend per thread).
    double v = -1;
    int vi = n;
    for (int r = max(0, j - r0) + static_cast<int>(threadIdx.x); r < mine; r += blockDim.x) {
      const double m = abs1(P[jj * rpb + r]);
      if (m > v) v = m, vi = r0 + r;
    }
    for (int off = 16; off > 0; off /= 2) better(v, vi, __shfl_down_sync(0xffffffffu, v, off), __shfl_down_sync(0xffffffffu, vi, off));
    if (lane == 0) red_v[warp] = v, red_i[warp] = vi;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int q = 1; q < panel_threads / 32; ++q) better(red_v[0], red_i[0], red_v[q], red_i[q]);
      cand_v[par * blocks + b] = red_v[0];
      cand_r[par * blocks + b] = red_i[0];
      s_best = red_i[0];
    }
    __syncthreads();
    if (s_best < n)
      for (int c = threadIdx.x; c < w; c += blockDim.x) cand_rows[(par * blocks + b) * nb + c] = P[c * rpb + s_best - r0];
    if (j >= r0 && j < r0 + mine)
      for (int c = threadIdx.x; c < w; c += blockDim.x) crow[par * nb + c] = P[c * rpb + j - r0];
    grid.sync();
    if (warp == 0) {  // the winner over the blocks' candidates: the lanes split them, then shuffle
      double bv = -1;
      int bi = n, wb = -1;
      for (int q = lane; q < blocks; q += 32) {
        const double cv = cand_v[par * blocks + q];
        const int ci = cand_r[par * blocks + q];
        if (cv > bv || (cv == bv && ci < bi)) bv = cv, bi = ci, wb = q;
      }
      for (int off = 16; off > 0; off /= 2) {
        const double ov = __shfl_down_sync(0xffffffffu, bv, off);
        const int oi = __shfl_down_sync(0xffffffffu, bi, off), ow = __shfl_down_sync(0xffffffffu, wb, off);
        if (ov > bv || (ov == bv && oi < bi)) bv = ov, bi = oi, wb = ow;
      }
      if (lane == 0) {
        const bool ok = bv > 0;  // else an exactly zero (or NaN) column: left as it is, info says so
        s_ok = ok, s_pivot = ok ? bi : j, s_winner = wb;
        if (b == 0) {
          piv[j] = ok ? bi : j;
          if (!ok && *info == 0) *info = j + 1;
        }
      }
    }
    __syncthreads();
    if (!s_ok) continue;  // the same for every block
    const int p = s_pivot;
    for (int c = threadIdx.x; c < w; c += blockDim.x) prow[c] = cand_rows[(par * blocks + s_winner) * nb + c];
    __syncthreads();
    if (p != j) {
      if (p >= r0 && p < r0 + mine)
        for (int c = threadIdx.x; c < w; c += blockDim.x) P[c * rpb + p - r0] = crow[par * nb + c];
      if (j >= r0 && j < r0 + mine)
        for (int c = threadIdx.x; c < w; c += blockDim.x) P[c * rpb + j - r0] = prow[c];
    }
    __syncthreads();
    const C inv = reciprocal(prow[jj]);
    const int first = max(0, j + 1 - r0), rows = mine - first;
    for (int r = first + static_cast<int>(threadIdx.x); r < mine; r += blockDim.x) P[jj * rpb + r] *= inv;
    __syncthreads();
    const int cols = w - jj - 1;
    if (rows > 0 && cols > 0)
      for (int e = threadIdx.x; e < rows * cols; e += blockDim.x) {
        const int r = first + e % rows, c = jj + 1 + e / rows;
        P[c * rpb + r] -= P[jj * rpb + r] * prow[c];
      }
    __syncthreads();
  }
  for (int e = threadIdx.x; e < mine * w; e += blockDim.x) {
    const int r = e % mine, c = e / mine;
    a[r0 + r + static_cast<long long>(j0 + c) * lda] = P[c * rpb + r];
  }
}

/// The swaps of rows [k0, k1) (piv, in order) on columns [c_begin, c_end) less [skip_begin,
/// skip_end): a thread a column.
__global__ void laswp_kernel(C* a, long long lda, int k0, int k1, const index_t* piv, int c_begin, int c_end, int skip_begin,
                             int skip_end) {
  const long long cols = static_cast<long long>(c_end - c_begin) - (skip_end - skip_begin);
  LA_GRID_STRIDE(t, cols) {
    int c = c_begin + static_cast<int>(t);
    if (c >= skip_begin) c += skip_end - skip_begin;
    C* col = a + static_cast<long long>(c) * lda;
    for (int k = k0; k < k1; ++k) {
      const int p = piv[k];
      if (p != k) {
        const C t2 = col[k];
        col[k] = col[p], col[p] = t2;
      }
    }
  }
}

/// Rows [k0, k0 + w) x columns [c0, c1) = L11^-1 (those rows), L11 the unit lower w x w block at
/// (k0, k0): a thread a column.
__global__ void __launch_bounds__(256) trsm_unit_lower(C* a, long long lda, int k0, int w, int c0, int c1) {
  __shared__ C L[nb][nb];
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) L[e % w][e / w] = at(a, lda, k0 + e % w, k0 + e / w);
  __syncthreads();
  const int c = c0 + blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= c1) return;
  C x[nb];
  C* col = a + static_cast<long long>(c) * lda + k0;
  for (int r = 0; r < w; ++r) {
    C s = col[r];
    for (int q = 0; q < r; ++q) s -= L[r][q] * x[q];
    x[r] = s;
  }
  for (int r = 0; r < w; ++r) col[r] = x[r];
}


/// The solve with the factors, one block: the swaps in order, L y = P b (unit), U x = y.
__global__ void __launch_bounds__(1024) lu_solve(const C* a, long long lda, int n, const index_t* piv, C* b) {
  if (threadIdx.x == 0)
    for (int j = 0; j < n; ++j)
      if (piv[j] != j) {
        const C t = b[j];
        b[j] = b[piv[j]], b[piv[j]] = t;
      }
  __syncthreads();
  for (int j = 0; j < n; ++j) {
    const C xj = b[j];
    for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) b[i] -= at(a, lda, i, j) * xj;
    __syncthreads();
  }
  for (int j = n - 1; j >= 0; --j) {
    if (threadIdx.x == 0) b[j] = b[j] * reciprocal(at(a, lda, j, j));
    __syncthreads();
    const C xj = b[j];
    for (int i = threadIdx.x; i < j; i += blockDim.x) b[i] -= at(a, lda, i, j) * xj;
    __syncthreads();
  }
}


}  // namespace complex_dense_detail

index_t dense_lu_device(context& ctx, std::complex<double>* a_, index_t n, index_t lda, index_t* pivots) {
  using namespace complex_dense_detail;
  factor_workspace::check("dense_lu_device", n, lda);
  if (n == 0) return 0;
  C* a = detail::device_ptr(a_);
  const cudaStream_t s = ctx.stream();
  factor_workspace ws(ctx, n);
  // The panel: its blocks' candidates, rows in shared memory (the opt-in maximum).
  const int sm = ctx.sm_count();
  device_buffer<double> cand_v = ctx.allocate<double>(2 * static_cast<std::size_t>(sm));
  device_buffer<int> cand_r = ctx.allocate<int>(2 * static_cast<std::size_t>(sm));
  device_buffer<C> cand_rows = ctx.allocate<C>(2 * static_cast<std::size_t>(sm) * nb);
  device_buffer<C> crow = ctx.allocate<C>(2 * nb);
  int optin = 0;
  LA_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device()));
  cudaFuncAttributes fattr{};
  LA_CUDA_TRY(cudaFuncGetAttributes(&fattr, panel_kernel));
  const int smax = optin - static_cast<int>(fattr.sharedSizeBytes);
  LA_CUDA_TRY(cudaFuncSetAttribute(panel_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smax));
  std::size_t resident_checked = 0;  // the largest shared memory a panel block was found resident with
  const auto panel = [&](int j0, int w) {
    const int rows = static_cast<int>(n) - j0;
    const int blocks = std::min(sm, (rows + 63) / 64);
    const int rpb = (rows + blocks - 1) / blocks;
    const std::size_t smem = sizeof(C) * static_cast<std::size_t>(rpb) * w;
    if (smem > static_cast<std::size_t>(smax))
      throw not_supported("dense_lu_device: the panel of " + std::to_string(rows) + " rows does not fit " + std::to_string(sm) +
                          " blocks' shared memory (" + std::to_string(smax) + " bytes each)");
    if (smem > resident_checked) {  // the first panel's is the largest: one query, not one a panel
      int per_sm = 0;
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, panel_kernel, panel_threads, smem));
      if (per_sm < 1) throw not_supported("dense_lu_device: the panel kernel cannot be resident on this device");
      resident_checked = smem;
    }
    long long ld = lda;
    int nn = static_cast<int>(n), j = j0, ww = w, r = rpb;
    index_t *pv = pivots, *inf = ws.info.data();
    double* cv = cand_v.data();
    int* cr = cand_r.data();
    C *rows_p = cand_rows.data(), *cw = crow.data();
    void* args[] = {&a, &ld, &nn, &j, &ww, &r, &pv, &inf, &cv, &cr, &rows_p, &cw};
    LA_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(panel_kernel), dim3(blocks), dim3(panel_threads), args, smem, s));
  };
  const auto laswp = [&](int k0, int k1, int c_begin, int c_end, int skip_begin, int skip_end) {
    const long long cols = static_cast<long long>(c_end - c_begin) - (skip_end - skip_begin);
    if (cols <= 0) return;
    laswp_kernel<<<detail::grid_for(cols), 256, 0, s>>>(a, lda, k0, k1, pivots, c_begin, c_end, skip_begin, skip_end);
    LA_CHECK_LAUNCH(s);
  };
  const auto trsm = [&](int k0, int w, int c0, int c1) {
    if (c1 <= c0) return;
    trsm_unit_lower<<<detail::grid_for(c1 - c0), 256, 0, s>>>(a, lda, k0, w, c0, c1);
    LA_CHECK_LAUNCH(s);
  };
  const auto blk = [&](int i, int j) { return a + i + static_cast<long long>(j) * lda; };
  const int N = static_cast<int>(n);
  dense_detail::phase_timer pt(s);  // LA_DENSE_PROFILE: the phases' sums on stderr
  for (int J = 0; J < N; J += NB) {
    const int JE = std::min(N, J + NB);
    // The outer panel [J, JE): its inner panels, each with its swaps on the outer panel's other
    // columns, its U rows there and the update of the outer panel right of it.
    for (int j = J; j < JE; j += nb) {
      const int w = std::min(nb, JE - j);
      panel(j, w);
      pt.mark("panel");
      laswp(j, j + w, J, JE, j, j + w);
      pt.mark("laswp");
      if (j + w < JE) {
        trsm(j, w, j + w, JE);
        pt.mark("trsm");
        ws.minus(s, N - j - w, JE - j - w, w, blk(j + w, j), lda, blk(j, j + w), lda, blk(j + w, j + w), lda);
        pt.mark("update inner");
      }
    }
    laswp(J, JE, 0, N, J, JE);  // the outer panel's swaps on L's columns left of it and the trailing ones
    pt.mark("laswp");
    if (JE == N) break;
    // U12 = L11^-1 A12 over the outer panel's rows, 32 at a time; then A22 -= L21 U12.
    for (int b = J; b < JE; b += nb) {
      const int w = std::min(nb, JE - b);
      trsm(b, w, JE, N);
      pt.mark("trsm");
      ws.minus(s, JE - b - w, N - JE, w, blk(b + w, b), lda, blk(b, JE), lda, blk(b + w, JE), lda);
      pt.mark("update inner");
    }
    ws.minus(s, N - JE, N - JE, JE - J, blk(JE, J), lda, blk(J, JE), lda, blk(JE, JE), lda);
    pt.mark("update trailing");
  }
  return ws.first_failure(ctx);
}

void dense_lu_solve_device(context& ctx, const std::complex<double>* lu, index_t n, index_t lda, const index_t* pivots,
                           std::complex<double>* b) {
  using namespace complex_dense_detail;
  if (n == 0) return;
  lu_solve<<<1, 1024, 0, ctx.stream()>>>(detail::device_ptr(lu), lda, n, pivots, detail::device_ptr(b));
  LA_CHECK_LAUNCH(ctx.stream());
}

}  // namespace la
