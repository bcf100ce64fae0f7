// Pieces shared by the GEMM kernels: launch geometry helpers and the C epilogue.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <cuda_runtime.h>

#include <la/kernels/gemm/gemm.hpp>

namespace la::gemm_detail {

__host__ __device__ constexpr int ceil_div(long a, long b) { return static_cast<int>((a + b - 1) / b); }

/// Splits of K that keep `units` units (tiles, rows, column blocks) times the splits inside
/// one round of `slots` (resident blocks or warps): rounded down, since one more split would
/// start a second round (bench/history/tuning-notes-the-code-cites.md, note T1); at most cap, at least 1.
inline int one_round_splits(long slots, long units, long cap) {
  return static_cast<int>(std::max(1L, std::min(slots / std::max(units, 1L), cap)));
}

/// The length of each of `splits` ranges of K, rounded up to a multiple of `multiple`
/// (rounding can leave fewer ranges: ceil_div(k, the length)).
inline index_t split_range(index_t k, int splits, int multiple) {
  const index_t per = (k + splits - 1) / splits;
  return (per + multiple - 1) / multiple * multiple;
}

/// The launch of grid x block on s, with pdl as a programmatic dependent of the kernel before
/// it on s (which triggers it with griddepcontrol.launch_dependents; the dependent waits with
/// griddepcontrol.wait before reading that kernel's output). attr must outlive the result.
inline cudaLaunchConfig_t dependent_launch(dim3 grid, dim3 block, cudaStream_t s, bool pdl, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cfg;
}

/// C[r][c] = alpha*v + beta*C[r][c]; C is not read when beta == 0 (it may hold NaN).
__device__ __forceinline__ void store_c(float* c, index_t ldc, index_t r, index_t col, float v, float alpha, float beta) {
  float* p = c + static_cast<long>(r) * ldc + col;
  *p = beta == 0.0f ? alpha * v : alpha * v + beta * *p;
}

/// 16-byte global -> shared copy that bypasses registers (cp.async.cg, L2 only). When
/// `full` is false nothing is read and 16 zero bytes are written.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool full) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = full ? 16 : 0;  // 0: write 16 zero bytes, read nothing
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
/// 4-byte cp.async (cp.async.ca); when `full` is false nothing is read and 4 zero bytes are written.
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, bool full) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(full ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/// Tile `id` of a tiles_m x tiles_n grid of tiles, walked in groups of GROUP tile-rows, column
/// by column inside a group, so the blocks resident at one time share rows of A and columns of
/// B in L2 instead of sweeping all of B per tile-row. Returns {tile row, tile column}.
template <int GROUP = 8>
__device__ __forceinline__ int2 grouped_tile(int id, int tiles_m, int tiles_n) {
  const int per_group = GROUP * tiles_n;
  const int first = (id / per_group) * GROUP;
  const int rows = min(GROUP, tiles_m - first);
  const int in = id % per_group;
  return make_int2(first + in % rows, in / rows);
}
/// ... with a block per tile: this block's tile.
template <int GROUP = 8>
__device__ __forceinline__ int2 grouped_tile() {
  return grouped_tile<GROUP>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x);
}

/// Raises Kernel's dynamic shared-memory limit to Bytes, once per device (the opt-in is per
/// kernel and device; keyed on the kernel itself, since every variant has the same type).
template <auto Kernel, std::size_t Bytes>
void raise_smem_limit_once() {
  static std::atomic<std::uint64_t> raised{0};  // bit d: done on device d (< 64)
  int dev = 0;
  LA_CUDA_TRY(cudaGetDevice(&dev));
  const std::uint64_t bit = dev < 64 ? std::uint64_t(1) << dev : 0;
  if (bit && (raised.load() & bit)) return;
  LA_CUDA_TRY(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Bytes)));
  raised |= bit;
}

/// True when every row (pointer p, leading dimension ld) starts at a multiple of `bytes`.
inline bool rows_aligned(const void* p, index_t ld, int elem_bytes, int bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0 && (static_cast<long>(ld) * elem_bytes) % bytes == 0;
}

/// True when a pointer and leading dimension allow 16-byte vector access along rows.
inline bool aligned16(const void* p, index_t ld, int elem_bytes) { return rows_aligned(p, ld, elem_bytes, 16); }

}  // namespace la::gemm_detail
