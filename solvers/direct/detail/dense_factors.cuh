// The blocked factorizations and triangular solves of la::dense_solver on N x N padded
// matrices (dense_device.cu's comment has the algorithm): the GEMM the blocks use, LU with the
// cooperative panel, Cholesky, the solves, the block widths, and LA_DENSE_PROFILE's phase
// timer. Private to solvers/direct.
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

/// With LA_DENSE_PROFILE set, the factorizations time their phases with events and print
/// the sums to stderr (the tuning's breakdown: bench/history/dense-direct-solvers.md).
class phase_timer {
 public:
  explicit phase_timer(cudaStream_t s) : on_(std::getenv("LA_DENSE_PROFILE") != nullptr), s_(s) {
    if (on_) mark("start");
  }
  void mark(const char* phase) {
    if (!on_) return;
    cudaEvent_t e;
    LA_CUDA_TRY(cudaEventCreate(&e));
    LA_CUDA_TRY(cudaEventRecord(e, s_));
    marks_.push_back({phase, e});
  }
  ~phase_timer() {
    if (!on_ || marks_.empty()) return;
    (void)cudaEventSynchronize(marks_.back().second);
    std::map<std::string, float> sum;
    float total = 0;
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0;
      (void)cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second);
      sum[marks_[i].first] += ms, total += ms;
    }
    std::fprintf(stderr, "dense factorization phases (ms):");
    for (const auto& [k, v] : sum) std::fprintf(stderr, " %s %.2f;", k.c_str(), v);
    std::fprintf(stderr, " total %.2f\n", total);
    for (auto& m : marks_) (void)cudaEventDestroy(m.second);
  }
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;

 private:
  bool on_;
  cudaStream_t s_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
};

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

