// wgmma_f16, wgmma_bf16, wgmma_tf32 (and the 16-bit split-K forms): half, bfloat16 or TF32
// inputs, float accumulation, on Hopper's warpgroup MMA (wgmma, sm_90a) fed by the tensor
// memory accelerator (TMA). The top rung of the ladder (issue 18).
//
//   tile      128 x 256 x 64 a block: A 128 x 64 and B 64 x 256 a stage, 48 KiB; 4 stages.
//             wgmma_f16 and wgmma_bf16 also run 128 x 192 (40 KiB stages, 4, m64n192k16)
//             and 128 x 128 tiles, picked by the busiest multiprocessor's work
//             (wgmma_tile_for): the narrower tiles fill the GPU where the wide ones leave it
//             idle or quantize badly (1024^3, 1536^3, 2304^3, 3072^3).
//             The split-K form uses 128 x 128 tiles (32 KiB stages, 6 of them, m64n128k16):
//             its partials are a tile of floats per unit, and half the tile halves them
//             (256 x 256 x 65536: 8 MB instead of 16 written and read again). tf32 (below)
//             uses 256 x 128 tiles, plain and split alike.
//             M of at most 64 rows (wgmma_short_tile: the 16-bit kernels, plain and split, where
//             64 x 64 tiles fill one round of the multiprocessors in at most 4 splits): 64 x 64
//             tiles (16 KiB stages, 12 of them, m64n64k16), both consumers on the whole tile,
//             each taking half of every k-block (2 of its 4 MMAs); the second leaves its sums
//             in its staging buffers and the first adds them (a fixed order) and stores. A
//             128-row tile there streams 64 or more rows of TMA's zeros and has half as many
//             tiles to fill the GPU with, so it splits K twice as often (64 x 8192 x 8192: 128
//             tiles unsplit, 54 us, against 64 tiles in 2 splits, 63 us; bench/history/tuning-notes-the-code-cites.md,
//             note T12).
//   roles     warpgroup 0 produces: one thread issues the stage's TMA loads (A as one 64 x 128
//             box, B as BN/64 boxes of 64 x 64, 128-byte swizzled) on the stage's "full" mbarrier.
//             Warpgroups 1 and 2 consume: each multiplies its 64 rows of A by all of B with
//             m64nBNk16 wgmma (4 a stage), then frees the stage on its "empty" mbarrier.
//             setmaxnreg gives the producer 40 registers and each consumer 232 (128 of them
//             the accumulators).
//   schedule  persistent: a block a multiprocessor walks the tiles, grouped by 8 tile-rows
//             (the blocks resident at one time share rows of A and columns of B in L2); the
//             producer runs ahead into the next tile while the consumers store this one.
//   tail      the plain 16-bit kernel: where the last round of whole tiles would leave at least
//             half the multiprocessors idle, its tiles are cut in K into pieces that fill the
//             round (plan_tail); each piece's raw partial goes to a slab of the workspace, and
//             reduce_tail sums each tile's slabs in order (deterministic) into C, as a
//             programmatic dependent. 5000^3: 800 tiles of 128 x 256 on 132 SMs are 6 rounds
//             and 8 tiles, cut into 16 pieces each (0.92x cuBLAS uncut, 0.98x cut).
//   clusters  16-bit split-K (K split): 2 blocks a cluster on neighbouring tiles in M, which read the same B.
//             Each loads its own A and half of B's boxes, multicast to both blocks' stages; a
//             stage is refilled once the consumers of both blocks have freed it (an "empty"
//             barrier counts 4 arrivals, 2 of them remote). Where M has one row of tiles the
//             launch is unclustered; with an odd number of rows the last cluster's second block
//             multiplies TMA's zeros past M and stores nothing. The plain kernels are
//             unclustered: the pairs' lockstep cost the 16-bit one 1-8% of its time (measured), and
//             the streaming split shapes gain 2-6% from the halved B traffic.
//   operands  A row-major (K-major for wgmma), B row-major (N-major: wgmma's transposed B).
//             Descriptors: A's SBO 1024 (8 rows of 128 bytes), a k-step +32 bytes; B's LBO
//             8192 (the next 64 columns: the next box), SBO 1024 (the next 8 rows of K), a
//             k-step +2048 bytes.
//   edges     TMA fills what lies beyond M, N and K with zeros; the epilogue stores only
//             rows < M and columns < N (float2 where ldc and C allow). TMA needs 16-byte
//             aligned rows: a lda or ldb that is not a multiple of 8 halves (or a misaligned
//             pointer) is first copied to an aligned pitch (128 bytes for B), in the
//             workspace (gemm(): the context's scratch, kept between calls) or, where the
//             caller gave none, a buffer allocated on the stream. 16-bit B whose rows are not
//             64-byte aligned is copied so too where M >= 2048 (see b_copy).
//   epilogue  16-bit into C (or the split-K workspace), N a multiple of 4 and C's rows
//             16-byte aligned: each consumer writes its accumulators (times alpha) in chunks
//             of 64 rows x 32 floats into a swizzled staging buffer (two a consumer,
//             alternating) and TMA stores them while the next chunk is written. With beta !=
//             0, TMA first loads the chunk of C into its buffer (the next chunk's load in
//             flight meanwhile; the producer prefetched the tile's C into L2 with its last
//             k-block) and the consumer adds beta times it. Otherwise C = alpha * acc + beta *
//             C from the registers; beta == 0 never reads C.
//   tf32      wgmma reads a TF32 operand from shared memory only K-major, and B is N-major,
//             so wgmma_tf32 computes C^T = B^T A^T with m64n256k8: wgmma's A is B^T, from
//             registers (each thread loads its fragment: 4 boxes of 32 floats of N by 32 rows
//             of K a stage), wgmma's B is A, K-major in shared memory (256 rows a stage). A
//             tile is 256 rows of C by 128 columns; each consumer holds 64 columns of C as the
//             rows of its accumulator and stores them transposed. The fragments of two stages
//             alternate between two register sets, so none is rewritten while a wgmma group
//             still reads it (ptxas would otherwise serialize the wgmmas). Both operands come
//             through tensor maps of type TFLOAT32, and TMA rounds them to TF32 (to nearest)
//             as they land: the rounding wmma_tf32 does, where wgmma on raw floats would
//             truncate the low 13 bits (twice the error). Gemm.Tf32RoundsToNearest pins it.
//   tf32x3    float accuracy from TF32 (wgmma_tf32x3, gemm_precision::tf32x3): each operand x
//             is split into a TF32 head (x rounded to nearest) and a tail (x - head, rounded to
//             TF32 by TMA as it lands), by tf32x3_split_kernel into the workspace: A as [head |
//             tail] rows, B as head rows over tail rows, each part's K rounded up to 32. The
//             wgmma_tf32 kernel then walks tail x head, head x tail and head x head as one K of
//             3 kp (x3_parts picks the k-blocks of each map). The tensor cores' float sums
//             truncate, so a consumer drains them every x3_drain_blocks k-blocks into float sums
//             of its own (rounded adds); the second set of 64 accumulators fits on 128-row tiles
//             (m64n128k8), not on the plain kernel's 256 rows. Measured on an H100: 1.65-1.81x
//             cuBLAS's float GEMM at 2048^3-8192^3, errors below its on 9 of 10 shapes
//             (bench/history/gemm-ladder-against-cublas.md, "tf32x3").
// Built for sm_90a only when the architecture list holds 90 (CMakeLists.txt); elsewhere the
// kernel is empty and can_implement says no, as it does on a device that is not 9.0.
#include <cuda.h>  // CUtensorMap and cuTensorMapEncodeTiled's types (the function comes from the runtime)
#include <cuda_bf16.h>

#include <atomic>
#include <optional>
#include <type_traits>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/operand_copy.hpp>
#include <la/kernels/gemm/detail/tma.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LA_WGMMA_DEVICE 1
#else
#define LA_WGMMA_DEVICE 0
#endif

