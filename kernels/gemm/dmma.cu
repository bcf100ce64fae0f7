// The fp64 rung of the GEMM ladder: double inputs, double accumulation, on the fp64 Tensor
// Cores through mma.sync (SASS DMMA). Hopper has no fp64 wgmma, so every form issues mma.sync
// from a warp; they differ in the instruction and in how the operands reach shared memory.
//  - dmma_m8n8k4: mma.m8n8k4.f64 (compute capability 8.0 and up), the teaching form;
//  - dmma_m16n8k8: mma.m16n8k8.f64 (9.0 and up), 4x the work per instruction;
//  - dmma_m16n8k16: mma.m16n8k16.f64 (9.0 and up), 8x;
//  - dmma_tma, dmma_tma_x2, dmma_tma_x2_k32 (9.0): m16n8k8 fed by the tensor memory
//    accelerator (below).
// The cp.async forms: block tile 128 x 128 x 32 of 8 warps (2 x 4), each warp 64 x 32;
// operands global -> shared with cp.async in a 3-deep ring where rows are 16-byte aligned
// (else element loads). Shared rows are padded so one fragment load of a warp takes the
// minimum of two wavefronts: A's rows by 4 doubles (row stride = 8 banks mod 32), B's by 8 (16
// banks). The accumulators go straight from registers to C (alpha, beta; beta == 0 never
// reads C). lower_only skips the tiles wholly above C's diagonal (the symmetric trailing
// update of a Cholesky factorization).
// The TMA forms: the same 128 x 128 tile and warp tiles, k-blocks of 16 in a 6-deep ring of
// 32 KiB stages (k32: 32 in 3 of 64 KiB). Thread 0 issues the loads (A as 128 x 16 boxes,
// 128-byte swizzled; B as 16 boxes of BK x 8, one 64-byte row of 8 columns per k, so the four
// k-rows of a fragment fall on alternate halves of the banks) on each stage's "full" mbarrier;
// the eight warps free a stage on its "empty" one, and thread 0 refills the stage freed one
// k-block earlier. A ninth, producer-only warp would cost the consumers their registers: 9
// warps put 3 on one quarter of the SM's register file, 168 registers each, and the 64 x 32
// warp tile then spills. Both fragment loads take
// the minimum two wavefronts (A: the swizzle puts rows g and g + 1 on one pair of 16-byte
// chunks, the eight rows on all eight pairs). The consumers issue no load instructions of
// global memory and no address arithmetic for them. dmma_tma_x2 pairs the blocks of
// neighbouring tile-rows in a cluster: each loads its A and half of B's boxes, multicast to
// both, so B's L2 traffic halves (a 128 x 128 double tile needs 16 flop a byte from L2: 4.2
// TB/s at the 66.9 TFLOP/s peak). Rows that are not 16-byte aligned (an odd leading
// dimension) fall back to dmma_m16n8k8.
#include <algorithm>
#include <string>

#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/tma.cuh>
#include <la/kernels/gemm/gemm.hpp>

