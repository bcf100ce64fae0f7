// wmma_tf32: float inputs rounded to TF32 (__float_to_tf32), float accumulation, Tensor
// Cores through WMMA 16x16x8 (wmma.cuh). 128 x 256 block tiles of 8 warps, each 64 x 64,
// rounding in every fragment: the fastest of the shapes tried (bench/history/tuning-notes-the-code-cites.md, note T4).
#include <la/kernels/gemm/detail/variants.hpp>
#include <la/kernels/gemm/detail/wmma.cuh>

namespace la::gemm_detail {
void run_wmma_tf32(const gemm_args& g, cudaStream_t s) { launch_wmma<float, wmma_config<float, 2, 4, 256>>(g, s); }
}  // namespace la::gemm_detail
