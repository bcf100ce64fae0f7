// The cuBLAS call each GEMM precision class is measured against (benchmarks, `la gemm`):
//   fp32 -> cublasGemmEx with CUBLAS_COMPUTE_32F_PEDANTIC (no tensor cores)
//   tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32
//   fp16 -> half A and B, float C, CUBLAS_COMPUTE_32F
//   bf16 -> bfloat16 A and B, float C, CUBLAS_COMPUTE_32F
// Row-major C = A B is computed as the column-major C^T = B^T A^T.
#pragma once

#include <la/kernels/gemm/gemm.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {
void cublas_gemm(vendor_handles& h, gemm_precision p, const gemm_args& g);
}  // namespace la
