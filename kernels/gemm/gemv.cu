// gemv: C = alpha * A * B + beta * C where one operand is a few vectors: N == 1 (a matrix
// times a column: each row of A dotted with B's column), or M <= gemv_max_rows (a few rows
// times a matrix: B read once for all of them). A tiled kernel does a 128-wide tile's work
// for each output there and reads the matrix at a fraction of DRAM's rate (4096 x 1 x 4096 in
// fp32: 0.44x cuBLAS on reg_tiled's split-K, 1.06x here); these read it once, at full width
// (bench/history/tuning-notes-the-code-cites.md, note T1). Float, half or bfloat16 inputs (run_gemv<In>), always
// multiplied and summed in float.
//
//  - N == 1: a warp a row, lanes across it, 16-byte loads where A's rows are 16-byte aligned,
//    a shuffle sum (fixed order).
//  - M <= gemv_max_rows: a thread holds the 16 bytes of consecutive columns of B (4 floats or
//    8 halves) for R rows of A (R = 1, 4, 8 or 16); a block is 64 such column groups by 4
//    lanes of K. It stages A's R rows in shared memory as floats, a chunk of K at a time (zero
//    past M: those rows are multiplied but not stored), and adds its lanes' partial sums there
//    in a fixed order. A block row (grid z) per R rows: half and bfloat16 take R <= 8, two
//    block rows for M > 8 (B's second read then mostly comes from L2).
//  - K is cut into `splits` ranges where the rows (N == 1) or column blocks alone would leave
//    the SMs short of loads in flight; each range writes its partial to the workspace and
//    reduce_splits sums them in order (deterministic). Without a workspace (a caller that gave
//    none), one range.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
constexpr int gemv_threads = 256;
/// Warps in flight that keep DRAM busy, a multiprocessor: 32 of the column form (a 16-byte
/// load a lane in flight per row), 16 of the rows form (two blocks of up to 128 registers a
/// thread, each thread with 4-8 loads of 16 bytes in flight; 32 was 0-20% slower for floats
/// and up to 40% slower for 16-bit inputs: bench/history/tuning-notes-the-code-cites.md, note T1).
constexpr long gemv_warps_per_sm = 32, rows_warps_per_sm = 16;
/// The least of K a range takes, so that its sum amortizes the partial's store and reduction.
constexpr long gemv_min_range = 64;
/// Ranges of K start at multiples of 8, so that 16-byte loads of A stay aligned (8 halves).
constexpr int gemv_k_multiple = 8;
/// The rows form: lanes of K a block, and column groups a block.
constexpr int rows_k_lanes = 4;
constexpr int rows_groups = gemv_threads / rows_k_lanes;
/// The rows form stages A in chunks of this much of K (16 KB of floats at 16 rows).
constexpr int rows_chunk = 256;

/// Elements of In in 16 bytes: 4 floats, 8 halves or bfloat16s.
template <typename In>
constexpr int per16 = 16 / static_cast<int>(sizeof(In));

template <typename In>
__device__ __forceinline__ float to_float(In x) {
  if constexpr (std::is_same_v<In, float>)
    return x;
  else if constexpr (std::is_same_v<In, __half>)
    return __half2float(x);
  else
    return __bfloat162float(x);
}

/// Two 16-bit elements packed in w, as floats.
template <typename In>
__device__ __forceinline__ float2 pair_to_float2(unsigned w) {
  if constexpr (std::is_same_v<In, __half>) {
    __half2 h;
    static_assert(sizeof(h) == sizeof(w));
    memcpy(&h, &w, sizeof(w));
    return __half22float2(h);
  } else {
    __nv_bfloat162 h;
    static_assert(sizeof(h) == sizeof(w));
    memcpy(&h, &w, sizeof(w));
    return __bfloat1622float2(h);
  }
}

/// The 16 bytes at p (16-byte aligned) as per16<In> floats.
template <typename In>
__device__ __forceinline__ void load16(const In* p, float (&o)[per16<In>]) {
  const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
  if constexpr (std::is_same_v<In, float>) {
    o[0] = __uint_as_float(u.x), o[1] = __uint_as_float(u.y), o[2] = __uint_as_float(u.z), o[3] = __uint_as_float(u.w);
  } else {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = pair_to_float2<In>(w[q]);
      o[2 * q] = f.x, o[2 * q + 1] = f.y;
    }
  }
}

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
template <typename In, bool Vec>
__global__ void __launch_bounds__(gemv_threads) gemv_column_kernel(gemm_args g, index_t range, int splits, gemv_out out) {
  constexpr int V = per16<In>;
  const long warp = (static_cast<long>(blockIdx.x) * gemv_threads + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= static_cast<long>(g.m) * splits) return;  // whole warps: the shuffle below needs all 32 lanes
  const index_t i = static_cast<index_t>(warp % g.m);
  const int z = static_cast<int>(warp / g.m);
  const index_t k0 = static_cast<index_t>(z) * range, k1 = min(g.k, k0 + range);
  const In* a = static_cast<const In*>(g.a) + static_cast<long>(i) * g.lda;
  const In* b = static_cast<const In*>(g.b);
  float s = 0.0f;
  index_t k = k0;
  if (Vec) {  // k0 is a multiple of 8 (the range is), so a + k is 16-byte aligned
#pragma unroll 4
    for (; k + 32 * V <= k1; k += 32 * V) {
      const index_t q = k + V * lane;
      float x[V];
      load16<In>(a + q, x);
#pragma unroll
      for (int v = 0; v < V; ++v) s = fmaf(x[v], to_float(b[static_cast<long>(q + v) * g.ldb]), s);
    }
  }
#pragma unroll 4
  for (index_t q = k + lane; q < k1; q += 32) s = fmaf(to_float(a[q]), to_float(b[static_cast<long>(q) * g.ldb]), s);
#pragma unroll
  for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
  if (lane == 0) out.put(g, z, i, 0, s);
}

