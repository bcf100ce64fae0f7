// Dense LU with partial pivoting for complex<double> on the GPU (issue 69), la's own kernels,
// right-looking and blocked by panels of 32 columns:
//   panel     one one-block kernel per column: the pivot (the largest |re| + |im| below the
//             diagonal, the first of equal ones, as LAPACK's izamax), the row swap across the
//             whole matrix, the column scaled by the pivot's reciprocal, the rank-1 update of
//             the panel's columns to its right
//   trsm      the panel's U row block: L11^-1 A12, a thread per column
//   gemm      the trailing matrix A22 -= L21 U12: 64 x 64 tiles, 16-deep slices in shared
//             memory, 4 x 4 complex outputs a thread (plain complex products in double)
// and the solve: the swaps, then L and U by one block each. Every sum runs in a fixed order, so
// reruns are bit-identical. The host oracle is dense_lu_host (complex_direct.hpp): the same
// pivots; the factors agree to rounding.
//
// solve_complex_direct_device: the direct method on the GPU for complex systems of at most
// complex_dense_rows rows (A's dense form), refined against the sparse A with the GPU's complex
// SpMV (detail::refine's rule, classical steps).
#include <chrono>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/detail/device_complex.cuh>
#include <la/grid.cuh>
#include <la/detail/instantiate.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/solvers/detail/complex_direct_common.hpp>
#include <la/solvers/detail/refinement.hpp>

