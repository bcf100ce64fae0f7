// Pieces shared by the GEMM kernels: launch geometry helpers and the C epilogue.
#pragma once

#include <cuda_runtime.h>

#include "kernels/gemm/gemm.hpp"

namespace la::gemm_detail {

__host__ __device__ constexpr int ceil_div(long a, long b) { return static_cast<int>((a + b - 1) / b); }

/// C[r][c] = alpha*v + beta*C[r][c]; C is not read when beta == 0 (it may hold NaN).
__device__ __forceinline__ void store_c(float* c, index_t ldc, index_t r, index_t col, float v, float alpha, float beta) {
  float* p = c + static_cast<long>(r) * ldc + col;
  *p = beta == 0.0f ? alpha * v : alpha * v + beta * *p;
}

/// True when a pointer and leading dimension allow 16-byte vector access along rows.
inline bool aligned16(const void* p, index_t ld, int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (static_cast<long>(ld) * elem_bytes) % 16 == 0;
}

}  // namespace la::gemm_detail