namespace la::gemm_detail {
namespace {

constexpr int wg_bm = 128;  // the 16-bit inputs' tile height
constexpr int wg_consumers = 2, wg_threads = 128 * (1 + wg_consumers);
/// K a k-block: 128 bytes of it (the swizzle's width), 64 halves or 32 floats.
template <typename In>
constexpr int wg_k_of = 128 / static_cast<int>(sizeof(In));

constexpr int wg_split_bn = 128;  // the split-K forms' tile width
/// The 16-bit kernels' tile where M fits in 64 rows (R64, wgmma_short_tile): 64 x 64, so a
/// 128-row tile's empty half is not streamed through shared memory and twice as many tiles
/// fill the GPU before K is split (fewer partials, or none).
constexpr int wg_short_bm = 64, wg_short_bn = 64;
/// The most splits of K the 64-row tile takes: past them its tiles are few, the splits many
/// either way, and the 128-row tile's fewer re-reads of A are worth more (48 x 1024 x 65536:
/// 8 splits of 64-row tiles 61 us, 16 of 128-row tiles 59-60; bench/history/tuning-notes-the-code-cites.md, note T12).
constexpr int wg_short_splits = 4;
/// The plain 16-bit kernel's tile widths, widest first, and each one's time per column against
/// the widest's, in percent (measured; wgmma_tile_for).
constexpr int wg_plain_bn[3] = {256, 192, wg_split_bn}, wg_plain_cost[3] = {100, 102, 115};
constexpr int wg_plain_index(int bn) { return bn == 256 ? 0 : bn == 192 ? 1 : 2; }

/// A block's tile and stages. 16-bit inputs: 128 rows of C by BN columns, BN = 256 for the
/// plain kernel, 128 for split-K (whose partials, a tile of floats per unit, then halve while
/// each multiprocessor still has a unit). tf32: 256 rows by BN = 128 columns, computed as the
/// transposed product (C^T = B^T A^T, see the header).
/// X3 (tf32x3): 128 rows, so that a second set of accumulators fits beside wgmma's (see the
/// kernel's drain).
template <typename In, int BN, bool X3 = false, bool R64 = false>
struct wg_shape {
  static constexpr bool tf32 = std::is_same_v<In, float>;
  static_assert(!R64 || (!tf32 && BN == wg_short_bn), "the 64-row tile is the 16-bit kernels' (plain and split), 64 wide");
  static constexpr int bm = R64 ? wg_short_bm : tf32 && !X3 ? 256 : 128;
  static constexpr int a_bytes = bm * 128;  // bm rows of 128 bytes of K
  static constexpr int b_bytes = 128 * BN, stage_bytes = a_bytes + b_bytes;
  static constexpr int stages = 196608 / stage_bytes;  // 192 KiB of stages: 4 of 48 KiB, 6 of 32 KiB
  // The 16-bit epilogue's staging: per consumer two chunks of 64 rows x 32 floats (128-byte
  // rows, swizzled), each stored to C by TMA while the next is written.
  static constexpr int chunk_bytes = 64 * 128, staging_bytes = tf32 ? 0 : wg_consumers * 2 * chunk_bytes;
  // Stages, staging, the barriers (full and empty a stage, one a staging buffer for C's loads),
  // and 1 KiB to align the tiles to the swizzle's 1024-byte period.
  static constexpr int smem_bytes = stages * stage_bytes + staging_bytes + (2 * stages + 2 * wg_consumers) * 8 + 1024;
  // Accumulators a consumer thread: its 64 rows of the tile, or (R64) the whole 64-row tile,
  // the two consumers each taking half of every k-block.
  static constexpr int acc = R64 ? bm * BN / 128 : bm * BN / (128 * wg_consumers);
  // Blocks a cluster: the 16-bit split-K tiles pair up in M and share B's loads. The plain
  // 16-bit kernel is unclustered: paired, it took 1-8% longer at 2048^3-8192^3 (bench/history/gemm-ladder-against-cublas.md,
  // "Clusters off for the plain 16-bit kernel"). (tf32's tiles would share A, pairing in N; not built.)
  static constexpr int cluster = !tf32 && BN == wg_split_bn && !R64 ? 2 : 1;
};
[[maybe_unused]] constexpr int wg_group = 8;  // tile-rows a group of the schedule

struct wg_params {
  index_t m, n, k;
  float* c;
  index_t ldc;
  float alpha, beta;
  int tiles_m, tiles_n;
  bool pairs;  // float2 stores into C (or the workspace)
  int cluster;     // blocks a cluster: 1, or the kernel's CL
  bool tma_store;  // 16-bit: the epilogue stores through tc (launch_wgmma says when)
  bool load_c;     // with tma_store into C, beta != 0: C's chunks come in through tc too
  bool prefetch_c; // beta != 0, C in tc: the producer prefetches each tile's C into L2
  int splits, split_blocks;  // K cut into `splits` ranges of split_blocks k-blocks
  float* work;               // splits > 1: partial z of the product goes to work[z][M][N]
  // The tail (16-bit plain kernel, splits == 1): the last tail_tiles tiles of the schedule,
  // which would leave most multiprocessors idle in a last round of whole tiles, are each cut
  // into tail_splits ranges of tail_blocks k-blocks. Their raw partials go through tw to a
  // slab of bm x BN floats each (tail tile t, range z: slab t * tail_splits + z), which
  // reduce_tail sums into C. 0: none.
  int tail_tiles, tail_splits, tail_blocks;
  // tf32x3: the k-blocks of each part; A's tensor map holds [head | tail] of A (2 x x3_blocks
  // k-blocks a row), B's the head rows over the tail rows, and k-block kb of the 3 x3_blocks
  // the kernel walks reads the tail x head, the head x tail, then the head x head product's
  // (x3_parts). 0: a plain product.
  int x3_blocks;
};

/// tf32x3: the k-blocks of A's and of B's maps that k-block kb of the product reads (the
/// parts' order: the small products first, into the accumulator the large one then joins).
__host__ __device__ inline int2 x3_parts(int kb, int x3_blocks) {
  const int part = kb / x3_blocks, at = kb - part * x3_blocks;
  return make_int2(at + (part == 0 ? x3_blocks : 0), at + (part == 1 ? x3_blocks : 0));
}

/// What one unit of the persistent schedule computes: a tile, k-blocks [kb0, kb1) of it, and
/// for a split the index of its partial (the split z, or a tail unit's slab).
struct wg_unit {
  int2 tile;
  int kb0, kb1, z, slab;
  bool tail;
};

template <typename In>
struct wgmma_op;

#if LA_WGMMA_DEVICE
using tma::cluster_rank;
using tma::cluster_sync;
using tma::mbar_arrive;
using tma::mbar_arrive_cluster;
using tma::mbar_expect_tx;
using tma::mbar_init;
using tma::mbar_wait;
using tma::smem_addr;
/// A shared-memory matrix descriptor, 128-byte swizzle.
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(lbo >> 4) << 16) |
         (static_cast<std::uint64_t>(sbo >> 4) << 32) | (1ull << 62);
}
template <int N>
__device__ __forceinline__ void keep(float (&d)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) asm volatile("" : "+f"(d[j])::"memory");
}

// The accumulator operands of a wgmma, 64 at a time: the register list of the instruction's
// text (%0-%63, %64-%127) and the matching read-write constraints on d[o .. o+63].
#define LA_WG_REGS_32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define LA_WG_REGS_0 \
  LA_WG_REGS_32 ", " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define LA_WG_REGS_64_95 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define LA_WG_REGS_64 \
  LA_WG_REGS_64_95 ", " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define LA_WG_D8(o) \
  "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define LA_WG_D32(o) LA_WG_D8(o), LA_WG_D8(o + 8), LA_WG_D8(o + 16), LA_WG_D8(o + 24)
#define LA_WG_D64(o) LA_WG_D32(o), LA_WG_D32(o + 32)
// SHAPE: the instruction's shape and types; TRANSPOSE: its transpose immediates (16-bit
// inputs: A K-major, B N-major) or nothing (tf32, which has none).
#define LA_WGMMA_N256(SHAPE, TRANSPOSE)                                                                            \
  __device__ __forceinline__ static void mma(float(&d)[128], std::uint64_t da, std::uint64_t db, int accumulate) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                   \
                 "wgmma.mma_async.sync.aligned." SHAPE " {" LA_WG_REGS_0 ", " LA_WG_REGS_64                       \
                 "}, %128, %129, p, 1, 1" TRANSPOSE ";\n}\n"                                                        \
                 : LA_WG_D64(0), LA_WG_D64(64)                                                                     \
                 : "l"(da), "l"(db), "r"(accumulate));                                                             \
  }
// A 16-bit m64nNk16 (N as text) with NACC accumulators a thread: REGS, their register list;
// DESC and PRED, the operand numbers of the two descriptors and of the accumulate flag; OUT,
// the accumulators' constraints.
#define LA_WGMMA_M64K16(TYPE, N, NACC, REGS, DESC, PRED, OUT)                                                     \
  __device__ __forceinline__ static void mma(float(&d)[NACC], std::uint64_t da, std::uint64_t db, int accumulate) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n"                                                \
                 "wgmma.mma_async.sync.aligned.m64n" N "k16.f32." TYPE "." TYPE " {" REGS "}, " DESC               \
                 ", p, 1, 1, 0, 1;\n}\n"                                                                          \
                 : OUT                                                                                             \
                 : "l"(da), "l"(db), "r"(accumulate));                                                             \
  }