/// M <= gemv_max_rows: thread (x, y) of block (bx, z, rz) sums rows rz R .. + R - 1 of A
/// times the V columns from (64 bx + x) V of B over the 4-element steps y, y + 4, ... of K
/// range z; the block then adds its 4 lanes' sums in order. The block stages A's rows in
/// chunks of rows_chunk of K in shared memory as floats, zero past M and past the range, so
/// the loop reads them without conditions (broadcast 16-byte loads). vec: B's rows are
/// 16-byte aligned.
template <typename In, int R>
__global__ void __launch_bounds__(gemv_threads, 2) gemv_rows_kernel(gemm_args g, index_t range, bool vec, gemv_out out) {
  constexpr int V = per16<In>;
  __shared__ __align__(16) float as[R][rows_chunk];
  __shared__ __align__(16) float sums[rows_k_lanes][rows_groups * V];
  const int x = threadIdx.x % rows_groups, y = threadIdx.x / rows_groups;
  const index_t j = (static_cast<index_t>(blockIdx.x) * rows_groups + x) * V;
  const int z = blockIdx.y;
  const index_t r0 = static_cast<index_t>(blockIdx.z) * R;
  const int rows = static_cast<int>(min(static_cast<index_t>(R), g.m - r0));
  const index_t k0 = static_cast<index_t>(z) * range, k1 = min(g.k, k0 + range);
  const In* a = static_cast<const In*>(g.a) + static_cast<long>(r0) * g.lda;
  const In* b = static_cast<const In*>(g.b);
  const bool b_vec = vec && j + V <= g.n;
  float acc[R][V];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[r][v] = 0.0f;
  for (index_t c0 = k0; c0 < k1; c0 += rows_chunk) {
    const int len = static_cast<int>(min(static_cast<index_t>(rows_chunk), k1 - c0));
    __syncthreads();  // the last chunk has been read
    for (int e = threadIdx.x; e < R * rows_chunk; e += gemv_threads) {
      const int r = e / rows_chunk, q = e % rows_chunk;
      as[r][q] = r < rows && q < len ? to_float(a[static_cast<long>(r) * g.lda + c0 + q]) : 0.0f;
    }
    __syncthreads();
    // acc += A's rows at q .. q + 3 (from the chunk) times B's 4 rows bv.
    auto step = [&](int q, const float (&bv)[4][V]) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float4 av = *reinterpret_cast<const float4*>(&as[r][q]);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          acc[r][v] = fmaf(av.x, bv[0][v], acc[r][v]);
          acc[r][v] = fmaf(av.y, bv[1][v], acc[r][v]);
          acc[r][v] = fmaf(av.z, bv[2][v], acc[r][v]);
          acc[r][v] = fmaf(av.w, bv[3][v], acc[r][v]);
        }
      }
    };
    int q = 4 * y;
    if (b_vec) {
#pragma unroll 2
      for (; q + 4 <= len; q += 4 * rows_k_lanes) {
        const In* bk = b + static_cast<long>(c0 + q) * g.ldb + j;
        float bv[4][V];
#pragma unroll
        for (int t = 0; t < 4; ++t) load16<In>(bk + static_cast<long>(t) * g.ldb, bv[t]);
        step(q, bv);
      }
    }
    // B's rows not aligned, columns past N, or the chunk's last elements: element by element.
    for (; q < len; q += 4 * rows_k_lanes) {
      const In* bk = b + static_cast<long>(c0 + q) * g.ldb + j;
      float bv[4][V];
#pragma unroll
      for (int t = 0; t < 4; ++t)
#pragma unroll
        for (int v = 0; v < V; ++v)
          bv[t][v] = q + t < len && j + v < g.n ? to_float(bk[static_cast<long>(t) * g.ldb + v]) : 0.0f;
      step(q, bv);
    }
  }
  // The 4 lanes of K, added in order, a row at a time (rows is the same for the whole block).
  const index_t col0 = static_cast<index_t>(blockIdx.x) * rows_groups * V;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    __syncthreads();  // the last row's sums have been read
