// naive: one thread per element of C, K-loop straight from global memory. The baseline the
// ladder is measured against.
#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
__global__ void naive_kernel(gemm_args g) {
  const index_t col = blockIdx.x * blockDim.x + threadIdx.x;  // x along N: coalesced B and C
  const index_t row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  const float* a = static_cast<const float*>(g.a) + static_cast<long>(row) * g.lda;
  const float* b = static_cast<const float*>(g.b) + col;
  float acc = 0.0f;
  for (index_t k = 0; k < g.k; ++k) acc += a[k] * b[static_cast<long>(k) * g.ldb];
  store_c(g.c, g.ldc, row, col, acc, g.alpha, g.beta);
}
}  // namespace

void run_naive(const gemm_args& g, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid(ceil_div(g.n, block.x), ceil_div(g.m, block.y));
  naive_kernel<<<grid, block, 0, s>>>(g);
  LA_CHECK_LAUNCH(s);
}
}  // namespace la::gemm_detail
