// The context owns a CUDA stream and lazily created cuBLAS/cuSPARSE handles bound to it.
// Every public device call takes one.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

namespace la {

/// True when a CUDA device and a driver new enough for this build are present. Never throws.
bool cuda_available() noexcept;

/// One line describing why cuda_available() is false (or the device name when true).
std::string cuda_status() noexcept;

class context {
 public:
  /// Selects `device` and creates a non-blocking stream. Throws la::cuda_error when no GPU.
  explicit context(int device = 0);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  int device() const noexcept { return device_; }
  cudaStream_t stream() const noexcept { return stream_; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  cublasHandle_t cublas();
  cusparseHandle_t cusparse();
  /// Waits for all work on the stream; throws if any of it failed.
  void synchronize() const;

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaDeviceProp props_{};
  cublasHandle_t cublas_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
};

}  // namespace la
