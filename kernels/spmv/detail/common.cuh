// Pieces the SpMV kernels share (the row products and walks are public: walks.cuh).
#pragma once

#include <la/kernels/spmv/walks.cuh>

namespace la::spmv_detail {

using detail::block_threads;
using detail::grid_for;
using walk::group_sum;
using walk::with_width;

/// y[i] = alpha*acc + beta*y[i]; y is not read when beta == 0 (it may hold NaN).
template <typename T>
__device__ __forceinline__ void finish(T* y, long long i, T acc, T alpha, T beta) {
  y[i] = beta == T(0) ? alpha * acc : alpha * acc + beta * y[i];
}

/// y = alpha*A*x + beta*y over a row walk (walks.cuh): the registry kernels of
/// row_walk::thread and row_walk::group are this loop.
template <typename Walk, typename T>
__global__ void walk_kernel(Walk w, const T* x, T* y, T alpha, T beta) {
  w.each(x, [&](long long i, T acc) { finish(y, i, acc, alpha, beta); });
}
template <typename Walk, typename T>
void launch_walk(Walk w, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (w.items() == 0) return;
  walk_kernel<<<grid_for(w.items()), block_threads, 0, s>>>(w, x, y, alpha, beta);
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
