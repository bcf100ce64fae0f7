// Timing GPU work with CUDA events: the one helper every benchmark and `la gemm` use.
#pragma once

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

#include <la/error.hpp>

namespace la {

/// A pair of CUDA events (created once, destroyed without throwing).
class event_timer {
 public:
  event_timer() {
    LA_CUDA_TRY(cudaEventCreate(&start_));
    if (cudaError_t e = cudaEventCreate(&stop_); e != cudaSuccess) {
      LA_CUDA_TRY_NO_THROW(cudaEventDestroy(start_));
      detail::throw_cuda(e, "cudaEventCreate(&stop_)", __FILE__, __LINE__);
    }
  }
  ~event_timer() {
    LA_CUDA_TRY_NO_THROW(cudaEventDestroy(start_));
    LA_CUDA_TRY_NO_THROW(cudaEventDestroy(stop_));
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  /// Milliseconds that the work `run()` queues on `stream` takes on the GPU (waits for it).
  template <typename F>
  float time_ms(cudaStream_t stream, F&& run) {
    LA_CUDA_TRY(cudaEventRecord(start_, stream));
    run();
    LA_CUDA_TRY(cudaEventRecord(stop_, stream));
    LA_CUDA_TRY(cudaEventSynchronize(stop_));
    float ms = 0;
    LA_CUDA_TRY(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Times `reps` runs after `warmup` untimed ones; returns every time in milliseconds.
template <typename F>
std::vector<float> time_runs_ms(cudaStream_t stream, int reps, F&& run, int warmup = 1) {
  event_timer t;
  for (int i = 0; i < warmup; ++i) t.time_ms(stream, run);
  std::vector<float> ms(static_cast<std::size_t>(std::max(reps, 0)));
  for (float& x : ms) x = t.time_ms(stream, run);
  return ms;
}

/// Median of time_runs_ms.
template <typename F>
float median_ms(cudaStream_t stream, int reps, F&& run, int warmup = 1) {
  std::vector<float> ms = time_runs_ms(stream, std::max(reps, 1), run, warmup);
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace la
