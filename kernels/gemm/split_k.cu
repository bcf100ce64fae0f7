// split_k: K is cut into `splits` contiguous ranges (multiples of the tile depth), one per
// blockIdx.z, so a problem with few output tiles (skinny M x N, long K) still fills every SM.
// Each block runs the reg_tiled main loop over its range. Two ways to combine the partials:
//  - atomic:    C is first scaled by beta (a separate pass; beta == 0 writes zeros without
//               reading), then every block atomicAdds alpha * partial. Not bit-reproducible:
//               the order of the additions varies run to run.
//  - workspace: each split writes its partial tile to workspace[split][m][n]; a second
//               kernel sums the splits in a fixed order (8 or 32 ranges in order,
//               each in order; reduce_splits_kernel) and applies alpha/beta.
//               Deterministic: bit-identical run to run. Needs splits*M*N floats.
// The number of splits comes from detail::split_k_count (shape and SM count). The tile is
// reg_tiled's 128x128x8, or its 64x64x16 where M or N is at most 64 (split_k_small_tile),
// so a 64-wide output does not pay for a half-empty tile.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <la/kernels/gemm/detail/reg_tiled.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
static_assert(rt_config::SMEM_BYTES <= 48 * 1024 && rt_small::SMEM_BYTES <= 48 * 1024,
              "split_k launches without raising the shared-memory limit");

enum class combine { atomic, workspace };
}  // namespace

bool split_k_small_tile(const gemm_problem& p) {
  return (p.m <= 64 || p.n <= 64) && ceil_div(p.m, rt_small::BM) <= 65535;
}

namespace {

template <typename Cfg, bool Vec, combine Mode>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) split_k_kernel(gemm_args g, index_t chunk) {
  const rt_place t = place_tile<Cfg, Vec>(static_cast<index_t>(blockIdx.y) * Cfg::BM,
                                          static_cast<index_t>(blockIdx.x) * Cfg::BN, g.m, g.n);
  const index_t k0 = static_cast<index_t>(blockIdx.z) * chunk, k1 = min(g.k, k0 + chunk);
  extern __shared__ __align__(16) float rt_smem[];
  float acc[Cfg::TM][Cfg::TN] = {};
  reg_tiled_mainloop<Cfg, Vec>(rt_smem, static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                               g.m, g.n, k0, k1, t.row0, t.col0, acc);
  float* w = static_cast<float*>(g.workspace) + static_cast<long>(blockIdx.z) * g.m * g.n;
  for_each_output<Cfg>(acc, t, g.m, g.n, [&](index_t r, index_t c, float v) {
    if constexpr (Mode == combine::atomic)
      atomicAdd(g.c + static_cast<long>(r) * g.ldc + c, g.alpha * v);
    else
      w[static_cast<long>(r) * g.n + c] = v;
  });
}

}  // namespace

namespace {
__global__ void scale_c_kernel(float* c, index_t ldc, index_t m, index_t n, float beta) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(m) * n) return;
  float* p = c + (e / n) * ldc + e % n;
  *p = beta == 0.0f ? 0.0f : beta * *p;
}

// 32 runs of V consecutive elements a block (V = 4: float4 loads; one coalesced row of loads a
// warp), the splits cut into G contiguous ranges, one a warp: each warp sums its range in
// order with its loads unrolled (independent of the sum, so they are all in flight at once);
// warp q < 8 then adds ranges G/8 q .. G/8 (q+1) - 1 in order, and warp 0 those 8 sums in
// order. A fixed order: deterministic. G = 32 where there are at least 64 splits (128 x 128 x
// 262144: 128 splits over 128 blocks, 4 loads a warp instead of 16), else 8 (64 x 4096 x 4096:
// 5 splits, where 32 warps a block would mostly idle). Launched as
// a programmatic dependent of the split kernel where that kernel triggers it early (pdl):
// griddepcontrol.wait then holds it until the split kernel has finished and its partials are
// visible.
template <int V, int G>
__global__ void __launch_bounds__(32 * G) reduce_splits_kernel(gemm_args g, int splits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
  using vec = std::conditional_t<V == 4, float4, float>;
  __shared__ vec part[G][32];
  const long mn = static_cast<long>(g.m) * g.n;
  const long e = (static_cast<long>(blockIdx.x) * 32 + threadIdx.x) * V;  // first of V in one row (n % V == 0)
  const int per = (splits + G - 1) / G;
  const int z0 = threadIdx.y * per, z1 = min(splits, z0 + per);
  const float* w = static_cast<const float*>(g.workspace);
  auto add = [](vec& a, const vec& b) {
    if constexpr (V == 4)
      a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
    else
      a += b;
  };
  vec s{};
  if (e < mn) {
#pragma unroll 8
    for (int z = z0; z < z1; ++z) add(s, *reinterpret_cast<const vec*>(w + z * mn + e));
  }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  constexpr int fold = G / 8;
  if (threadIdx.y < 8) {
    vec t = part[fold * threadIdx.y][threadIdx.x];
#pragma unroll
    for (int q = 1; q < fold; ++q) add(t, part[fold * threadIdx.y + q][threadIdx.x]);
    s = t;
  }
  __syncthreads();  // every range read before warps 1-7 overwrite their first
  if (threadIdx.y < 8) part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || e >= mn) return;
  vec t = part[0][threadIdx.x];
