// GMRES-based refinement's basis on the device (gmres_cycle.hpp's B): m + 1 vectors of n
// doubles, one after another, with reductions in a fixed order (a block per dot product), so
// reruns are bit-identical. The operator is the caller's: op(v, w) writes w = M^-1 A v.
#pragma once
#include <cmath>
#include <vector>

#include <la/context.hpp>
#include <la/error.hpp>
#include <la/types.hpp>
#include <la/solvers/detail/gmres_cycle.hpp>

namespace la::refine_detail {
namespace {
constexpr int basis_threads = 256;

/// h[b] = V_b . w: a block per basis vector.
__global__ void basis_dots_kernel(const double* V, index_t n, const double* w, double* h) {
  __shared__ double red[basis_threads / 32];
  const double* v = V + static_cast<long>(blockIdx.x) * n;
  double s = 0;
  for (index_t i = threadIdx.x; i < n; i += blockDim.x) s += v[i] * w[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < basis_threads / 32; ++q) s += red[q];
    h[blockIdx.x] = s;
  }
}
/// w = (w - sum_b h[b] V_b) * scale, count vectors.
__global__ void basis_update_kernel(const double* V, index_t n, int count, const double* h, double* w, double scale) {
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = w[i];
  for (int b = 0; b < count; ++b) s -= h[b] * V[static_cast<long>(b) * n + i];
  w[i] = s * scale;
}
}  // namespace

template <class Op>
class device_basis {
 public:
  /// m + 1 vectors of n; d (n) receives combine()'s correction.
  device_basis(context& c, index_t n, int m, Op op)
      : s_(c.stream()), n_(n), op_(op),
        V_(c.allocate<double>(static_cast<std::size_t>(m + 1) * static_cast<std::size_t>(n))),
        dh_(c.allocate<double>(static_cast<std::size_t>(m + 1))), d_(c.allocate<double>(static_cast<std::size_t>(n))),
        h_(static_cast<std::size_t>(m + 1)) {}
  double* vec(int j) { return V_.data() + static_cast<long>(j) * n_; }
  double* correction() { return d_.data(); }
  double norm(int j) {
    basis_dots_kernel<<<1, basis_threads, 0, s_>>>(vec(j), n_, vec(j), dh_.data());
    LA_CHECK_LAUNCH(s_);
    double v = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&v, dh_.data(), sizeof(double), cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaStreamSynchronize(s_));
    return std::sqrt(v);
  }
  void scale(int j, double f) {
    basis_update_kernel<<<blocks(), basis_threads, 0, s_>>>(V_.data(), n_, 0, dh_.data(), vec(j), f);
    LA_CHECK_LAUNCH(s_);
  }
  void apply(int j) { op_(vec(j), vec(j + 1)); }
  void project(int j, std::vector<double>& h) {
    basis_dots_kernel<<<static_cast<unsigned>(j + 1), basis_threads, 0, s_>>>(V_.data(), n_, vec(j + 1), dh_.data());
    LA_CHECK_LAUNCH(s_);
    LA_CUDA_TRY(cudaMemcpyAsync(h.data(), dh_.data(), sizeof(double) * (j + 1), cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaStreamSynchronize(s_));
    basis_update_kernel<<<blocks(), basis_threads, 0, s_>>>(V_.data(), n_, j + 1, dh_.data(), vec(j + 1), 1.0);
    LA_CHECK_LAUNCH(s_);
  }
  void combine(int count, const std::vector<double>& y) {  // d = 0 - sum (-y_i) V_i
    for (int i = 0; i < count; ++i) h_[static_cast<std::size_t>(i)] = -y[static_cast<std::size_t>(i)];
    LA_CUDA_TRY(cudaMemsetAsync(d_.data(), 0, sizeof(double) * n_, s_));
    if (count > 0) {
      LA_CUDA_TRY(cudaMemcpyAsync(dh_.data(), h_.data(), sizeof(double) * count, cudaMemcpyHostToDevice, s_));
      basis_update_kernel<<<blocks(), basis_threads, 0, s_>>>(V_.data(), n_, count, dh_.data(), d_.data(), 1.0);
      LA_CHECK_LAUNCH(s_);
    }
    LA_CUDA_TRY(cudaStreamSynchronize(s_));  // h_ is a host vector the next cycle rewrites
  }

 private:
  unsigned blocks() const { return static_cast<unsigned>((n_ + basis_threads - 1) / basis_threads); }
  cudaStream_t s_;
  index_t n_;
  Op op_;
  device_buffer<double> V_, dh_, d_;
  std::vector<double> h_;
};

}  // namespace la::refine_detail
