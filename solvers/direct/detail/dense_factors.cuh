// What la::dense_solver's blocked factorizations share (dense_device.cu's comment has the
// algorithm): the factors' struct, the GEMM the blocks use and the 16-bit trailing updates,
// the single-kernel path's host side, the look-ahead step, the block widths and
// LA_DENSE_PROFILE's phase timer. LU is in dense_lu.cuh, Cholesky in dense_cholesky.cuh, the
// solves in dense_solves.cuh. Private to solvers/direct.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <la/detail/stream_event.hpp>
#include <la/solvers/direct/detail/phase_timer.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/solvers/direct/detail/dense_kernels.cuh>
#include <la/solvers/direct/detail/dense_small.cuh>

namespace la::dense_detail {


inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline int smem_optin(const context& ctx) {
  int v = 0;
  LA_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device()));
  return v;
}


/// The factors of one precision F (float or double) of an N x N padded matrix.
template <typename F>
struct factors {
  index_t n = 0, N = 0, nb = 0;
  index_t outer = 0;  // the outer panel's width: a multiple of nb
  bool chol = false;
  bool small = false;  // factored by the single-kernel path (dense_small.cuh); solves likewise
  bool inverses = true;  // inv_l (inv_u) hold the diagonal blocks' inverses (the small path makes them when asked)
  bool lookahead = true;  // the next outer panel factored on a second stream beside the update
  int info = 0;
  std::string gemm;  // F = double: a dgemm name or auto; F = float: a gemm_variants() name or auto
  /// The trailing updates' arithmetic (the bulk of the flops): "" (gemm's), or for F = float
  /// "fp16" / "bf16": both operands rounded to 16 bits, products summed in float on the
  /// Tensor Cores (HPL-MxP's split: the panels and the block solves stay in float).
  std::string update;
  device_buffer<unsigned short> low_a, low_b;  // the 16-bit operands, allocated at the first update
  device_buffer<F> f;        // N x N
  device_buffer<F> inv_l;    // (N / nb) x nb x nb: inverses of L's diagonal blocks
  device_buffer<F> inv_u;    // LU: of U's
  device_buffer<index_t> perm;  // LU: row i of P A is row perm[i] of A
  std::vector<index_t> piv;
};

/// C (m x n, ldc) = alpha A B + beta C for the factorization's blocks, in F's GEMM.
template <typename F>
void block_gemm(context& ctx, const std::string& algo, index_t m, index_t n, index_t k, const F* a, index_t lda, const F* b,
                index_t ldb, F* c, index_t ldc, F alpha, F beta, bool lower_only) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<F, double>) {
    dgemm_args g;
    g.m = m, g.n = n, g.k = k, g.a = a, g.lda = lda, g.b = b, g.ldb = ldb, g.c = c, g.ldc = ldc;
    g.alpha = alpha, g.beta = beta, g.lower_only = lower_only;
    dgemm(g, ctx.stream(), algo);
  } else {
    gemm_problem p{m, n, k, ctx.sm_count(), lda, ldb};
    const bool reduced = algo == "tf32";
    const gemm_variant& v = algo == "auto" || algo == "fp32" || algo == "tf32"
                                ? select_gemm(p, gemm_input::f32, reduced)
                                : find_gemm(algo == "tf32x3" ? (sm90a_kernels_available() ? "wgmma_tf32x3" : "reg_tiled") : algo);
    if (!v.can_implement(p)) throw not_supported("the " + algo + " GEMM cannot run this factorization's update on this device");
    const std::size_t ws_bytes = v.workspace_bytes(p);
    gemm_args g{m, n, k, a, lda, b, ldb, c, ldc, alpha, beta, ws_bytes ? ctx.scratch(ws_bytes) : nullptr, ctx.sm_count()};
    g.workspace_size = ws_bytes;
    v.run(g, ctx.stream());
  }
}

