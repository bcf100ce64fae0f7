// wmma_tf32: float inputs rounded to TF32 (__float_to_tf32), float accumulation, Tensor
// Cores through WMMA 16x16x8 (wmma.cuh).
#include "kernels/gemm/variants.hpp"
#include "kernels/gemm/wmma.cuh"

namespace la::gemm_detail {
void launch_wmma_tf32(const gemm_args& g, cudaStream_t s) { launch_wmma<float>(g, s); }
void launch_wmma_tf32_w64(const gemm_args& g, cudaStream_t s) { launch_wmma<float, wmma_config<float, 2, 2>>(g, s); }
void launch_wmma_tf32_256(const gemm_args& g, cudaStream_t s) { launch_wmma<float, wmma_config<float, 2, 4, 256>>(g, s); }
}  // namespace la::gemm_detail
