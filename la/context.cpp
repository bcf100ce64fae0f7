#include "la/context.hpp"

#include "la/error.hpp"

namespace la {

bool cuda_available() noexcept {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  return n > 0;
}

std::string cuda_status() noexcept {
  try {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
    }
    if (n == 0) return "no CUDA device present";
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "CUDA device 0 cannot be queried";
    return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
  } catch (...) {
    return "unknown CUDA status";
  }
}

context::context(int device) : device_(device) {
  int n = 0;
  LA_CUDA_TRY(cudaGetDeviceCount(&n));
  LA_EXPECTS(device >= 0 && device < n,
             "CUDA device " + std::to_string(device) + " requested but " + std::to_string(n) +
                 " present");
  LA_CUDA_TRY(cudaSetDevice(device));
  LA_CUDA_TRY(cudaGetDeviceProperties(&props_, device));
  LA_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

context::~context() {
  if (cusparse_) cusparseDestroy(cusparse_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) LA_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_));
}

cublasHandle_t context::cublas() {
  if (!cublas_) {
    LA_CUBLAS_TRY(cublasCreate(&cublas_));
    LA_CUBLAS_TRY(cublasSetStream(cublas_, stream_));
  }
  return cublas_;
}

cusparseHandle_t context::cusparse() {
  if (!cusparse_) {
    LA_CUSPARSE_TRY(cusparseCreate(&cusparse_));
    LA_CUSPARSE_TRY(cusparseSetStream(cusparse_, stream_));
  }
  return cusparse_;
}

void context::synchronize() const { LA_CUDA_TRY(cudaStreamSynchronize(stream_)); }

}  // namespace la
