// wmma_f16: half inputs, float accumulation, Tensor Cores through WMMA 16x16x16 (wmma.cuh).
// 128 x 128 block tiles of 4 warps, each warp 64 x 64 (4 x 4 fragments), 3 stages: the
// fastest of the shapes tried (bench/history/tuning-notes-the-code-cites.md, note T3).
#include <la/kernels/gemm/detail/variants.hpp>
#include <la/kernels/gemm/detail/wmma.cuh>

namespace la::gemm_detail {
void run_wmma_f16(const gemm_args& g, cudaStream_t s) { launch_wmma<__half, wmma_config<__half, 2, 2, 128>>(g, s); }
}  // namespace la::gemm_detail
