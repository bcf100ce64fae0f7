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

namespace {
/// One solve of B's k columns: the state its steps share (b and x in double, the residual,
/// the columns' maxima) and the steps themselves, each named. `Impl` is dense_solver<T>::impl.
template <typename T, typename Impl>
class column_solve {
 public:
  column_solve(Impl& p, const T* B, index_t k)
      : p_(p), c_(*p.ctx), s_(c_.stream()), n_(p.n), k_(k), nk_(static_cast<std::size_t>(p.n) * k),
        b64_(c_.allocate<double>(nk_)), x64_(c_.allocate<double>(nk_)), r64_(c_.allocate<double>(nk_)),
        bmax_(c_.allocate<double>(static_cast<std::size_t>(k))), xmax_(c_.allocate<double>(static_cast<std::size_t>(k))),
        rmax_(c_.allocate<double>(static_cast<std::size_t>(k))), r_col_max_(static_cast<std::size_t>(k)) {
    // b kept in double for the residuals; its column maxima for the backward error.
    convert_rows_kernel<T, double><<<blocks_for(long(n_) * k_), threads, 0, s_>>>(B, n_, n_, k_, b64_.data(), 1.0);
    LA_CHECK_LAUNCH(s_);
    column_max_kernel<double><<<static_cast<unsigned>(k_), threads, 0, s_>>>(b64_.data(), n_, k_, bmax_.data());
    LA_CHECK_LAUNCH(s_);
    clear_x();
  }

  /// The solve: the factors' (and, for mixed precision, its refinement), then one classical
  /// step in working precision where it helps; x into B.
  dense_solve_report run(T* B) {
    dense_solve_report rep;
    rep.refactored = p_.refactored_at_factor;
    double be = 0;
    if (!p_.mixed) {
      apply(p_.full, b64_.data(), 1.0, 1.0);
      be = backward();
    } else {
      be = mixed(rep);
    }
    if (!p_.mixed && be > 4e-16 && steps_ == 0) be = working_step(be);
    rep.relative_residual = worst_relative_residual();
    convert_rows_kernel<double, T><<<blocks_for(long(n_) * k_), threads, 0, s_>>>(x64_.data(), n_, n_, k_, B, 1.0);
    LA_CHECK_LAUNCH(s_);
    LA_CUDA_TRY(cudaStreamSynchronize(s_));
    rep.precision = p_.precision;
    rep.refinement_steps = steps_;
    rep.gmres_iterations = gmres_iterations_;
    rep.backward_error = be;
    rep.message += p_.how + " (" + p_.precision + "), " + std::to_string(steps_) + " refinement step" +
                   (steps_ == 1 ? "" : "s") +
                   (used_gmres_ && !rep.refactored ? " (GMRES-based, " + std::to_string(gmres_iterations_) + " GMRES iterations)"
                                                   : "") +
                   ", backward error " + std::to_string(be);
    return rep;
  }

 private:
  static double pow2_inverse(double m) { return m > 0 && std::isfinite(m) ? std::ldexp(1.0, -std::ilogb(m)) : 1.0; }
  void clear_x() { LA_CUDA_TRY(cudaMemsetAsync(x64_.data(), 0, sizeof(double) * nk_, s_)); }
  void copy(double* to, const double* from) {
    LA_CUDA_TRY(cudaMemcpyAsync(to, from, sizeof(double) * nk_, cudaMemcpyDeviceToDevice, s_));
  }

