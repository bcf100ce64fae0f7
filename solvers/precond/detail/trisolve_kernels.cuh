// The kernels that apply IC(0)'s and ILU(0)'s triangular factors on the GPU (factored.cu):
// substitution rows for the level plans, Jacobi sweeps, ISAI's setup rows, the matching's
// permutation and scalings, and the probe that picks the automatic trisolve. Private to la's
// sources.
#pragma once

#include <la/solvers/detail/precond_device.cuh>
#include <la/solvers/precond/factor_rows.hpp>

namespace la {
namespace precond_detail {

template <typename T, typename O>
using tri = factor_rows::triangle<T, O>;

/// One row of a substitution by a group of W lanes (the off-diagonal sum strided over the
/// lanes in a fixed order), for level_plan.
template <int W, typename T, typename O>
struct solve_row {
  tri<T, O> t;
  const T* b;
  T* x;
  __device__ void operator()(index_t i, int lane) const {
    T s = T(0);
    O lo = 0, hi = 0, d = 0;
    if (i >= 0) {
      t.range(i, lo, hi, d);
      for (O k = lo + lane; k < hi; k += W) s += t.v[k] * x[t.ci[k]];
    }
    s = walk::group_sum<W>(s);
    if (i >= 0 && lane == 0) x[i] = (b[i] - s) / t.diagonal(d);
  }
};

/// x = D^-1 b.
template <typename T, typename O>
__global__ void diagonal_solve(tri<T, O> t, index_t n, const T* b, T* x) {
  LA_GRID_STRIDE(i, n) {
    O lo, hi, d;
    t.range(static_cast<index_t>(i), lo, hi, d);
    x[i] = b[i] / t.diagonal(d);
  }
}
/// One Jacobi sweep on the triangle: x_new = D^-1 (b - N x_old), W lanes a row; a warp
/// takes 32 / W consecutive rows, so its lanes loop the same number of times.
template <int W, typename T, typename O>
__global__ void jacobi_sweep(tri<T, O> t, index_t n, const T* b, const T* x, T* out) {
  constexpr int per = 32 / W;
  const long long warps = detail::grid_threads() / 32, warp = detail::global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32), l = lane % W;
  for (long long r0 = warp * per; r0 < n; r0 += warps * per) {
    const long long i = r0 + lane / W;
    T s = T(0);
    O lo = 0, hi = 0, d = 0;
    if (i < n) {
      t.range(static_cast<index_t>(i), lo, hi, d);
      for (O k = lo + l; k < hi; k += W) s += t.v[k] * x[t.ci[k]];
    }
    s = walk::group_sum<W>(s);
    if (i < n && l == 0) out[i] = (b[i] - s) / t.diagonal(d);
  }
}

/// ISAI rows (factor_rows::isai_row) into m; rows that kept the diagonal only counted.
template <typename T, typename O>
__global__ void isai_rows(tri<T, O> t, index_t n, T* m, unsigned long long* kept) {
  LA_GRID_STRIDE(i, n) if (!factor_rows::isai_row(t, static_cast<index_t>(i), m)) atomicAdd(kept, 1ull);
}

/// t[j] = dr[j] r[perm[j]] and z = dc .* u: the matching's permutation and scalings.
template <typename T>
__global__ void permute_scale(index_t n, const index_t* perm, const T* dr, const T* r, T* t) {
  LA_GRID_STRIDE(j, n) t[j] = dr[j] * r[perm[j]];
}
template <typename T>
__global__ void scale_into(index_t n, const T* dc, const T* u, T* z) {
  LA_GRID_STRIDE(j, n) z[j] = dc[j] * u[j];
}

template <typename T>
__global__ void probe_vector(index_t n, T* v) {
  LA_GRID_STRIDE(i, n) v[i] = static_cast<T>(sin(0.7 * static_cast<double>(i)) + 0.3);
}
/// Per block: sum (v - w)^2 and sum v^2 over a grid-stride range, a fixed tree in the block.
template <typename T>
__global__ void probe_sums(index_t n, const T* v, const T* w, double* parts) {
  __shared__ double sh[2][block_threads];
  double e = 0, vv = 0;
  LA_GRID_STRIDE(i, n) {
    const double d = double(v[i]) - double(w[i]);
    e += d * d, vv += double(v[i]) * double(v[i]);
  }
  sh[0][threadIdx.x] = e, sh[1][threadIdx.x] = vv;
  __syncthreads();
  for (int h = block_threads / 2; h > 0; h /= 2) {
    if (static_cast<int>(threadIdx.x) < h) sh[0][threadIdx.x] += sh[0][threadIdx.x + h], sh[1][threadIdx.x] += sh[1][threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) parts[2 * blockIdx.x] = sh[0][0], parts[2 * blockIdx.x + 1] = sh[1][0];
}

/// The lanes a row for a triangle's mean off-diagonal entries.
inline int row_lanes(double off) { return off <= 3 ? 1 : off <= 12 ? 8 : 32; }

template <typename T, typename O>
matrix_view<T> view_with_values(const device_csr<T, O>& m, const T* v) {
  matrix_view<T> mv = spmv_view(m);
  const csr_view<const T, O> c{m.rows(), m.cols(), static_cast<O>(m.nnz()), m.row_ptr().data(), m.col_idx().data(), v};
  if constexpr (sizeof(O) == 8) mv.csr64 = c;
  else mv.csr32 = c;
  return mv;
}

}  // namespace precond_detail
}  // namespace la
