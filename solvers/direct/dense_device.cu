// The GPU's dense factorizations and solves behind la::dense_solver (dense_solver.hpp says
// what and why). Every matrix here is row-major, N x N with N = n rounded up to the panel
// width nb and an identity in the padding, so every block is whole and every GEMM aligned.
//
// LU, for each panel of columns [j, j+nb):
//   1. lu_panel_kernel (cooperative): rows j..N of the panel live in the blocks' shared memory;
//      for each column the pivot is the largest |value| over the grid (ties: the lowest row,
//      so reruns are bit-identical), the two rows are swapped through global buffers, the rows
//      below are scaled and updated. One grid barrier a column.
//   2. laswp_kernel: the panel's swaps applied to the columns left and right of it.
//   3. tri_inverse_kernel: L11^-1 (unit lower); then U12 = L11^-1 A12 as a GEMM into a
//      workspace, copied back.
//   4. A22 -= L21 U12 through the GEMM registry.
// Cholesky, for each panel: potrf_kernel factors the diagonal block in shared memory and
// inverts it; L21 = A21 L11^-T as a GEMM; A22 -= L21 L21^T (lower tiles only for double).
//
// Solves: B = P B by a gather; then for each diagonal block (forward or backward) X_j =
// (block inverse) B_j, and the rows still to come lose M[r, j] X_j (a GEMM for many
// right-hand sides, a row kernel for few). Transposed solves (the condition estimate) read
// the factors transposed.
// The kernels are in detail/dense_kernels.cuh, the factorizations and solves in
// detail/dense_factors.cuh; this file holds la::dense_solver itself.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/memory.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/direct/detail/dense_factors.cuh>

namespace la {
using namespace dense_detail;

template <typename T>
struct dense_solver<T>::impl {
  context* ctx = nullptr;
  dense_solver_options opt;
  index_t n = 0;
  device_buffer<T> a;  // n x n, ld n: A as given (residuals, refinement)
  double a_inf = 0, a_one = 0, a_max = 0;
  bool symmetric_positive_diagonal = false;
  bool mixed = false;          // T = double factored in float
  double scale = 1;            // mixed: the float factors are of scale * A
  factors<T> full;             // working-precision factors
  factors<float> low;          // mixed precision's
  factors<double> low64;       // GMRES-based refinement's: low in double (promote_factors), made when first needed
  bool low64_tried = false;
  dense_factor_status status;
  bool chol = false;
  double seconds = 0;
  std::string how, precision;
  index_t nb = 0;

  template <typename F>
  void factor_into(factors<F>& fa, const std::string& gemm_algo, bool want_chol, double sc) {
    context& c = *ctx;
    fa.n = n;
    fa.nb = nb;
    fa.N = (n + nb - 1) / nb * nb;
    const index_t ow = opt.outer_block > 0 ? opt.outer_block : outer_width;
    LA_EXPECTS(ow % nb == 0, "dense_solver: outer_block " + std::to_string(ow) + " is not a multiple of the block " +
                                 std::to_string(nb));
    fa.outer = nb * std::max<index_t>(1, ow / nb);
    fa.gemm = gemm_algo;
    check_device_memory(c, double(fa.N) * fa.N * sizeof(F) + 4.0 * fa.N * nb * sizeof(F),
                        "the dense factors (" + std::to_string(fa.N) + " x " + std::to_string(fa.N) + ")");
    fa.f = c.allocate<F>(static_cast<std::size_t>(fa.N) * fa.N);
    auto fill = [&] {
      pad_copy_kernel<T, F><<<blocks_for(long(fa.N) * fa.N), threads, 0, c.stream()>>>(a.data(), n, n, fa.f.data(), fa.N, sc);
      LA_CHECK_LAUNCH(c.stream());
    };
    fill();
    if (want_chol) {
      factor_cholesky(c, fa);
      if (fa.info == 0 || opt.factorization == dense_factorization::cholesky) return;
      fill();  // automatic: not positive definite after all; LU instead
    }
    factor_lu(c, fa);
  }

