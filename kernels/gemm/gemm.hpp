// Dense GEMM on the device: C = alpha*A*B + beta*C, row-major, any M, N, K.
//
// Every variant is one file under kernels/gemm/ and an entry in registry.cu (its launcher
// declared in detail/variants.hpp). Tests and benchmarks iterate gemm_variants(), so a new
// variant is tested and timed without anyone remembering to. beta == 0 never reads C.
// The vocabulary is the SpMV registry's (spmv.hpp): can_implement, workspace_bytes (device
// memory the caller provides), run (queues the product; no host work).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <la/formats/dense.hpp>

namespace la {

/// The arithmetic a variant performs (what its accuracy and its cuBLAS peer depend on).
enum class gemm_precision {
  fp32,  // float multiply-add; peer: cuBLAS CUBLAS_COMPUTE_32F_PEDANTIC
  tf32,  // float inputs rounded to TF32 on tensor cores, float accumulation; peer: CUBLAS_COMPUTE_32F_FAST_TF32
  fp16,  // half inputs on tensor cores, float accumulation; peer: cublasGemmEx half/half/float
  bf16,  // bfloat16 inputs on tensor cores, float accumulation; peer: cublasGemmEx bf16/bf16/float
  /// float inputs, each split into a TF32 head (rounded to nearest) and the TF32 rounding of
  /// the rest, three tensor-core products (tail x head, head x tail, head x head) summed in
  /// float: about float's accuracy from TF32's rate ("3xTF32"). peer: the float GEMM it
  /// stands in for, CUBLAS_COMPUTE_32F_PEDANTIC.
  tf32x3,
};
/// The element type a variant reads A and B as: float, __half or __nv_bfloat16.
enum class gemm_input { f32, f16, bf16 };

const char* to_string(gemm_precision p) noexcept;

struct gemm_problem {
  index_t m = 0, n = 0, k = 0;
  int sm_count = 0;  // multiprocessors of the target device (context::sm_count()); 0: split-K never splits
  /// The operands' leading dimensions, in elements (0: packed, K for A and N for B), and
  /// their base addresses assumed at least 128-byte aligned (as every allocation is). The
  /// wgmma variants copy operands whose rows TMA cannot read, or reads slowly, to an aligned
  /// pitch, and reg_tiled those it would read 4 bytes at a time where that pays;
  /// workspace_bytes counts those copies from these.
  index_t lda = 0, ldb = 0;
  /// false: workspace_bytes leaves out what only makes a variant faster (copies of operands
  /// that TMA reads slowly, the partials of a last round cut in K); gemm() asks again so
  /// where the full workspace does not fit in memory.
  bool speed_extras = true;
};

/// x as a variant with that input holds it (rounded to nearest): what its tensor cores multiply.
inline float round_to_input(gemm_input in, float x) {
  switch (in) {
    case gemm_input::f16: return __half2float(__float2half_rn(x));
    case gemm_input::bf16: return __bfloat162float(__float2bfloat16_rn(x));
    case gemm_input::f32: break;
  }
  return x;
}

/// What a launcher receives. a and b point to float, __half or __nv_bfloat16 per the variant's input.
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
  int sm_count = 0;  // as gemm_problem::sm_count
  /// Bytes at workspace. 0: not stated, and then a variant takes only its split-K partials
  /// from it, allocates any operand copy on the stream for the call (freed after it), and
  /// the plain 16-bit wgmma kernels run their last round of tiles whole (no tail).
  std::size_t workspace_size = 0;
};

struct gemm_variant {
  std::string_view name;  // stable id: tests, benchmarks, `la gemm --algo`
  gemm_input input;
  gemm_precision precision;
  /// A lower rung of the ladder (it teaches a technique; the faster variants supersede
  /// it): benchmarks time it on square sizes up to 4096 only, and auto never picks it.
  bool teaching;
  /// Splits K over blocks, this many for a problem (null: never); where the count is 1 it is the
  /// unsplit kernel plus overhead, and benchmarks skip it.
  int (*splits)(const gemm_problem&);
  /// Needs the sm_90a target (wgmma, setmaxnreg): built only when the architecture list holds
  /// 90, and can_implement says no on any device that is not compute capability 9.0.
  bool sm90a;
  bool (*can_implement)(const gemm_problem&);
  std::size_t (*workspace_bytes)(const gemm_problem&);
  void (*run)(const gemm_args&, cudaStream_t);  // checks its launches; throws la::cuda_error
};