  /// R = B - A X (r64_), and the worst column's backward error of X; r_max_, b_max_: the
  /// largest |r|, |b|.
  double backward() {
    residual();
    column_max_kernel<double><<<static_cast<unsigned>(k_), threads, 0, s_>>>(x64_.data(), n_, k_, xmax_.data());
    LA_CHECK_LAUNCH(s_);
    column_max_kernel<double><<<static_cast<unsigned>(k_), threads, 0, s_>>>(r64_.data(), n_, k_, rmax_.data());
    LA_CHECK_LAUNCH(s_);
    std::vector<double> hb(static_cast<std::size_t>(k_)), hx(hb.size()), hr(hb.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bmax_.data(), sizeof(double) * k_, cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), xmax_.data(), sizeof(double) * k_, cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rmax_.data(), sizeof(double) * k_, cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaStreamSynchronize(s_));
    double worst = 0;
    r_max_ = 0;
    for (std::size_t i = 0; i < hb.size(); ++i) {
      r_max_ = std::max(r_max_, hr[i]);
      r_col_max_[i] = hr[i];
      b_max_ = std::max(b_max_, hb[i]);
      const double den = p_.a_inf * hx[i] + hb[i];
      const double be = den > 0 ? hr[i] / den : (hr[i] > 0 ? INFINITY : 0.0);
      worst = std::isnan(hr[i]) ? INFINITY : std::max(worst, be);
    }
    return worst;
  }
  void residual() {
    if constexpr (std::is_same_v<T, double>) {
      if (k_ >= 16) {
        // Many right-hand sides (AMG's coarse inverse: k = n): R = B - A X on the fp64 GEMM
        // (fp64 products and sums, as the kernel's), not k matrix-vector products.
        copy(r64_.data(), b64_.data());
        dgemm_args g;
        g.m = n_, g.n = k_, g.k = n_, g.a = p_.a.data(), g.lda = n_, g.b = x64_.data(), g.ldb = k_, g.c = r64_.data(), g.ldc = k_;
        g.alpha = -1, g.beta = 1;
        dgemm(g, s_);
        return;
      }
    }
    residual_kernel<T, double><<<dim3(blocks_for(n_, threads / 32), static_cast<unsigned>(k_)), threads, 0, s_>>>(
        p_.a.data(), n_, n_, x64_.data(), b64_.data(), r64_.data(), k_);
    LA_CHECK_LAUNCH(s_);
  }

  /// One solve with the factors of precision F: out (n x kk, ld kk) += out_scale A^-1 (rhs_scale rhs).
  template <typename Factors>
  void apply_to(Factors& fa, const double* rhs, index_t kk, double rhs_scale, double* out, double out_scale) {
    using F = typename std::decay_t<decltype(fa.f)>::value_type;
    auto w = c_.allocate<F>(static_cast<std::size_t>(fa.N) * kk);
    convert_rows_kernel<double, F><<<blocks_for(long(fa.N) * kk), threads, 0, s_>>>(rhs, n_, fa.N, kk, w.data(), rhs_scale);
    LA_CHECK_LAUNCH(s_);
    factor_solve(c_, fa, w.data(), kk, false);
    add_kernel<F><<<blocks_for(long(n_) * kk), threads, 0, s_>>>(out, w.data(), static_cast<long>(n_) * kk, out_scale);
    LA_CHECK_LAUNCH(s_);
  }
  template <typename Factors>
  void apply(Factors& fa, const double* rhs, double rhs_scale, double out_scale) {
    apply_to(fa, rhs, k_, rhs_scale, x64_.data(), out_scale);
  }

  /// Mixed precision: the float factors are of s A (s = scale): A^-1 r = s (sA)^-1 r, and r
  /// goes in scaled by a power of two t near 1/max|r| (float's range): A^-1 r = (s / t)
  /// (sA)^-1 (t r). Refined (refine), and refactored in fp64 where that stalls.
  double mixed(dense_solve_report& rep) {
    (void)backward();  // x = 0: r = b, and b_max
    apply(p_.low, b64_.data(), pow2_inverse(b_max_), p_.scale / pow2_inverse(b_max_));
    double be = refine(backward(), rep);
    if (be <= p_.opt.refine_tolerance) return be;
    const int mixed_steps = steps_;
    p_.refactor_full();
    rep.refactored = true;
    if (!p_.status.ok())
      throw invalid_argument("dense_solver: A is singular: " + p_.how + " finds no nonzero pivot in column " +
                             std::to_string(p_.status.bad_column));
    clear_x();
    apply(p_.full, b64_.data(), 1.0, 1.0);
    be = backward();
    rep.message = "mixed precision stalled after " + std::to_string(mixed_steps) + " refinement steps" +
                  (used_gmres_ ? " (GMRES-based included)" : "") + "; refactored in fp64. ";
    steps_ = 0;
    return be;
  }

