// Vector kernels the GPU backends of every Krylov method share: scaling, and a norm that is
// right for entries near under- or overflow (LAPACK's nrm2 idea: scale by the largest
// magnitude). Deterministic: fixed-order sums (detail/reduce.cuh), max is order-free. Private.
#pragma once

#include <array>
#include <algorithm>
#include <cmath>
#include <cstring>

#include <la/context.hpp>
#include <la/vector.hpp>

#include <la/error.hpp>
#include <la/solvers/detail/backend_util.cuh>
#include <la/solvers/detail/reduce.cuh>

namespace la::cg_detail {

/// The first index of a non-finite value (atomicMin: the answer does not depend on order).
template <typename T, typename N>
__global__ void first_non_finite(const T* v, N n, unsigned long long* first) {
  LA_GRID_STRIDE(i, n) {
    if (!isfinite(v[i])) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

/// The first non-finite entry of A's values, of b and of x (~0 where none): three scans, one
/// read-back; `flags` holds three counters.
template <typename T>
std::array<unsigned long long, 3> first_non_finite_of(context& ctx, const T* a, long long nnz, const T* b, const T* x,
                                                      index_t n, unsigned long long* flags) {
  std::array<unsigned long long, 3> at;
  at.fill(~0ull);
  cudaStream_t s = ctx.stream();
  LA_CUDA_TRY(cudaMemcpyAsync(flags, at.data(), sizeof at, cudaMemcpyHostToDevice, s));
  const T* v[3] = {a, b, x};
  const long long count[3] = {nnz, n, n};
  for (int j = 0; j < 3; ++j)
    if (count[j] > 0) {
      first_non_finite<<<blocks_for(count[j], ctx.sm_count()), block_threads, 0, s>>>(v[j], count[j], flags + j);
      LA_CHECK_LAUNCH(s);
    }
  LA_CUDA_TRY(cudaMemcpyAsync(at.data(), flags, sizeof at, cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  return at;
}

/// "" or why b and x do not fit a system of n rows (every GPU backend's check_input).
inline std::string size_mismatch(std::size_t b, std::size_t x, index_t n) {
  if (b != static_cast<std::size_t>(n))
    return "right-hand side has " + std::to_string(b) + " entries, matrix has " + std::to_string(n) + " rows";
  if (x != static_cast<std::size_t>(n))
    return "initial guess has " + std::to_string(x) + " entries, expected " + std::to_string(n);
  return {};
}

template <typename T>
__global__ void __launch_bounds__(block_threads) scale_vector(T* x, index_t n, double s) {
  LA_GRID_STRIDE(i, n) x[i] = static_cast<T>(x[i] * s);
}
template <typename T>
__global__ void __launch_bounds__(block_threads) copy_scaled(const T* b, T* out, index_t n, double s) {
  LA_GRID_STRIDE(i, n) out[i] = static_cast<T>(b[i] * s);
}

/// sum (x_i * s)^2 into *out (s = 1: x'x), fixed order.
template <typename T>
__global__ void __launch_bounds__(block_threads) scaled_square_sum(const T* x, index_t n, double s, double* out,
                                                                   double* partials, unsigned* ticket) {
  double v[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) {
    const double y = static_cast<double>(x[i]) * s;
    v[0] += y * y;
  }
  if (last_block_sum<1>(v, partials, ticket, total)) *out = total[0];
}

/// max |x_i| into *out (as the bits of a non-negative double, which order as the values).
template <typename T>
__global__ void __launch_bounds__(block_threads) abs_max(const T* x, index_t n, unsigned long long* out) {
  double m = 0;
  LA_GRID_STRIDE(i, n) m = fmax(m, fabs(static_cast<double>(x[i])));
  for (int o = 16; o > 0; o /= 2) m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0 && m > 0) atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(m)));
}

/// ||x|| read back to the host: x'x in double, and where that under- or overflows, the sum of
/// (x_i / max|x|)^2 times max|x|. scratch: 2 doubles; partials and ticket as for a dot.
template <typename T>
double safe_nrm2(const T* x, index_t n, unsigned blocks, double* scratch, double* partials, unsigned* ticket,
                 cudaStream_t s) {
  if (n == 0) return 0;
  scaled_square_sum<<<blocks, block_threads, 0, s>>>(x, n, 1.0, scratch, partials, ticket);
  LA_CHECK_LAUNCH(s);
  double ss = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&ss, scratch, sizeof ss, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  if (ss > 1e-280 && ss < 1e280) return std::sqrt(ss);
  auto* bits = reinterpret_cast<unsigned long long*>(scratch + 1);
  LA_CUDA_TRY(cudaMemsetAsync(bits, 0, sizeof(unsigned long long), s));
  abs_max<<<blocks, block_threads, 0, s>>>(x, n, bits);
  LA_CHECK_LAUNCH(s);
  unsigned long long mb = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&mb, bits, sizeof mb, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  double m;
  std::memcpy(&m, &mb, sizeof m);
  if (!(m > 0) || !std::isfinite(m)) return !std::isfinite(ss) ? ss : (m > 0 ? m : 0.0);
  // The entries times a power of two near 1 / max|x|, at most 2^1000: for a subnormal max|x|
  // (below 2^-1022) 1 / max|x| overflows, and x * inf made ||x|| infinite.
  const double scale = std::ldexp(1.0, std::min(-std::ilogb(m), 1000));
  scaled_square_sum<<<blocks, block_threads, 0, s>>>(x, n, scale, scratch, partials, ticket);
  LA_CHECK_LAUNCH(s);
  LA_CUDA_TRY(cudaMemcpyAsync(&ss, scratch, sizeof ss, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  return std::sqrt(ss) / scale;
}

/// x *= s, and a copy of b times s, queued on ctx's stream (the skeleton's rhs scaling).
template <typename T>
void scale_async(context& ctx, T* x, index_t n, double s, unsigned blocks) {
  if (n == 0) return;
  scale_vector<<<blocks, block_threads, 0, ctx.stream()>>>(x, n, s);
  LA_CHECK_LAUNCH(ctx.stream());
}
template <typename T>
device_vector<T> scaled_copy_async(context& ctx, const T* b, index_t n, double s, unsigned blocks) {
  device_vector<T> c(ctx, n);
  if (n == 0) return c;
  copy_scaled<<<blocks, block_threads, 0, ctx.stream()>>>(b, c.data(), n, s);
  LA_CHECK_LAUNCH(ctx.stream());
  return c;
}

}  // namespace la::cg_detail
