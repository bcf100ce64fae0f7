// The context owns a CUDA stream on one device, and a scratch workspace that kernels needing
// temporary memory (split-K GEMM partials) reuse instead of allocating per call.
// Every public device call takes one. cuBLAS/cuSPARSE handles for the vendor comparisons
// are not here: see kernels/detail/vendor/vendor.hpp (target la::vendor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include <la/device_buffer.hpp>

namespace la {

/// True when a CUDA device and a driver new enough for this build are present. Never throws.
bool cuda_available() noexcept;

/// One line describing why cuda_available() is false (or the device name when true).
std::string cuda_status() noexcept;

/// Starts CUDA device `device`: the driver, its primary context and its memory pool, the
/// 100-200 ms a process's first CUDA work otherwise pays. Blocks while it runs, so call it on
/// a thread of its own to overlap the start-up with other work (la solve runs it while it
/// reads the matrix); a context made later finds the device up. Never throws: false when the
/// device did not start, and then the context's constructor says why.
bool start_device(int device = 0) noexcept;

/// How much freed memory `device`'s default memory pool (the one every la allocation comes
/// from, through cudaMallocAsync) keeps mapped across synchronizations: CUDA's default is 0,
/// so each synchronization hands back what is free and the next allocation maps it again.
/// A larger threshold (UINT64_MAX: all of it) keeps it, which small, repeated solves pay for
/// (`la bench gesv --ablate` measures it: rows la:fp64-pool-kept); the memory then stays
/// reserved for this process until freed with cudaMemPoolTrimTo or the threshold is lowered.
/// Process-wide (every context and library sharing the pool sees it); la never sets it itself.
void set_pool_release_threshold(int device, std::uint64_t bytes);
/// That threshold now.
std::uint64_t pool_release_threshold(int device);

class context {
 public:
  /// Selects `device` and creates a non-blocking stream. Throws la::cuda_error when no GPU.
  explicit context(int device = 0);
  /// The same with the stream at the device's highest priority: its blocks are scheduled
  /// before those of normal streams as multiprocessors free up (look-ahead panels beside a GEMM).
  struct high_priority_t {};
  static constexpr high_priority_t high_priority{};
  context(int device, high_priority_t);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  int device() const noexcept { return device_; }
  cudaStream_t stream() const noexcept { return stream_; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  int sm_count() const noexcept { return props_.multiProcessorCount; }

  /// n elements on this context's device, in its stream order (uninitialized).
  template <typename T>
  device_buffer<T> allocate(std::size_t n) const {
    return device_buffer<T>(n, stream_, device_);
  }

  /// At least `bytes` of device memory owned by the context, valid until the next call
  /// with a larger size (which replaces it in stream order). Work queued on the stream that
  /// uses the old block finishes before the block is freed, so callers on this stream may
  /// call it before every launch.
  void* scratch(std::size_t bytes);
  std::size_t scratch_bytes() const noexcept { return scratch_.size(); }

  /// Waits for all work on the stream; throws if any of it failed.
  void synchronize() const;

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaDeviceProp props_{};
  device_buffer<unsigned char> scratch_;
};

}  // namespace la
