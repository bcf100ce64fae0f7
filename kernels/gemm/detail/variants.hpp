// The GEMM variants' run functions (one .cu file each); registry.cu lists them.
#pragma once

#include <vector>

#include <la/kernels/gemm/gemm.hpp>

namespace la::gemm_detail {
void run_naive(const gemm_args&, cudaStream_t);
void run_smem_tiled(const gemm_args&, cudaStream_t);
void run_joint_rs(const gemm_args&, cudaStream_t);
void run_reg_tiled(const gemm_args&, cudaStream_t);
/// reg_tiled's workspace: copies of A or B at a 16-byte pitch where their rows are not
/// 16-byte aligned and the product is long enough for the copy to pay (reg_tiled.cu).
std::size_t reg_tiled_workspace_bytes(const gemm_problem&);
void run_wmma_f16(const gemm_args&, cudaStream_t);
void run_wmma_tf32(const gemm_args&, cudaStream_t);
void run_wgmma_f16(const gemm_args&, cudaStream_t);
void run_wgmma_bf16(const gemm_args&, cudaStream_t);
void run_wgmma_bf16_split_k(const gemm_args&, cudaStream_t);
void run_wmma_bf16(const gemm_args&, cudaStream_t);
void run_wgmma_tf32(const gemm_args&, cudaStream_t);
bool wgmma_can_implement(const gemm_problem&);
bool wgmma_supported() noexcept;
/// gemv: the product where N == 1 or M <= gemv_max_rows (gemv.cu), for In = float, __half or
/// __nv_bfloat16 inputs; its workspace holds the partials of K's ranges where it cuts K.
constexpr index_t gemv_max_rows = 16;
template <typename In>
void run_gemv(const gemm_args&, cudaStream_t);
bool gemv_can_implement(const gemm_problem&);
template <typename In>
std::size_t gemv_workspace_bytes(const gemm_problem&);
void run_split_k_atomic(const gemm_args&, cudaStream_t);
void run_split_k_workspace(const gemm_args&, cudaStream_t);
std::size_t split_k_workspace_bytes(const gemm_problem&);
/// split_k runs reg_tiled's 64x64x16 tile (not 128x128x8): M or N is at most 64.
bool split_k_small_tile(const gemm_problem&);
/// C = beta * C (beta == 0 writes zeros without reading C).
void scale_c(float* c, index_t ldc, index_t m, index_t n, float beta, cudaStream_t s);
/// C = alpha * (sum of g.workspace's `splits` M x N partials, in a fixed order) + beta * C.
/// pdl: launch it as a programmatic dependent of the kernel before it on s (that kernel
/// triggers it with griddepcontrol.launch_dependents; compute capability 9.0 and up).
void reduce_splits(const gemm_args& g, int splits, cudaStream_t s, bool pdl = false);
/// Bytes of the partials reduce_splits sums: `splits` M x N slabs of floats.
std::size_t partials_bytes(const gemm_problem& p, int splits);
void run_wgmma_f16_split_k(const gemm_args&, cudaStream_t);
/// The wgmma variants' workspace: operand copies (16-bit or tf32 rules), then for the split-K
/// forms the partials.
std::size_t wgmma_workspace_bytes(const gemm_problem&);
std::size_t wgmma_tf32_workspace_bytes(const gemm_problem&);
std::size_t wgmma_split_k_workspace_bytes(const gemm_problem&);
void run_wgmma_tf32_split_k(const gemm_args&, cudaStream_t);
std::size_t wgmma_tf32_split_k_workspace_bytes(const gemm_problem&);
/// Splits of K wgmma_tf32_split_k uses (>= 1; its tiles are 256 x 128).
int wgmma_tf32_split_count(const gemm_problem&);
/// tf32x3 (gemm_precision::tf32x3) on the wgmma_tf32 kernel: the operands split into TF32
/// heads and tails in the workspace, three products walked as one K (wgmma.cu).
void run_wgmma_tf32x3(const gemm_args&, cudaStream_t);
void run_wgmma_tf32x3_split_k(const gemm_args&, cudaStream_t);
std::size_t wgmma_tf32x3_workspace_bytes(const gemm_problem&);
std::size_t wgmma_tf32x3_split_k_workspace_bytes(const gemm_problem&);
int wgmma_tf32x3_split_count(const gemm_problem&);
bool wgmma_tf32x3_can_implement(const gemm_problem&);
/// Splits of K wgmma_f16_split_k uses (>= 1).
int wgmma_split_count(const gemm_problem&);
/// Whether the 16-bit wgmma kernels (plain and split) run 64 x 64 tiles: M of at most 64 rows,
/// the tiles at most one round of the multiprocessors, split in K at most 4 ways (wgmma.cu).
bool wgmma_short_tile(const gemm_problem&);
bool reg_tiled_vectorizable(const gemm_args&);
/// One tile shape of a variant that picks its tile by size (reg_tiled, the plain 16-bit
/// wgmma kernels), run as it is: gemm_bench times each and gemm_test runs each.
struct gemm_tile {
  const char* name;  // "BMxBNxBK" (reg_tiled), "BMxBN" (wgmma)
  void (*run)(const gemm_args&, cudaStream_t);
  std::size_t (*workspace_bytes)(const gemm_problem&);  // this tile's (the variant's is its pick's)
};
const std::vector<gemm_tile>& reg_tiled_shapes();
/// The shape run_reg_tiled uses for a problem: an index into reg_tiled_shapes().
int reg_tiled_shape_for(const gemm_problem&);
/// The tiles of wgmma_f16 (in = f16) or wgmma_bf16 (bf16): 128 x 256, 128 x 192, 128 x 128.
const std::vector<gemm_tile>& wgmma_tiles(gemm_input in);
/// The tile those variants use for a problem: an index into wgmma_tiles().
int wgmma_tile_for(const gemm_problem&);
/// The fixed cost of cutting the plain 16-bit kernel's last round of tiles in K, in ns (the
/// pieces' pipeline fill and partial stores, the reduction; measured on an H100): the cut is
/// made only where the round of whole tiles would take longer. Tests set 0 to cut small shapes.
extern long wgmma_tail_overhead_ns;
/// Where reg_tiled copies operands whose rows are not 16-byte aligned to an aligned pitch:
/// products of at least min_flops (2mnk) with K >= min_k (measured on an H100). Tests set both
/// to 0 to copy at any size.
struct reg_tiled_copy_rule {
  double min_flops = 2e9;
  index_t min_k = 512;
};
extern reg_tiled_copy_rule rt_copy_rule;
}  // namespace la::gemm_detail
