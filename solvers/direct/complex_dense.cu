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
// and the solve: the swaps, then L and U by one block each. Every sum runs in a fixed order, so
// reruns are bit-identical. The host oracle is dense_lu_host (complex_direct.hpp): the same
// pivots; the factors agree to rounding.
//
// solve_complex_direct_device: the direct method on the GPU for complex systems of at most
// complex_dense_rows rows (A's dense form), refined against the sparse A with the GPU's complex
// SpMV (detail::refine's rule, classical steps).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <cooperative_groups.h>

#include <la/detail/device_complex.cuh>
#include <la/grid.cuh>
#include <la/detail/instantiate.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/solvers/detail/complex_direct_common.hpp>
#include <la/solvers/detail/refinement.hpp>

namespace la {
namespace complex_dense_detail {

namespace cgx = cooperative_groups;
using C = detail::dcomplex<double>;
constexpr int nb = 32;   // inner panel width
constexpr int NB = 256;  // outer panel width: the trailing update's K (512 real columns)
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

__device__ __forceinline__ C at(const C* a, long long lda, long long i, long long j) { return a[i + j * lda]; }

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
    if (threadIdx.x == 0) {
      double bv = -1;
      int bi = n, wb = -1;
      for (int q = 0; q < blocks; ++q) {
        const double cv = cand_v[par * blocks + q];
        const int ci = cand_r[par * blocks + q];
        if (cv > bv || (cv == bv && ci < bi)) bv = cv, bi = ci, wb = q;
      }
      const bool ok = bv > 0;  // else an exactly zero (or NaN) column: left as it is, info says so
      s_ok = ok, s_pivot = ok ? bi : j, s_winner = wb;
      if (b == 0) {
        piv[j] = ok ? bi : j;
        if (!ok && *info == 0) *info = j + 1;
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

/// U (k x n complex, ld) as the real 2k x n column-major matrix [Re; Im].
__global__ void pack_u(const C* U, long long ldu, int k, int n, double* out) {
  LA_GRID_STRIDE(e, static_cast<long long>(k) * n) {
    const long long p = e % k, c = e / k;
    const C v = U[p + c * ldu];
    out[p + c * 2LL * k] = v.re, out[k + p + c * 2LL * k] = v.im;
  }
}

/// A (m x n, ld) -= L (m x k, ld) U (k x n, ld), all complex column-major, as one real GEMM on
/// the fp64 Tensor Cores. la::dgemm is row-major, so it computes the transposes: A's doubles
/// as the row-major n x 2m matrix (ld 2 lda) -= [Re U; Im U]^T (n x 2k) [Re -Im; Im Re]^T
/// (2k x 2m). lw, uw: 4 m k and 2 k n doubles.
void gemm_minus(cudaStream_t s, int m, int n, int k, const C* L, long long ldl, const C* U, long long ldu, C* A, long long lda,
                double* lw, double* uw) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  pack_l<<<detail::grid_for(static_cast<long long>(m) * k), 256, 0, s>>>(L, ldl, m, k, lw);
  LA_CHECK_LAUNCH(s);
  pack_u<<<detail::grid_for(static_cast<long long>(k) * n), 256, 0, s>>>(U, ldu, k, n, uw);
  LA_CHECK_LAUNCH(s);
  dgemm_args g;
  g.m = n, g.n = 2 * m, g.k = 2 * k;
  g.a = uw, g.lda = 2 * k, g.b = lw, g.ldb = 2 * m;
  g.c = reinterpret_cast<double*>(A), g.ldc = 2 * lda;
  g.alpha = -1, g.beta = 1;
  dgemm(g, s);
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

/// x += d (refinement's correction).
__global__ void add_into(C* x, const C* d, long long n) {
  LA_GRID_STRIDE(i, n) x[i] += d[i];
}

/// The dense column-major form of a CSR matrix (duplicates added).
template <typename O>
__global__ void scatter_dense(csr_view<const C, O> s, C* a, long long lda) {
  LA_GRID_STRIDE(i, s.rows) {
    for (O k = s.row_ptr[i]; k < s.row_ptr[i + 1]; ++k) a[i + static_cast<long long>(s.col_idx[k]) * lda] += s.values[k];
  }
}

}  // namespace complex_dense_detail

index_t dense_lu_device(context& ctx, std::complex<double>* a_, index_t n, index_t lda, index_t* pivots) {
  using namespace complex_dense_detail;
  LA_EXPECTS(n >= 0 && lda >= std::max<index_t>(n, 1), "dense_lu_device: n must be >= 0 and lda >= n");
  LA_EXPECTS(lda <= INT_MAX / 2, "dense_lu_device: lda must be below 2^30");
  if (n == 0) return 0;
  C* a = detail::device_ptr(a_);
  const cudaStream_t s = ctx.stream();
  device_buffer<index_t> info = ctx.allocate<index_t>(1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(index_t), s));
  // The GEMMs' packed operands: L21 as 2m x 2k, U12 as 2k x n doubles (m, n < n; k <= NB).
  const std::size_t kmax = static_cast<std::size_t>(std::min<index_t>(n, NB));
  device_buffer<double> lw = ctx.allocate<double>(4 * kmax * static_cast<std::size_t>(n));
  device_buffer<double> uw = ctx.allocate<double>(2 * kmax * static_cast<std::size_t>(n));
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
  const auto panel = [&](int j0, int w) {
    const int rows = static_cast<int>(n) - j0;
    const int blocks = std::min(sm, (rows + 63) / 64);
    const int rpb = (rows + blocks - 1) / blocks;
    const std::size_t smem = sizeof(C) * static_cast<std::size_t>(rpb) * w;
    if (smem > static_cast<std::size_t>(smax))
      throw not_supported("dense_lu_device: the panel of " + std::to_string(rows) + " rows does not fit " + std::to_string(sm) +
                          " blocks' shared memory (" + std::to_string(smax) + " bytes each)");
    int per_sm = 0;
    LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, panel_kernel, panel_threads, smem));
    if (per_sm < 1) throw not_supported("dense_lu_device: the panel kernel cannot be resident on this device");
    long long ld = lda;
    int nn = static_cast<int>(n), j = j0, ww = w, r = rpb;
    index_t *pv = pivots, *inf = info.data();
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
  for (int J = 0; J < N; J += NB) {
    const int JE = std::min(N, J + NB);
    // The outer panel [J, JE): its inner panels, each with its swaps on the outer panel's other
    // columns, its U rows there and the update of the outer panel right of it.
    for (int j = J; j < JE; j += nb) {
      const int w = std::min(nb, JE - j);
      panel(j, w);
      laswp(j, j + w, J, JE, j, j + w);
      if (j + w < JE) {
        trsm(j, w, j + w, JE);
        gemm_minus(s, N - j - w, JE - j - w, w, blk(j + w, j), lda, blk(j, j + w), lda, blk(j + w, j + w), lda, lw.data(), uw.data());
      }
    }
    laswp(J, JE, 0, N, J, JE);  // the outer panel's swaps on L's columns left of it and the trailing ones
    if (JE == N) break;
    // U12 = L11^-1 A12 over the outer panel's rows, 32 at a time; then A22 -= L21 U12.
    for (int b = J; b < JE; b += nb) {
      const int w = std::min(nb, JE - b);
      trsm(b, w, JE, N);
      gemm_minus(s, JE - b - w, N - JE, w, blk(b + w, b), lda, blk(b, JE), lda, blk(b + w, JE), lda, lw.data(), uw.data());
    }
    gemm_minus(s, N - JE, N - JE, JE - J, blk(JE, J), lda, blk(J, JE), lda, blk(JE, JE), lda, lw.data(), uw.data());
  }
  index_t first = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&first, info.data(), sizeof first, cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  return first;
}

void dense_lu_solve_device(context& ctx, const std::complex<double>* lu, index_t n, index_t lda, const index_t* pivots,
                           std::complex<double>* b) {
  using namespace complex_dense_detail;
  if (n == 0) return;
  lu_solve<<<1, 1024, 0, ctx.stream()>>>(detail::device_ptr(lu), lda, n, pivots, detail::device_ptr(b));
  LA_CHECK_LAUNCH(ctx.stream());
}

namespace complex_direct_detail {

/// The GPU's kept factors: A's dense form by dense_lu_device, A on the device for the residuals.
template <typename O>
struct device_backend final : direct_backend<O> {
  context& ctx;
  cg_options o;
  index_t n;
  device_csr<z, O> da;
  device_buffer<z> dense;
  device_buffer<index_t> piv;
  spmv_plan<z> plan;