namespace la {
namespace {
using gemm_detail::ceil_div;
using gemm_detail::cp_async16;
using gemm_detail::cp_async_commit;
using gemm_detail::cp_async_wait;

/// mma.m8n8k4.f64: A 8x4 row-major, one double a lane; B 4x8, one; C 8x8, two.
struct mma_884 {
  static constexpr int M = 8, N = 8, K = 4, AR = 1, BR = 1, CR = 2;
  __device__ static int a_m(int, int l) { return l >> 2; }
  __device__ static int a_k(int, int l) { return l & 3; }
  __device__ static int b_k(int, int l) { return l & 3; }
  __device__ static int c_m(int, int l) { return l >> 2; }
  __device__ static int c_n(int r, int l) { return 2 * (l & 3) + r; }
  __device__ static void mma(double* c, const double* a, const double* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(c[0]), "+d"(c[1])
                 : "d"(a[0]), "d"(b[0]));
#endif
  }
};

/// The m16n8 f64 shapes' fragments (9.0): A 16 x K, AR = K/4 doubles a lane (rows g and g+8,
/// columns t + 4j); B K x 8, BR = K/4 (rows t + 4j); C 16 x 8, four (rows g and g+8, columns
/// 2t and 2t+1), g = lane / 4, t = lane % 4.
template <int K_>
struct mma_16n8_layout {
  static constexpr int M = 16, N = 8, K = K_, AR = K_ / 2, BR = K_ / 4, CR = 4;
  __device__ static int a_m(int r, int l) { return (l >> 2) + 8 * (r & 1); }
  __device__ static int a_k(int r, int l) { return (l & 3) + 4 * (r >> 1); }
  __device__ static int b_k(int r, int l) { return (l & 3) + 4 * r; }
  __device__ static int c_m(int r, int l) { return (l >> 2) + 8 * (r >> 1); }
  __device__ static int c_n(int r, int l) { return 2 * (l & 3) + (r & 1); }
};

/// mma.m16n8k16.f64: 8x m8n8k4's work per instruction.
struct mma_16816 : mma_16n8_layout<16> {
  __device__ static void mma(double* c, const double* a, const double* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
  }
};

/// mma.m16n8k8.f64: half the fragment registers of m16n8k16.
struct mma_1688 : mma_16n8_layout<8> {
  __device__ static void mma(double* c, const double* a, const double* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
  }
};

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3, WARPS_M = 2, WARPS_N = 4, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
constexpr int LDA = BK + 4, LDB = BN + 8;
constexpr int A_STAGE = BM * LDA, B_STAGE = BK * LDB;
constexpr std::size_t SMEM = sizeof(double) * STAGES * (A_STAGE + B_STAGE);
static_assert((BM * BK / 2) % THREADS == 0 && (BK * BN / 2) % THREADS == 0, "dmma: whole 16-byte chunks per thread");

/// Tile kt of A (BM x BK) and B (BK x BN) into shared stage buffers: 16-byte cp.async where
/// Aligned (every row 16-byte aligned, K and N even, so a chunk is all in or all out), else
/// element by element; zeros outside the matrices.
template <bool Aligned>
__device__ __forceinline__ void load_tile(const dgemm_args& g, double* as, double* bs, index_t m0, index_t n0, index_t k0) {
  constexpr int A_CH = BM * BK / 2 / THREADS, B_CH = BK * BN / 2 / THREADS;
#pragma unroll
  for (int i = 0; i < A_CH; ++i) {
    const int c = threadIdx.x + i * THREADS;
    const int r = c / (BK / 2), kc = 2 * (c % (BK / 2));
    const index_t gr = m0 + r, gk = k0 + kc;
    double* dst = as + r * LDA + kc;
    if constexpr (Aligned) {
      const bool in = gr < g.m && gk < g.k;
      cp_async16(dst, in ? g.a + static_cast<long>(gr) * g.lda + gk : g.a, in);
    } else {
      dst[0] = gr < g.m && gk < g.k ? g.a[static_cast<long>(gr) * g.lda + gk] : 0.0;
      dst[1] = gr < g.m && gk + 1 < g.k ? g.a[static_cast<long>(gr) * g.lda + gk + 1] : 0.0;
    }
  }
#pragma unroll
  for (int i = 0; i < B_CH; ++i) {
    const int c = threadIdx.x + i * THREADS;
    const int r = c / (BN / 2), nc = 2 * (c % (BN / 2));
    const index_t gk = k0 + r, gn = n0 + nc;
    double* dst = bs + r * LDB + nc;
    if constexpr (Aligned) {
      const bool in = gk < g.k && gn < g.n;
      cp_async16(dst, in ? g.b + static_cast<long>(gk) * g.ldb + gn : g.b, in);
    } else {
      dst[0] = gk < g.k && gn < g.n ? g.b[static_cast<long>(gk) * g.ldb + gn] : 0.0;
      dst[1] = gk < g.k && gn + 1 < g.n ? g.b[static_cast<long>(gk) * g.ldb + gn + 1] : 0.0;
    }
  }
}

template <class I, bool Aligned>
__global__ void __launch_bounds__(THREADS, 1) dmma_kernel(dgemm_args g) {
  constexpr int FM = WM / I::M, FN = WN / I::N;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  double* const as = reinterpret_cast<double*>(smem_raw);
  double* const bs = as + STAGES * A_STAGE;
  const int2 tile = gemm_detail::grouped_tile();
  const index_t m0 = static_cast<index_t>(tile.x) * BM, n0 = static_cast<index_t>(tile.y) * BN;
  if (g.lower_only && n0 > m0 + BM - 1) return;  // every column right of every row: above the diagonal
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  double acc[FM][FN][I::CR];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int r = 0; r < I::CR; ++r) acc[i][j][r] = 0.0;