namespace la {
namespace complex_dense_detail {

using C = detail::dcomplex<double>;
constexpr int nb = 32;            // panel width
constexpr int panel_threads = 1024;

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

/// Column j of the panel [j, k1): pivot, swap, scale, the panel's rank-1 update.
__global__ void __launch_bounds__(panel_threads) panel_column(C* a, long long lda, int n, int j, int k1, index_t* piv,
                                                              index_t* info) {
  __shared__ double best_v[panel_threads / 32];
  __shared__ int best_i[panel_threads / 32];
  __shared__ int pivot;
  double v = -1;
  int vi = n;
  for (int i = j + threadIdx.x; i < n; i += blockDim.x) {
    const double m = abs1(a[i + static_cast<long long>(j) * lda]);
    if (m > v) v = m, vi = i;  // rows ascend per thread: the first of equal ones kept
  }
  for (int off = 16; off > 0; off /= 2) {
    const double ov = __shfl_down_sync(0xffffffffu, v, off);
    const int oi = __shfl_down_sync(0xffffffffu, vi, off);
    if (ov > v || (ov == v && oi < vi)) v = ov, vi = oi;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) best_v[warp] = v, best_i[warp] = vi;
  __syncthreads();
  if (threadIdx.x == 0) {
    double bv = best_v[0];
    int bi = best_i[0];
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
      if (best_v[w] > bv || (best_v[w] == bv && best_i[w] < bi)) bv = best_v[w], bi = best_i[w];
    if (bi >= n) bi = j;  // a column of NaN: no row compares larger (info says so below)
    pivot = bi;
    piv[j] = bi;
    if (!(bv > 0) && *info == 0) *info = j + 1;  // an exactly zero column below the diagonal (or NaN)
  }
  __syncthreads();
  const int p = pivot;
  if (p != j)
    for (int c = threadIdx.x; c < n; c += blockDim.x) {
      C* rj = a + j + static_cast<long long>(c) * lda;
      C* rp = a + p + static_cast<long long>(c) * lda;
      const C t = *rj;
      *rj = *rp, *rp = t;
    }
  __syncthreads();
  const C d = a[j + static_cast<long long>(j) * lda];
  if (!(abs1(d) > 0)) return;  // singular column: left as it is (LAPACK goes on; info says so)
  const C inv = reciprocal(d);
  for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) a[i + static_cast<long long>(j) * lda] *= inv;
  __syncthreads();
  const int rows = n - j - 1, cols = k1 - j - 1;
  for (long long e = threadIdx.x; e < static_cast<long long>(rows) * cols; e += blockDim.x) {
    const int i = j + 1 + static_cast<int>(e % rows), c = j + 1 + static_cast<int>(e / rows);
    a[i + static_cast<long long>(c) * lda] -= at(a, lda, i, j) * at(a, lda, j, c);
  }
}

/// U12 = L11^-1 A12 for the panel [k0, k1) and columns [k1, n): a thread per column.
__global__ void __launch_bounds__(256) trsm_unit_lower(C* a, long long lda, int n, int k0, int k1) {
  __shared__ C L[nb][nb];
  const int w = k1 - k0;
  for (int e = threadIdx.x; e < w * w; e += blockDim.x) L[e % w][e / w] = at(a, lda, k0 + e % w, k0 + e / w);
  __syncthreads();
  const int c = k1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  C x[nb];
  C* col = a + static_cast<long long>(c) * lda + k0;
  for (int r = 0; r < w; ++r) {
    C s = col[r];
    for (int q = 0; q < r; ++q) s -= L[r][q] * x[q];
    x[r] = s;
  }
  for (int r = 0; r < w; ++r) col[r] = x[r];
}

/// A[i, j] -= sum_p L[i, p] U[p, j] for i < m, j < cols, p < k (column-major, each with its ld).
constexpr int bm = 64, bn = 64, bk = 16;
__global__ void __launch_bounds__(256) gemm_minus(int m, int cols, int k, const C* L, long long ldl, const C* U,
                                                  long long ldu, C* A, long long lda) {
  __shared__ C Ls[bk][bm];
  __shared__ C Us[bk][bn];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long row0 = static_cast<long long>(blockIdx.x) * bm, col0 = static_cast<long long>(blockIdx.y) * bn;
  C acc[4][4];
  for (auto& r : acc)
    for (auto& v : r) v = C(0);
  for (int p0 = 0; p0 < k; p0 += bk) {
    for (int e = threadIdx.x; e < bm * bk; e += 256) {
      const int r = e % bm, q = e / bm;
      Ls[q][r] = row0 + r < m && p0 + q < k ? L[row0 + r + static_cast<long long>(p0 + q) * ldl] : C(0);
    }
    for (int e = threadIdx.x; e < bk * bn; e += 256) {
      const int q = e % bk, c = e / bk;
      Us[q][c] = col0 + c < cols && p0 + q < k ? U[p0 + q + (col0 + c) * ldu] : C(0);
    }
    __syncthreads();
#pragma unroll 4
    for (int q = 0; q < bk; ++q) {
      C x[4], y[4];
      for (int i = 0; i < 4; ++i) x[i] = Ls[q][tx + 16 * i], y[i] = Us[q][ty + 16 * i];
      for (int i = 0; i < 4; ++i)
        for (int jj = 0; jj < 4; ++jj) acc[i][jj] += x[i] * y[jj];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int jj = 0; jj < 4; ++jj) {
      const long long r = row0 + tx + 16 * i, c = col0 + ty + 16 * jj;
      if (r < m && c < cols) A[r + c * lda] -= acc[i][jj];
    }
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
  if (n == 0) return 0;
  C* a = detail::device_ptr(a_);
  const cudaStream_t s = ctx.stream();
  device_buffer<index_t> info = ctx.allocate<index_t>(1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(index_t), s));
  for (int k0 = 0; k0 < n; k0 += nb) {
    const int k1 = std::min<int>(n, k0 + nb);
    for (int j = k0; j < k1; ++j) {
      panel_column<<<1, panel_threads, 0, s>>>(a, lda, n, j, k1, pivots, info.data());
      LA_CHECK_LAUNCH(s);
    }
    if (k1 < n) {
      trsm_unit_lower<<<detail::grid_for(n - k1), 256, 0, s>>>(a, lda, n, k0, k1);
      LA_CHECK_LAUNCH(s);
      const dim3 grid(detail::grid_for(n - k1, bm), detail::grid_for(n - k1, bn));
      gemm_minus<<<grid, 256, 0, s>>>(n - k1, n - k1, k1 - k0, a + k1 + static_cast<long long>(k0) * lda, lda,
                                      a + k0 + static_cast<long long>(k1) * lda, lda,
                                      a + k1 + static_cast<long long>(k1) * lda, lda);
      LA_CHECK_LAUNCH(s);
    }
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

template <typename O>
solve_result solve_complex_direct_device(context& ctx, const csr_matrix<std::complex<double>, O>& a,
                                         const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                         const cg_options& o) {
  using namespace complex_dense_detail;
  using z = std::complex<double>;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  solve_result r;
  const auto fail = [&](solve_status st, std::string why) {
    r.status = st;
    r.message = std::move(why);
    return r;
  };
  complex_direct_detail::input in;
  const index_t n = a.rows();
  const auto limit = [&]() -> std::string {
    if (n <= complex_dense_rows) return {};
    return "the GPU's direct method for complex systems factors A's dense form, at most " + std::to_string(complex_dense_rows) +
           " rows; A has " + std::to_string(n) + " (the host's sparse LU takes it: device cpu)";
  };
  if (!complex_direct_detail::start(a, b, x, "direct (dense LU, partial pivoting), gpu", r, in, limit)) return r;
  check_device_memory(ctx, double(n) * double(n) * sizeof(z), "the dense form of a complex matrix of " + std::to_string(n) + " rows");
  const cudaStream_t s = ctx.stream();
  const auto da = to_device(ctx, a);
  device_buffer<z> dense = ctx.allocate<z>(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  LA_CUDA_TRY(cudaMemsetAsync(dense.data(), 0, sizeof(z) * dense.size(), s));
  scatter_dense<<<detail::grid_for(n), 256, 0, s>>>(detail::rebind_view<csr_view<const C, O>>(da.view()),
                                                    detail::device_ptr(dense.data()), n);
  LA_CHECK_LAUNCH(s);
  device_buffer<index_t> piv = ctx.allocate<index_t>(static_cast<std::size_t>(n));
  const index_t zero_pivot = dense_lu_device(ctx, dense.data(), n, n, piv.data());
  if (zero_pivot)
    return fail(solve_status::breakdown, "A is singular: column " + std::to_string(zero_pivot) +
                                             " has no nonzero pivot in partial pivoting's search");
  const auto t1 = clock::now();
  r.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  const spmv_plan<z> plan(ctx, spmv_view(da));
  const auto db = to_device(ctx, b);
  device_vector<z> dx(ctx, n), dr(ctx, n);
  std::vector<z> res(static_cast<std::size_t>(n)), best;
  double be = 0, rel = 0;
  const auto measure = [&] {  // res = b - A x on the GPU, be and rel on the host
    LA_CUDA_TRY(cudaMemcpyAsync(dr.data(), db.data(), sizeof(z) * std::size_t(n), cudaMemcpyDeviceToDevice, s));
    plan.run(dx.data(), dr.data(), z(-1), z(1), s);
    res = to_host(ctx, dr);
    x = to_host(ctx, dx);
    complex_direct_detail::measures(res, x, in, be, rel);
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
  r.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  complex_direct_detail::verdict(r, x, rel, in, o,
                                 std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") + ", backward error " +
                                     short_number(be));
  return r;
}

template solve_result solve_complex_direct_device<std::int32_t>(context&, const csr_matrix<std::complex<double>, std::int32_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);
template solve_result solve_complex_direct_device<std::int64_t>(context&, const csr_matrix<std::complex<double>, std::int64_t>&,
                                                                const std::vector<std::complex<double>>&,
                                                                std::vector<std::complex<double>>&, const cg_options&);

}  // namespace la