  /// Classical refinement with the float factors, handing over to GMRES-based refinement from
  /// the best x where it stalls (refinement auto), until the backward error meets the tolerance
  /// or the steps run out.
  double refine(double be, dense_solve_report& rep) {
    auto x_best = c_.allocate<double>(nk_);  // a classical refinement that diverges hands GMRES the best x
    double best = be;
    copy(x_best.data(), x64_.data());
    const refinement_kind how = p_.opt.refinement;
    bool gmres = how == refinement_kind::gmres;
    double prev = be;
    int slow = 0;
    while (be > p_.opt.refine_tolerance && steps_ < p_.opt.max_refinement) {
      if (gmres) {
        used_gmres_ = true;
        try {
          gmres_refine();
        } catch (const out_of_memory&) {
          rep.message += "GMRES-based refinement's double copy of the factors does not fit; ";
          break;
        }
      } else {
        const double t = pow2_inverse(r_max_);
        apply(p_.low, r64_.data(), t, p_.scale / t);
      }
      ++steps_;
      be = backward();
      if (be < best) best = be, copy(x_best.data(), x64_.data());
      slow = be < 0.5 * prev ? 0 : slow + 1;
      if (slow >= 2 || !std::isfinite(be)) {
        if (gmres || how != refinement_kind::automatic) break;
        gmres = true, slow = 0;  // classical refinement stalled: GMRES from the best x
        copy(x64_.data(), x_best.data());
        be = backward();
      }
      prev = be;
    }
    return be;
  }

  /// GMRES-based refinement (solvers/detail/gmres_cycle.hpp): for each column, one GMRES cycle
  /// in double on M^-1 A d = M^-1 r, M = the float factors promoted to double; then x += d.
  void gmres_refine() {
    if (!p_.low64_tried) {
      p_.low64_tried = true;
      check_device_memory(c_, double(p_.low.N) * p_.low.N * 8 + 2.0 * p_.low.N * p_.low.nb * 8,
                          "GMRES-based refinement's double copy of the float factors");
      promote_factors(c_, p_.low, p_.low64);
    }
    const int m = static_cast<int>(std::min<index_t>(n_, std::max(1, p_.opt.gmres_restart)));
    auto tmp = c_.allocate<double>(static_cast<std::size_t>(n_));
    auto zero = c_.allocate<double>(static_cast<std::size_t>(n_));
    LA_CUDA_TRY(cudaMemsetAsync(zero.data(), 0, sizeof(double) * n_, s_));
    const unsigned vb = blocks_for(n_);
    // w = M^-1 A v: tmp = 0 - A v; w = -(sA)^-1 (s tmp).
    auto op = [&](const double* v, double* w) {
      residual_kernel<T, double><<<dim3(blocks_for(n_, threads / 32), 1), threads, 0, s_>>>(p_.a.data(), n_, n_, v,
                                                                                             zero.data(), tmp.data(), 1);
      LA_CHECK_LAUNCH(s_);
      LA_CUDA_TRY(cudaMemsetAsync(w, 0, sizeof(double) * n_, s_));
      apply_to(p_.low64, tmp.data(), 1, p_.scale, w, -1.0);
    };
    refine_detail::device_basis<decltype(op)> basis(c_, n_, m, op);
    for (index_t col = 0; col < k_; ++col) {
      // V_0 = M^-1 r, r scaled by a power of two near 1 / max|r| for float's range.
      column_copy_kernel<<<vb, threads, 0, s_>>>(r64_.data(), n_, k_, col, tmp.data(), 1.0, false);
      LA_CHECK_LAUNCH(s_);
      LA_CUDA_TRY(cudaMemsetAsync(basis.vec(0), 0, sizeof(double) * n_, s_));
      const double t = pow2_inverse(r_col_max_[static_cast<std::size_t>(col)]);
      apply_to(p_.low64, tmp.data(), 1, t, basis.vec(0), p_.scale / t);
      const int its = refine_detail::gmres_cycle(basis, m, p_.opt.gmres_tolerance);
      gmres_iterations_ += its;
      if (its == 0) continue;
      column_copy_kernel<<<vb, threads, 0, s_>>>(x64_.data(), n_, k_, col, basis.correction(), 1.0, true);
      LA_CHECK_LAUNCH(s_);
    }
  }