  const int kt_count = ceil_div(g.k, BK);
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_count) load_tile<Aligned>(g, as + s * A_STAGE, bs + s * B_STAGE, m0, n0, static_cast<index_t>(s) * BK);
    cp_async_commit();
  }
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the stage refilled below
    const int next = kt + STAGES - 1;
    if (next < kt_count)
      load_tile<Aligned>(g, as + (next % STAGES) * A_STAGE, bs + (next % STAGES) * B_STAGE, m0, n0,
                         static_cast<index_t>(next) * BK);
    cp_async_commit();
    const double* a_s = as + (kt % STAGES) * A_STAGE;
    const double* b_s = bs + (kt % STAGES) * B_STAGE;
    // One k-step's fragments at a time (unrolling the steps of the 16-deep instruction
    // hoisted the next step's loads and spilled).
#pragma unroll(I::K >= 16 ? 1 : BK / I::K)
    for (int kk = 0; kk < BK; kk += I::K) {
      double bf[FN][I::BR];
#pragma unroll
      for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int r = 0; r < I::BR; ++r) bf[j][r] = b_s[(kk + I::b_k(r, lane)) * LDB + wn0 + j * I::N + (lane >> 2)];
#pragma unroll
      for (int i = 0; i < FM; ++i) {
        double af[I::AR];
#pragma unroll
        for (int r = 0; r < I::AR; ++r) af[r] = a_s[(wm0 + i * I::M + I::a_m(r, lane)) * LDA + kk + I::a_k(r, lane)];
#pragma unroll
        for (int j = 0; j < FN; ++j) I::mma(acc[i][j], af, bf[j]);
      }
    }
  }
  cp_async_wait<0>();
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
      for (int r = 0; r < I::CR; ++r) {
        const index_t row = m0 + wm0 + i * I::M + I::c_m(r, lane), col = n0 + wn0 + j * I::N + I::c_n(r, lane);
        if (row < g.m && col < g.n) {
          double* p = g.c + static_cast<long>(row) * g.ldc + col;
          *p = g.beta == 0.0 ? g.alpha * acc[i][j][r] : g.alpha * acc[i][j][r] + g.beta * *p;
        }
      }
}

__global__ void dscale_kernel(double* c, index_t ldc, index_t m, index_t n, double beta) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(m) * n) return;
  double* p = c + (e / n) * ldc + e % n;
  *p = beta == 0.0 ? 0.0 : beta * *p;
}

template <class I>
void run_dmma(const dgemm_args& g, cudaStream_t s) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // alpha * 0 + beta * C
    dscale_kernel<<<ceil_div(static_cast<long>(g.m) * g.n, 256), 256, 0, s>>>(g.c, g.ldc, g.m, g.n, g.beta);
    LA_CHECK_LAUNCH(s);
    return;
  }
  const bool aligned = g.k % 2 == 0 && g.n % 2 == 0 && gemm_detail::aligned16(g.a, g.lda, 8) &&
                       gemm_detail::aligned16(g.b, g.ldb, 8);
  const dim3 grid(ceil_div(g.n, BN), ceil_div(g.m, BM));
  if (aligned) {
    gemm_detail::raise_smem_limit_once<dmma_kernel<I, true>, SMEM>();
    dmma_kernel<I, true><<<grid, THREADS, SMEM, s>>>(g);
  } else {
    gemm_detail::raise_smem_limit_once<dmma_kernel<I, false>, SMEM>();
    dmma_kernel<I, false><<<grid, THREADS, SMEM, s>>>(g);
  }
  LA_CHECK_LAUNCH(s);
}

