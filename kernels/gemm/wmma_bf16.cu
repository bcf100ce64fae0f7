// wmma_bf16: bfloat16 inputs, float accumulation, Tensor Cores through WMMA 16x16x16
// (wmma.cuh), in wmma_f16's shape: the bf16 path on GPUs without wgmma (sm_80 and later).
#include <la/kernels/gemm/detail/variants.hpp>
#include <la/kernels/gemm/detail/wmma.cuh>

namespace la::gemm_detail {
void run_wmma_bf16(const gemm_args& g, cudaStream_t s) {
  launch_wmma<__nv_bfloat16, wmma_config<__nv_bfloat16, 2, 2, 128>>(g, s);
}
}  // namespace la::gemm_detail