#define LA_WG_D96 LA_WG_D64(0), LA_WG_D32(64)
// The 128 x 192 tile's m64n192k16, the split-K tile's m64n128k16 and the 64-row tile's m64n64k16.
#define LA_WGMMA_NARROW(TYPE)                                                                              \
  LA_WGMMA_M64K16(TYPE, "192", 96, LA_WG_REGS_0 ", " LA_WG_REGS_64_95, "%96, %97", "%98", LA_WG_D96)      \
  LA_WGMMA_M64K16(TYPE, "128", 64, LA_WG_REGS_0, "%64, %65", "%66", LA_WG_D64(0))                         \
  LA_WGMMA_M64K16(TYPE, "64", 32, LA_WG_REGS_32, "%32, %33", "%34", LA_WG_D32(0))
template <>
struct wgmma_op<__half> {
  LA_WGMMA_N256("m64n256k16.f32.f16.f16", ", 0, 1")
  LA_WGMMA_NARROW("f16")
};
template <>
struct wgmma_op<__nv_bfloat16> {
  LA_WGMMA_N256("m64n256k16.f32.bf16.bf16", ", 0, 1")
  LA_WGMMA_NARROW("bf16")
};
#undef LA_WGMMA_NARROW
#undef LA_WGMMA_M64K16
#undef LA_WG_D96
// TF32 reads its shared-memory operand K-major only (no transpose immediates), so the kernel
// computes C^T = B^T A^T: wgmma's A is B^T from registers (any layout: loaded by the threads),
// its B is A, K-major in shared memory.
template <>
struct wgmma_op<float> {
  __device__ __forceinline__ static void mma(float (&d)[128], const std::uint32_t (&a)[4], std::uint64_t db,
                                             int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" LA_WG_REGS_0 ", " LA_WG_REGS_64
                 "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : LA_WG_D64(0), LA_WG_D64(64)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
  }
  // tf32x3's 128-row tile.
  __device__ __forceinline__ static void mma(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t db,
                                             int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" LA_WG_REGS_0
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : LA_WG_D64(0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
  }
};
#undef LA_WGMMA_N256
#undef LA_WG_D64
#undef LA_WG_D32
#undef LA_WG_D8
#undef LA_WG_REGS_64
#undef LA_WG_REGS_64_95
#undef LA_WG_REGS_32
#undef LA_WG_REGS_0
#endif

/// tf32x3's drain: every this many k-blocks (256 of K) a consumer adds wgmma's accumulators
/// into its own and restarts them. The tensor cores' float accumulation truncates (rounds
/// toward zero), so over a long K its error leans one way and grows with K, to TF32's own
/// error (K = 65536, inputs in [0,1]: 4.5e-4 of sum |a b|, measured); summed by rounding float
/// adds every 256 of K, it stays near the float GEMM's.
constexpr int x3_drain_blocks = 8;

/// CL: the most blocks a cluster (1 or 2), on tiles that are neighbours in M and share their B:
/// each block loads its own A and its share of B, multicast to the cluster. p.cluster: this
/// launch's (1 where M has a single row of tiles, whose neighbour would be empty). X3: tf32x3
/// (In float), on 128-row tiles with the drained accumulators.
template <typename In, int BN, int CL, bool X3 = false, bool R64 = false>
__global__ void __launch_bounds__(wg_threads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                 const __grid_constant__ CUtensorMap tc, const __grid_constant__ CUtensorMap tw, const wg_params p) {
#if LA_WGMMA_DEVICE
  using S = wg_shape<In, BN, X3, R64>;
  constexpr bool tf32 = S::tf32;
  constexpr int stages = S::stages, BK = wg_k_of<In>;
  extern __shared__ unsigned char wg_raw[];
  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(wg_raw) + 1023) & ~std::uintptr_t(1023));
  unsigned char* sa = base;                          // stages x bm rows x 128 bytes of K
  unsigned char* sb = base + stages * S::a_bytes;    // stages x boxes of 128-byte rows (see the producer)
  unsigned char* staging = base + stages * S::stage_bytes;
  auto* full = reinterpret_cast<std::uint64_t*>(staging + S::staging_bytes);
  std::uint64_t* empty = full + stages;
  std::uint64_t* c_full = empty + stages;  // consumer c's staging buffer b: c_full[2 c + b]
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int cl = CL > 1 ? p.cluster : 1;
  // A stage is refilled once every consumer of the cluster has freed it: the multicast writes
  // into every block's copy.
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], wg_consumers * cl);
    for (int b = 0; b < 2 * wg_consumers; ++b) mbar_init(&c_full[b], 1);
    tma::mbar_init_fence();
  }
  if (cl > 1) cluster_sync();  // no block's loads reach a barrier not yet initialized
  else __syncthreads();
  const int rank = cl > 1 ? cluster_rank() : 0, cluster = blockIdx.x / cl, clusters = gridDim.x / cl;
  // A unit is cl tiles (rows of tiles cl x + rank) and a range of K: [z * split_blocks, ...)
  // k-blocks. The blocks of a cluster walk the same units. The tail's units follow the
  // others: tail_splits ranges of each of the last tail_tiles tiles.
  const int cl_rows = (p.tiles_m + cl - 1) / cl;
  const int whole = (cl_rows * p.tiles_n - p.tail_tiles) * p.splits;  // units before the tail
  const int units = whole + p.tail_tiles * p.tail_splits;
  const int kblocks = static_cast<int>((p.k + BK - 1) / BK);
  auto unit_of = [&](int u) {
    wg_unit w;
    w.tail = u >= whole;
    const int v = w.tail ? u - whole : u, sp = w.tail ? p.tail_splits : p.splits;
    const int per = w.tail ? p.tail_blocks : p.split_blocks;
    const int t = (w.tail ? whole : 0) + v / sp;  // the tail follows the whole tiles (splits == 1 there)
    w.z = v % sp, w.slab = v;
    w.kb0 = w.z * per, w.kb1 = min(kblocks, w.kb0 + per);
    w.tile = cl > 1 ? grouped_tile<wg_group / 2>(t, cl_rows, p.tiles_n) : grouped_tile<wg_group>(t, cl_rows, p.tiles_n);
    w.tile.x = w.tile.x * cl + rank;  // beyond M when tiles_m is odd: TMA reads zeros, nothing is stored
    return w;
  };
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      int s = 0, phase = 0;
      for (int u = cluster; u < units; u += clusters) {
        const wg_unit w = unit_of(u);
        const int2 tile = w.tile;
        for (int kb = w.kb0; kb < w.kb1; ++kb) {
          mbar_wait(&empty[s], phase ^ 1);
          mbar_expect_tx(&full[s], S::stage_bytes);
          int a_kb = kb, b_kb = kb;
          if constexpr (tf32)
            if (p.x3_blocks) {
              const int2 at = x3_parts(kb, p.x3_blocks);
              a_kb = at.x, b_kb = at.y;
            }
          tma::load(sa + s * S::a_bytes, &ta, &full[s], a_kb * BK, tile.x * S::bm);
          // B: BN columns in boxes of 128 bytes of N (64 halves, or 32 floats) by BK rows of K.
          constexpr int box_n = 128 / sizeof(In), box_bytes = BK * 128;
#pragma unroll
          for (int j = 0; j < BN / box_n; ++j) {
            unsigned char* dst = sb + s * S::b_bytes + j * box_bytes;
            if (cl == 1)
              tma::load(dst, &tb, &full[s], tile.y * BN + box_n * j, b_kb * BK);
            else if (j % cl == rank)
              tma::load_multicast(dst, &tb, &full[s], tile.y * BN + box_n * j, b_kb * BK, (1u << cl) - 1);
          }
          // The tile's C, into L2 with its last k-block's loads (stages ahead of the consumers):
          // the epilogue's loads of it then wait for L2, not DRAM.
          if (p.prefetch_c && !w.tail && kb + 1 == w.kb1)
            for (int r = 0; r < S::bm; r += 64)
              for (int ch = 0; ch < BN / 32; ++ch) tma::prefetch3(&tc, tile.y * BN + 32 * ch, tile.x * S::bm + r, 0);
          if (++s == stages) s = 0, phase ^= 1;
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int c = wg - 1, warp = tid / 32, lane = tid % 32;
    float d[S::acc];
    [[maybe_unused]] float sum[X3 ? S::acc : 1];  // tf32x3: the drained accumulators
    int s = 0, phase = 0;
    std::uint32_t c_phase = 0;  // load_c: the parity each of this consumer's two C barriers completes next
    // tf32: where this thread's B^T fragment lies in a stage's B (4 boxes of 32 floats of N by
    // 32 rows of K, 128-byte swizzled: the 16-byte chunk q of row k sits at q ^ (k % 8)).
    // Fragment register i holds (n = 64c + 16 warp + lane/4 + 8 (i % 2), k = 8 kk + lane%4 + 4 (i / 2))
    // of the k-step kk, which adds 8 rows (1024 bytes).
    [[maybe_unused]] std::uint32_t frag_off[4];
    if constexpr (tf32) {
      const int g = lane / 4, t = lane % 4, q = 4 * (warp % 2) + g / 4;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int k = t + 4 * (i / 2);
        frag_off[i] = (2 * c + warp / 2) * 4096 + k * 128 + (((q + 2 * (i % 2)) ^ k) * 16) + (g % 4) * 4;
      }
    }
    // The stage's consumer here is done with it: one arrival on every block's "empty" barrier.
    auto free_stage = [&](int st) {
      if (tid == 0)
#pragma unroll
        for (int r = 0; r < CL; ++r) {
          if (r >= cl) break;
          if (r == rank) mbar_arrive(&empty[st]);
          else mbar_arrive_cluster(&empty[st], r);
        }
    };
    for (int u = cluster; u < units; u += clusters) {
      const wg_unit w = unit_of(u);
      const int2 tile = w.tile;
      const int kb0 = w.kb0, kb1 = w.kb1;
      // One k-block's wgmmas stay in flight while the next is issued; a stage is freed once
      // the group that read it has completed.
      int prev = -1;
      auto release_prev = [&] {
        if (prev >= 0) free_stage(prev);
        prev = s;
        if (++s == stages) s = 0, phase ^= 1;
      };
      if constexpr (tf32) {
        if constexpr (X3)
#pragma unroll
          for (int j = 0; j < S::acc; ++j) sum[j] = 0.0f;
        // The B^T fragments of a k-block, two sets: the registers a wgmma group reads stay
        // untouched until the group completes (kept live up to the wait that follows it).
        std::uint32_t f0[4][4] = {}, f1[4][4] = {};
        auto step = [&](std::uint32_t (&f)[4][4], std::uint32_t (&done)[4][4], int kb) {
          mbar_wait(&full[s], phase);
          const std::uint32_t a0 = smem_addr(sa + s * S::a_bytes), b0 = smem_addr(sb + s * S::b_bytes);
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int i = 0; i < 4; ++i)
              asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(f[kk][i]) : "r"(b0 + kk * 1024 + frag_off[i]) : "memory");
          asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
          // tf32x3 restarts wgmma's accumulators after each drain.
          const bool fresh = X3 ? (kb - kb0) % x3_drain_blocks == 0 : kb == kb0;
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)  // 4 MMAs of 8 of K; A as wgmma's B: bm rows, K-major
            wgmma_op<float>::mma(d, f[kk], smem_desc(a0 + 32 * kk, 16, 1024), !fresh || kk > 0);
          asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
          if (X3 && ((kb - kb0) % x3_drain_blocks == x3_drain_blocks - 1 || kb + 1 == kb1)) {
            // The drain: this group done, its sums added (rounded to nearest) into sum.
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            keep(d);
            if constexpr (X3)
#pragma unroll
              for (int j = 0; j < S::acc; ++j) sum[j] += d[j];
          } else
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(done[kk][i])::"memory");
          release_prev();
        };
        // Two steps a trip, unconditionally, so that no path rewrites a set still being read.
        int kb = kb0;
        for (; kb + 1 < kb1; kb += 2) step(f0, f1, kb), step(f1, f0, kb + 1);
        if (kb < kb1) step(f0, f1, kb);
        if constexpr (X3)  // the epilogue stores d (the last k-block drained every group)
