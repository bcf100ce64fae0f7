// The WMMA (mma.sync) ceiling of this GPU: warps issue back-to-back mma_sync on fragments
// already in registers (8 independent accumulators, no memory traffic in the loop), for
// half inputs (16x16x16) and TF32 (16x16x8), float accumulation. The wmma_* GEMM variants
// are reported as a share of these numbers: cuBLAS reaches past them with wgmma.
#include <mma.h>

#include <cstdio>

#include <la/context.hpp>
#include <la/device_buffer.hpp>
#include <la/event_timer.hpp>

#include <algorithm>

namespace {
namespace wmma = nvcuda::wmma;

template <typename FragIn, int K, typename Elem>
__global__ void peak_kernel(const Elem* in, float* out, int iters) {
  constexpr int ACC = 8;
  wmma::fragment<wmma::matrix_a, 16, 16, K, FragIn, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, K, FragIn, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, K, float> c[ACC];
  wmma::load_matrix_sync(a, in, 16);
  wmma::load_matrix_sync(b, in, 16);
  for (int i = 0; i < ACC; ++i) wmma::fill_fragment(c[i], static_cast<float>(i));  // distinct: no merging
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int i = 0; i < ACC; ++i) wmma::mma_sync(c[i], a, b, c[i]);
  // Every element of every accumulator feeds the output: otherwise ptxas drops the HMMA
  // halves whose results are unused and the "ceiling" doubles.
  float s = 0;
  for (int i = 0; i < ACC; ++i)
    for (int e = 0; e < c[i].num_elements; ++e) s += c[i].x[e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <typename FragIn, int K, typename Elem>
double measure(la::context& ctx, const char* name) {
  const int blocks = ctx.properties().multiProcessorCount * 8, threads = 128, iters = 4096;
  la::device_buffer<Elem> in(16 * 16, ctx.stream());
  LA_CUDA_TRY(cudaMemsetAsync(in.data(), 0x3c, in.size() * sizeof(Elem), ctx.stream()));  // ~1.0 / 0.01 values
  la::device_buffer<float> out(static_cast<std::size_t>(blocks) * threads, ctx.stream());
  // Best of 4 timed runs after one warm-up (events created and destroyed by the helper).
  const std::vector<float> ms = la::time_runs_ms(ctx.stream(), 4, [&] {
    peak_kernel<FragIn, K, Elem><<<blocks, threads, 0, ctx.stream()>>>(in.data(), out.data(), iters);
    LA_CHECK_LAUNCH(ctx.stream());
  });
  const float best = *std::min_element(ms.begin(), ms.end());
  const double flops = 2.0 * 16 * 16 * K * 8.0 * iters * blocks * (threads / 32);
  const double tflops = flops / (best * 1e-3) * 1e-12;
  std::printf("%-6s mma_sync ceiling: %8.1f TFLOP/s (%d blocks x %d warps, %.3f ms)\n", name, tflops, blocks, threads / 32, best);
  return tflops;
}
}  // namespace

int main() {
  if (!la::cuda_available()) {
    std::printf("wmma_peak: no GPU: %s\n", la::cuda_status().c_str());
    return 0;
  }
  la::context ctx;
  std::printf("device: %s\n", ctx.properties().name);
  measure<__half, 16, __half>(ctx, "fp16");
  measure<wmma::precision::tf32, 8, float>(ctx, "tf32");
  return 0;
}