/// The one accuracy rule for GEMM results (tests, `la gemm`, benchmarks): the elementwise
/// relative tolerance of a variant of precision p with inner dimension k, against a
/// reference computed from the same inputs in higher precision:
///   |c - ref| <= tol * (|alpha| sum_k |a b| + |beta c|)
///  fp32: max(1e-5, 4 sqrt(K) eps) (float accumulation error grows like sqrt(K) eps);
///  tf32: 1e-3 + the fp32 term (inputs keep 10 mantissa bits; the reference uses the float inputs);
///  tf32x3: the fp32 term of 3K terms (three products a k), plus 3 * 2^-22: a product loses
///        the tails' product (|tail| <= 2^-11 |x|: 2^-22) and each tail's rounding to TF32
///        (2^-11 of the tail, twice);
///  fp16: 2e-4 + the fp32 term against half-rounded inputs, whose products are exact in
///        float. With `reference_from_float_inputs` (the reference saw the float inputs before
///        rounding to half) add 2^-10 * 1.01: two roundings of 2^-11 each per product.
///  bf16: as fp16 (bf16 products are exact in float too); from float inputs add 2^-7 * 1.01
///        (bf16 keeps 8 significant bits, so rounding to nearest errs by up to 2^-8: two
///        roundings of 2^-8 each per product).
/// A reference computed in float (cuBLAS) rather than double adds its own fp32 term.
inline double gemm_tolerance(gemm_precision p, index_t k, bool reference_from_float_inputs = false) {
  const double eps = 1.1920928955078125e-7;
  const double f32 = std::max(1e-5, 4 * std::sqrt(double(std::max<index_t>(k, 1))) * eps);
  switch (p) {
    case gemm_precision::fp32: return f32;
    case gemm_precision::tf32: return 1e-3 + f32;
    case gemm_precision::tf32x3:
      return std::max(1e-5, 4 * std::sqrt(3.0 * std::max<index_t>(k, 1)) * eps) + 3.0 / (1 << 22);
    case gemm_precision::fp16: return 2e-4 + f32 + (reference_from_float_inputs ? 1.01 / 1024 : 0.0);
    case gemm_precision::bf16: return 2e-4 + f32 + (reference_from_float_inputs ? 1.01 / 128 : 0.0);
  }
  return f32;
}

/// Whether this build holds the sm_90a kernels and the current device runs them (9.0).
bool sm90a_kernels_available() noexcept;

/// Every variant, in ladder order.
const std::vector<gemm_variant>& gemm_variants();
/// The variant of that name; throws la::invalid_argument listing the valid names.
const gemm_variant& find_gemm(std::string_view name);
/// The automatic choice (see registry.cu for the thresholds and the measurements behind them).
const gemm_variant& select_gemm(const gemm_problem& p, gemm_input input, bool allow_reduced_precision);

/// C = alpha*A*B + beta*C with float inputs, queued on ctx's stream. algo: a variant name or "auto".
/// "wgmma_tf32x3" (and its split-K form; compute capability 9.0) gives float's accuracy from
/// TF32 tensor cores: 1.65-1.81x cuBLAS's float GEMM at 2048^3-8192^3 on an H100, its errors
/// below cuBLAS's on 9 of 10 measured shapes and 1.5x it on the tenth (bench/history/gemm-ladder-against-cublas.md,
/// "tf32x3"). auto never picks it: it is a different
/// arithmetic, asked for by name. Its workspace holds both operands twice (heads and tails:
/// 8 (M + N) K bytes); an infinite input can make NaN where float's GEMM makes +-inf (its head
/// also meets the other operand's tail, and inf x 0 or inf - inf is NaN).
/// Split-K variants' partials and the wgmma variants' operand copies (rows that TMA cannot read
/// or reads slowly) live in ctx.scratch(), kept for the next call. "auto" uses
/// tensor cores (TF32) only when allow_reduced_precision is true. Naming "wmma_f16" converts
/// A and B to half on every call (an allocation and a pass over both); to keep that out of a
/// loop, convert once with to_half() (to_bf16() for the bf16 variants) and call the half
/// (bfloat16) overload.
void gemm(context& ctx, const device_dense<float>& a, const device_dense<float>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo = "auto", bool allow_reduced_precision = false);