#pragma unroll
          for (int j = 0; j < S::acc; ++j) d[j] = sum[j];
      } else {
        for (int kb = kb0; kb < kb1; ++kb) {
          mbar_wait(&full[s], phase);
          const std::uint32_t a0 = smem_addr(sa + s * S::a_bytes + (R64 ? 0 : c * 64 * 128));
          const std::uint32_t b0 = smem_addr(sb + s * S::b_bytes);
          asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
          // 4 MMAs of 32 bytes of K; B: the next 16 rows of K 2048 bytes on. R64: consumer c
          // takes the k-block's half c (2 of them) over the whole 64-row tile.
#pragma unroll
          for (int i = 0; i < (R64 ? 2 : 4); ++i) {
            const int kk = R64 ? 2 * c + i : i;
            wgmma_op<In>::mma(d, smem_desc(a0 + 32 * kk, 16, 1024), smem_desc(b0 + 2048 * kk, 8192, 1024),
                              kb > kb0 || i > 0);
          }
          asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
          release_prev();
        }
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      keep(d);
      // Split-K or a tail: this block's last unit is multiplied, so the reduction may be
      // scheduled (it waits for the whole grid to finish before reading; reduce_splits' and
      // reduce_tail's pdl).
      if ((p.work || p.tail_tiles) && u + clusters >= units) asm volatile("griddepcontrol.launch_dependents;\n");
      if (prev >= 0) free_stage(prev);
      if constexpr (R64) {
        // The two halves of K summed: consumer 1 leaves its accumulators in its (unused)
        // staging buffers, consumer 0 adds them (the same order every run) and stores the tile.
        // The second barrier keeps consumer 1 from overwriting them before they are read. Named
        // barriers 3 and 4 of both consumers' 256 threads (1 and 2: each one's epilogue).
        float* const x = reinterpret_cast<float*>(staging + 2 * S::chunk_bytes);
        static_assert(S::acc * 128 * sizeof(float) <= 2 * S::chunk_bytes, "R64: consumer 1's sums fit its staging");
        if (c == 1)
#pragma unroll
          for (int j = 0; j < S::acc; ++j) x[j * 128 + tid] = d[j];
        asm volatile("bar.sync 3, 256;\n" ::: "memory");
        if (c == 0)
#pragma unroll
          for (int j = 0; j < S::acc; ++j) d[j] += x[j * 128 + tid];
        asm volatile("bar.sync 4, 256;\n" ::: "memory");
        if (c == 1) continue;
      }
      // Thread (warp w, lane l) holds accumulator rows 16w + l/4 (+8) and columns 8q + 2(l%4) (+1).
      // Into C (alpha, beta), or a split's raw partial into its M x N slab of the workspace,
      // reduced in order by reduce_splits (alpha 1, beta 0 there), or a tail unit's raw
      // partial into its slab (through tw, whatever C's layout), reduced by reduce_tail.
      if constexpr (!tf32) {
        if (p.tma_store || w.tail) {
          // Chunks of 64 rows x 32 columns through the staging (two a consumer, alternating):
          // wait until TMA has read the chunk stored from this buffer two chunks ago, write
          // this one (alpha applied; the 16-byte column group q of row r at q ^ (r % 8)), then
          // one thread has TMA store it while the warpgroup writes the next.
          const int row = tile.x * S::bm + c * 64;
          if (row >= p.m) continue;  // a cluster's tile beyond M
          const float alpha = p.work || w.tail ? 1.0f : p.alpha;
          const int r0 = warp * 16 + lane / 4;
          // beta != 0 (load_c): chunk ch of C comes into its buffer by TMA first (the next
          // chunk's load issued as this one is combined), and alpha * acc + beta * C replaces it.
          const bool lc = p.load_c && !w.tail;
          const int chunks = min(BN / 32, static_cast<int>((p.n - tile.y * BN + 31) / 32));
          auto load_chunk = [&](int ch) {
            std::uint64_t* bar = &c_full[2 * c + ch % 2];
            mbar_expect_tx(bar, S::chunk_bytes);
            tma::load3(staging + (2 * c + ch % 2) * S::chunk_bytes, &tc, bar, tile.y * BN + 32 * ch, row, 0);
          };
          if (lc && tid == 0) {
            asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // both buffers read by their stores
            load_chunk(0);
          }
#pragma unroll
          for (int ch = 0; ch < BN / 32; ++ch) {
            if (ch >= chunks) break;
            unsigned char* buf = staging + (2 * c + ch % 2) * S::chunk_bytes;
            if (lc) {
              if (tid == 0 && ch + 1 < chunks) {
                asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // chunk ch - 1's store
                load_chunk(ch + 1);
              }
              mbar_wait(&c_full[2 * c + ch % 2], (c_phase >> (ch % 2)) & 1);
              c_phase ^= 1u << (ch % 2);
            } else {
              if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
              asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
            }
#pragma unroll
            for (int jj = 0; jj < 16; jj += 2) {
              const int j = 16 * ch + jj, r = r0 + 8 * ((jj / 2) % 2), q = 2 * (jj / 4) + (lane % 4) / 2;
              float2* at = reinterpret_cast<float2*>(buf + r * 128 + ((q ^ (r % 8)) * 16) + (lane % 2) * 8);
              float2 v = make_float2(alpha * d[j], alpha * d[j + 1]);
              if (lc) {
                const float2 old = *at;
                v.x += p.beta * old.x, v.y += p.beta * old.y;
              }
              *at = v;
            }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
            if (tid == 0) {
              asm volatile(
                  "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                      reinterpret_cast<std::uint64_t>(w.tail ? &tw : &tc)),
                  "r"(smem_addr(buf)), "r"(w.tail ? 32 * ch : tile.y * BN + 32 * ch), "r"(w.tail ? c * 64 : row),
                  "r"(w.tail ? w.slab : p.work ? w.z : 0)
                  : "memory");
              asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
          }
          continue;
        }
      }
      float* const out = p.work ? p.work + static_cast<long>(w.z) * p.m * p.n : p.c;
      const long ld = p.work ? p.n : p.ldc;
      const float alpha = p.work ? 1.0f : p.alpha, beta = p.work ? 0.0f : p.beta;
      if (tf32 && beta != 0.0f) {
        // Element j of the accumulator lies at (r, col) of C (the layout below). C is read in
        // groups of G elements, every load of a group issued before its stores: element by
        // element, each read of C waited for the write before it, which the compiler must
        // assume may alias (tf32 at 4096^3 took 0.58 ms with beta != 0 against 0.35 without).
        // (The 16-bit kernels come here only where C cannot go through TMA; grouped there,
        // their 128-accumulator tiles spilled.)
        const long row0 = static_cast<long>(tile.x) * S::bm + 2 * (lane % 4);
        const long col0 = static_cast<long>(tile.y) * BN + c * 64 + warp * 16 + lane / 4;
        constexpr int G = 16;
        auto at = [&](int j) -> float* {
          const long r = row0 + j % 2 + 8 * (j / 4), col = col0 + 8 * ((j / 2) % 2);
          return r < p.m && col < p.n ? out + r * ld + col : nullptr;
        };
#pragma unroll
        for (int j0 = 0; j0 < S::acc; j0 += G) {
          float old[G];
#pragma unroll
          for (int i = 0; i < G; ++i) {
            const float* q = at(j0 + i);
            old[i] = q ? *q : 0.0f;
          }
#pragma unroll
          for (int i = 0; i < G; ++i)
            if (float* q = at(j0 + i)) *q = alpha * d[j0 + i] + beta * old[i];
        }
        continue;
      }
      if constexpr (tf32) {
        // The accumulator is a 64 x 256 block of C^T: its rows are columns of C. A warp's store
        // writes 8 consecutive floats in each of 4 rows: whole 32-byte sectors.
        const long col0 = static_cast<long>(tile.y) * BN + c * 64 + warp * 16 + lane / 4;
        const long row0 = static_cast<long>(tile.x) * S::bm + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < S::acc; ++j) {
          const long r = row0 + j % 2 + 8 * (j / 4), col = col0 + 8 * ((j / 2) % 2);
          if (r < p.m && col < p.n)
            store_c(out, static_cast<index_t>(ld), static_cast<index_t>(r), static_cast<index_t>(col), d[j], alpha, beta);
        }
      } else {
        const long row0 = static_cast<long>(tile.x) * S::bm + c * 64 + warp * 16 + lane / 4;
        const long col0 = static_cast<long>(tile.y) * BN + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < S::acc; j += 2) {
          const long r = row0 + 8 * ((j / 2) % 2), col = col0 + 8 * (j / 4);
          if (r >= p.m || col >= p.n) continue;
          if (p.pairs && col + 1 < p.n) {
            float2* at = reinterpret_cast<float2*>(out + r * ld + col);
            float2 v = make_float2(alpha * d[j], alpha * d[j + 1]);
            if (beta != 0.0f) {
              const float2 old = *at;
              v.x += beta * old.x, v.y += beta * old.y;
            }
            *at = v;
          } else {
            store_c(out, static_cast<index_t>(ld), static_cast<index_t>(r), static_cast<index_t>(col), d[j], alpha, beta);
            if (col + 1 < p.n)
              store_c(out, static_cast<index_t>(ld), static_cast<index_t>(r), static_cast<index_t>(col + 1), d[j + 1],
                      alpha, beta);
          }
        }
      }
    }
  }
  // The staging is read by TMA until the last stores complete.
  if (!tf32 && (p.tma_store || p.tail_tiles) && wg > 0 && tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  // No block leaves while another may still write into its stages or arrive on its barriers.
  if (cl > 1) cluster_sync();
#endif
}