// ---- the TMA-fed form ----------------------------------------------------------------------
namespace tma_form {
namespace tma = gemm_detail::tma;
using I = mma_1688;
constexpr int BM = 128, BN = 128, CONSUMERS = 8, THREADS = 32 * CONSUMERS;
constexpr int WM = 64, WN = 32, FM = WM / I::M, FN = WN / I::N;  // consumers 2 x 4
constexpr int A_BOX_K = 16, A_BOX_BYTES = BM * A_BOX_K * 8;       // 128 rows of 128 bytes, swizzled
constexpr int B_BOX_N = 8;                                         // B's boxes: BK k-rows of 8 doubles
constexpr int ring_bytes = 6 * 32768;
/// k-blocks of BK (16: one A box a stage; 32: two), in as many stages as fit 192 KiB.
template <int BK>
struct ring {
  static constexpr int A_BYTES = BK / A_BOX_K * A_BOX_BYTES, B_BOX_BYTES = BK * B_BOX_N * 8;
  static constexpr int STAGE_BYTES = A_BYTES + BN / B_BOX_N * B_BOX_BYTES;
  static constexpr int STAGES = ring_bytes / STAGE_BYTES;
  static constexpr std::size_t SMEM = 1024 + STAGES * STAGE_BYTES + 2 * STAGES * sizeof(std::uint64_t);
};
static_assert(A_BOX_K * 8 == 128, "A's box rows are the 128-byte swizzle's width");

/// CL blocks a cluster (1 or 2) on neighbouring tile-rows, sharing B's loads; k-blocks of BK.
template <int CL, int BK>
__global__ void __launch_bounds__(THREADS, 1)
    dmma_tma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, dgemm_args g,
                    int tiles_m, int tiles_n) {
#if LA_TMA_DEVICE
  using R = ring<BK>;
  constexpr int STAGES = R::STAGES, STAGE_BYTES = R::STAGE_BYTES, A_BYTES = R::A_BYTES, B_BOX_BYTES = R::B_BOX_BYTES;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* const base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(base + STAGES * STAGE_BYTES);
  std::uint64_t* const empty = full + STAGES;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rank = CL > 1 ? tma::cluster_rank() : 0;
  int2 tile;
  if constexpr (CL == 1) {
    tile = gemm_detail::grouped_tile<8>(blockIdx.x, tiles_m, tiles_n);
  } else {
    const int2 pair = gemm_detail::grouped_tile<4>(blockIdx.x / CL, tiles_m / CL, tiles_n);
    tile = make_int2(pair.x * CL + rank, pair.y);
  }
  const index_t m0 = static_cast<index_t>(tile.x) * BM, n0 = static_cast<index_t>(tile.y) * BN;
  // lower_only: a cluster leaves together when its last block's tile is wholly above the
  // diagonal; a block above it that still loads its partner's share of B stores nothing.
  const index_t cluster_last_row = static_cast<index_t>(tile.x - rank + CL - 1) * BM + BM - 1;
  if (g.lower_only && n0 > cluster_last_row) return;
  const bool stores = !(g.lower_only && n0 > m0 + BM - 1);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) tma::mbar_init(&full[s], 1), tma::mbar_init(&empty[s], CONSUMERS * CL);
    tma::mbar_init_fence();
  }
  if constexpr (CL > 1) tma::cluster_sync();  // no block's multicast reaches a barrier not yet initialized
  else __syncthreads();
  const int kt_count = ceil_div(g.k, BK);
  // Thread 0 issues the loads: k-block kt into stage kt % STAGES once every consumer of the
  // cluster has freed that stage's previous k-block (kt - STAGES).
  const auto issue = [&](int kt) {
    const int s = kt % STAGES, use = kt / STAGES;
    if (use > 0) tma::mbar_wait(&empty[s], (use - 1) & 1);
    unsigned char* const st = base + s * STAGE_BYTES;
    tma::mbar_expect_tx(&full[s], STAGE_BYTES);  // A's and all of B's boxes, a partner's multicast included
#pragma unroll
    for (int h = 0; h < BK / A_BOX_K; ++h) tma::load(st + h * A_BOX_BYTES, &ta, &full[s], kt * BK + h * A_BOX_K, static_cast<int>(m0));
    for (int j = rank; j < BN / B_BOX_N; j += CL) {
      unsigned char* const dst = st + A_BYTES + j * B_BOX_BYTES;
      if constexpr (CL == 1) tma::load(dst, &tb, &full[s], static_cast<int>(n0) + j * B_BOX_N, kt * BK);
      else tma::load_multicast(dst, &tb, &full[s], static_cast<int>(n0) + j * B_BOX_N, kt * BK, (1u << CL) - 1);
    }
  };
  if (threadIdx.x == 0)
    for (int kt = 0; kt < min(STAGES, kt_count); ++kt) issue(kt);
  {
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int gq = lane >> 2, t = lane & 3;
    double acc[FM][FN][I::CR];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int r = 0; r < I::CR; ++r) acc[i][j][r] = 0.0;
    for (int kt = 0; kt < kt_count; ++kt) {
      const int s = kt % STAGES;
      tma::mbar_wait(&full[s], (kt / STAGES) & 1);
      const double* const a_s = reinterpret_cast<const double*>(base + s * STAGE_BYTES);
      const double* const b_s = reinterpret_cast<const double*>(base + s * STAGE_BYTES + A_BYTES);
#pragma unroll 2  // two k-steps at a time (all four of BK = 32 unrolled spill)
      for (int kk = 0; kk < BK; kk += I::K) {
        // B: box (wn0 + 8j) / 8, k-row kk + t + 4r, column gq.
        double bf[FN][I::BR];
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
          for (int r = 0; r < I::BR; ++r) bf[j][r] = b_s[(wn0 / B_BOX_N + j) * (BK * B_BOX_N) + (kk + t + 4 * r) * B_BOX_N + gq];
#pragma unroll
        for (int i = 0; i < FM; ++i) {
          // A: row wm0 + 16i + gq + 8(r & 1) (its row mod 8 is gq), k = kk + t + 4(r >> 1): box
          // k / 16, 16-byte chunk (k % 16) / 2 XOR the row mod 8.
          double af[I::AR];
#pragma unroll
          for (int r = 0; r < I::AR; ++r) {
            const int row = wm0 + i * I::M + gq + 8 * (r & 1), k = kk + t + 4 * (r >> 1);
            af[r] = a_s[(k / A_BOX_K) * (BM * A_BOX_K) + row * A_BOX_K + ((((k % A_BOX_K) >> 1) ^ gq) << 1) + (k & 1)];
          }
#pragma unroll
          for (int j = 0; j < FN; ++j) I::mma(acc[i][j], af, bf[j]);
        }
      }
      __syncwarp();
      if (lane < CL) {  // the stage is free in every block of the cluster this warp's lane names
        if (lane == rank) tma::mbar_arrive(&empty[s]);
        else tma::mbar_arrive_cluster(&empty[s], lane);
      }
      // The refill of the stage freed one k-block earlier, which every warp has most likely
      // left by now (the stage just freed would wait for the slowest warp).
      if (threadIdx.x == 0 && kt >= 1 && kt - 1 + STAGES < kt_count) issue(kt - 1 + STAGES);
    }
    if (stores) {
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
          for (int r = 0; r < I::CR; ++r) {
            const index_t row = m0 + wm0 + i * I::M + I::c_m(r, lane), col = n0 + wn0 + j * I::N + I::c_n(r, lane);
            if (row < g.m && col < g.n) {
              double* p = g.c + static_cast<long>(row) * g.ldc + col;
              *p = g.beta == 0.0 ? g.alpha * acc[i][j][r] : g.alpha * acc[i][j][r] + g.beta * *p;
            }
          }
    }
  }
  if constexpr (CL > 1) tma::cluster_sync();  // no block leaves while its partner may still write to it