  /// One classical step in working precision (the residual in double), kept where it lowers
  /// the backward error `be`.
  double working_step(double be) {
    apply(p_.full, r64_.data(), 1.0, 1.0);
    const double be2 = backward();
    if (be2 < be) return steps_ = 1, be2;
    clear_x();  // undo: x from scratch is simpler than subtracting the correction
    apply(p_.full, b64_.data(), 1.0, 1.0);
    return backward();
  }

  /// The worst column's ||b - Ax||_2 / ||b||_2 (r64_ and rmax_ hold the last residual).
  double worst_relative_residual() {
    auto rn = c_.allocate<double>(static_cast<std::size_t>(k_));
    auto bn = c_.allocate<double>(static_cast<std::size_t>(k_));
    column_norm2_kernel<double><<<static_cast<unsigned>(k_), threads, 0, s_>>>(r64_.data(), n_, k_, rmax_.data(), rn.data());
    LA_CHECK_LAUNCH(s_);
    column_norm2_kernel<double><<<static_cast<unsigned>(k_), threads, 0, s_>>>(b64_.data(), n_, k_, bmax_.data(), bn.data());
    LA_CHECK_LAUNCH(s_);
    std::vector<double> hr(static_cast<std::size_t>(k_)), hb(hr.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rn.data(), sizeof(double) * k_, cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bn.data(), sizeof(double) * k_, cudaMemcpyDeviceToHost, s_));
    LA_CUDA_TRY(cudaStreamSynchronize(s_));
    double worst = 0;
    for (std::size_t i = 0; i < hr.size(); ++i)
      worst = std::max(worst, hb[i] > 0 ? hr[i] / hb[i] : (hr[i] > 0 ? INFINITY : 0.0));
    return worst;
  }

  Impl& p_;
  context& c_;
  cudaStream_t s_;
  index_t n_, k_;
  std::size_t nk_;
  device_buffer<double> b64_, x64_, r64_, bmax_, xmax_, rmax_;
  std::vector<double> r_col_max_;
  double r_max_ = 0, b_max_ = 0;
  int steps_ = 0, gmres_iterations_ = 0;
  bool used_gmres_ = false;
};
}  // namespace

template <typename T>
dense_solve_report dense_solver<T>::solve(device_dense<T>& bm) {
  impl& p = *p_;
  const double t0 = now_seconds();
  const index_t n = p.n, k = bm.cols();
  LA_EXPECTS(bm.rows() == n, "dense_solver: B has " + std::to_string(bm.rows()) + " rows, A has " + std::to_string(n));
  LA_EXPECTS(bm.ld() == k, "dense_solver: B must be packed (ld = cols)");
  if (n == 0 || k == 0) {
    dense_solve_report rep;
    rep.refactored = p.refactored_at_factor;
    return rep;
  }
  if (!p.status.ok())
    throw invalid_argument("dense_solver: A is singular: " + p.how + " finds no " +
                           (p.chol ? "positive" : "nonzero") + " pivot in column " + std::to_string(p.status.bad_column));
  T* B = bm.view().values;
  dense_solve_report rep = column_solve<T, impl>(p, B, k).run(B);
  rep.seconds = now_seconds() - t0;
  return rep;
}

#define LA_DENSE_SOLVES(T)                                                 \
  template dense_solve_report dense_solver<T>::solve(device_vector<T>&); \
  template dense_solve_report dense_solver<T>::solve(device_dense<T>&);
LA_DENSE_SOLVES(float)
LA_DENSE_SOLVES(double)

}  // namespace la
