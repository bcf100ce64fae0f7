// Dense GEMM on the device: C = alpha*A*B + beta*C, row-major, any M, N, K.
//
// Every variant is one file under kernels/gemm/ and one line in registry.cu (the only list).
// Tests and benchmarks iterate gemm_variants(), so a new variant is tested and timed
// without anyone remembering to. beta == 0 never reads C.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_fp16.h>

#include "formats/dense.hpp"

namespace la {

/// The arithmetic a variant performs (what its accuracy and its cuBLAS peer depend on).
enum class gemm_precision {
  fp32,  // float multiply-add; peer: cuBLAS CUBLAS_COMPUTE_32F_PEDANTIC
  tf32,  // float inputs rounded to TF32 on tensor cores, float accumulation; peer: CUBLAS_COMPUTE_32F_FAST_TF32
  fp16,  // half inputs on tensor cores, float accumulation; peer: cublasGemmEx half/half/float
};
enum class gemm_input { f32, f16 };

const char* to_string(gemm_precision p) noexcept;

struct gemm_problem {
  index_t m = 0, n = 0, k = 0;
  int sm_count = 132;  // multiprocessors of the target device (split-K sizing)
};

/// What a launcher receives. a and b point to float or __half per the variant's input.
struct gemm_args {
  index_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  index_t lda = 0;
  const void* b = nullptr;
  index_t ldb = 0;
  float* c = nullptr;
  index_t ldc = 0;
  float alpha = 1, beta = 0;
  void* workspace = nullptr;  // workspace_bytes(problem) bytes, device memory
  int sm_count = 132;
};

struct gemm_variant {
  std::string_view name;  // stable id: tests, benchmarks, `la gemm --algo`
  gemm_input input;
  gemm_precision precision;
  bool (*can_implement)(const gemm_problem&);
  std::size_t (*workspace_bytes)(const gemm_problem&);
  void (*launch)(const gemm_args&, cudaStream_t);  // checks its launches; throws la::cuda_error
};

/// Every variant, in ladder order.
const std::vector<gemm_variant>& gemm_variants();
/// The variant of that name; throws la::invalid_argument listing the valid names.
const gemm_variant& find_gemm(std::string_view name);
/// The automatic choice (see select.cu for the thresholds and the measurements behind them).
const gemm_variant& select_gemm(const gemm_problem& p, gemm_input input, bool allow_reduced_precision);

/// C = alpha*A*B + beta*C with float inputs. algo: a variant name or "auto". "auto" uses
/// tensor cores (TF32) only when allow_reduced_precision is true. Naming "wmma_f16" converts
/// A and B to half on every call (an allocation and a pass over both); to keep that out of a
/// loop, convert once with to_half() and call the half overload.
void gemm(context& ctx, const device_dense<float>& a, const device_dense<float>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo = "auto", bool allow_reduced_precision = false);

/// C = alpha*A*B + beta*C with half inputs and float accumulation (tensor cores).
void gemm(context& ctx, const device_dense<__half>& a, const device_dense<__half>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo = "wmma_f16");

/// Rounds a float matrix to half (round to nearest), on the device.
device_dense<__half> to_half(context& ctx, const device_dense<float>& a);

namespace detail {
/// Splits of K that the split-K variants use for this problem (>= 1).
int split_k_count(const gemm_problem& p);
}  // namespace detail

}  // namespace la