  device_backend(context& c, const csr_matrix<z, O>& a, const cg_options& o_, device_csr<z, O> d, device_buffer<z> f,
                 device_buffer<index_t> p)
      : ctx(c), o(o_), n(a.rows()), da(std::move(d)), dense(std::move(f)), piv(std::move(p)), plan(c, spmv_view(da)) {}

  void solve(const std::vector<z>& b, std::vector<z>& x, solve_result& r, const input& in) override {
    using namespace complex_dense_detail;
    const auto t1 = std::chrono::steady_clock::now();
    const cudaStream_t s = ctx.stream();
    const auto db = to_device(ctx, b);
    device_vector<z> dx(ctx, n), dr(ctx, n);
    std::vector<z> res(static_cast<std::size_t>(n)), best;
    double be = 0, rel = 0;
    const auto measure = [&] {  // res = b - A x on the GPU, be and rel on the host
      LA_CUDA_TRY(cudaMemcpyAsync(dr.data(), db.data(), sizeof(z) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
      plan.run(dx.data(), dr.data(), z(-1), z(1), s);
      res = to_host(ctx, dr);
      x = to_host(ctx, dx);
      measures(res, x, in, be, rel);
    };
    LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), db.data(), sizeof(z) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
    dense_lu_solve_device(ctx, dense.data(), n, n, piv.data(), dx.data());
    measure();
    best = x;
    detail::refine_rule rule;
    rule.how = refinement_kind::classical;
    rule.max_steps = o.direct.max_refinement;
    const int steps = detail::refine(
        rule, be, rel,
        [&](bool, double& be_out, double& rel_out) {
          dense_lu_solve_device(ctx, dense.data(), n, n, piv.data(), dr.data());  // dr: the residual measure() left
          add_into<<<detail::grid_for(n), 256, 0, s>>>(detail::device_ptr(dx.data()), detail::device_ptr(dr.data()), n);
          LA_CHECK_LAUNCH(s);
          measure();
          be_out = be, rel_out = rel;
        },
        [&] { best = x; },
        [&] {
          x = best;
          LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), sizeof(z) * x.size(), cudaMemcpyHostToDevice, s));
        });
    x = best;
    LA_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), sizeof(z) * x.size(), cudaMemcpyHostToDevice, s));
    measure();
    r.iterations = steps;
    r.iterate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    verdict(r, x, rel, in, o,
            std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") + ", backward error " + short_number(be));
  }
};

