// gemv: C = alpha * A * B + beta * C where the product is a matrix times a vector, N == 1
// (a column: each row of A dotted with B's column) or M == 1 (a row: A's row times B). A tiled
// kernel does a 128-wide tile's work for each output there and reads the matrix at a fraction
// of DRAM's rate (4096 x 1 x 4096 in fp32: 0.44x cuBLAS on reg_tiled's split-K); these read
// it once, at full width (1.06x; 8192 x 1 x 8192 1.11x, 106 us against a 97 us floor of
// launch and bytes: bench/RESULTS.md, tuning note T1).
//
//  - N == 1: a warp a row, lanes across it, 16-byte loads where A's rows are 16-byte aligned,
//    a shuffle sum (fixed order).
//  - M == 1: a thread 4 consecutive columns of B (16-byte loads where B's rows allow, else
//    4 loads), a block 256 threads wide, walking down its range of K.
//  - K is cut into `splits` ranges where the rows (N == 1) or column blocks (M == 1) alone
//    would leave the SMs short of loads in flight; each range writes its partial to the
//    workspace and reduce_splits sums them in order (deterministic). Without a workspace
//    (a caller that gave none), one range.
#include <algorithm>
#include <cstdint>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
constexpr int gemv_threads = 256;
/// Warps (N == 1) or threads / 32 (M == 1) in flight that keep DRAM busy: 32 a multiprocessor.
constexpr long gemv_warps_per_sm = 32;
/// The least of K a range takes, so that its sum amortizes the partial's store and reduction
/// (the partials are one float a row or column and range: few bytes beside the matrix's).
constexpr long gemv_min_range = 64;

/// One output a split: where the product goes (the workspace's slab z, or C).
struct gemv_out {
  float* w;  // null: straight into C
  __device__ __forceinline__ void put(const gemm_args& g, int z, index_t i, index_t j, float v) const {
    if (w)
      w[static_cast<long>(z) * g.m * g.n + static_cast<long>(i) * g.n + j] = v;
    else
      store_c(g.c, g.ldc, i, j, v, g.alpha, g.beta);
  }
};

/// N == 1: warp (z, i) sums row i of A times B's column over K range z.
template <bool Vec>
__global__ void __launch_bounds__(gemv_threads) gemv_column_kernel(gemm_args g, index_t range, int splits, gemv_out out) {
  const long warp = (static_cast<long>(blockIdx.x) * gemv_threads + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= static_cast<long>(g.m) * splits) return;  // whole warps: the shuffle below needs all 32 lanes
  const index_t i = static_cast<index_t>(warp % g.m);
  const int z = static_cast<int>(warp / g.m);
  const index_t k0 = static_cast<index_t>(z) * range, k1 = min(g.k, k0 + range);
  const float* a = static_cast<const float*>(g.a) + static_cast<long>(i) * g.lda;
  const float* b = static_cast<const float*>(g.b);
  float s = 0.0f;
  index_t k = k0;
  if (Vec) {  // k0 is a multiple of 4 (the range is), so a + k is 16-byte aligned
#pragma unroll 4
    for (; k + 128 <= k1; k += 128) {
      const index_t q = k + 4 * lane;
      const float4 x = *reinterpret_cast<const float4*>(a + q);
      s += x.x * b[static_cast<long>(q) * g.ldb] + x.y * b[static_cast<long>(q + 1) * g.ldb] +
           x.z * b[static_cast<long>(q + 2) * g.ldb] + x.w * b[static_cast<long>(q + 3) * g.ldb];
    }
  }
#pragma unroll 4
  for (index_t q = k + lane; q < k1; q += 32) s += a[q] * b[static_cast<long>(q) * g.ldb];
#pragma unroll
  for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
  if (lane == 0) out.put(g, z, i, 0, s);
}

