// Move-only RAII device allocation bound to a stream (stream-ordered cudaMallocAsync).
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include <la/error.hpp>

namespace la {

namespace detail {
/// Makes `device` current for its lifetime and restores the previous one (never throws in
/// its destructor). Allocations and frees then land on the intended device.
class device_guard {
 public:
  explicit device_guard(int device) {
    LA_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) LA_CUDA_TRY(cudaSetDevice(device));
  }
  /// For destructors: switches if it can, never throws.
  device_guard(int device, std::nothrow_t) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = device;
    if (previous_ != device) (void)cudaSetDevice(device);
  }
  ~device_guard() { (void)cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};
}  // namespace detail

template <typename T>
class device_buffer {
 public:
  using value_type = T;

  device_buffer() = default;
  /// n elements (uninitialized) on `device`, allocated in `stream`'s order. n = 0
  /// allocates nothing. A context passes its own device and stream (see la::context).
  device_buffer(std::size_t n, cudaStream_t stream, int device) : size_(n), stream_(stream), device_(device) {
    if (n == 0) return;
    detail::device_guard g(device);
    LA_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), n * sizeof(T), stream));
  }
  /// Same, on the current device.
  device_buffer(std::size_t n, cudaStream_t stream) : device_buffer(n, stream, current_device()) {}
  /// n elements at `p` on `device` that another owner allocated (a CuPy array, say): used in
  /// place, never freed by this buffer. The owner keeps the memory alive while it is used.
  static device_buffer borrow(T* p, std::size_t n, int device) {
    device_buffer b;
    b.data_ = n ? p : nullptr, b.size_ = n, b.device_ = device, b.owned_ = false;
    return b;
  }
  /// False for a borrowed buffer.
  bool owned() const noexcept { return owned_; }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept { swap(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    device_buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~device_buffer() {
    if (!data_ || !owned_) return;
    detail::device_guard g(device_, std::nothrow);
    LA_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_));
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  cudaStream_t stream() const noexcept { return stream_; }
  int device() const noexcept { return device_; }

  /// Copies size() elements from host memory, in the buffer's stream order (does not wait;
  /// `src` must stay alive until the stream has reached the copy).
  void copy_from_host_async(const T* src, std::size_t n) {
    LA_EXPECTS(n == size_, "host source has " + std::to_string(n) + " elements, buffer " + std::to_string(size_));
    if (n) LA_CUDA_TRY(cudaMemcpyAsync(data_, src, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }
  /// Copies size() elements to host memory, in the buffer's stream order (does not wait:
  /// synchronize the stream before reading `dst`).
  void copy_to_host_async(T* dst, std::size_t n) const {
    LA_EXPECTS(n == size_, "host destination has " + std::to_string(n) + " elements, buffer " + std::to_string(size_));
    if (n) LA_CUDA_TRY(cudaMemcpyAsync(dst, data_, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  }

 private:
  static int current_device() {
    int d = 0;
    LA_CUDA_TRY(cudaGetDevice(&d));
    return d;
  }
  void swap(device_buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(stream_, o.stream_);
    std::swap(device_, o.device_);
    std::swap(owned_, o.owned_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
  bool owned_ = true;
};

}  // namespace la
