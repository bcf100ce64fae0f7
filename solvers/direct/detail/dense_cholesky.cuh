// la::dense_solver's Cholesky on the N x N padded factors: the diagonal blocks, L21 and the
// trailing updates on the lower triangle, with look-ahead. Private to solvers/direct.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <la/solvers/direct/detail/dense_factors.cuh>

namespace la::dense_detail {

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

}  // namespace la::dense_detail
