// la::stream_event: orders one CUDA stream's later work after another's earlier work (the
// dense factorizations' look-ahead, the sparse factorization's fronts side by side). Private
// to la's sources.
#pragma once

#include <cuda_runtime.h>

#include <la/error.hpp>

namespace la {

class stream_event {
 public:
  stream_event() { LA_CUDA_TRY(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~stream_event() { (void)cudaEventDestroy(e_); }
  stream_event(const stream_event&) = delete;
  stream_event& operator=(const stream_event&) = delete;
  stream_event(stream_event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  stream_event& operator=(stream_event&&) = delete;

  /// `waiter`'s later work waits for what `from` has queued so far.
  void order(cudaStream_t from, cudaStream_t waiter) {
    LA_CUDA_TRY(cudaEventRecord(e_, from));
    LA_CUDA_TRY(cudaStreamWaitEvent(waiter, e_, 0));
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace la