/// M == 1: thread t of block (x, z) sums columns 4 (256 x + t) .. + 3 of A's row times B over
/// K range z.
template <bool Vec>
__global__ void __launch_bounds__(gemv_threads) gemv_row_kernel(gemm_args g, index_t range, gemv_out out) {
  const index_t j = (static_cast<index_t>(blockIdx.x) * gemv_threads + threadIdx.x) * 4;
  if (j >= g.n) return;
  const int z = blockIdx.y;
  const index_t k0 = static_cast<index_t>(z) * range, k1 = min(g.k, k0 + range);
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b) + j;
  float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
  if (Vec && j + 3 < g.n) {
#pragma unroll 4
    for (index_t k = k0; k < k1; ++k) {
      const float x = a[k];
      const float4 y = *reinterpret_cast<const float4*>(b + static_cast<long>(k) * g.ldb);
      s.x += x * y.x, s.y += x * y.y, s.z += x * y.z, s.w += x * y.w;
    }
  } else {
    const int cols = g.n - j < 4 ? static_cast<int>(g.n - j) : 4;
#pragma unroll 4
    for (index_t k = k0; k < k1; ++k) {
      const float x = a[k];
      const float* y = b + static_cast<long>(k) * g.ldb;
      s.x += x * y[0];
      if (cols > 1) s.y += x * y[1];
      if (cols > 2) s.z += x * y[2];
      if (cols > 3) s.w += x * y[3];
    }
  }
  const float v[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (j + q < g.n) out.put(g, z, 0, j + q, v[q]);
}

/// Ranges of K for p: enough warps in flight for every SM, each range at least
/// gemv_min_range of K (a multiple of 4, so that A's 16-byte loads stay aligned).
int gemv_splits_for(const gemm_problem& p) {
  const long have = p.n == 1 ? p.m : ceil_div(p.n, 4 * 32);  // warps without splitting
  return one_round_splits(gemv_warps_per_sm * std::max(p.sm_count, 1), have, std::min<long>(p.k / gemv_min_range, 65535));
}
}  // namespace

bool gemv_can_implement(const gemm_problem& p) {
  // The N == 1 grid has a block per 8 (row, range) warps.
  return p.m >= 0 && p.n >= 0 && p.k >= 0 && (p.m == 1 || p.n == 1) &&
         static_cast<long>(p.m) * gemv_splits_for(p) * 32 / gemv_threads < 2147483647L;
}

std::size_t gemv_workspace_bytes(const gemm_problem& p) {
  const int splits = gemv_splits_for(p);
  return splits > 1 ? partials_bytes(p, splits) : 0;
}

void run_gemv(const gemm_args& g, cudaStream_t s) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g.c, g.ldc, g.m, g.n, g.beta, s);  // alpha * 0 + beta * C
  const gemm_problem p{g.m, g.n, g.k, g.sm_count};
  int splits = gemv_splits_for(p);
  if (!g.workspace || (g.workspace_size && g.workspace_size < partials_bytes(p, splits))) splits = 1;
  const index_t range = split_range(g.k, splits, 4);
  splits = ceil_div(g.k, range);  // rounding the range up can leave fewer
  const gemv_out out{splits > 1 ? static_cast<float*>(g.workspace) : nullptr};
  if (g.n == 1) {  // a warp a (row, range)
    const unsigned blocks = static_cast<unsigned>(ceil_div(static_cast<long>(g.m) * splits * 32, gemv_threads));
    if (aligned16(g.a, g.lda, 4))
      gemv_column_kernel<true><<<blocks, gemv_threads, 0, s>>>(g, range, splits, out);
    else
      gemv_column_kernel<false><<<blocks, gemv_threads, 0, s>>>(g, range, splits, out);
  } else {  // a thread 4 columns, a grid row a range
    const dim3 grid(static_cast<unsigned>(ceil_div(g.n, 4 * gemv_threads)), static_cast<unsigned>(splits));
    if (aligned16(g.b, g.ldb, 4))
      gemv_row_kernel<true><<<grid, gemv_threads, 0, s>>>(g, range, out);
    else
      gemv_row_kernel<false><<<grid, gemv_threads, 0, s>>>(g, range, out);
  }
  LA_CHECK_LAUNCH(s);
  if (splits > 1) reduce_splits(g, splits, s);
}
}  // namespace la::gemm_detail
