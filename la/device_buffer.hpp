// Move-only RAII device allocation bound to a stream (stream-ordered cudaMallocAsync).
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "la/error.hpp"

namespace la {

template <typename T>
class device_buffer {
 public:
  device_buffer() = default;
  /// Allocates n elements on `stream` (uninitialized). n = 0 allocates nothing.
  device_buffer(std::size_t n, cudaStream_t stream) : size_(n), stream_(stream) {
    if (n > 0) LA_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), n * sizeof(T), stream));
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept { swap(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    device_buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~device_buffer() {
    if (data_) LA_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_));
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  cudaStream_t stream() const noexcept { return stream_; }

  /// Copies n = size() elements from host memory; asynchronous on the buffer's stream.
  void copy_from_host(const T* src, std::size_t n) {
    LA_EXPECTS(n == size_, "host source has " + std::to_string(n) + " elements, buffer " +
                               std::to_string(size_));
    if (n) LA_CUDA_TRY(cudaMemcpyAsync(data_, src, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }
  /// Copies size() elements to host memory; asynchronous: synchronize the stream before use.
  void copy_to_host(T* dst, std::size_t n) const {
    LA_EXPECTS(n == size_, "host destination has " + std::to_string(n) + " elements, buffer " +
                               std::to_string(size_));
    if (n) LA_CUDA_TRY(cudaMemcpyAsync(dst, data_, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  }

 private:
  void swap(device_buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace la