#endif
}

/// The tensor map of a row-major rows x cols matrix of doubles (pitch ld), read in boxes of
/// box_rows x box_cols.
CUtensorMap operand_map(const double* p, index_t rows, index_t cols, index_t ld, int box_rows, int box_cols,
                        CUtensorMapSwizzle swizzle, const char* what) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(double)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)}, unit[2] = {1, 1};
  tma::check_encode(tma::encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, const_cast<double*>(p), dims, strides, box, unit,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                    "dmma_tma", what, rows, cols, ld);
  return m;
}

template <int CL, int BK>
void run(const dgemm_args& g, cudaStream_t s) {
  constexpr std::size_t SMEM = ring<BK>::SMEM;
  if (g.m == 0 || g.n == 0) return;
  // TMA needs 16-byte aligned rows; the others (and K = 0) take the cp.async form.
  if (g.k == 0 || !gemm_detail::aligned16(g.a, g.lda, 8) || !gemm_detail::aligned16(g.b, g.ldb, 8)) {
    run_dmma<mma_1688>(g, s);
    return;
  }
  const int tiles_n = ceil_div(g.n, BN), tiles_m = ceil_div(g.m, BM);
  const int cl = CL > 1 && tiles_m > 1 ? CL : 1;  // one tile-row: nothing to share
  const int tiles_m_grid = (tiles_m + cl - 1) / cl * cl;
  const CUtensorMap ta = operand_map(g.a, g.m, g.k, g.lda, BM, A_BOX_K, CU_TENSOR_MAP_SWIZZLE_128B, "A");
  const CUtensorMap tb = operand_map(g.b, g.k, g.n, g.ldb, BK, B_BOX_N, CU_TENSOR_MAP_SWIZZLE_NONE, "B");
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(tiles_m_grid) * static_cast<unsigned>(tiles_n));
  cfg.blockDim = dim3(THREADS);
  cfg.dynamicSmemBytes = SMEM;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cl, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cfg.attrs = &attr, cfg.numAttrs = cl > 1 ? 1 : 0;
  if (cl > 1) {
    gemm_detail::raise_smem_limit_once<dmma_tma_kernel<CL, BK>, SMEM>();
    LA_CUDA_TRY(cudaLaunchKernelEx(&cfg, dmma_tma_kernel<CL, BK>, ta, tb, g, tiles_m_grid, tiles_n));
  } else {
    gemm_detail::raise_smem_limit_once<dmma_tma_kernel<1, BK>, SMEM>();
    LA_CUDA_TRY(cudaLaunchKernelEx(&cfg, dmma_tma_kernel<1, BK>, ta, tb, g, tiles_m_grid, tiles_n));
  }
  LA_CHECK_LAUNCH(s);
}
}  // namespace tma_form