// ---- the host side -------------------------------------------------------------------------

/// cuTensorMapEncodeTiled's result for `what`: an error that names it.
void check_encode(CUresult r, const char* what, index_t rows, index_t cols, index_t ld) {
  tma::check_encode(r, "wgmma GEMM", what, rows, cols, ld);
}
using tma::encoder;

/// The tensor map of a row-major rows x cols matrix of In with pitch ld, read in boxes of
/// box_rows x 128 bytes (the swizzle's width). TMA promotes a box's reads in L2 to 256-byte
/// pieces where the rows are 128-byte aligned, and not at all where they are not: a row of a
/// box then straddles two lines, and the 256-byte promotion cost 10% at 3000^3 (fp16; no
/// change at 3008^3; bench/history/gemm-ladder-against-cublas.md, "Operands whose rows straddle 128-byte lines").
template <typename In>
CUtensorMap tensor_map(const void* p, index_t rows, index_t cols, index_t ld, int box_rows) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(In)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(wg_k_of<In>), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  // Floats are read as TFLOAT32: TMA rounds them to TF32 (to nearest) as they land.
  const CUtensorMapDataType type = std::is_same_v<In, __half>  ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : std::is_same_v<In, float> ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                                               : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUtensorMapL2promotion promote =
      rows_aligned(p, ld, sizeof(In), 128) ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  check_encode(encoder()(&m, type, 2, const_cast<void*>(p), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, promote, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
               "an operand", rows, cols, ld);
  return m;
}

/// The tensor map of `layers` row-major rows x cols float matrices, one after another, that
/// the epilogue stores in boxes of 64 rows x 32 floats (128 bytes, swizzled).
CUtensorMap store_map(float* p, index_t rows, index_t cols, index_t ld, int layers) {
  CUtensorMap m;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(layers)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * sizeof(float),
                                 static_cast<cuuint64_t>(ld) * rows * sizeof(float)};
  const cuuint32_t box[3] = {32, 64, 1}, unit[3] = {1, 1, 1};
  check_encode(encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, p, dims, strides, box, unit,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
               "the output", rows, cols, ld);
  return m;
}

/// Whether launch_wgmma copies an operand first, and to rows of what pitch (a null address
/// stands for an aligned one: workspace_bytes knows only the leading dimensions). TMA needs 16-byte
/// aligned rows: A without them is copied to a 16-byte pitch, B to a 128-byte one. 16-bit B
/// whose rows are not 64-byte aligned is copied to 128 bytes too where M >= 2048: TMA's
/// 128-byte box rows then straddle two lines, which cost the kernel 20-50% (fp16 near 3000^3),
/// more than the copy (K x N read and written once) where M >= 2048 (bench/history/gemm-ladder-against-cublas.md, "Rows of
/// B that straddle 128-byte lines"). That copy only speeds the product up (`needed` false).
struct operand_copy {
  int align = 0;  // the copy's pitch is a multiple of this many bytes; 0: no copy
  bool needed = false;
};
operand_copy a_copy(const void* a, index_t lda, int e) { return aligned16(a, lda, e) ? operand_copy{} : operand_copy{16, true}; }
template <typename In>
operand_copy b_copy(const void* b, index_t ldb, index_t m) {
  constexpr int e = sizeof(In);
  if (!aligned16(b, ldb, e)) return {128, true};
  if (!std::is_same_v<In, float> && !rows_aligned(b, ldb, e, 64) && m >= 2048) return {128, false};
  return {};
}
/// The launch of `blocks` wgmma blocks of `bytes` shared memory each on s, in clusters of cl
/// (1: no cluster attribute). attr must outlive the returned configuration.
cudaLaunchConfig_t wg_launch_config(unsigned blocks, int bytes, int cl, cudaStream_t s, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(wg_threads);
  cfg.dynamicSmemBytes = bytes;
  cfg.stream = s;
  attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cl, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cfg.attrs = &attr, cfg.numAttrs = cl > 1 ? 1 : 0;
  return cfg;
}

