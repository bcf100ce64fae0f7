// smem_tiled: the classic shared-memory tiled product. A TILE x TILE block of threads
// computes a TILE x TILE block of C; each K-step stages one tile of A and one of B in shared
// memory (one element per thread, coalesced) and every thread reads TILE of each from there.
// Edges: out-of-range loads are predicated to 0.
#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
constexpr int TILE = 32;

__global__ void smem_tiled_kernel(gemm_args g) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE + 1];  // +1: column reads hit distinct banks
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const index_t row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (index_t k0 = 0; k0 < g.k; k0 += TILE) {
    as[ty][tx] = (row < g.m && k0 + tx < g.k) ? a[static_cast<long>(row) * g.lda + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < g.k && col < g.n) ? b[static_cast<long>(k0 + ty) * g.ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  if (row < g.m && col < g.n) store_c(g.c, g.ldc, row, col, acc, g.alpha, g.beta);
}
}  // namespace

void run_smem_tiled(const gemm_args& g, cudaStream_t s) {
  const dim3 block(TILE, TILE);
  const dim3 grid(ceil_div(g.n, TILE), ceil_div(g.m, TILE));
  smem_tiled_kernel<<<grid, block, 0, s>>>(g);
  LA_CHECK_LAUNCH(s);
}
}  // namespace la::gemm_detail
