// Pieces the SpMV kernels share.
#pragma once

#include <cuda_runtime.h>

#include "spmv.hpp"

namespace la::spmv_detail {

constexpr int block_threads = 256;

template <typename N>
unsigned grid_for(N work_items, int items_per_block = block_threads) {
  const long long b = (static_cast<long long>(work_items) + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 2147483647LL ? 2147483647LL : b));
}

/// y[i] = alpha*acc + beta*y[i]; y is not read when beta == 0 (it may hold NaN).
template <typename T>
__device__ __forceinline__ void finish(T* y, long long i, T acc, T alpha, T beta) {
  y[i] = beta == T(0) ? alpha * acc : alpha * acc + beta * y[i];
}

/// y = beta*y before atomic accumulation (beta == 0 writes zeros without reading).
template <typename T>
__global__ void scale_y(T* y, index_t n, T beta) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = beta == T(0) ? T(0) : beta * y[i];
}

template <typename T>
void launch_scale_y(T* y, index_t n, T beta, cudaStream_t s) {
  if (n == 0) return;
  scale_y<<<grid_for(n), block_threads, 0, s>>>(y, n, beta);
  LA_CHECK_LAUNCH(s);
}

}  // namespace la::spmv_detail