template <typename O>
std::unique_ptr<direct_backend<O>> factor_device(context& ctx, const csr_matrix<z, O>& a, const cg_options& o, solve_result& r,
                                                 const input&) {
  using namespace complex_dense_detail;
  const index_t n = a.rows();
  check_device_memory(ctx, double(n) * double(n) * sizeof(z), "the dense form of a complex matrix of " + std::to_string(n) + " rows");
  const cudaStream_t s = ctx.stream();
  auto da = to_device(ctx, a);
  device_buffer<z> dense = ctx.allocate<z>(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  LA_CUDA_TRY(cudaMemsetAsync(dense.data(), 0, sizeof(z) * dense.size(), s));
  if (n > 0) {
    scatter_dense<<<detail::grid_for(n), 256, 0, s>>>(detail::rebind_view<csr_view<const C, O>>(da.view()),
                                                      detail::device_ptr(dense.data()), n);
    LA_CHECK_LAUNCH(s);
  }
  device_buffer<index_t> piv = ctx.allocate<index_t>(static_cast<std::size_t>(std::max<index_t>(n, 1)));
  const index_t zero_pivot = dense_lu_device(ctx, dense.data(), n, std::max<index_t>(n, 1), piv.data());
  if (zero_pivot) {
    r.status = solve_status::breakdown;
    r.message = "A is singular: column " + std::to_string(zero_pivot) + " has no nonzero pivot in partial pivoting's search";
    return nullptr;
  }
  return std::make_unique<device_backend<O>>(ctx, a, o, std::move(da), std::move(dense), std::move(piv));
}

template std::unique_ptr<direct_backend<std::int32_t>> factor_device<std::int32_t>(context&, const csr_matrix<z, std::int32_t>&,
                                                                                   const cg_options&, solve_result&, const input&);
template std::unique_ptr<direct_backend<std::int64_t>> factor_device<std::int64_t>(context&, const csr_matrix<z, std::int64_t>&,
                                                                                   const cg_options&, solve_result&, const input&);

}  // namespace complex_direct_detail

template <typename O>
solve_result solve_complex_direct_device(context& ctx, const csr_matrix<std::complex<double>, O>& a,
                                         const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                         const cg_options& o) {
  return complex_direct<O>(&ctx, a, o).solve(b, x);
}

template solve_result solve_complex_direct_device<std::int32_t>(context&, const csr_matrix<std::complex<double>, std::int32_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);
template solve_result solve_complex_direct_device<std::int64_t>(context&, const csr_matrix<std::complex<double>, std::int64_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);

}  // namespace la
