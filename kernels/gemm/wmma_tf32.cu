// wmma_tf32: float inputs rounded to TF32 (__float_to_tf32), float accumulation, Tensor
// Cores through WMMA 16x16x8 (wmma.cuh). 128 x 256 block tiles of 8 warps, each 64 x 64:
// 0.26x cuBLAS TF32 at 8192^3 on H200, against 0.24x for 128 x 128 tiles of 4 warps, 0.21x
// for 8 warps of 64 x 32, 0.26x (no gain) for 4 stages, and 0.21-0.23x when each element is
// rounded once in shared memory instead of in every fragment (bench/RESULTS.md).
#include "variants.hpp"
#include "wmma.cuh"

namespace la::gemm_detail {
void launch_wmma_tf32(const gemm_args& g, cudaStream_t s) { launch_wmma<float, wmma_config<float, 2, 4, 256>>(g, s); }
}  // namespace la::gemm_detail