/// Clusters of CL blocks of Kernel (Bytes of shared memory each) resident at once: the
/// persistent grid's limit. Asked once per device.
template <auto Kernel, int CL, int Bytes>
int resident_clusters() {
  static std::atomic<int> known[64] = {};  // 0: not asked yet
  int dev = 0;
  LA_CUDA_TRY(cudaGetDevice(&dev));
  if (dev < 64 && known[dev] > 0) return known[dev];
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = wg_launch_config(CL, Bytes, CL, nullptr, attr);
  int n = 0;
  LA_CUDA_TRY(cudaOccupancyMaxActiveClusters(&n, Kernel, &cfg));
  if (n < 1)
    throw device_error("wgmma GEMM: no cluster of " + std::to_string(CL) + " blocks with " + std::to_string(Bytes / 1024) +
                       " KiB of shared memory each fits on this device (a MIG slice or MPS limit?)");
  if (dev < 64) known[dev] = n;
  return n;
}

}  // namespace

long wgmma_tail_overhead_ns = 18000;  // fitted on 9 shapes: bench/history/tuning-notes-the-code-cites.md, note T11

namespace {
/// A tail unit's least k-blocks: below it the pipeline's fill and the partial's store weigh
/// more than the work.
constexpr int wg_tail_min_blocks = 4;

/// A whole tile of width wg_plain_bn[i] on one multiprocessor, in ns: 0.043 ns per column and
/// element of K at the widest tile's rate, times the width's cost, and 3 us of pipeline fill
/// and epilogue (fitted on an H100, bench/history/tuning-notes-the-code-cites.md, note T11).
long tile_ns(int i, index_t k) { return 43L * wg_plain_bn[i] * wg_plain_cost[i] / 100 * k / 1000 + 3000; }

/// The tail of a plain 16-bit product on 128 x wg_plain_bn[i] tiles (wg_params): where the
/// tiles take more than one round of the multiprocessors and the last round would leave at
/// least half of them idle, its tiles are cut in K so that the round is full, if that is
/// predicted faster than the round of whole tiles: a cut tile's share plus the tail's fixed
/// cost (wgmma_tail_overhead_ns). tiles 0: none.
struct wg_tail {
  int tiles = 0, splits = 0, blocks = 0;
  std::size_t bytes(int bn) const { return static_cast<std::size_t>(tiles) * splits * wg_bm * bn * sizeof(float); }
};
wg_tail plan_tail(const gemm_problem& p, int i) {
  const long tiles = static_cast<long>(ceil_div(p.m, wg_bm)) * ceil_div(p.n, wg_plain_bn[i]), g = std::max(p.sm_count, 1);
  const long last = tiles % g;
  const int kblocks = ceil_div(p.k, 64);
  if (tiles <= g || last == 0) return {};
  const int most = static_cast<int>(std::min<long>(g / last, kblocks / wg_tail_min_blocks));
  if (most < 2) return {};
  const int blocks = ceil_div(kblocks, most), splits = ceil_div(kblocks, blocks);
  const long whole = tile_ns(i, p.k);
  if (whole / splits + wgmma_tail_overhead_ns >= whole) return {};
  return {static_cast<int>(last), splits, blocks};
}

/// The plain kernel's predicted time on 128 x wg_plain_bn[i] tiles, in ns: its busiest
/// multiprocessor's whole tiles, then the last round's whole tile or share of the tail.
long plain_ns(const gemm_problem& p, int i) {
  const long tiles = static_cast<long>(ceil_div(p.m, wg_bm)) * ceil_div(p.n, wg_plain_bn[i]), g = std::max(p.sm_count, 1);
  const long whole = tile_ns(i, p.k);
  const wg_tail t = plan_tail(p, i);
  return tiles / g * whole + (tiles % g == 0 ? 0 : t.tiles ? whole / t.splits + wgmma_tail_overhead_ns : whole);
}

/// C = alpha * (a tail tile's `splits` partial slabs summed in order) + beta * C for the tail's
/// tiles, the schedule's tiles first, first + 1, ... (one a grid row): 256 threads a 1024
/// floats of a bm x bn slab, four consecutive columns a thread.
__global__ void __launch_bounds__(256) reduce_tail_kernel(const float* work, float* c, index_t ldc, index_t m, index_t n,
                                                          float alpha, float beta, int first, int splits, int tiles_m,
                                                          int tiles_n, int bm, int bn) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
  const int t = blockIdx.y, e = (blockIdx.x * 256 + threadIdx.x) * 4;
  const int2 tile = grouped_tile<wg_group>(first + t, tiles_m, tiles_n);
  const long slab = static_cast<long>(bm) * bn;
  const float* w = work + static_cast<long>(t) * splits * slab + e;
  float4 sum = *reinterpret_cast<const float4*>(w);
#pragma unroll 4
  for (int z = 1; z < splits; ++z) {
    const float4 v = *reinterpret_cast<const float4*>(w + z * slab);
    sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
  }
  const index_t r = tile.x * bm + e / bn, col = tile.y * bn + e % bn;
  if (r >= m) return;
  const float v[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (col + i < n) store_c(c, ldc, r, col + i, v[i], alpha, beta);
}

/// Sums the tail's partials into C, as a programmatic dependent of the GEMM kernel before it.
void reduce_tail(const gemm_args& g, const float* work, const wg_tail& t, int tiles_m, int tiles_n, int bm, int bn,
                 cudaStream_t s) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg =
      dependent_launch(dim3(static_cast<unsigned>(bm * bn / 1024), static_cast<unsigned>(t.tiles)), dim3(256), s, true, attr);
  LA_CUDA_TRY(cudaLaunchKernelEx(&cfg, reduce_tail_kernel, work, g.c, g.ldc, g.m, g.n, g.alpha, g.beta,
                                 tiles_m * tiles_n - t.tiles, t.splits, tiles_m, tiles_n, bm, bn));
  LA_CHECK_LAUNCH(s);
}

