// Phase timing of the dense factorizations (LA_DENSE_PROFILE): events on the stream, the sums
// per phase printed to stderr. Private to solvers/direct.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include <la/error.hpp>

namespace la::dense_detail {

/// With LA_DENSE_PROFILE set, the factorizations time their phases with events and print
/// the sums to stderr (the tuning's breakdown: bench/history/dense-direct-solvers.md).
class phase_timer {
 public:
  explicit phase_timer(cudaStream_t s) : on_(std::getenv("LA_DENSE_PROFILE") != nullptr), s_(s) {
    if (on_) mark("start");
  }
  void mark(const char* phase) {
    if (!on_) return;
    cudaEvent_t e;
    LA_CUDA_TRY(cudaEventCreate(&e));
    LA_CUDA_TRY(cudaEventRecord(e, s_));
    marks_.push_back({phase, e});
  }
  ~phase_timer() {
    if (!on_ || marks_.empty()) return;
    (void)cudaEventSynchronize(marks_.back().second);
    std::map<std::string, float> sum;
    float total = 0;
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0;
      (void)cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second);
      sum[marks_[i].first] += ms, total += ms;
    }
    std::fprintf(stderr, "dense factorization phases (ms):");
    for (const auto& [k, v] : sum) std::fprintf(stderr, " %s %.2f;", k.c_str(), v);
    std::fprintf(stderr, " total %.2f\n", total);
    for (auto& m : marks_) (void)cudaEventDestroy(m.second);
  }
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;

 private:
  bool on_;
  cudaStream_t s_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
};

}  // namespace la::dense_detail