/// Bytes the 16-bit trailing updates' operands take (both at their largest: N x outer).
inline double low_update_bytes(const std::string& update, index_t N, index_t outer) {
  return update == "fp16" || update == "bf16" ? 2.0 * N * outer * 2 : 0.0;
}

/// The trailing update C (m x n, ldc) -= A B (K = k): fa.update's arithmetic, or fa.gemm's.
template <typename F>
void trailing_update(context& ctx, factors<F>& fa, index_t m, index_t n, index_t k, const F* a, index_t lda, const F* b,
                     index_t ldb, F* c, index_t ldc, bool lower_only) {
  if constexpr (std::is_same_v<F, float>) {
    if (m > 0 && n > 0 && (fa.update == "fp16" || fa.update == "bf16")) {
      const bool bf = fa.update == "bf16";
      const std::size_t want = static_cast<std::size_t>(fa.N) * fa.outer;
      if (fa.low_a.size() < want) fa.low_a = ctx.allocate<unsigned short>(want), fa.low_b = ctx.allocate<unsigned short>(want);
      cudaStream_t s = ctx.stream();
      const long ea = static_cast<long>(m) * k, eb = static_cast<long>(k) * n;
      if (bf) {
        round_block_kernel<__nv_bfloat16><<<blocks_for(ea), threads, 0, s>>>(a, lda, reinterpret_cast<__nv_bfloat16*>(fa.low_a.data()), m, k);
        round_block_kernel<__nv_bfloat16><<<blocks_for(eb), threads, 0, s>>>(b, ldb, reinterpret_cast<__nv_bfloat16*>(fa.low_b.data()), k, n);
      } else {
        round_block_kernel<__half><<<blocks_for(ea), threads, 0, s>>>(a, lda, reinterpret_cast<__half*>(fa.low_a.data()), m, k);
        round_block_kernel<__half><<<blocks_for(eb), threads, 0, s>>>(b, ldb, reinterpret_cast<__half*>(fa.low_b.data()), k, n);
      }
      LA_CHECK_LAUNCH(s);
      gemm_problem p{m, n, k, ctx.sm_count(), k, n};
      const gemm_variant& v = select_gemm(p, bf ? gemm_input::bf16 : gemm_input::f16, true);
      if (!v.can_implement(p)) throw not_supported("the " + fa.update + " GEMM cannot run this factorization's update on this device");
      const std::size_t ws_bytes = v.workspace_bytes(p);
      gemm_args g{m, n, k, fa.low_a.data(), k, fa.low_b.data(), n, c, ldc, -1.0f, 1.0f, ws_bytes ? ctx.scratch(ws_bytes) : nullptr,
                  ctx.sm_count()};
      g.workspace_size = ws_bytes;
      v.run(g, s);
      return;
    }
  }
  block_gemm<F>(ctx, fa.gemm, m, n, k, a, lda, b, ldb, c, ldc, F(-1), F(1), lower_only);
}

/// Whether the single-kernel path takes an N x N matrix of F: it fits one block's shared memory.
template <typename F>
bool small_fits(const context& ctx, index_t N) {
  return N <= 256 && small_smem<F>(N) + 1024 <= static_cast<std::size_t>(smem_optin(ctx));
}