/// LU with partial pivoting of fa.f (dense_device.cu has the algorithm). With look-ahead
/// (fa.lookahead, two outer panels or more), outer panel k + 1 is factored on a second
/// stream while the rest of update k runs: its columns are updated first, and its panels
/// touch only its own columns, so the two streams write disjoint columns; they join before
/// its swaps are applied across the matrix.
template <typename F>
void factor_lu(context& ctx, factors<F>& fa) {
  const index_t N = fa.N, nb = fa.nb;
  cudaStream_t s = ctx.stream();
  fa.chol = false;
  auto piv = ctx.allocate<index_t>(static_cast<std::size_t>(N));
  auto info = ctx.allocate<int>(1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(int), s));
  const index_t nblk = N / nb;
  fa.inv_l = ctx.allocate<F>(static_cast<std::size_t>(N) * nb);
  fa.inv_u = ctx.allocate<F>(static_cast<std::size_t>(N) * nb);
  auto work = ctx.allocate<F>(static_cast<std::size_t>(nb) * N);
  // The panel kernels' shared memory: the opt-in maximum less each kernel's static share.
  cudaFuncAttributes fattr{};
  LA_CUDA_TRY(cudaFuncGetAttributes(&fattr, lu_panel_kernel<F>));
  const int smax = smem_optin(ctx) - static_cast<int>(fattr.sharedSizeBytes);
  LA_CUDA_TRY(cudaFuncSetAttribute(lu_panel_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, smax));
  // The fused one-block panel for the widths it is compiled for (others: the cooperative one).
  void (*block_panel)(F*, index_t, index_t, int, index_t, index_t, index_t*, int*, F*) =
      nb == 8 ? lu_panel_block_kernel<F, 8> : nb == 16 ? lu_panel_block_kernel<F, 16> : nb == 32 ? lu_panel_block_kernel<F, 32>
      : nb == 64 ? lu_panel_block_kernel<F, 64> : nullptr;
  int smax_block = 0;
  if (block_panel) {
    LA_CUDA_TRY(cudaFuncGetAttributes(&fattr, block_panel));
    smax_block = smem_optin(ctx) - static_cast<int>(fattr.sharedSizeBytes);
    LA_CUDA_TRY(cudaFuncSetAttribute(block_panel, cudaFuncAttributeMaxDynamicSharedMemorySize, smax_block));
  }
  const int sm = ctx.sm_count();
  auto cand_v = ctx.allocate<F>(static_cast<std::size_t>(sm) * 2);
  auto cand_r = ctx.allocate<index_t>(static_cast<std::size_t>(sm) * 2);
  auto cand_rows = ctx.allocate<F>(static_cast<std::size_t>(sm) * 2 * nb);
  auto crow = ctx.allocate<F>(static_cast<std::size_t>(nb) * 2);
  const int tri_smem = static_cast<int>(sizeof(F) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  // Two levels: panels of nb columns factored and applied inside an outer panel of NB
  // columns; the trailing matrix right of the outer panel is updated once per outer panel,
  // with K = NB (a GEMM of K = nb would be bound by reading and writing C).
  const index_t NB = fa.outer;
  const int nbi = static_cast<int>(nb);
  const bool ahead = fa.lookahead && N > NB;
  std::unique_ptr<context> side;  // the look-ahead's stream (and its GEMMs' scratch)
  if (ahead) side = std::make_unique<context>(ctx.device(), context::high_priority);
  phase_timer pt(s);
  auto laswp = [&](cudaStream_t st, index_t j0, index_t count, index_t c_begin, index_t c_end, index_t skip_begin,
                   index_t skip_end) {
    const index_t cols = (c_end - c_begin) - (skip_end - skip_begin);
    if (cols <= 0) return;
    laswp_kernel<F><<<blocks_for(cols), threads, 0, st>>>(fa.f.data(), N, j0, count, piv.data(), c_begin, c_end, skip_begin,
                                                          skip_end);
    LA_CHECK_LAUNCH(st);
  };
  // rows [r0, r0 + nb) x cols [c0, c1) = L_b^-1 (those rows), L_b the unit lower block at b.
  auto trsm_rows = [&](context& cx, index_t b, index_t c0, index_t c1) {
    F* a12 = fa.f.data() + static_cast<long>(b) * N + c0;
    const index_t w = c1 - c0;
    block_gemm<F>(cx, fa.gemm, nb, w, nb, fa.inv_l.data() + static_cast<long>(b / nb) * nb * nb, nb, a12, N, work.data(), w,
                  F(1), F(0), false);
    copy_block_kernel<F><<<blocks_for(long(nb) * w), threads, 0, cx.stream()>>>(work.data(), w, a12, N, nb, w, false);
    LA_CHECK_LAUNCH(cx.stream());
  };
  // The panel at column j of the outer panel [J, JE): one block where its rows fit one block's
  // shared memory (its swaps on the outer panel, L11^-1 and U12 fused in: true returned), else
  // the cooperative kernel.
  auto panel = [&](context& cx, index_t J, index_t JE, index_t j) {
    cudaStream_t st = cx.stream();
    const index_t rows = N - j;
    F* fp = fa.f.data();
    if (block_panel && panel_block_smem<F>(rows, nb) <= static_cast<std::size_t>(smax_block)) {
      block_panel<<<1, panel_block_threads, panel_block_smem<F>(rows, nb), st>>>(fp, N, j, static_cast<int>(rows), J, JE,
                                                                               piv.data(), info.data(), fa.inv_l.data());
      LA_CHECK_LAUNCH(st);
      return true;
    }
    const int blocks = static_cast<int>(std::min<index_t>(sm, (rows + 63) / 64));
    int rpb = static_cast<int>((rows + blocks - 1) / blocks);
    const std::size_t smem = sizeof(F) * (static_cast<std::size_t>(rpb) * (nb + 1) + nb);
    if (static_cast<int>(smem) > smax)
      throw not_supported("the LU panel of " + std::to_string(rows) + " rows x " + std::to_string(nb) +
                          " does not fit the device's shared memory; pass a smaller block");
    int per_sm = 0;
    LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lu_panel_kernel<F>, threads, smem));
    if (per_sm < 1) throw not_supported("the LU panel kernel cannot be resident on this device");
    index_t ld = N, j0 = j, rws = rows;
    int nbv = nbi;
    index_t* pv = piv.data();
    F* cv = cand_v.data();
    index_t* cr = cand_r.data();
    F* pr = cand_rows.data();
    F* sr = crow.data();
    int* inf = info.data();
    void* args[] = {&fp, &ld, &j0, &rws, &nbv, &rpb, &pv, &cv, &cr, &pr, &sr, &inf};
    LA_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(lu_panel_kernel<F>), dim3(blocks), dim3(threads), args,
                                            smem, st));
    return false;
  };
  // Outer panel [J, JE): its panels, each followed by its swaps on the outer panel's other
  // columns, L11^-1, U12 and the update of the outer panel right of it.
  auto outer_panel = [&](context& cx, index_t J, index_t JE) {
    cudaStream_t st = cx.stream();
    auto mark = [&](const char* phase) {
      if (&cx == &ctx) pt.mark(phase);  // the profile times the main stream's phases only
    };
    for (index_t j = J; j < JE; j += nb) {
      const bool fused = panel(cx, J, JE, j);
      mark("panel");
      const index_t n2 = JE - j - nb;  // the outer panel's columns right of this one
      if (!fused) {
        laswp(st, j, nb, J, JE, j, j + nb);
        mark("laswp inner");
        tri_inverse_kernel<F><<<1, 64, tri_smem, st>>>(fa.f.data(), N, nbi, j / nb, true, true, fa.inv_l.data());
        LA_CHECK_LAUNCH(st);
        mark("tri_inverse");
        if (n2 > 0) trsm_rows(cx, j, j + nb, JE);
        mark("trsm inner");
      }
      if (n2 > 0) {
        block_gemm<F>(cx, fa.gemm, N - j - nb, n2, nb, fa.f.data() + static_cast<long>(j + nb) * N + j, N,
                      fa.f.data() + static_cast<long>(j) * N + j + nb, N, fa.f.data() + static_cast<long>(j + nb) * N + j + nb,
                      N, F(-1), F(1), false);
        mark("update inner");
      }
    }
  };
  // A22 (rows JE.., columns [c0, c1)) -= L21 U12 for the outer panel [J, JE).
  auto update = [&](index_t J, index_t JE, index_t c0, index_t c1) {
    if (c1 <= c0) return;
    trailing_update<F>(ctx, fa, N - JE, c1 - c0, JE - J, fa.f.data() + static_cast<long>(JE) * N + J, N,
                       fa.f.data() + static_cast<long>(J) * N + c0, N, fa.f.data() + static_cast<long>(JE) * N + c0, N, false);
  };
  outer_panel(ctx, 0, std::min(N, NB));
  for (index_t J = 0; J < N; J += NB) {
    const index_t JE = std::min(N, J + NB);
    laswp(s, J, JE - J, 0, N, J, JE);
    pt.mark("laswp outer");
    if (JE == N) break;
    // U12 = L11^-1 A12 over the outer panel's rows, block by block; then A22 -= L21 U12.
    for (index_t b = J; b < JE; b += nb) {
      trsm_rows(ctx, b, JE, N);
      if (b + nb < JE)
        block_gemm<F>(ctx, fa.gemm, JE - b - nb, N - JE, nb, fa.f.data() + static_cast<long>(b + nb) * N + b, N,
                      fa.f.data() + static_cast<long>(b) * N + JE, N, fa.f.data() + static_cast<long>(b + nb) * N + JE, N, F(-1),
                      F(1), false);
    }
    pt.mark("trsm outer");
    const index_t JE2 = std::min(N, JE + NB);
    // Look-ahead where the next outer panel's panels run in one block each: a cooperative panel
    // beside the GEMM waited for multiprocessors and lost (H100, n = 16384: 346 ms against 250
    // ms on one stream, bench/history/dense-factorizations-faster-than-cusolver.md).
    const bool fits_one_block = block_panel && panel_block_smem<F>(N - JE, nb) <= static_cast<std::size_t>(smax_block);
    update_then_next_panel(ctx, ahead && fits_one_block ? side.get() : nullptr, pt, J, JE, JE2, N, update, outer_panel);
  }
  tri_inverse_kernel<F><<<static_cast<unsigned>(nblk), 64, tri_smem, s>>>(fa.f.data(), N, static_cast<int>(nb), 0, false,
                                                                          false, fa.inv_u.data());
  LA_CHECK_LAUNCH(s);
  fa.piv.resize(static_cast<std::size_t>(N));
  LA_CUDA_TRY(cudaMemcpyAsync(fa.piv.data(), piv.data(), sizeof(index_t) * N, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(&fa.info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  // The swaps as one permutation: row i of P A is row perm[i] of A.
  std::vector<index_t> perm(static_cast<std::size_t>(N));
  for (index_t i = 0; i < N; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (index_t k = 0; k < N; ++k) std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(fa.piv[k])]);
  fa.perm = ctx.allocate<index_t>(static_cast<std::size_t>(N));
  LA_CUDA_TRY(cudaMemcpyAsync(fa.perm.data(), perm.data(), sizeof(index_t) * N, cudaMemcpyHostToDevice, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
}

/// Cholesky of fa.f (lower). With look-ahead, as LU's: outer panel k + 1's columns are updated
/// first, then it is factored on a second stream while the rest of update k runs.
template <typename F>
void factor_cholesky(context& ctx, factors<F>& fa) {
  const index_t N = fa.N, nb = fa.nb;
  cudaStream_t s = ctx.stream();
  fa.chol = true;
  auto info = ctx.allocate<int>(1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(int), s));
  fa.inv_l = ctx.allocate<F>(static_cast<std::size_t>(N) * nb);
  auto inv_t = ctx.allocate<F>(static_cast<std::size_t>(nb * nb));
  auto work = ctx.allocate<F>(static_cast<std::size_t>(nb) * N);
  auto work_in = ctx.allocate<F>(static_cast<std::size_t>(fa.outer) * nb);  // the panels' L21 block transposed
  auto work_t = ctx.allocate<F>(static_cast<std::size_t>(fa.outer) * N);    // the outer panel's L21 transposed
  const int nbi = static_cast<int>(nb);
  const int pot_smem = static_cast<int>(sizeof(F) * nb * (nb + 1));
  const int tri_smem = static_cast<int>(sizeof(F) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(potrf_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, pot_smem));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  // Two levels, as LU: the nb-wide blocks update only the outer panel's columns; the
  // trailing matrix right of it is updated once per outer panel with K = NB.
  const index_t NB = fa.outer;
  const bool lower = std::is_same_v<F, double>;
  const bool ahead = fa.lookahead && N > NB;
  std::unique_ptr<context> side;
  if (ahead) side = std::make_unique<context>(ctx.device(), context::high_priority);
  // The two-launch panel for the widths it is compiled for (others: potrf, inverse, GEMM, copies).
  void (*fused_diag)(F*, index_t, index_t, F*, int*) = nb == 8 ? chol_diag_kernel<F, 8> : nb == 16 ? chol_diag_kernel<F, 16>
                                                       : nb == 32 ? chol_diag_kernel<F, 32> : nb == 64 ? chol_diag_kernel<F, 64> : nullptr;
  void (*fused_l21)(F*, index_t, index_t, index_t, const F*, F*, index_t, const int*) =
      nb == 8 ? chol_l21_kernel<F, 8> : nb == 16 ? chol_l21_kernel<F, 16> : nb == 32 ? chol_l21_kernel<F, 32>
      : nb == 64 ? chol_l21_kernel<F, 64> : nullptr;
  const bool fused = fused_diag != nullptr;
  if (fused)
    LA_CUDA_TRY(cudaFuncSetAttribute(fused_diag, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(chol_diag_smem<F>(nbi))));
  phase_timer pt(s);
  auto outer_panel = [&](context& cx, index_t J, index_t JE) {
    cudaStream_t st = cx.stream();
    auto mark = [&](const char* phase) {
      if (&cx == &ctx) pt.mark(phase);
    };
    for (index_t j = J; j < JE; j += nb) {
      if (fused) {  // two launches: the diagonal block and its inverse, then L21 (and its transpose)
        fused_diag<<<1, 256, chol_diag_smem<F>(nbi), st>>>(fa.f.data(), N, j, fa.inv_l.data(), info.data());
        LA_CHECK_LAUNCH(st);
        mark("potrf");
        const index_t m2 = N - j - nb, w2 = JE - j - nb;
        if (m2 == 0) continue;
        fused_l21<<<blocks_for(m2, 128), 128, 0, st>>>(fa.f.data(), N, j, N, fa.inv_l.data(), work_in.data(), w2, info.data());
        LA_CHECK_LAUNCH(st);
        mark("trsm");
        if (w2 == 0) continue;
        block_gemm<F>(cx, fa.gemm, m2, w2, nb, fa.f.data() + static_cast<long>(j + nb) * N + j, N, work_in.data(), w2,
                      fa.f.data() + static_cast<long>(j + nb) * N + j + nb, N, F(-1), F(1), lower);
        mark("update inner");
        continue;
      }
      potrf_kernel<F><<<1, threads, pot_smem, st>>>(fa.f.data(), N, j, nbi, info.data());
      LA_CHECK_LAUNCH(st);
      mark("potrf");
      tri_inverse_kernel<F><<<1, 64, tri_smem, st>>>(fa.f.data(), N, nbi, j / nb, true, false, fa.inv_l.data());
      LA_CHECK_LAUNCH(st);
      mark("tri_inverse");
      const index_t m2 = N - j - nb;
      if (m2 == 0) continue;
      copy_block_kernel<F><<<blocks_for(long(nb) * nb), threads, 0, st>>>(fa.inv_l.data() + static_cast<long>(j / nb) * nb * nb,
                                                                          nb, inv_t.data(), nb, nb, nb, true);
      LA_CHECK_LAUNCH(st);
      F* a21 = fa.f.data() + static_cast<long>(j + nb) * N + j;
      block_gemm<F>(cx, fa.gemm, m2, nb, nb, a21, N, inv_t.data(), nb, work.data(), nb, F(1), F(0), false);
      copy_block_kernel<F><<<blocks_for(long(m2) * nb), threads, 0, st>>>(work.data(), nb, a21, N, m2, nb, false);
      LA_CHECK_LAUNCH(st);
      mark("trsm");
      const index_t w2 = JE - j - nb;
      if (w2 == 0) continue;
      copy_block_kernel<F><<<blocks_for(long(w2) * nb), threads, 0, st>>>(work.data(), nb, work_in.data(), w2, w2, nb, true);
      LA_CHECK_LAUNCH(st);
      block_gemm<F>(cx, fa.gemm, m2, w2, nb, work.data(), nb, work_in.data(), w2,
                    fa.f.data() + static_cast<long>(j + nb) * N + j + nb, N, F(-1), F(1), lower);
      mark("update inner");
    }
  };
  // A22's columns [c0, c1), rows c0.. (its lower part) -= L21 L21^T for the outer panel [J, JE).
  auto update = [&](index_t J, index_t JE, index_t c0, index_t c1) {
    if (c1 <= c0) return;
    const index_t mo = N - JE;
    trailing_update<F>(ctx, fa, N - c0, c1 - c0, JE - J, fa.f.data() + static_cast<long>(c0) * N + J, N,
                       work_t.data() + (c0 - JE), mo, fa.f.data() + static_cast<long>(c0) * N + c0, N, lower);
  };
  outer_panel(ctx, 0, std::min(N, NB));
  for (index_t J = 0; J < N; J += NB) {
    const index_t JE = std::min(N, J + NB);
    const index_t mo = N - JE, kw = JE - J;
    if (mo == 0) break;
    const F* l21 = fa.f.data() + static_cast<long>(JE) * N + J;
    copy_block_kernel<F><<<blocks_for(long(mo) * kw), threads, 0, s>>>(l21, N, work_t.data(), mo, mo, kw, true);
    LA_CHECK_LAUNCH(s);
    pt.mark("transpose outer");
    const index_t JE2 = std::min(N, JE + NB);
    update_then_next_panel(ctx, ahead ? side.get() : nullptr, pt, J, JE, JE2, N, update, outer_panel);
  }
  LA_CUDA_TRY(cudaMemcpyAsync(&fa.info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
}

/// B (N x k) = M^-1 B for one triangle: lower (forward) or upper (backward), M = F's
/// triangle or its transpose; inv: the diagonal blocks' inverses of F's triangle.
template <typename F>
void tri_solve(context& ctx, const factors<F>& fa, const F* inv, bool lower_eff, bool transposed, F* B, index_t k) {
  const index_t N = fa.N, nb = fa.nb, nblk = N / nb;
  cudaStream_t s = ctx.stream();
  const int nbi = static_cast<int>(nb);
  const int dsmem = static_cast<int>(sizeof(F) * (nb * nb + nb * 32));
  LA_CUDA_TRY(cudaFuncSetAttribute(diag_apply_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, dsmem));
  const bool by_gemm = !transposed && k >= 16;
  const std::size_t usmem = sizeof(F) * nb * k;
  if (!by_gemm) {
    LA_EXPECTS(usmem <= static_cast<std::size_t>(smem_optin(ctx)), "dense_solver: too many right-hand sides for a transposed solve");
    LA_CUDA_TRY(cudaFuncSetAttribute(off_update_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(usmem)));
  }
  for (index_t t = 0; t < nblk; ++t) {
    const index_t b = lower_eff ? t : nblk - 1 - t;
    const index_t j0 = b * nb;
    diag_apply_kernel<F><<<blocks_for(k, 32), threads, dsmem, s>>>(inv + static_cast<long>(b) * nb * nb, transposed,
                                                                   B + static_cast<long>(j0) * k, nbi, k);
    LA_CHECK_LAUNCH(s);
    const index_t r_begin = lower_eff ? j0 + nb : 0, r_end = lower_eff ? N : j0;
    if (r_end <= r_begin) continue;
    if (by_gemm) {
      block_gemm<F>(ctx, std::is_same_v<F, double> ? fa.gemm : std::string("auto"), r_end - r_begin, k, nb, fa.f.data() + static_cast<long>(r_begin) * N + j0, N,
                    B + static_cast<long>(j0) * k, k, B + static_cast<long>(r_begin) * k, k, F(-1), F(1), false);
    } else if (!transposed) {
      off_update_kernel<F><<<blocks_for(r_end - r_begin, threads / 32), threads, usmem, s>>>(fa.f.data(), N, j0, nbi, B, k,
                                                                                           r_begin, r_end, false);
      LA_CHECK_LAUNCH(s);
    } else {
      off_update_kernel<F><<<blocks_for(r_end - r_begin), threads, usmem, s>>>(fa.f.data(), N, j0, nbi, B, k, r_begin, r_end,
                                                                              true);
      LA_CHECK_LAUNCH(s);
    }
  }
}

/// The diagonal blocks' inverses of fa's triangles where the small path left them unmade
/// (the transposed solves of the condition estimate read them).
template <typename F>
void ensure_inverses(context& ctx, factors<F>& fa) {
  if (fa.inverses) return;
  cudaStream_t s = ctx.stream();
  const index_t nb = fa.nb;
  const int tri_smem = static_cast<int>(sizeof(F) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  const auto nblk = static_cast<unsigned>(fa.N / nb);
  tri_inverse_kernel<F><<<nblk, 64, tri_smem, s>>>(fa.f.data(), fa.N, static_cast<int>(nb), 0, true, !fa.chol, fa.inv_l.data());
  LA_CHECK_LAUNCH(s);
  if (!fa.chol) {
    tri_inverse_kernel<F><<<nblk, 64, tri_smem, s>>>(fa.f.data(), fa.N, static_cast<int>(nb), 0, false, false, fa.inv_u.data());
    LA_CHECK_LAUNCH(s);
  }
  fa.inverses = true;
}

/// X (N x k, in place) = A^-1 X (or A^-T X) from the factors.
template <typename F>
void factor_solve(context& ctx, const factors<F>& fa, F* X, index_t k, bool transposed) {
  cudaStream_t s = ctx.stream();
  const index_t N = fa.N;
  if (fa.small && !transposed) {
    const std::size_t wbytes = sizeof(F) * static_cast<std::size_t>(N) * k;
    const bool staged = wbytes <= static_cast<std::size_t>(smem_optin(ctx)) - 1024;
    device_buffer<F> w;
    if (!staged) w = ctx.allocate<F>(static_cast<std::size_t>(N) * k);
    if (staged && wbytes > 48 * 1024)
      LA_CUDA_TRY(cudaFuncSetAttribute(small_solve_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(wbytes)));
    small_solve_kernel<F><<<1, small_threads, staged ? wbytes : 0, s>>>(fa.f.data(), static_cast<int>(N), fa.chol, fa.perm.data(),
                                                                       X, static_cast<int>(k), w.data(), staged);
    LA_CHECK_LAUNCH(s);
    return;
  }
  if (fa.chol) {
    tri_solve(ctx, fa, fa.inv_l.data(), true, false, X, k);
    tri_solve(ctx, fa, fa.inv_l.data(), false, true, X, k);
    return;
  }
  auto tmp = ctx.allocate<F>(static_cast<std::size_t>(N) * k);
  if (!transposed) {
    permute_rows_kernel<F><<<blocks_for(long(N) * k), threads, 0, s>>>(X, tmp.data(), fa.perm.data(), N, k, false);
    LA_CHECK_LAUNCH(s);
    tri_solve(ctx, fa, fa.inv_l.data(), true, false, tmp.data(), k);
    tri_solve(ctx, fa, fa.inv_u.data(), false, false, tmp.data(), k);
    LA_CUDA_TRY(cudaMemcpyAsync(X, tmp.data(), sizeof(F) * N * static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, s));
  } else {
    tri_solve(ctx, fa, fa.inv_u.data(), true, true, X, k);   // U^T: lower
    tri_solve(ctx, fa, fa.inv_l.data(), false, true, X, k);  // L^T: upper, unit
    permute_rows_kernel<F><<<blocks_for(long(N) * k), threads, 0, s>>>(X, tmp.data(), fa.perm.data(), N, k, true);
    LA_CHECK_LAUNCH(s);
    LA_CUDA_TRY(cudaMemcpyAsync(X, tmp.data(), sizeof(F) * N * static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, s));
  }
}

/// The float factors in double (GMRES-based refinement applies M^-1 = (L U)^-1 of the float
/// factors in double arithmetic: applied in float, its rounding, times the condition number,
/// would cap what GMRES can resolve). The diagonal blocks' inverses are recomputed in double.
inline void promote_factors(context& ctx, const factors<float>& lo, factors<double>& hi) {
  cudaStream_t s = ctx.stream();
  const index_t N = lo.N, nb = lo.nb;
  hi.n = lo.n, hi.N = N, hi.nb = nb, hi.outer = lo.outer, hi.chol = lo.chol, hi.info = lo.info, hi.gemm = "auto";
  hi.small = lo.small && small_fits<double>(ctx, N);
  hi.f = ctx.allocate<double>(static_cast<std::size_t>(N) * N);
  convert_rows_kernel<float, double><<<blocks_for(long(N) * N), threads, 0, s>>>(lo.f.data(), N, N, N, hi.f.data(), 1.0);
  LA_CHECK_LAUNCH(s);
  const int tri_smem = static_cast<int>(sizeof(double) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  const auto nblk = static_cast<unsigned>(N / nb);
  hi.inv_l = ctx.allocate<double>(static_cast<std::size_t>(N) * nb);
  tri_inverse_kernel<double><<<nblk, 64, tri_smem, s>>>(hi.f.data(), N, static_cast<int>(nb), 0, true, !lo.chol, hi.inv_l.data());
  LA_CHECK_LAUNCH(s);
  if (!lo.chol) {
    hi.inv_u = ctx.allocate<double>(static_cast<std::size_t>(N) * nb);
    tri_inverse_kernel<double><<<nblk, 64, tri_smem, s>>>(hi.f.data(), N, static_cast<int>(nb), 0, false, false, hi.inv_u.data());
    LA_CHECK_LAUNCH(s);
    hi.perm = ctx.allocate<index_t>(static_cast<std::size_t>(N));
    LA_CUDA_TRY(cudaMemcpyAsync(hi.perm.data(), lo.perm.data(), sizeof(index_t) * N, cudaMemcpyDeviceToDevice, s));
    hi.piv = lo.piv;
  }
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