#pragma unroll
    for (int v = 0; v < V; v += 4)
      *reinterpret_cast<float4*>(&sums[y][x * V + v]) = make_float4(acc[r][v], acc[r][v + 1], acc[r][v + 2], acc[r][v + 3]);
    __syncthreads();
    for (int o = threadIdx.x; o < rows_groups * V; o += gemv_threads)
      if (col0 + o < g.n) out.put(g, z, r0 + r, col0 + o, ((sums[0][o] + sums[1][o]) + sums[2][o]) + sums[3][o]);
  }
}

/// Rows of A a thread holds in the rows form: the fewest of 1, 4, 8, 16 that hold M (at most
/// 8 for 16-bit inputs: 8 x 8 sums a thread).
template <typename In>
int gemv_rows_per_block(index_t m) {
  const int most = std::is_same_v<In, float> ? 16 : 8;
  return m <= 1 ? 1 : m <= 4 ? 4 : m <= 8 || most == 8 ? 8 : 16;
}

/// Ranges of K for p: enough warps in flight for every SM, each range at least
/// gemv_min_range of K.
template <typename In>
int gemv_splits_for(const gemm_problem& p) {
  const long have = p.n == 1 ? p.m  // a warp a row
                             : static_cast<long>(ceil_div(p.n, rows_groups * per16<In>)) *
                                   ceil_div(p.m, gemv_rows_per_block<In>(p.m)) * (gemv_threads / 32);
  const long per_sm = p.n == 1 ? gemv_warps_per_sm : rows_warps_per_sm;
  return one_round_splits(per_sm * std::max(p.sm_count, 1), have, std::min<long>(p.k / gemv_min_range, 65535));
}

template <typename In, int R>
void launch_rows(const gemm_args& g, index_t range, int splits, bool vec, gemv_out out, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(ceil_div(g.n, rows_groups * per16<In>)), static_cast<unsigned>(splits),
                  static_cast<unsigned>(ceil_div(g.m, R)));
  gemv_rows_kernel<In, R><<<grid, gemv_threads, 0, s>>>(g, range, vec, out);
}
}  // namespace

bool gemv_can_implement(const gemm_problem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0 || !(p.n == 1 || p.m <= gemv_max_rows)) return false;
  // The N == 1 grid has a block per 8 (row, range) warps (its splits do not depend on the
  // input type); the rows form's grid x is N / 256 or N / 512 blocks.
  return p.n == 1 ? static_cast<long>(p.m) * gemv_splits_for<float>(p) * 32 / gemv_threads < 2147483647L
                  : p.n / (rows_groups * 4) < 2147483647L;
}

template <typename In>
std::size_t gemv_workspace_bytes(const gemm_problem& p) {
  const int splits = gemv_splits_for<In>(p);
  return splits > 1 ? partials_bytes(p, splits) : 0;
}

template <typename In>
void run_gemv(const gemm_args& g, cudaStream_t s) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g.c, g.ldc, g.m, g.n, g.beta, s);  // alpha * 0 + beta * C
  const gemm_problem p{g.m, g.n, g.k, g.sm_count};
  int splits = gemv_splits_for<In>(p);
  if (!g.workspace || (g.workspace_size && g.workspace_size < partials_bytes(p, splits))) splits = 1;
  const index_t range = split_range(g.k, splits, gemv_k_multiple);
  splits = ceil_div(g.k, range);  // rounding the range up can leave fewer
  const gemv_out out{splits > 1 ? static_cast<float*>(g.workspace) : nullptr};
  if (g.n == 1) {  // a warp a (row, range)
    const unsigned blocks = static_cast<unsigned>(ceil_div(static_cast<long>(g.m) * splits * 32, gemv_threads));
    if (aligned16(g.a, g.lda, sizeof(In)))
      gemv_column_kernel<In, true><<<blocks, gemv_threads, 0, s>>>(g, range, splits, out);
    else
      gemv_column_kernel<In, false><<<blocks, gemv_threads, 0, s>>>(g, range, splits, out);
  } else {
    const bool vec = aligned16(g.b, g.ldb, sizeof(In));
    switch (gemv_rows_per_block<In>(g.m)) {
      case 1: launch_rows<In, 1>(g, range, splits, vec, out, s); break;
      case 4: launch_rows<In, 4>(g, range, splits, vec, out, s); break;
      case 8: launch_rows<In, 8>(g, range, splits, vec, out, s); break;
      default:
        if constexpr (std::is_same_v<In, float>) launch_rows<In, 16>(g, range, splits, vec, out, s);
    }
  }
  LA_CHECK_LAUNCH(s);
  if (splits > 1) reduce_splits(g, splits, s);
}

template std::size_t gemv_workspace_bytes<float>(const gemm_problem&);
template std::size_t gemv_workspace_bytes<__half>(const gemm_problem&);
template std::size_t gemv_workspace_bytes<__nv_bfloat16>(const gemm_problem&);
template void run_gemv<float>(const gemm_args&, cudaStream_t);
template void run_gemv<__half>(const gemm_args&, cudaStream_t);
template void run_gemv<__nv_bfloat16>(const gemm_args&, cudaStream_t);
}  // namespace la::gemm_detail