  void factor() {
    context& c = *ctx;
    const double t0 = now_seconds();
    nb = choose_block(c, n, opt.block, sizeof(T));
    const bool want_chol = opt.factorization == dense_factorization::cholesky ||
                           (opt.factorization == dense_factorization::automatic && symmetric_positive_diagonal);
    const std::string& fp = opt.factor_precision;
    mixed = std::is_same_v<T, double> && fp != "working" && fp != "fp64";
    if (!std::is_same_v<T, double> && fp != "working" && fp != "fp32")
      throw invalid_argument("dense_solver: factor_precision '" + fp + "' refines to double; a float solver factors in float (working)");
    if (mixed && fp != "tf32x3" && fp != "tf32" && fp != "fp32")
      throw invalid_argument("dense_solver: unknown factor_precision '" + fp + "'; choose working, fp64, tf32x3, fp32 or tf32");
    const std::string& rf = opt.refinement;
    if (rf != "auto" && rf != "classical" && rf != "gmres")
      throw invalid_argument("dense_solver: unknown refinement '" + rf + "'; choose auto, classical or gmres");
    if (mixed) {
      // float's range: scale A by a power of two so its largest entry is near 1 (the
      // refinement works on the unscaled A).
      scale = a_max > 0 ? std::ldexp(1.0, -std::ilogb(a_max)) : 1.0;
      factor_into(low, fp, want_chol, scale);
      status.bad_column = low.info;
      chol = low.chol;
      precision = fp == "fp32" ? "float" : fp == "tf32" ? "float, TF32 Tensor Core updates" : "float, 3xTF32 Tensor Core updates";
    } else {
      factor_into(full, std::is_same_v<T, double> ? opt.gemm : std::string("auto"), want_chol, 1.0);
      status.bad_column = full.info;
      chol = full.chol;
      precision = std::is_same_v<T, double> ? "double, fp64 Tensor Cores" : "float";
    }
    how = chol ? "Cholesky" : "LU with partial pivoting";
    seconds = now_seconds() - t0;
  }