/// x's TF32 head (rounded to nearest, ties to even) and the rest, x - head (exact). Where
/// rounding would carry past the largest float the head is x truncated instead; a head that is
/// not finite (x inf or NaN) has no tail, so the products keep IEEE's inf and NaN.
__device__ __forceinline__ float2 tf32_split(float x) {
  const std::uint32_t u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return make_float2(x, 0.0f);
  float head = __uint_as_float((u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u);
  if (isinf(head)) head = __uint_as_float(u & 0xffffe000u);
  return make_float2(head, x - head);
}

/// tf32x3's operands: a2 = [head | tail] of A (m rows of 2 kp, zeros from k to kp in each
/// part), b2 = the head rows of B over its tail rows (2 kp rows of ldb2, zero rows from k to kp
/// in each part and zeros from n to ldb2). blockIdx.y picks A (0) or B (1); a thread writes 4
/// consecutive floats of each part, the grid striding over them.
__global__ void __launch_bounds__(256) tf32x3_split_kernel(const float* a, index_t lda, const float* b, index_t ldb, float* a2,
                                                           float* b2, index_t ldb2, index_t m, index_t n, index_t k,
                                                           index_t kp) {
  const bool is_a = blockIdx.y == 0;
  const index_t rows = is_a ? m : kp, quads_a_row = (is_a ? kp : ldb2) / 4, limit = is_a ? k : n;
  const long quads = static_cast<long>(rows) * quads_a_row;
  for (long q = static_cast<long>(blockIdx.x) * 256 + threadIdx.x; q < quads; q += static_cast<long>(gridDim.x) * 256) {
    const index_t r = static_cast<index_t>(q / quads_a_row), c = static_cast<index_t>(q % quads_a_row) * 4;
    const bool row_in = is_a || r < k;
    const float* src = is_a ? a + static_cast<long>(r) * lda : b + static_cast<long>(r) * ldb;
    float head[4], tail[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 h = row_in && c + i < limit ? tf32_split(src[c + i]) : make_float2(0.0f, 0.0f);
      head[i] = h.x, tail[i] = h.y;
    }
    float* const to_head = is_a ? a2 + static_cast<long>(r) * 2 * kp + c : b2 + static_cast<long>(r) * ldb2 + c;
    float* const to_tail = is_a ? to_head + kp : to_head + static_cast<long>(kp) * ldb2;
    *reinterpret_cast<float4*>(to_head) = make_float4(head[0], head[1], head[2], head[3]);
    *reinterpret_cast<float4*>(to_tail) = make_float4(tail[0], tail[1], tail[2], tail[3]);
  }
}

/// K of tf32x3's parts: k rounded up to whole k-blocks of 32 floats, so that a part's last
/// k-block reads its own zeros, not the next part.
index_t x3_kp(index_t k) { return static_cast<index_t>(ceil_div(k, 32)) * 32; }

/// splits > 1: g.workspace holds splits * M * N floats (wgmma_split_k_workspace_bytes).
/// x3 (In float only): tf32x3, the operands split into heads and tails first (tf32x3_split_kernel,
/// into the workspace past the partials) and the three products walked as one K (x3_parts).
template <typename In, int BN, bool X3 = false, bool R64 = false>
void launch_wgmma(const gemm_args& g, cudaStream_t s, int splits) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g.c, g.ldc, g.m, g.n, g.beta, s);  // alpha * 0 + beta * C
  constexpr int e = sizeof(In);
  using S = wg_shape<In, BN, X3, R64>;
  const index_t kp = X3 ? x3_kp(g.k) : 0;
  const int kblocks = X3 ? 3 * static_cast<int>(kp / 32) : ceil_div(g.k, wg_k_of<In>);
  const int per = ceil_div(kblocks, std::max(splits, 1));
  splits = ceil_div(kblocks, per);  // rounding can leave fewer
  float* work = splits > 1 ? static_cast<float*>(g.workspace) : nullptr;
  if (splits > 1 && !work) throw invalid_argument("wgmma split-K: no workspace given (see workspace_bytes)");
  workspace_room room;
  if (g.workspace && g.workspace_size) {
    room.next = static_cast<unsigned char*>(g.workspace) + (work ? partials_bytes({g.m, g.n, g.k}, splits) : 0);
    room.end = static_cast<unsigned char*>(g.workspace) + g.workspace_size;
  }
  std::optional<pitched> pa, pb;
  const void* a = g.a;
  const void* b = g.b;
  index_t lda = g.lda, ldb = g.ldb;
  if constexpr (X3) {  // the parts, at 128-byte aligned rows whatever A's and B's
    pa.emplace(nullptr, 0, g.m, 2 * kp, e, 128, room, s), pb.emplace(nullptr, 0, 2 * kp, g.n, e, 128, room, s);
    a = pa->p, lda = pa->ld, b = pb->p, ldb = pb->ld;
    const long quads = std::max(static_cast<long>(g.m) * kp, static_cast<long>(kp) * ldb) / 4;
    const dim3 grid(static_cast<unsigned>(std::min<long>(ceil_div(quads, 256), 16L * std::max(g.sm_count, 1))), 2);
    tf32x3_split_kernel<<<grid, 256, 0, s>>>(static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                                             static_cast<float*>(pa->p), static_cast<float*>(pb->p), ldb, g.m, g.n, g.k, kp);
    LA_CHECK_LAUNCH(s);
  } else {
    if (const operand_copy c = a_copy(a, lda, e); c.align)
      pa.emplace(a, lda, g.m, g.k, e, c.align, room, s), a = pa->p, lda = pa->ld;
    if (const operand_copy c = b_copy<In>(b, ldb, g.m); c.align) {
      try {
        pb.emplace(b, ldb, g.k, g.n, e, c.align, room, s), b = pb->p, ldb = pb->ld;
      } catch (const out_of_memory&) {
        if (c.needed) throw;  // the copy TMA needs; the faster copy only: go on with B as given
      }
    }
    copy_operands(pa, pb, s);  // one launch for both
  }
  const index_t k_maps = X3 ? 2 * kp : g.k;  // tf32x3: both parts
  const CUtensorMap ta = tensor_map<In>(a, g.m, k_maps, lda, S::bm);
  const CUtensorMap tb = tensor_map<In>(b, k_maps, g.n, ldb, wg_k_of<In>);
  // The 16-bit epilogue stores through TMA where the rows it stores to are 16-byte aligned;
  // otherwise from registers. N a multiple of 4: TMA writes the last 16 bytes of a row whole
  // (measured: columns past N, in the padding, were overwritten).
  const bool tma_store = !S::tf32 && g.n % 4 == 0 &&
                         (work ? reinterpret_cast<std::uintptr_t>(work) % 16 == 0 : aligned16(g.c, g.ldc, sizeof(float)));
  // beta != 0 into C: C's chunks are loaded through the same map, combined and stored back;
  // tf32 reads C from its registers' epilogue, but the producer prefetches it into L2 too.
  const bool load_c = tma_store && !work && g.beta != 0.0f;
  const bool prefetch_c = load_c || (S::tf32 && !work && g.beta != 0.0f && aligned16(g.c, g.ldc, sizeof(float)));
  // Clusters of S::cluster blocks where K is split, but none where M has one row of tiles (a
  // neighbour would only multiply TMA's zeros). A plain product on the split form's tile runs
  // unclustered, as the plain kernels do.
  constexpr int CL = S::cluster;
  const int tiles_m = ceil_div(g.m, S::bm), cl = CL > 1 && tiles_m > 1 && splits > 1 ? CL : 1;
  // The plain 16-bit kernel's last round of tiles, cut in K where it would leave most
  // multiprocessors idle; in the workspace, past the copies (none without room).
  wg_tail tail = !S::tf32 && !R64 && splits == 1 && cl == 1 ? plan_tail({g.m, g.n, g.k, g.sm_count}, wg_plain_index(BN)) : wg_tail{};
  float* tail_work = tail.tiles ? static_cast<float*>(room.take(tail.bytes(BN), 128)) : nullptr;
  if (!tail_work) tail = {};
  wg_params p{g.m,
              g.n,
              X3 ? 3 * kp : g.k,  // the kernel walks the three products as one K
              g.c,
              g.ldc,
              g.alpha,
              g.beta,
              tiles_m,
              ceil_div(g.n, BN),
              work ? g.n % 2 == 0 : reinterpret_cast<std::uintptr_t>(g.c) % 8 == 0 && g.ldc % 2 == 0,
              cl,
              tma_store,
              load_c,
              prefetch_c,
              splits,
              per,
              work,
              tail.tiles,
              tail.splits,
              tail.blocks,
              X3 ? static_cast<int>(kp / 32) : 0};
  CUtensorMap tc{}, tw{};
  if (tma_store || prefetch_c) tc = work ? store_map(work, g.m, g.n, g.n, splits) : store_map(g.c, g.m, g.n, g.ldc, 1);
  if (tail.tiles) tw = store_map(tail_work, S::bm, BN, BN, tail.tiles * tail.splits);
  constexpr auto kernel = wgmma_kernel<In, BN, CL, X3, R64>;
  raise_smem_limit_once<kernel, S::smem_bytes>();
  // A cluster a unit (cl tiles and a range of K), as many clusters as are resident.
  const long units = (static_cast<long>(ceil_div(tiles_m, cl)) * p.tiles_n - tail.tiles) * splits +
                     static_cast<long>(tail.tiles) * tail.splits;
  long clusters = std::min<long>(units, std::max(g.sm_count / cl, 1));
  if constexpr (CL > 1)
    if (cl > 1) clusters = std::min<long>(clusters, resident_clusters<kernel, CL, S::smem_bytes>());
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = wg_launch_config(static_cast<unsigned>(clusters * cl), S::smem_bytes, cl, s, attr);
  LA_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, ta, tb, tc, tw, p));
  LA_CHECK_LAUNCH(s);
  if (work) reduce_splits(g, splits, s, /*pdl=*/true);
  if (tail.tiles) reduce_tail(g, tail_work, tail, tiles_m, p.tiles_n, S::bm, BN, s);
}

}  // namespace

bool wgmma_supported() noexcept {
#if LA_WGMMA_BUILT
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;
#else
  return false;
#endif
}

