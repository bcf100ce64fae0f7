// wmma_f16: half inputs, float accumulation, Tensor Cores through WMMA 16x16x16 (wmma.cuh).
#include "kernels/gemm/variants.hpp"
#include "kernels/gemm/wmma.cuh"

namespace la::gemm_detail {
void launch_wmma_f16(const gemm_args& g, cudaStream_t s) { launch_wmma<__half>(g, s); }
}  // namespace la::gemm_detail
