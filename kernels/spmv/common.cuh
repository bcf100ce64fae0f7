// Pieces the SpMV kernels share.
#pragma once

#include "../../la/grid.cuh"
#include "spmv.hpp"

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
