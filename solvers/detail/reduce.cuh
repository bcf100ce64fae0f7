// Fixed-order reductions of the GPU CG kernels: a block's sum, and the two levels of a dot
// (block partials, then one block adds them in block order), so every run adds in the same
// order. Shared by the GPU solvers that sum (CG on one GPU and several, the Krylov methods' backend, AMG): it
// belongs to none of them. Private to la's sources.
#pragma once

#include <la/grid.cuh>
#include <la/kernels/spmv/walks.cuh>

namespace la::cg_detail {
using detail::block_threads;
using detail::grid_for;
constexpr int warps = block_threads / 32;

/// Sums v[0..N) over the block; the result is valid in thread 0. A fixed shuffle tree in
/// each warp, then warp 0 over the warps' sums: the same order every run.
template <int N>
__device__ void block_sum(double (&v)[N]) {
  __shared__ double part[N][warps];
  for (int j = 0; j < N; ++j) v[j] = walk::group_sum<32>(v[j]);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    for (int j = 0; j < N; ++j) part[j][warp] = v[j];
  __syncthreads();
  if (warp == 0)
    for (int j = 0; j < N; ++j) v[j] = walk::group_sum<warps>(lane < warps ? part[j][lane] : 0.0);
  __syncthreads();  // part is reused by the next call
}

/// Sums partials[j*count + b] over b for each j, in the same order in every block that
/// calls it (thread t takes b = t, t + 256, ...; then block_sum); valid in thread 0.
template <int N>
__device__ void sum_partials(const double* partials, int count, double (&total)[N]) {
  for (int j = 0; j < N; ++j) {
    total[j] = 0;
    for (int b = threadIdx.x; b < count; b += blockDim.x) total[j] += __ldcg(partials + j * count + b);
  }
  block_sum(total);
}

/// Level one of a dot: each block writes its partial; the last block to finish (counted
/// with an atomic ticket, which orders nothing in the sum) adds all partials in block
/// order. Returns true in the last block's thread 0, with `total` set.
template <int N>
__device__ bool last_block_sum(double (&v)[N], double* partials, unsigned* ticket, double (&total)[N]) {
  __shared__ bool last;
  block_sum(v);
  if (threadIdx.x == 0) {
    for (int j = 0; j < N; ++j) partials[j * gridDim.x + blockIdx.x] = v[j];
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  __threadfence();
  sum_partials<N>(partials, gridDim.x, total);
  if (threadIdx.x == 0) *ticket = 0;  // ready for the next launch
  return threadIdx.x == 0;
}
}  // namespace la::cg_detail
