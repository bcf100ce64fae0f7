// Pieces the SpMV kernels share.
#pragma once

#include "../../../detail/grid.cuh"
#include "../spmv.hpp"

namespace la::spmv_detail {

using detail::block_threads;
using detail::grid_for;

/// f(view) with the view of the matrix's offset width (CSR, CSC, JDS).
template <typename V32, typename V64, typename F>
void with_width(bool wide, const V32& v32, const V64& v64, F&& f) {
  if (wide) f(v64);
  else f(v32);
}

/// y[i] = alpha*acc + beta*y[i]; y is not read when beta == 0 (it may hold NaN).
template <typename T>
__device__ __forceinline__ void finish(T* y, long long i, T acc, T alpha, T beta) {
  y[i] = beta == T(0) ? alpha * acc : alpha * acc + beta * y[i];
}

/// Sum over groups of W lanes (W a power of two up to 32), complete in each group's first
/// lane; a fixed order, so the result is the same run to run. Every lane of the warp must
/// call it.
template <int W, typename T>
__device__ __forceinline__ T group_sum(T v) {
  for (int off = W / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off, W);
  return v;
}

/// x[c] through the read-only cache for a plain array; any other x (the CG solver's
/// on-the-fly search direction, solvers/device_cg.cu) is indexed as it is.
template <typename T>
__device__ __forceinline__ T gather(const T* x, long long c) {
  return __ldg(x + c);
}
template <typename X>
__device__ __forceinline__ auto gather(const X& x, long long c) {
  return x[c];
}

/// One stored row of a thread-per-row format: `product(k, x, row)` is the dot of stored
/// row k (k < count()) with x and sets `row`, the matrix row it belongs to. x is an array
/// or anything indexable by column. The registry kernels (csr_scalar, ell, jds, sell) and
/// the CG solver's fused SpMV+dot kernels share these, so both compute a row in the same
/// order.
template <typename T, typename O>
struct csr_rows {
  csr_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long i, const X& x, long long& row) const {
    T acc = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) acc += a.values[k] * x[a.col_idx[k]];
    row = i;
    return acc;
  }
};
template <typename T>
struct ell_rows {
  ell_view<const T> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long i, const X& x, long long& row) const {
    T acc = T(0);
    for (index_t s = 0; s < a.width; ++s) {
      const long long slot = static_cast<long long>(s) * a.rows + i;
      const index_t c = a.col_idx[slot];
      if (c == ell_padding) break;  // padding always follows a row's entries
      acc += a.values[slot] * x[c];
    }
    row = i;
    return acc;
  }
};
template <typename T, typename O>
struct jds_rows {
  jds_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long k, const X& x, long long& row) const {
    T acc = T(0);
    for (index_t d = 0; d < a.num_diagonals; ++d) {
      const O pos = a.diag_ptr[d] + static_cast<O>(k);
      if (pos >= a.diag_ptr[d + 1]) break;  // diagonals only get shorter
      acc += a.values[pos] * x[a.col_idx[pos]];
    }
    row = a.perm[k];
    return acc;
  }
};
/// SELL-C-sigma, a thread per sorted row: the C threads of a slice read its column-major
/// slots coalesced. The slot loop runs to the slice's width with a guard on padding rather
/// than a break, so several slots' loads are in flight (unrolled by 4); padding is never
/// multiplied (x may hold Inf). perm is not read when sigma = 1 (the identity).
template <typename T, typename O>
struct sell_rows {
  sell_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long k, const X& x, long long& row) const {
    const long long C = a.slice_height;
    const long long s = k / C, r = k - s * C;
    const O base = a.slice_ptr[s];
    const long long width = (static_cast<long long>(a.slice_ptr[s + 1]) - base) / C;
    T acc = T(0);
#pragma unroll 4
    for (long long d = 0; d < width; ++d) {
      const long long slot = base + d * C + r;
      const index_t c = __ldg(a.col_idx + slot);
      const T v = __ldg(a.values + slot);
      if (c != ell_padding) acc += v * gather(x, c);
    }
    row = a.sigma == 1 ? k : a.perm[k];
    return acc;
  }
};

/// Row i of a CSR matrix summed by a group of W lanes striding the row, complete in the
/// group's first lane (csr_vector). Every lane of the warp must call it; a group whose i is
/// past the last row contributes zero.
template <int W, typename T, typename O, typename X>
__device__ __forceinline__ T csr_group_product(const csr_view<const T, O>& a, long long i, int lane, const X& x) {
  T acc = T(0);
  if (i < a.rows)
    for (O k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += W) acc += a.values[k] * x[a.col_idx[k]];
  return group_sum<W>(acc);
}

template <typename T, typename O>
csr_rows<T, O> rows_of(csr_view<const T, O> v) { return {v}; }
template <typename T>
ell_rows<T> rows_of(ell_view<const T> v) { return {v}; }
template <typename T, typename O>
jds_rows<T, O> rows_of(jds_view<const T, O> v) { return {v}; }
template <typename T, typename O>
sell_rows<T, O> rows_of(sell_view<const T, O> v) { return {v}; }

/// y = alpha*A*x + beta*y with a thread per stored row.
template <typename Rows, typename T>
__global__ void rows_kernel(Rows a, const T* x, T* y, T alpha, T beta) {
  LA_GRID_STRIDE(k, a.count()) {
    long long row;
    const T acc = a.product(k, x, row);
    finish(y, row, acc, alpha, beta);
  }
}
template <typename Rows, typename T>
void launch_rows(Rows a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.count() == 0) return;
  rows_kernel<<<grid_for(a.count()), block_threads, 0, s>>>(a, x, y, alpha, beta);
  LA_CHECK_LAUNCH(s);
}

/// y = beta*y before atomic accumulation (beta == 0 writes zeros without reading).
template <typename T>
__global__ void scale_y(T* y, index_t n, T beta) {
  LA_GRID_STRIDE(i, n) { y[i] = beta == T(0) ? T(0) : beta * y[i]; }
}

template <typename T>
void launch_scale_y(T* y, index_t n, T beta, cudaStream_t s) {
  if (n == 0) return;
  scale_y<<<grid_for(n), block_threads, 0, s>>>(y, n, beta);
  LA_CHECK_LAUNCH(s);
}

}  // namespace la::spmv_detail