namespace {
/// Splits of K for tiles of bm x bn: as many units as fit in one round of the
/// multiprocessors when the tiles alone fill at most half of them (rounded down: one more
/// split would start a second round, 2048 x 2048 x 20000 tf32 took 538 us split in 2 against
/// 400 us whole; bench/history/tuning-notes-the-code-cites.md, note T1), each split at least 1024 of K so its
/// pipeline's fill and its partial's store stay small.
int split_count(const gemm_problem& p, int bm, int bn) {
  const long tiles = static_cast<long>(ceil_div(p.m, bm)) * ceil_div(p.n, bn);
  return one_round_splits(std::max(p.sm_count, 1), tiles, std::min<long>(ceil_div(p.k, 64) / 16, 4096));
}
constexpr int wg_tf32_bm = wg_shape<float, wg_split_bn>::bm, wg_x3_bm = wg_shape<float, wg_split_bn, true>::bm;
/// Bytes of the operand copies launch_wgmma makes for p (the faster copy of B only where
/// p.speed_extras), then of the split-K partials.
template <typename In>
std::size_t copies_bytes(const gemm_problem& p) {
  constexpr int e = sizeof(In);
  if (p.m == 0 || p.n == 0 || p.k == 0) return 0;
  const index_t lda = p.lda ? p.lda : p.k, ldb = p.ldb ? p.ldb : p.n;
  std::size_t bytes = 0;
  if (const operand_copy c = a_copy(nullptr, lda, e); c.align) bytes += copy_bytes(p.m, p.k, e, c.align);
  if (const operand_copy c = b_copy<In>(nullptr, ldb, p.m); c.align && (c.needed || p.speed_extras))
    bytes += copy_bytes(p.k, p.n, e, c.align);
  return bytes;
}
/// A split form's workspace: the partials where K is split, then the operands' room.
std::size_t split_workspace(const gemm_problem& p, int splits, std::size_t operands) {
  return (splits > 1 ? partials_bytes(p, splits) : 0) + operands;
}
}  // namespace

bool wgmma_can_implement(const gemm_problem& p) {
  // The unit count (tiles x splits) is an int; the grid is at most one block a multiprocessor.
  if (p.m < 0 || p.n < 0 || p.k < 0) return false;
  const long tiles = wgmma_short_tile(p) ? ceil_div(p.n, wg_short_bn)
                                         : static_cast<long>(ceil_div(p.m, wg_bm)) * ceil_div(p.n, wg_split_bn);
  return tiles * wgmma_split_count(p) < (1L << 31) && wgmma_supported();
}

bool wgmma_short_tile(const gemm_problem& p) {
  return p.m <= wg_short_bm && ceil_div(p.n, wg_short_bn) <= std::max(p.sm_count, 1) &&
         split_count(p, wg_short_bm, wg_short_bn) <= wg_short_splits;
}
int wgmma_split_count(const gemm_problem& p) {
  return wgmma_short_tile(p) ? split_count(p, wg_short_bm, wg_short_bn) : split_count(p, wg_bm, wg_split_bn);
}
int wgmma_tf32_split_count(const gemm_problem& p) { return split_count(p, wg_tf32_bm, wg_split_bn); }
std::size_t wgmma_tf32_workspace_bytes(const gemm_problem& p) { return copies_bytes<float>(p); }
std::size_t wgmma_split_k_workspace_bytes(const gemm_problem& p) {
  return split_workspace(p, wgmma_split_count(p), copies_bytes<__half>(p));
}
std::size_t wgmma_tf32_split_k_workspace_bytes(const gemm_problem& p) {
  return split_workspace(p, wgmma_tf32_split_count(p), copies_bytes<float>(p));
}
// tf32x3: its products walk 3 kp of K; its workspace holds the operands' parts (launch_wgmma),
// after the partials where K is split.
int wgmma_tf32x3_split_count(const gemm_problem& p) {
  return split_count({p.m, p.n, 3 * x3_kp(p.k), p.sm_count}, wg_x3_bm, wg_split_bn);
}
std::size_t wgmma_tf32x3_workspace_bytes(const gemm_problem& p) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return 0;
  const index_t kp = x3_kp(p.k);
  return copy_bytes(p.m, 2 * kp, sizeof(float), 128) + copy_bytes(2 * kp, p.n, sizeof(float), 128);
}
std::size_t wgmma_tf32x3_split_k_workspace_bytes(const gemm_problem& p) {
  return split_workspace(p, wgmma_tf32x3_split_count(p), wgmma_tf32x3_workspace_bytes(p));
}
bool wgmma_tf32x3_can_implement(const gemm_problem& p) {
  return p.k <= max_index / 3 - 64 && wgmma_can_implement(p);  // 3 kp stays an index
}

namespace {

template <typename In, int BN>
void run_plain(const gemm_args& g, cudaStream_t s) {
  launch_wgmma<In, BN>(g, s, 1);
}
/// The plain kernel's workspace on tiles of width BN: the operand copies, then the tail's
/// partials with room to align them.
template <int BN>
std::size_t plain_workspace(const gemm_problem& p) {
  const std::size_t tail = p.speed_extras ? plan_tail(p, wg_plain_index(BN)).bytes(BN) : 0;
  return copies_bytes<__half>(p) + (tail ? tail + 128 : 0);
}
template <typename In>
const std::vector<gemm_tile>& plain_tiles() {
  static const std::vector<gemm_tile> list = {
      {"128x256", run_plain<In, wg_plain_bn[0]>, plain_workspace<wg_plain_bn[0]>},
      {"128x192", run_plain<In, wg_plain_bn[1]>, plain_workspace<wg_plain_bn[1]>},
      {"128x128", run_plain<In, wg_plain_bn[2]>, plain_workspace<wg_plain_bn[2]>}};
  return list;
}
}  // namespace

std::size_t wgmma_workspace_bytes(const gemm_problem& p) {
  return plain_tiles<__half>()[wgmma_tile_for(p)].workspace_bytes(p);  // bf16's tiles have the same
}

const std::vector<gemm_tile>& wgmma_tiles(gemm_input in) {
  return in == gemm_input::bf16 ? plain_tiles<__nv_bfloat16>() : plain_tiles<__half>();
}

int wgmma_tile_for(const gemm_problem& p) {
  // The time of a call is that of its busiest multiprocessor (plain_ns): the kernel is
  // persistent, a block a multiprocessor, and a tile's time grows with its width times the
  // width's cost per column, 1.02 for 128 x 192 and 1.15 for 128 x 128 against 128 x 256. The
  // narrower tiles win where the wide ones leave multiprocessors idle or a last round mostly
  // empty (3072^3: 288 tiles of 128 x 256 on 132 SMs take 3 rounds, 384 of 128 x 192 take 3
  // rounds of three quarters the work), unless the wide tiles' last round is cut in K (5000^3:
  // 800 tiles of 128 x 256, 6 rounds and a tail of 8 tiles in 16 pieces). Measured on 17
  // shapes; bench/history/tuning-notes-the-code-cites.md, note T11. Ties go to the wider tile.
  int best = 0;
  for (int i = 1; i < 3; ++i)
    if (plain_ns(p, i) < plain_ns(p, best)) best = i;
  return best;
}

namespace {
/// The plain 16-bit kernel: on the 64-row tile unsplit where M fits in it, else the tile
/// wgmma_tile_for picks.
template <typename In>
void run_plain16(const gemm_args& g, cudaStream_t s) {
  const gemm_problem p{g.m, g.n, g.k, g.sm_count};
  if (wgmma_short_tile(p)) launch_wgmma<In, wg_short_bn, false, true>(g, s, 1);
  else plain_tiles<In>()[wgmma_tile_for(p)].run(g, s);
}
/// The 16-bit split form, on the 64-row tile where M fits in it.
template <typename In>
void run_split(const gemm_args& g, cudaStream_t s) {
  const gemm_problem p{g.m, g.n, g.k, g.sm_count};
  if (wgmma_short_tile(p)) launch_wgmma<In, wg_short_bn, false, true>(g, s, wgmma_split_count(p));
  else launch_wgmma<In, wg_split_bn>(g, s, wgmma_split_count(p));
}
}  // namespace
void run_wgmma_f16(const gemm_args& g, cudaStream_t s) { run_plain16<__half>(g, s); }
void run_wgmma_f16_split_k(const gemm_args& g, cudaStream_t s) { run_split<__half>(g, s); }
void run_wgmma_bf16(const gemm_args& g, cudaStream_t s) { run_plain16<__nv_bfloat16>(g, s); }
void run_wgmma_tf32(const gemm_args& g, cudaStream_t s) { launch_wgmma<float, wg_split_bn>(g, s, 1); }
void run_wgmma_tf32_split_k(const gemm_args& g, cudaStream_t s) {
  launch_wgmma<float, wg_split_bn>(g, s, wgmma_tf32_split_count({g.m, g.n, g.k, g.sm_count}));
}
void run_wgmma_tf32x3(const gemm_args& g, cudaStream_t s) { launch_wgmma<float, wg_split_bn, true>(g, s, 1); }
void run_wgmma_tf32x3_split_k(const gemm_args& g, cudaStream_t s) {
  launch_wgmma<float, wg_split_bn, true>(g, s, wgmma_tf32x3_split_count({g.m, g.n, g.k, g.sm_count}));
}
void run_wgmma_bf16_split_k(const gemm_args& g, cudaStream_t s) { run_split<__nv_bfloat16>(g, s); }

}  // namespace la::gemm_detail
