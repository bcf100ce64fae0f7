#include <la/kernels/detail/vendor/cublas_gemm.hpp>

namespace la {
void cublas_gemm(vendor_handles& h, gemm_precision p, const gemm_args& g) {
  const cudaDataType_t in = p == gemm_precision::fp16 ? CUDA_R_16F : p == gemm_precision::bf16 ? CUDA_R_16BF : CUDA_R_32F;
  // tf32x3 stands in for the float GEMM: its peer is cuBLAS's float one.
  const cublasComputeType_t ct = p == gemm_precision::fp32 || p == gemm_precision::tf32x3 ? CUBLAS_COMPUTE_32F_PEDANTIC
                                 : p == gemm_precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                             : CUBLAS_COMPUTE_32F;
  LA_CUBLAS_TRY(cublasGemmEx(h.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &g.alpha, g.b, in, g.ldb, g.a, in,
                             g.lda, &g.beta, g.c, CUDA_R_32F, g.ldc, ct, CUBLAS_GEMM_DEFAULT));
}
}  // namespace la
