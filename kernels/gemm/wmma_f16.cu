// wmma_f16: half inputs, float accumulation, Tensor Cores through WMMA 16x16x16 (wmma.cuh).
// 128 x 128 block tiles of 4 warps, each warp 64 x 64 (4 x 4 fragments), 3 stages:
// 0.49x cuBLAS at 8192^3 on H200, against 0.43x for 8 warps of 64 x 32, 0.45x for
// 128 x 256 tiles, 0.46x for 128-byte K tiles and 0.49x (no gain) for 4 stages
// (bench/RESULTS.md).
#include "variants.hpp"
#include "wmma.cuh"

namespace la::gemm_detail {
void launch_wmma_f16(const gemm_args& g, cudaStream_t s) { launch_wmma<__half, wmma_config<__half, 2, 2, 128>>(g, s); }
}  // namespace la::gemm_detail
