// la::dense_solver<T>'s solves (dense_solver.hpp): the factors' solve of B, then, for
// mixed precision, refinement in double against A: classical, GMRES-based where classical
// stalls (one GMRES cycle in double a step on M^-1 A d = M^-1 r, the float factors promoted
// to double for M^-1), and an fp64 refactorization where that stalls too.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/solvers/detail/gmres_basis.cuh>
#include <la/solvers/direct/detail/dense_impl.cuh>

namespace la {
using namespace dense_detail;
namespace {
/// v = column c of M (n x k, ld k), times scale; or, add, M[:, c] += v.
__global__ void column_copy_kernel(double* M, index_t n, index_t k, index_t c, double* v, double scale, bool add) {
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (add) M[static_cast<long>(i) * k + c] += v[i] * scale;
  else v[i] = M[static_cast<long>(i) * k + c] * scale;
}

}  // namespace

template <typename T>
dense_solve_report dense_solver<T>::solve(device_vector<T>& b) {
  LA_EXPECTS(b.size() == p_->n, "dense_solver: the right-hand side has " + std::to_string(b.size()) + " entries, A has " +
                                    std::to_string(p_->n) + " rows");
  device_dense<T> view(p_->n, 1, 1, device_buffer<T>::borrow(b.data(), static_cast<std::size_t>(p_->n), p_->ctx->device()));
  return solve(view);
}

template <typename T>
dense_solve_report dense_solver<T>::solve(device_dense<T>& bm) {
  impl& p = *p_;
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const double t0 = now_seconds();
  const index_t n = p.n, k = bm.cols();
  LA_EXPECTS(bm.rows() == n, "dense_solver: B has " + std::to_string(bm.rows()) + " rows, A has " + std::to_string(n));
  LA_EXPECTS(bm.ld() == k, "dense_solver: B must be packed (ld = cols)");
  dense_solve_report rep;
  rep.refactored = p.refactored_at_factor;
  if (n == 0 || k == 0) return rep;
  if (!p.status.ok())
    throw invalid_argument("dense_solver: A is singular: " + p.how + " finds no " +
                           (p.chol ? "positive" : "nonzero") + " pivot in column " + std::to_string(p.status.bad_column));
  T* B = bm.view().values;
  // b kept in double for the residuals; its column maxima for the backward error.
  auto b64 = c.allocate<double>(static_cast<std::size_t>(n) * k);
  convert_rows_kernel<T, double><<<blocks_for(long(n) * k), threads, 0, s>>>(B, n, n, k, b64.data(), 1.0);
  LA_CHECK_LAUNCH(s);
  auto bmax = c.allocate<double>(static_cast<std::size_t>(k));
  auto xmax = c.allocate<double>(static_cast<std::size_t>(k));
  auto rmax = c.allocate<double>(static_cast<std::size_t>(k));
  column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(b64.data(), n, k, bmax.data());
  LA_CHECK_LAUNCH(s);
  auto r64 = c.allocate<double>(static_cast<std::size_t>(n) * k);
  auto x64 = c.allocate<double>(static_cast<std::size_t>(n) * k);
  // The worst column's backward error of the current x (x64); r_max, b_max: the largest |r|, |b|.
  double r_max = 0, b_max = 0;
  std::vector<double> r_col_max(static_cast<std::size_t>(k));
  auto backward = [&]() {
    if constexpr (std::is_same_v<T, double>) {
      if (k >= 16) {
        // Many right-hand sides (AMG's coarse inverse: k = n): R = B - A X on the fp64 GEMM
        // (fp64 products and sums, as the kernel's), not k matrix-vector products.
        LA_CUDA_TRY(cudaMemcpyAsync(r64.data(), b64.data(), sizeof(double) * n * k, cudaMemcpyDeviceToDevice, s));
        dgemm_args g;
        g.m = n, g.n = k, g.k = n, g.a = p.a.data(), g.lda = n, g.b = x64.data(), g.ldb = k, g.c = r64.data(), g.ldc = k;
        g.alpha = -1, g.beta = 1;
        dgemm(g, s);
      }
    }
    if (!std::is_same_v<T, double> || k < 16) {
      residual_kernel<T, double><<<dim3(blocks_for(n, threads / 32), static_cast<unsigned>(k)), threads, 0, s>>>(
          p.a.data(), n, n, x64.data(), b64.data(), r64.data(), k);
      LA_CHECK_LAUNCH(s);
    }
    column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(x64.data(), n, k, xmax.data());
    LA_CHECK_LAUNCH(s);
    column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(r64.data(), n, k, rmax.data());
    LA_CHECK_LAUNCH(s);
    std::vector<double> hb(static_cast<std::size_t>(k)), hx(hb.size()), hr(hb.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), xmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    double worst = 0;
    r_max = 0;
    for (std::size_t i = 0; i < hb.size(); ++i) {
      r_max = std::max(r_max, hr[i]);
      r_col_max[i] = hr[i];
      b_max = std::max(b_max, hb[i]);
      const double den = p.a_inf * hx[i] + hb[i];
      const double be = den > 0 ? hr[i] / den : (hr[i] > 0 ? INFINITY : 0.0);
      worst = std::isnan(hr[i]) ? INFINITY : std::max(worst, be);
    }
    return worst;
  };
  // One solve with the factors of precision F: out (n x kk, ld kk) += out_scale A^-1 (rhs_scale rhs).
  auto apply_to = [&](auto& fa, const double* rhs, index_t kk, double rhs_scale, double* out, double out_scale) {
    using F = typename std::decay_t<decltype(fa.f)>::value_type;
    auto w = c.allocate<F>(static_cast<std::size_t>(fa.N) * kk);
    convert_rows_kernel<double, F><<<blocks_for(long(fa.N) * kk), threads, 0, s>>>(rhs, n, fa.N, kk, w.data(), rhs_scale);
    LA_CHECK_LAUNCH(s);
    factor_solve(c, fa, w.data(), kk, false);
    add_kernel<F><<<blocks_for(long(n) * kk), threads, 0, s>>>(out, w.data(), static_cast<long>(n) * kk, out_scale);
    LA_CHECK_LAUNCH(s);
  };
  auto apply = [&](auto& fa, const double* rhs, double rhs_scale, double out_scale) {
    apply_to(fa, rhs, k, rhs_scale, x64.data(), out_scale);
  };
  auto pow2_inverse = [](double m) { return m > 0 && std::isfinite(m) ? std::ldexp(1.0, -std::ilogb(m)) : 1.0; };
  // GMRES-based refinement (solvers/detail/gmres_cycle.hpp): for each column, one GMRES cycle
  // in double on M^-1 A d = M^-1 r, M = the float factors promoted to double; then x += d.
  int gmres_iterations = 0;
  auto gmres_refine = [&] {
    if (!p.low64_tried) {
      p.low64_tried = true;
      check_device_memory(c, double(p.low.N) * p.low.N * 8 + 2.0 * p.low.N * p.low.nb * 8,
                          "GMRES-based refinement's double copy of the float factors");
      promote_factors(c, p.low, p.low64);
    }
    const int m = static_cast<int>(std::min<index_t>(n, std::max(1, p.opt.gmres_restart)));
    auto tmp = c.allocate<double>(static_cast<std::size_t>(n));
    auto zero = c.allocate<double>(static_cast<std::size_t>(n));
    LA_CUDA_TRY(cudaMemsetAsync(zero.data(), 0, sizeof(double) * n, s));
    const unsigned vb = blocks_for(n);
    // w = M^-1 A v: tmp = 0 - A v; w = -(sA)^-1 (s tmp).
    auto op = [&](const double* v, double* w) {
      residual_kernel<T, double><<<dim3(blocks_for(n, threads / 32), 1), threads, 0, s>>>(p.a.data(), n, n, v, zero.data(),
                                                                                          tmp.data(), 1);
      LA_CHECK_LAUNCH(s);
      LA_CUDA_TRY(cudaMemsetAsync(w, 0, sizeof(double) * n, s));
      apply_to(p.low64, tmp.data(), 1, p.scale, w, -1.0);
    };
    refine_detail::device_basis<decltype(op)> basis(c, n, m, op);
    for (index_t col = 0; col < k; ++col) {
      // V_0 = M^-1 r, r scaled by a power of two near 1 / max|r| for float's range.
      column_copy_kernel<<<vb, threads, 0, s>>>(r64.data(), n, k, col, tmp.data(), 1.0, false);
      LA_CHECK_LAUNCH(s);
      LA_CUDA_TRY(cudaMemsetAsync(basis.vec(0), 0, sizeof(double) * n, s));
      const double t = pow2_inverse(r_col_max[static_cast<std::size_t>(col)]);
      apply_to(p.low64, tmp.data(), 1, t, basis.vec(0), p.scale / t);
      const int its = refine_detail::gmres_cycle(basis, m, p.opt.gmres_tolerance);
      gmres_iterations += its;
      if (its == 0) continue;
      column_copy_kernel<<<vb, threads, 0, s>>>(x64.data(), n, k, col, basis.correction(), 1.0, true);
      LA_CHECK_LAUNCH(s);
    }
  };
  LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
  int steps = 0;
  double be = 0;
  bool used_gmres = false;
  if (!p.mixed) {
    apply(p.full, b64.data(), 1.0, 1.0);
    be = backward();
  } else {
    // The float factors are of s A (s = scale): A^-1 r = s (sA)^-1 r, and r goes in scaled by
    // a power of two t near 1/max|r| (float's range): A^-1 r = (s / t) (sA)^-1 (t r).
    be = backward();  // x = 0: r = b, and b_max
    apply(p.low, b64.data(), pow2_inverse(b_max), p.scale / pow2_inverse(b_max));
    be = backward();
    // The best x so far: a classical refinement that diverges hands GMRES the best one.
    auto x_best = c.allocate<double>(static_cast<std::size_t>(n) * k);
    double best = be;
    LA_CUDA_TRY(cudaMemcpyAsync(x_best.data(), x64.data(), sizeof(double) * n * k, cudaMemcpyDeviceToDevice, s));
    const refinement_kind how = p.opt.refinement;
    bool gmres = how == refinement_kind::gmres;
    double prev = be;
    int slow = 0;
    while (be > p.opt.refine_tolerance && steps < p.opt.max_refinement) {
      if (gmres) {
        used_gmres = true;
        try {
          gmres_refine();
        } catch (const out_of_memory&) {
          rep.message += "GMRES-based refinement's double copy of the factors does not fit; ";
          break;
        }
      } else {
        const double t = pow2_inverse(r_max);
        apply(p.low, r64.data(), t, p.scale / t);
      }
      ++steps;
      be = backward();
      if (be < best) {
        best = be;
        LA_CUDA_TRY(cudaMemcpyAsync(x_best.data(), x64.data(), sizeof(double) * n * k, cudaMemcpyDeviceToDevice, s));
      }
      if (!(be < 0.5 * prev)) ++slow;
      else slow = 0;
      if (slow >= 2 || !std::isfinite(be)) {
        if (gmres || how != refinement_kind::automatic) break;
        gmres = true, slow = 0;  // classical refinement stalled: GMRES from the best x
        LA_CUDA_TRY(cudaMemcpyAsync(x64.data(), x_best.data(), sizeof(double) * n * k, cudaMemcpyDeviceToDevice, s));
        be = backward();
      }
      prev = be;
    }
    if (!(be <= p.opt.refine_tolerance)) {
      const int mixed_steps = steps;
      p.refactor_full();
      rep.refactored = true;
      if (!p.status.ok())
        throw invalid_argument("dense_solver: A is singular: " + p.how + " finds no nonzero pivot in column " +
                               std::to_string(p.status.bad_column));
      LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
      apply(p.full, b64.data(), 1.0, 1.0);
      be = backward();
      rep.message = "mixed precision stalled after " + std::to_string(mixed_steps) + " refinement steps" +
                    (used_gmres ? " (GMRES-based included)" : "") + "; refactored in fp64. ";
      steps = 0;
    }
  }
  // One classical step in working precision where it helps (the residual in double).
  if (!p.mixed && be > 4e-16 && steps == 0) {
    apply(p.full, r64.data(), 1.0, 1.0);
    const double be2 = backward();
    if (be2 < be) be = be2, steps = 1;
    else {  // undo: x -= the correction (recompute from scratch is simpler)
      LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
      apply(p.full, b64.data(), 1.0, 1.0);
      be = backward();
    }
  }
  // The worst column's ||b - Ax||_2 / ||b||_2 (r64 and rmax hold the last residual).
  {
    auto rn = c.allocate<double>(static_cast<std::size_t>(k));
    auto bn = c.allocate<double>(static_cast<std::size_t>(k));
    column_norm2_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(r64.data(), n, k, rmax.data(), rn.data());
    LA_CHECK_LAUNCH(s);
    column_norm2_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(b64.data(), n, k, bmax.data(), bn.data());
    LA_CHECK_LAUNCH(s);
    std::vector<double> hr(static_cast<std::size_t>(k)), hb(hr.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rn.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bn.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < hr.size(); ++i)
      rep.relative_residual = std::max(rep.relative_residual, hb[i] > 0 ? hr[i] / hb[i] : (hr[i] > 0 ? INFINITY : 0.0));
  }
  convert_rows_kernel<double, T><<<blocks_for(long(n) * k), threads, 0, s>>>(x64.data(), n, n, k, B, 1.0);
  LA_CHECK_LAUNCH(s);
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  rep.precision = p.precision;
  rep.refinement_steps = steps;
  rep.gmres_iterations = gmres_iterations;
  rep.backward_error = be;
  rep.seconds = now_seconds() - t0;
  rep.message += p.how + " (" + p.precision + "), " + std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") +
                 (used_gmres && !rep.refactored ? " (GMRES-based, " + std::to_string(gmres_iterations) + " GMRES iterations)" : "") +
                 ", backward error " + std::to_string(be);
  return rep;
}

#define LA_DENSE_SOLVES(T)                                                 \
  template dense_solve_report dense_solver<T>::solve(device_vector<T>&); \
  template dense_solve_report dense_solver<T>::solve(device_dense<T>&);
LA_DENSE_SOLVES(float)
LA_DENSE_SOLVES(double)

}  // namespace la
