// The cuBLAS call each precision class is measured against (benchmarks, `la gemm`):
//   fp32 -> cublasGemmEx with CUBLAS_COMPUTE_32F_PEDANTIC (no tensor cores)
//   tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16 -> half A and B, float C, CUBLAS_COMPUTE_32F
// Row-major C = A B is computed as the column-major C^T = B^T A^T.
#pragma once

#include "kernels/gemm/gemm.hpp"

namespace la {
void cublas_gemm(context& ctx, gemm_precision p, const gemm_args& g);
}  // namespace la
