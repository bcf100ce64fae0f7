// la::dense_solver's solves with the factors: the block triangular solves (the single-kernel
// one for the small path), the diagonal inverses made on demand, and the float factors
// promoted to double for GMRES-based refinement. Private to solvers/direct.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <la/solvers/direct/detail/dense_factors.cuh>

namespace la::dense_detail {

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

}  // namespace la::dense_detail