  /// Mixed precision stalled: the working-precision factors.
  void refactor_full() {
    mixed = false;
    low = factors<float>{};
    low64 = factors<double>{};
    factor_into(full, opt.gemm, chol, 1.0);
    status.bad_column = full.info;
    precision = "double, fp64 Tensor Cores (refactored: the mixed-precision refinement stalled)";
  }
};

namespace {
template <typename T>
void measure(typename dense_solver<T>::impl& p) {
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const index_t n = p.n;
  auto rows = c.allocate<double>(static_cast<std::size_t>(n));
  auto cols = c.allocate<double>(static_cast<std::size_t>(n));
  auto cmax = c.allocate<double>(static_cast<std::size_t>(n));
  auto flags = c.allocate<unsigned long long>(2);
  LA_CUDA_TRY(cudaMemsetAsync(flags.data(), 0, 2 * sizeof(unsigned long long), s));
  row_norms_kernel<T><<<blocks_for(n, threads / 32), threads, 0, s>>>(p.a.data(), n, n, rows.data(), flags.data());
  LA_CHECK_LAUNCH(s);
  col_norms_kernel<T><<<blocks_for(n), threads, 0, s>>>(p.a.data(), n, n, cols.data(), cmax.data());
  LA_CHECK_LAUNCH(s);
  if (p.opt.factorization == dense_factorization::automatic) {  // only automatic looks for symmetry
    symmetric_kernel<T><<<blocks_for(long(n) * n), threads, 0, s>>>(p.a.data(), n, n, flags.data() + 1);
    LA_CHECK_LAUNCH(s);
  }
  std::vector<double> hr(static_cast<std::size_t>(n)), hc(static_cast<std::size_t>(n)), hm(static_cast<std::size_t>(n));
  unsigned long long hf[2] = {0, 0};
  LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rows.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hc.data(), cols.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hm.data(), cmax.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hf, flags.data(), sizeof(hf), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  if (hf[0]) throw invalid_argument("dense_solver: A has " + std::to_string(hf[0]) + " entries that are NaN or infinite");
  for (index_t i = 0; i < n; ++i) {
    p.a_inf = std::max(p.a_inf, hr[static_cast<std::size_t>(i)]);
    p.a_one = std::max(p.a_one, hc[static_cast<std::size_t>(i)]);
    p.a_max = std::max(p.a_max, hm[static_cast<std::size_t>(i)]);
  }
  p.symmetric_positive_diagonal = hf[1] == 0;
}
}  // namespace

template <typename T>
dense_solver<T>::dense_solver(context& ctx, const device_dense<T>& a, dense_solver_options o) : p_(std::make_unique<impl>()) {
  LA_EXPECTS(a.rows() == a.cols(), "dense_solver: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  p_->ctx = &ctx;
  p_->opt = std::move(o);
  p_->n = a.rows();
  const index_t n = p_->n;
  check_device_memory(ctx, double(n) * n * sizeof(T), "a copy of A (" + std::to_string(n) + " x " + std::to_string(n) + ")");
  p_->a = ctx.allocate<T>(static_cast<std::size_t>(n) * n);
  if (n > 0)
    LA_CUDA_TRY(cudaMemcpy2DAsync(p_->a.data(), sizeof(T) * n, a.view().values, sizeof(T) * a.ld(), sizeof(T) * n, n,
                                  cudaMemcpyDeviceToDevice, ctx.stream()));
  if (n == 0) return;
  measure<T>(*p_);
  p_->factor();
}

template <typename T>
dense_solver<T>::dense_solver(context& ctx, const dense_matrix<T>& a, dense_solver_options o)
    : dense_solver(ctx,
                   [&] {
                     LA_EXPECTS(a.rows() == a.cols(), "dense_solver: A is " + std::to_string(a.rows()) + " x " +
                                                          std::to_string(a.cols()) + "; a direct solve needs a square matrix");
                     device_dense<T> d(ctx, a.rows(), a.cols());
                     if (a.rows() > 0)
                       LA_CUDA_TRY(cudaMemcpy2DAsync(d.view().values, sizeof(T) * a.cols(), a.view().values, sizeof(T) * a.ld(),
                                                     sizeof(T) * a.cols(), a.rows(), cudaMemcpyHostToDevice, ctx.stream()));
                     return d;
                   }(),
                   std::move(o)) {}

template <typename T>
dense_solver<T>::~dense_solver() = default;
template <typename T>
dense_solver<T>::dense_solver(dense_solver&&) noexcept = default;
template <typename T>
dense_solver<T>& dense_solver<T>::operator=(dense_solver&&) noexcept = default;

template <typename T>
index_t dense_solver<T>::size() const noexcept { return p_->n; }
template <typename T>
dense_factor_status dense_solver<T>::status() const noexcept { return p_->status; }
template <typename T>
bool dense_solver<T>::cholesky() const noexcept { return p_->chol; }
template <typename T>
double dense_solver<T>::factor_seconds() const noexcept { return p_->seconds; }
template <typename T>
index_t dense_solver<T>::block() const noexcept { return p_->nb; }
template <typename T>
std::string dense_solver<T>::description() const {
  const index_t ow = p_->opt.outer_block > 0 ? p_->opt.outer_block : outer_width;
  return p_->how + " (" + p_->precision + ", blocks " + std::to_string(p_->nb) + " in " +
         std::to_string(p_->nb * std::max<index_t>(1, ow / p_->nb)) + ")";
}

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
    residual_kernel<T, double><<<dim3(blocks_for(n, threads / 32), static_cast<unsigned>(k)), threads, 0, s>>>(
        p.a.data(), n, n, x64.data(), b64.data(), r64.data(), k);
    LA_CHECK_LAUNCH(s);
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
  // GMRES-based refinement (Carson and Higham): for each column, one GMRES cycle in double on
  // the left-preconditioned correction equation M^-1 A d = M^-1 r, M = the float factors, with
  // classical Gram-Schmidt twice; then x += d. Where classical refinement's error contraction
  // (condition times the factors' unit roundoff) is above one, GMRES still converges.
  int gmres_iterations = 0;
  auto gmres_refine = [&] {
    if (!p.low64_tried) {
      p.low64_tried = true;
      check_device_memory(c, double(p.low.N) * p.low.N * 8 + 2.0 * p.low.N * p.low.nb * 8,
                          "GMRES-based refinement's double copy of the float factors");
      promote_factors(c, p.low, p.low64);
    }
    const int m = static_cast<int>(std::min<index_t>(n, std::max(1, p.opt.gmres_restart)));
    auto V = c.allocate<double>(static_cast<std::size_t>(m + 1) * n);
    auto tmp = c.allocate<double>(static_cast<std::size_t>(n));
    auto zero = c.allocate<double>(static_cast<std::size_t>(n));
    auto dh = c.allocate<double>(static_cast<std::size_t>(m + 1));
    LA_CUDA_TRY(cudaMemsetAsync(zero.data(), 0, sizeof(double) * n, s));
    const unsigned vb = blocks_for(n);
    std::vector<double> h(static_cast<std::size_t>(m + 1)), H(static_cast<std::size_t>(m + 1) * m, 0.0),
        g(static_cast<std::size_t>(m + 1)), cs(static_cast<std::size_t>(m)), sn(static_cast<std::size_t>(m));
    auto dots = [&](int count, const double* w) {  // h[0..count) = V_b . w
      basis_dots_kernel<<<static_cast<unsigned>(count), threads, 0, s>>>(V.data(), n, w, dh.data());
      LA_CHECK_LAUNCH(s);
      LA_CUDA_TRY(cudaMemcpyAsync(h.data(), dh.data(), sizeof(double) * count, cudaMemcpyDeviceToHost, s));
      LA_CUDA_TRY(cudaStreamSynchronize(s));
    };
    auto self_norm = [&](const double* w) {
      basis_dots_kernel<<<1, threads, 0, s>>>(w, n, w, dh.data());
      LA_CHECK_LAUNCH(s);
      double v = 0;
      LA_CUDA_TRY(cudaMemcpyAsync(&v, dh.data(), sizeof(double), cudaMemcpyDeviceToHost, s));
      LA_CUDA_TRY(cudaStreamSynchronize(s));
      return std::sqrt(v);
    };
    auto scale_vec = [&](double* w, double f) {
      basis_update_kernel<<<vb, threads, 0, s>>>(V.data(), n, 0, dh.data(), w, f);
      LA_CHECK_LAUNCH(s);
    };
    for (index_t col = 0; col < k; ++col) {
      double* v0 = V.data();
      // z0 = M^-1 r, r scaled by a power of two near 1 / max|r| for float's range.
      column_copy_kernel<<<vb, threads, 0, s>>>(r64.data(), n, k, col, tmp.data(), 1.0, false);
      LA_CHECK_LAUNCH(s);
      LA_CUDA_TRY(cudaMemsetAsync(v0, 0, sizeof(double) * n, s));
      const double t = pow2_inverse(r_col_max[static_cast<std::size_t>(col)]);
      apply_to(p.low64, tmp.data(), 1, t, v0, p.scale / t);
      const double beta = self_norm(v0);
      if (!(beta > 0) || !std::isfinite(beta)) continue;
      scale_vec(v0, 1 / beta);
      std::fill(g.begin(), g.end(), 0.0);
      g[0] = beta;
      int done = 0;
      for (int j = 0; j < m; ++j) {
        double* w = V.data() + static_cast<long>(j + 1) * n;
        // w = M^-1 A v_j: tmp = 0 - A v_j; w = -(sA)^-1 (s tmp).
        residual_kernel<T, double><<<dim3(blocks_for(n, threads / 32), 1), threads, 0, s>>>(
            p.a.data(), n, n, V.data() + static_cast<long>(j) * n, zero.data(), tmp.data(), 1);
        LA_CHECK_LAUNCH(s);
        LA_CUDA_TRY(cudaMemsetAsync(w, 0, sizeof(double) * n, s));
        apply_to(p.low64, tmp.data(), 1, p.scale, w, -1.0);
        for (int pass = 0; pass < 2; ++pass) {  // classical Gram-Schmidt, twice
          dots(j + 1, w);
          LA_CUDA_TRY(cudaMemcpyAsync(dh.data(), h.data(), sizeof(double) * (j + 1), cudaMemcpyHostToDevice, s));
          basis_update_kernel<<<vb, threads, 0, s>>>(V.data(), n, j + 1, dh.data(), w, 1.0);
          LA_CHECK_LAUNCH(s);
          for (int i = 0; i <= j; ++i) H[static_cast<std::size_t>(i) * m + j] = (pass ? H[static_cast<std::size_t>(i) * m + j] : 0.0) + h[static_cast<std::size_t>(i)];
        }
        const double hn = self_norm(w);
        ++gmres_iterations;
        // Givens rotations keep H upper triangular; |g[j+1]| is the preconditioned residual.
        for (int i = 0; i < j; ++i) {
          double& a0 = H[static_cast<std::size_t>(i) * m + j];
          double& a1 = H[static_cast<std::size_t>(i + 1) * m + j];
          const double t0 = cs[static_cast<std::size_t>(i)] * a0 + sn[static_cast<std::size_t>(i)] * a1;
          a1 = -sn[static_cast<std::size_t>(i)] * a0 + cs[static_cast<std::size_t>(i)] * a1;
          a0 = t0;
        }
        double& hjj = H[static_cast<std::size_t>(j) * m + j];
        const double rr = std::hypot(hjj, hn);
        cs[static_cast<std::size_t>(j)] = rr > 0 ? hjj / rr : 1.0;
        sn[static_cast<std::size_t>(j)] = rr > 0 ? hn / rr : 0.0;
        hjj = rr;
        g[static_cast<std::size_t>(j + 1)] = -sn[static_cast<std::size_t>(j)] * g[static_cast<std::size_t>(j)];
        g[static_cast<std::size_t>(j)] *= cs[static_cast<std::size_t>(j)];
        done = j + 1;
        if (!(hn > 1e-300) || !std::isfinite(hn) || std::fabs(g[static_cast<std::size_t>(j + 1)]) <= p.opt.gmres_tolerance * beta) break;
        scale_vec(w, 1 / hn);
      }
      // y = R^-1 g; d = V y; x[:, col] += d.
      std::vector<double> y(static_cast<std::size_t>(done));
      for (int i = done - 1; i >= 0; --i) {
        double v = g[static_cast<std::size_t>(i)];
        for (int q = i + 1; q < done; ++q) v -= H[static_cast<std::size_t>(i) * m + q] * y[static_cast<std::size_t>(q)];
        const double d = H[static_cast<std::size_t>(i) * m + i];
        y[static_cast<std::size_t>(i)] = d != 0 ? v / d : 0.0;
        h[static_cast<std::size_t>(i)] = -y[static_cast<std::size_t>(i)];
      }
      LA_CUDA_TRY(cudaMemcpyAsync(dh.data(), h.data(), sizeof(double) * done, cudaMemcpyHostToDevice, s));
      LA_CUDA_TRY(cudaMemsetAsync(tmp.data(), 0, sizeof(double) * n, s));
      basis_update_kernel<<<vb, threads, 0, s>>>(V.data(), n, done, dh.data(), tmp.data(), 1.0);
      LA_CHECK_LAUNCH(s);
      column_copy_kernel<<<vb, threads, 0, s>>>(x64.data(), n, k, col, tmp.data(), 1.0, true);
      LA_CHECK_LAUNCH(s);
      LA_CUDA_TRY(cudaStreamSynchronize(s));  // h and y are host vectors the next column rewrites
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
    const std::string& how = p.opt.refinement;
    bool gmres = how == "gmres";
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
        if (gmres || how != "auto") break;
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

template <typename T>
double dense_solver<T>::condition_estimate() {
  impl& p = *p_;
  if (p.n == 0) return 0;
  if (!p.status.ok()) return INFINITY;
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const bool use_low = p.mixed;
  const index_t N = use_low ? p.low.N : p.full.N;
  auto run = [&](T* v, bool transposed) {
    std::vector<double> h(static_cast<std::size_t>(N), 0.0);
    for (index_t i = 0; i < p.n; ++i) h[static_cast<std::size_t>(i)] = static_cast<double>(v[i]);
    auto solve_with = [&](auto& fa, double sc) {
      using F = typename std::decay_t<decltype(fa.f)>::value_type;
      std::vector<F> hf(h.begin(), h.end());
      auto d = c.allocate<F>(static_cast<std::size_t>(N));
      LA_CUDA_TRY(cudaMemcpyAsync(d.data(), hf.data(), sizeof(F) * N, cudaMemcpyHostToDevice, s));
      factor_solve(c, fa, d.data(), 1, transposed);
      LA_CUDA_TRY(cudaMemcpyAsync(hf.data(), d.data(), sizeof(F) * N, cudaMemcpyDeviceToHost, s));
      LA_CUDA_TRY(cudaStreamSynchronize(s));
      for (index_t i = 0; i < p.n; ++i) v[i] = static_cast<T>(hf[static_cast<std::size_t>(i)] * sc);
    };
    if (use_low) solve_with(p.low, p.scale);
    else solve_with(p.full, 1.0);
  };
  const double inv = inverse_norm1_estimate<T>(p.n, [&](T* v) { run(v, false); }, [&](T* v) { run(v, true); });
  return p.a_one * inv;
}

template class dense_solver<float>;
template class dense_solver<double>;

}  // namespace la