/// C = alpha*A*B + beta*C with half inputs and float accumulation (tensor cores). algo: a
/// variant that takes half inputs, or "auto".
void gemm(context& ctx, const device_dense<__half>& a, const device_dense<__half>& b, device_dense<float>& c,
          float alpha, float beta, std::string_view algo = "auto");

/// C = alpha*A*B + beta*C with bfloat16 inputs and float accumulation (tensor cores). algo: a
/// variant that takes bfloat16 inputs, or "auto".
void gemm(context& ctx, const device_dense<__nv_bfloat16>& a, const device_dense<__nv_bfloat16>& b,
          device_dense<float>& c, float alpha, float beta, std::string_view algo = "auto");

/// Rounds a float matrix to half (round to nearest), on the device.
device_dense<__half> to_half(context& ctx, const device_dense<float>& a);
/// Rounds a float matrix to bfloat16 (round to nearest), on the device.
device_dense<__nv_bfloat16> to_bf16(context& ctx, const device_dense<float>& a);

/// The fp64 rung: double inputs and accumulation on the fp64 Tensor Cores (mma.sync f64,
/// SASS DMMA), C = alpha*A*B + beta*C, row-major, any M, N, K (kernels/gemm/dmma.cu). A
/// separate list from gemm_variants(), whose launchers all write float C.
struct dgemm_args {
  index_t m = 0, n = 0, k = 0;
  const double* a = nullptr;
  index_t lda = 0;
  const double* b = nullptr;
  index_t ldb = 0;
  double* c = nullptr;
  index_t ldc = 0;
  double alpha = 1, beta = 0;
  /// Only the tiles that hold an element on or below C's diagonal are computed (those wholly
  /// above it are left as they were): a symmetric trailing update, as SYRK's lower triangle.
  bool lower_only = false;
};
struct dgemm_variant {
  std::string_view name;  // stable id: tests, benchmarks, `la gemm --algo`
  bool teaching;          // a lower rung: auto never picks it while the faster one runs
  bool (*can_implement)(const gemm_problem&);  // includes the device's compute capability
  void (*run)(const dgemm_args&, cudaStream_t);
};
/// Every fp64 variant, in ladder order: dmma_m8n8k4 (8.0+), dmma_m16n8k8, dmma_m16n8k16, dmma_tma and
/// dmma_tma_x2 (9.0+).
const std::vector<dgemm_variant>& dgemm_variants();
/// The variant of that name; throws la::invalid_argument listing the valid names.
const dgemm_variant& find_dgemm(std::string_view name);
/// The fastest variant the current device runs; throws la::not_supported before 8.0.
const dgemm_variant& select_dgemm(const gemm_problem& p);
/// Queues g on s. algo: a variant name or "auto". The operands may be views into one
/// matrix (a factorization's blocks); C must not overlap A or B.
void dgemm(const dgemm_args& g, cudaStream_t s, std::string_view algo = "auto");
/// C = alpha*A*B + beta*C in double on the fp64 Tensor Cores, queued on ctx's stream.
void gemm(context& ctx, const device_dense<double>& a, const device_dense<double>& b, device_dense<double>& c,
          double alpha, double beta, std::string_view algo = "auto");

namespace detail {
/// Splits of K that the split-K variants use for this problem (>= 1).
int split_k_count(const gemm_problem& p);
}  // namespace detail

}  // namespace la
