// Launch geometry shared by la's element-wise and row-wise kernels (SpMV, device
// conversions): one block size, a grid that covers n items (capped, so grid-stride loops
// walk the rest), and 64-bit grid-stride loops over threads and over warps, so counts past
// 2^31 are walked correctly. Public and installed (a CUDA header: include it from .cu
// files): an embedder's kernels over la's views, and the row walks of
// <la/kernels/spmv/walks.cuh>, use the same geometry as la's own.
#pragma once

#include <cuda_runtime.h>

namespace la::detail {

inline constexpr int block_threads = 256;

/// Blocks for `items` work items of `per_block` each: at least 1, at most 2^31 - 1.
template <typename N>
unsigned grid_for(N items, long long per_block = block_threads) {
  const long long b = (static_cast<long long>(items) + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 2147483647LL ? 2147483647LL : b));
}

__device__ __forceinline__ long long global_thread() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long grid_threads() { return static_cast<long long>(gridDim.x) * blockDim.x; }

}  // namespace la::detail

/// for i in [0, n), one per thread, striding over the whole grid.
#define LA_GRID_STRIDE(i, n) \
  for (long long i = ::la::detail::global_thread(); i < static_cast<long long>(n); i += ::la::detail::grid_threads())

/// for w in [0, n), one per warp, striding over the grid's warps (uniform across a warp, so
/// every lane reaches the warp's shuffles).
#define LA_WARP_STRIDE(w, n)                                                                    \
  for (long long w = ::la::detail::global_thread() / 32; w < static_cast<long long>(n);        \
       w += ::la::detail::grid_threads() / 32)