#pragma unroll
  for (int q = 1; q < 8; ++q) add(t, part[q][threadIdx.x]);
  const float* tv = reinterpret_cast<const float*>(&t);
  const auto r = static_cast<index_t>(e / g.n), c = static_cast<index_t>(e % g.n);
#pragma unroll
  for (int i = 0; i < V; ++i) store_c(g.c, g.ldc, r, c + i, tv[i], g.alpha, g.beta);
}

}  // namespace

void scale_c(float* c, index_t ldc, index_t m, index_t n, float beta, cudaStream_t s) {
  const long mn = static_cast<long>(m) * n;
  if (mn == 0) return;
  scale_c_kernel<<<ceil_div(mn, 256), 256, 0, s>>>(c, ldc, m, n, beta);
  LA_CHECK_LAUNCH(s);
}
void reduce_splits(const gemm_args& g, int splits, cudaStream_t s, bool pdl) {
  const long mn = static_cast<long>(g.m) * g.n;
  if (mn == 0) return;
  const bool vec4 = g.n % 4 == 0 && reinterpret_cast<std::uintptr_t>(g.workspace) % 16 == 0;
  const bool wide = splits >= 64;
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = dependent_launch(dim3(ceil_div(mn, 32 * (vec4 ? 4 : 1))), dim3(32, wide ? 32 : 8), s, pdl, attr);
  void (*const kernel)(gemm_args, int) = vec4 ? (wide ? reduce_splits_kernel<4, 32> : reduce_splits_kernel<4, 8>)
                                              : (wide ? reduce_splits_kernel<1, 32> : reduce_splits_kernel<1, 8>);
  LA_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, g, splits));
  LA_CHECK_LAUNCH(s);
}

namespace {
template <typename Cfg, combine Mode>
void launch_split(const gemm_args& g, cudaStream_t s) {
  const int splits = detail::split_k_count({g.m, g.n, g.k, g.sm_count});
  const index_t chunk = split_range(g.k, splits, Cfg::BK);  // split z: [z chunk, (z + 1) chunk)
  const int used = g.k > 0 ? ceil_div(g.k, chunk) : 0;  // rounding chunk up can leave fewer
  if (Mode == combine::atomic) scale_c(g.c, g.ldc, g.m, g.n, g.beta, s);
  if (g.k > 0) {
    const dim3 grid(ceil_div(g.n, Cfg::BN), ceil_div(g.m, Cfg::BM), used);
    if (reg_tiled_vectorizable(g))
      split_k_kernel<Cfg, true, Mode><<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(g, chunk);
    else
      split_k_kernel<Cfg, false, Mode><<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(g, chunk);
    LA_CHECK_LAUNCH(s);
  }
  if (Mode == combine::workspace) reduce_splits(g, used, s);
}

template <combine Mode>
void launch_split(const gemm_args& g, cudaStream_t s) {
  if (split_k_small_tile({g.m, g.n, g.k, g.sm_count}))
    launch_split<rt_small, Mode>(g, s);
  else
    launch_split<rt_config, Mode>(g, s);
}
}  // namespace

void run_split_k_atomic(const gemm_args& g, cudaStream_t s) { launch_split<combine::atomic>(g, s); }
void run_split_k_workspace(const gemm_args& g, cudaStream_t s) { launch_split<combine::workspace>(g, s); }

std::size_t partials_bytes(const gemm_problem& p, int splits) {
  return static_cast<std::size_t>(splits) * p.m * p.n * sizeof(float);
}
std::size_t split_k_workspace_bytes(const gemm_problem& p) { return partials_bytes(p, detail::split_k_count(p)); }
}  // namespace la::gemm_detail

namespace la::detail {
int split_k_count(const gemm_problem& p) {
  // As many blocks as are resident at once (MIN_BLOCKS a SM), rounded down so that they run
  // in one round, but at least 128 of K per split so each block's main loop amortizes its
  // prologue and epilogue (300 x 300 x 3000: 23 splits 45 us, 5 splits at the old 512 of K a
  // split 75 us; bench/history/tuning-notes-the-code-cites.md, note T1).
  using namespace la::gemm_detail;
  const bool small = split_k_small_tile(p);
  const long tiles = small ? rt_tiles<rt_small>(p) : rt_tiles<rt_config>(p);
  const long resident = static_cast<long>(small ? rt_small::MIN_BLOCKS : rt_config::MIN_BLOCKS) * p.sm_count;
  return one_round_splits(resident, tiles, std::min<long>(p.k / 128, 65535));
}
}  // namespace la::detail
