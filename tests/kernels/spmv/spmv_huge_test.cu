// SpMV past 2^31 nonzeros (64-bit offsets), on a GPU with room for it (an H100 or H200):
// a 3D 7-point Poisson matrix on a 684^3 grid (320M rows, 2.24G nonzeros, float) built on
// the device, converted there to SELL (64-bit slice offsets), and run by every CSR kernel
// and the SELL kernel. x_j = 1 + (j mod 7)/8, so every product and sum is exact in float:
// sampled rows (the first, the last, and 4,000 spread over the matrix with the grid's faces
// and edges among them) must equal the stencil computed on the host exactly. Skips, saying
// why, where the GPU has less than 60 GB free. Not run under compute-sanitizer (size).
#include <algorithm>

#include <gtest/gtest.h>

#include <cub/device/device_scan.cuh>

#include <la/formats/device_convert.hpp>
#include <la/kernels/spmv/spmv.hpp>

namespace la {
namespace {

// A 64-bit grid-stride loop (the counts here pass 2^31), and a grid that covers n items.
#define HUGE_GRID_STRIDE(i, n)                                                                          \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<long long>(n); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)
unsigned grid_for(long long items) { return static_cast<unsigned>(std::min<long long>((items + 255) / 256, 65535LL * 32)); }

constexpr long long N = 684;  // 7 N^3 - 6 N^2 = 2,237,133,312 > 2^31

__device__ __host__ inline int stencil_length(long long r) {
  const long long i = r / (N * N), j = r / N % N, k = r % N;
  return 1 + (i > 0) + (i < N - 1) + (j > 0) + (j < N - 1) + (k > 0) + (k < N - 1);
}

__global__ void lengths(long long rows, std::int64_t* len) {
  HUGE_GRID_STRIDE(r, rows) { len[r] = stencil_length(r); }
}

__global__ void fill(long long rows, const std::int64_t* ptr, index_t* col, float* val) {
  HUGE_GRID_STRIDE(r, rows) {
    const long long i = r / (N * N), j = r / N % N, k = r % N;
    std::int64_t q = ptr[r];
    auto add = [&](long long c, float v) { col[q] = static_cast<index_t>(c), val[q++] = v; };
    if (i > 0) add(r - N * N, -1);
    if (j > 0) add(r - N, -1);
    if (k > 0) add(r - 1, -1);
    add(r, 6);
    if (k < N - 1) add(r + 1, -1);
    if (j < N - 1) add(r + N, -1);
    if (i < N - 1) add(r + N * N, -1);
  }
}

__global__ void input(long long n, float* x) {
  HUGE_GRID_STRIDE(j, n) { x[j] = 1.0f + static_cast<float>(j % 7) / 8; }
}

float host_x(long long j) { return 1.0f + static_cast<float>(j % 7) / 8; }

double host_row(long long r) {
  const long long i = r / (N * N), j = r / N % N, k = r % N;
  double s = 6.0 * host_x(r);
  if (i > 0) s -= host_x(r - N * N);
  if (j > 0) s -= host_x(r - N);
  if (k > 0) s -= host_x(r - 1);
  if (k < N - 1) s -= host_x(r + 1);
  if (j < N - 1) s -= host_x(r + N);
  if (i < N - 1) s -= host_x(r + N * N);
  return s;
}

TEST(SpmvHuge, PoissonPastTwoToTheThirtyOneNonzeros) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU: " << cuda_status();
  std::size_t free = 0, total = 0;
  LA_CUDA_TRY(cudaMemGetInfo(&free, &total));
  if (free < 60e9) GTEST_SKIP() << "needs 60 GB of free GPU memory, this GPU has " << free / 1e9 << " GB";
  context ctx;
  cudaStream_t s = ctx.stream();
  const long long rows = N * N * N, nnz = 7 * N * N * N - 6 * N * N;
  ASSERT_GT(nnz, (1LL << 31));
  auto a = device_csr<float, std::int64_t>::allocate(ctx, static_cast<index_t>(rows), static_cast<index_t>(rows), nnz);
  {
    auto len = ctx.allocate<std::int64_t>(static_cast<std::size_t>(rows) + 1);
    lengths<<<grid_for(rows), 256, 0, s>>>(rows, len.data());
    LA_CHECK_LAUNCH(s);
    LA_CUDA_TRY(cudaMemsetAsync(len.data() + rows, 0, 8, s));
    std::size_t bytes = 0;
    auto v = a.view();
    LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, len.data(), v.row_ptr, rows + 1, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, len.data(), v.row_ptr, rows + 1, s));
    fill<<<grid_for(rows), 256, 0, s>>>(rows, v.row_ptr, v.col_idx, v.values);
    LA_CHECK_LAUNCH(s);
  }
  std::int64_t last = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&last, a.view().row_ptr + rows, 8, cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  ASSERT_EQ(last, nnz);
  auto x = ctx.allocate<float>(static_cast<std::size_t>(rows));
  input<<<grid_for(rows), 256, 0, s>>>(rows, x.data());
  LA_CHECK_LAUNCH(s);
  auto y = ctx.allocate<float>(static_cast<std::size_t>(rows));

  std::vector<long long> sample{0, rows - 1, N * N - 1, N * N * (N - 1), N / 2 * N * N + N / 2 * N + N / 2};
  for (long long q = 0; q < 4000; ++q) sample.push_back((q * 2654435761LL) % rows);
  auto check = [&](const char* what) {
    for (long long r : sample) {
      float got = 0;
      LA_CUDA_TRY(cudaMemcpyAsync(&got, y.data() + r, 4, cudaMemcpyDeviceToHost, s));
      ctx.synchronize();
      ASSERT_EQ(double(got), host_row(r)) << what << ", row " << r;
    }
  };
  const matrix_view<float> csr = spmv_view(a);
  ASSERT_TRUE(csr.wide);
  for (const auto& v : spmv_variants<float>()) {
    if (v.fmt != format::csr) continue;
    LA_CUDA_TRY(cudaMemsetAsync(y.data(), 0xff, rows * 4, s));
    const spmv_plan<float> plan(ctx, csr, v);
    plan.run(x.data(), y.data(), 1.0f, 0.0f, s);
    check(std::string(v.name).c_str());
  }
  const auto sell = to_sell(ctx, a);
  EXPECT_EQ(sell.sigma(), 1);
  EXPECT_GT(sell.slots(), (1LL << 31));
  const matrix_view<float> sv = spmv_view(sell);
  ASSERT_TRUE(sv.wide);
  LA_CUDA_TRY(cudaMemsetAsync(y.data(), 0xff, rows * 4, s));
  find_spmv<float>("sell").run(sv, nullptr, x.data(), y.data(), 1.0f, 0.0f, s);
  check("sell");
}

}  // namespace
}  // namespace la
