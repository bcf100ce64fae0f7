// la::dense_solver's LU with partial pivoting on the N x N padded factors: the panels (one
// block or cooperative), their swaps, U12 and the trailing updates, with look-ahead. Private
// to solvers/direct.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <la/solvers/direct/detail/dense_factors.cuh>

namespace la::dense_detail {

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

}  // namespace la::dense_detail