/// auto's fp64 variant on 9.0 (bench/RESULTS.md, "Dense direct solvers").
constexpr const char* auto_dgemm = "dmma_m16n8k8";  // 0.79-0.87x cuBLAS at 4096-8192 on an H200, m16n8k16 0.70-0.77x (it spills)

int current_major() {
  int dev = 0, major = 0;
  LA_CUDA_TRY(cudaGetDevice(&dev));
  LA_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major;
}
bool fits(const gemm_problem& p) {
  return p.m >= 0 && p.n >= 0 && p.k >= 0 && ceil_div(p.m, BM) <= 65535;
}
bool can_884(const gemm_problem& p) { return fits(p) && current_major() >= 8; }
bool can_16816(const gemm_problem& p) { return fits(p) && current_major() >= 9; }
}  // namespace

const std::vector<dgemm_variant>& dgemm_variants() {
  static const std::vector<dgemm_variant> list = {
      {"dmma_m8n8k4", true, can_884, run_dmma<mma_884>},
      {"dmma_m16n8k8", false, can_16816, run_dmma<mma_1688>},
      {"dmma_m16n8k16", false, can_16816, run_dmma<mma_16816>},
      {"dmma_tma", false, can_16816, tma_form::run<1, 16>},
      {"dmma_tma_x2", false, can_16816, tma_form::run<2, 16>},
      {"dmma_tma_x2_k32", false, can_16816, tma_form::run<2, 32>},
  };
  return list;
}

const dgemm_variant& find_dgemm(std::string_view name) {
  for (const auto& v : dgemm_variants())
    if (v.name == name) return v;
  std::string names;
  for (const auto& v : dgemm_variants()) names += (names.empty() ? "" : ", ") + std::string(v.name);
  throw invalid_argument("unknown fp64 GEMM algorithm '" + std::string(name) + "'; choose auto or one of: " + names);
}

const dgemm_variant& select_dgemm(const gemm_problem& p) {
  const dgemm_variant& big = find_dgemm(auto_dgemm);  // both 9.0 rungs need the same device
  if (big.can_implement(p)) return big;
  const dgemm_variant& small = find_dgemm("dmma_m8n8k4");
  if (small.can_implement(p)) return small;
  throw not_supported("the fp64 GEMM needs fp64 Tensor Cores (compute capability 8.0 or newer)");
}

void dgemm(const dgemm_args& g, cudaStream_t s, std::string_view algo) {
  const gemm_problem p{g.m, g.n, g.k};
  const dgemm_variant& v = algo == "auto" ? select_dgemm(p) : find_dgemm(algo);
  LA_EXPECTS(v.can_implement(p), "gemm: algorithm '" + std::string(v.name) + "' cannot run " + std::to_string(p.m) +
                                     "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " on this device");
  v.run(g, s);
}

void gemm(context& ctx, const device_dense<double>& a, const device_dense<double>& b, device_dense<double>& c,
          double alpha, double beta, std::string_view algo) {
  LA_EXPECTS(a.cols() == b.rows(), "gemm: A is " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                                       " but B is " + std::to_string(b.rows()) + "x" + std::to_string(b.cols()));
  LA_EXPECTS(c.rows() == a.rows() && c.cols() == b.cols(),
             "gemm: C is " + std::to_string(c.rows()) + "x" + std::to_string(c.cols()) + ", expected " +
                 std::to_string(a.rows()) + "x" + std::to_string(b.cols()));
  dgemm_args g;
  g.m = a.rows(), g.n = b.cols(), g.k = a.cols();
  g.a = a.view().values, g.lda = a.ld(), g.b = b.view().values, g.ldb = b.ld(), g.c = c.view().values, g.ldc = c.ld();
  g.alpha = alpha, g.beta = beta;
  dgemm(g, ctx.stream(), algo);
}

}  // namespace la
