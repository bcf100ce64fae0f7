// wmma_f16: half inputs, float accumulation, Tensor Cores through WMMA 16x16x16 (wmma.cuh).
#include "kernels/gemm/variants.hpp"
#include "kernels/gemm/wmma.cuh"

namespace la::gemm_detail {
void launch_wmma_f16(const gemm_args& g, cudaStream_t s) { launch_wmma<__half>(g, s); }
void launch_wmma_f16_w64(const gemm_args& g, cudaStream_t s) { launch_wmma<__half, wmma_config<__half, 2, 2>>(g, s); }
void launch_wmma_f16_256(const gemm_args& g, cudaStream_t s) { launch_wmma<__half, wmma_config<__half, 2, 4, 256>>(g, s); }
}  // namespace la::gemm_detail
