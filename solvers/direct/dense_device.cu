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
// The kernels are in detail/dense_kernels.cuh and detail/dense_small.cuh, the factorizations
// in detail/dense_lu.cuh and detail/dense_cholesky.cuh (what they share in
// detail/dense_factors.cuh), the solves in detail/dense_solves.cuh, the solver's state in detail/dense_impl.cuh; this file holds
// la::dense_solver's construction (A's norms and symmetry, the factorization) and its
// condition estimate, dense_solve.cu its solves and refinement.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <la/memory.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/direct/detail/dense_impl.cuh>

namespace la {
using namespace dense_detail;

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
  const bool auto_precision = p_->opt.factor_precision == "auto";
  p_->resolve_auto_precision();
  if (!p_->factor_in_one_kernel()) {
    measure<T>(*p_);
    p_->factor();
  }
  if (auto_precision && p_->mixed && p_->status.ok()) {
    // The plan's second look: the float factors' condition estimate decides the refinement.
    const double t0 = now_seconds();
    const double est = condition_estimate();
    char buf[160];
    if (est > auto_refactor_condition) {
      p_->refactor_full();
      p_->precision = p_->full_name();
      p_->refactored_at_factor = true;
      std::snprintf(buf, sizeof buf, "; condition estimate %.1e: beyond what float factors refine, refactored in fp64", est);
    } else if (est > auto_gmres_condition) {
      p_->opt.refinement = refinement_kind::gmres;
      std::snprintf(buf, sizeof buf, "; condition estimate %.1e: GMRES-based refinement", est);
    } else {
      std::snprintf(buf, sizeof buf, "; condition estimate %.1e: classical refinement", est);
    }
    p_->auto_note += buf;
    p_->seconds += now_seconds() - t0;
  }
  if (!p_->auto_note.empty()) p_->precision += " (" + p_->auto_note + ")";
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
  if (p_->full.small || p_->low.small)
    return p_->how + " (" + p_->precision + ", " + std::to_string(p_->low.small ? p_->low.N : p_->full.N) + " x " +
           std::to_string(p_->low.small ? p_->low.N : p_->full.N) + " in one kernel's shared memory)";
  const index_t ow = p_->opt.outer_block > 0 ? p_->opt.outer_block : outer_width;
  return p_->how + " (" + p_->precision + ", blocks " + std::to_string(p_->nb) + " in " +
         std::to_string(p_->nb * std::max<index_t>(1, ow / p_->nb)) + ")";
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
  if (use_low) ensure_inverses(c, p.low);
  else ensure_inverses(c, p.full);
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