/// The single-kernel factorization (dense_small.cuh) of A (n x n, ld n) times scale into fa
/// (fa.n, fa.N, fa.nb set); `how`: 0 automatic, 1 LU, 2 Cholesky; `measure`: A's norms,
/// non-finite entries and symmetry too. One launch and one synchronization.
template <typename T, typename F>
small_result factor_small(context& ctx, const T* a, index_t n, double scale, factors<F>& fa, int how, bool measure) {
  cudaStream_t s = ctx.stream();
  const index_t N = fa.N;
  fa.small = true;
  fa.f = ctx.allocate<F>(static_cast<std::size_t>(N) * N);
  fa.inv_l = ctx.allocate<F>(static_cast<std::size_t>(N) * fa.nb);
  fa.inv_u = ctx.allocate<F>(static_cast<std::size_t>(N) * fa.nb);
  fa.perm = ctx.allocate<index_t>(static_cast<std::size_t>(N));
  auto piv = ctx.allocate<index_t>(static_cast<std::size_t>(N));
  auto out = ctx.allocate<small_result>(1);
  const std::size_t smem = small_smem<F>(N);
  LA_CUDA_TRY(cudaFuncSetAttribute(small_factor_kernel<T, F>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  small_factor_kernel<T, F><<<1, small_threads, smem, s>>>(a, static_cast<int>(n), scale, fa.f.data(), static_cast<int>(N), how,
                                                           measure, piv.data(), fa.perm.data(), out.data());
  fa.inverses = false;
  LA_CHECK_LAUNCH(s);
  small_result r;
  LA_CUDA_TRY(cudaMemcpyAsync(&r, out.data(), sizeof r, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  fa.info = r.info, fa.chol = r.chol != 0;
  return r;
}

/// After outer panel [J, JE): the trailing update (update(J, JE, c0, c1) updates columns
/// [c0, c1)) and the next outer panel [JE, JE2) (outer_panel(cx, JE, JE2)). With a side
/// context (look-ahead), the next panel's columns are updated first, the panel is factored on
/// the side stream while the rest of the update runs, and the streams join after both: the
/// two write disjoint columns. Without, the whole update, then the panel.
template <typename Update, typename OuterPanel>
void update_then_next_panel(context& ctx, context* side, phase_timer& pt, index_t J, index_t JE, index_t JE2, index_t N,
                            Update& update, OuterPanel& outer_panel) {
  if (!side) {
    update(J, JE, JE, N);
    pt.mark("update trailing");
    outer_panel(ctx, JE, JE2);
    return;
  }
  stream_event fork, join;
  update(J, JE, JE, JE2);  // the next outer panel's columns first
  fork.order(ctx.stream(), side->stream());
  outer_panel(*side, JE, JE2);
  update(J, JE, JE2, N);
  pt.mark("update trailing (next panel beside it)");
  join.order(side->stream(), ctx.stream());
}

/// The outer panel's width (rounded down to a multiple of the inner block): the trailing
/// update's K. At 256 the trailing updates ran at 22 TFLOP/s (n = 16384, H200), half the
/// square GEMM's rate: each 128 x 128 tile reads and writes C for 256 steps of K.
constexpr index_t outer_width = 512;

/// "auto": above this condition estimate classical refinement of float factors is slow or
/// diverges (condition x float's unit roundoff near 1), so the solves refine by GMRES; above
/// auto_refactor_condition even that stalls and the plan refactors in fp64 at once.
constexpr double auto_gmres_condition = 1e6, auto_refactor_condition = 1e10;

inline index_t choose_block(const context& ctx, index_t n, index_t asked, std::size_t elem) {
  if (asked > 0) {
    LA_EXPECTS(asked % 2 == 0 && asked >= 2 && asked <= 64, "dense_solver: block must be even, from 2 to 64; got " + std::to_string(asked));
    return asked;
  }
  // 32 up to n = 2048: a panel of up to 860 rows of 32 doubles fits one block's shared memory
  // (the panels without a grid barrier); 64 above, where the trailing updates dominate. (16 for
  // LU from n = 860, so that every panel fits one block, measured slower: H100, n = 1024 6.80
  // ms against 5.46, n = 2048 17.90 against 14.26; bench/results/gesv-h100-2026-12-07*.csv.)
  index_t nb = n <= 2048 ? 32 : 64;
  const index_t rows_per_sm = (n + ctx.sm_count() - 1) / ctx.sm_count();
  while (nb > 8 && static_cast<double>(std::max<index_t>(rows_per_sm, 64)) * (nb + 1) * elem > smem_optin(ctx) - 8192) nb /= 2;
  return nb;
}

}  // namespace la::dense_detail
