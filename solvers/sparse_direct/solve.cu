// la::sparse_direct_solver's solve on the GPU (detail/solver_impl.hpp has the symbols it
// reads): b permuted and scaled into the analysis's numbering, the forward substitution level
// by level from the leaves (each front gathers its children's update vectors in a fixed order),
// the backward one from the roots, then classical refinement with a double-double residual of
// A until the backward error and the relative residual meet their targets or stop halving.
// Many right-hand sides at once (a grid dimension each).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/solvers/detail/backend_util.cuh>
#include <la/solvers/detail/gmres_basis.cuh>
#include <la/solvers/sparse_direct/detail/solve_kernels.cuh>
#include <la/solvers/sparse_direct/detail/solver_impl.hpp>

namespace la {
using namespace sparse_detail;
namespace {
// ---- refinement's kernels (the factors' solve: detail/solve_kernels.cuh) ----

/// R = B - A X (A CSR, X and B n x k column after column), summed in double-double (each
/// product split exactly by an FMA, each sum by two-sum), so the residual is right to about
/// eps^2 |A| |x|: refinement then reaches the solution's last bit even where b is small
/// against |A| |x| (the badly scaled circuit matrices).
__global__ void residual_kernel(const count_t* ptr, const index_t* idx, const double* val, index_t n, const double* x,
                                const double* b, double* r) {
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long col = blockIdx.y;
  if (i >= n) return;
  double hi = b[col * n + i], lo = 0;
  for (count_t p = ptr[i]; p < ptr[i + 1]; ++p) {
    const double a = val[p], xv = x[col * n + idx[p]];
    const double ph = -a * xv, pl = fma(-a, xv, -ph);  // -a x = ph + pl exactly
    const double sh = hi + ph, bb = sh - hi;
    const double err = (hi - (sh - bb)) + (ph - bb);  // two-sum's rounding error
    hi = sh;
    lo += err + pl;
  }
  r[col * n + i] = hi + lo;
}

constexpr int norm_blocks = 120;
/// (scale, ssq) with sum v^2 = scale^2 ssq, as LAPACK's dnrm2 keeps it: no overflow past
/// 1e154 and no underflow below 1e-154. scale is max |v|.
__device__ __host__ inline void add_scaled(double& scale, double& ssq, double a_scale, double a_ssq) {
  if (a_scale == 0) return;
  if (a_scale > scale) {
    const double q = scale / a_scale;
    ssq = a_ssq + ssq * q * q, scale = a_scale;
  } else {
    const double q = a_scale == scale ? 1.0 : a_scale / scale;  // equal: infinity too
    ssq += a_ssq * q * q;
  }
}
/// Per column and block: the largest |v| (NaN as infinity) and the sum of squares as
/// (scale, ssq); a fixed grid, so the host's sums come out in a fixed order.
__global__ void norms_kernel(const double* v, index_t n, double* part_max, double* part_sq) {
  __shared__ double smax[threads / 32], ssq_s[threads / 32];
  const long col = blockIdx.y;
  double mx = 0, sq = 0;
  bool nan = false;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double a = v[col * n + i];
    if (isnan(a)) nan = true;
    else add_scaled(mx, sq, fabs(a), 1.0);
  }
  for (int o = 16; o > 0; o >>= 1) {
    const double om = __shfl_down_sync(0xffffffffu, mx, o), oq = __shfl_down_sync(0xffffffffu, sq, o);
    add_scaled(mx, sq, om, oq);
  }
  nan = __any_sync(0xffffffffu, nan);
  if (nan) mx = INFINITY, sq = NAN;
  if ((threadIdx.x & 31) == 0) smax[threadIdx.x / 32] = mx, ssq_s[threadIdx.x / 32] = sq;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < threads / 32; ++q) {
      if (isnan(ssq_s[q]) || isnan(sq)) mx = INFINITY, sq = NAN;
      else add_scaled(mx, sq, smax[q], ssq_s[q]);
    }
    part_max[col * gridDim.x + blockIdx.x] = mx, part_sq[col * gridDim.x + blockIdx.x] = sq;
  }
}
/// x += a d (d may be x).
__global__ void axpy_kernel(double* x, const double* d, long count, double a) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) x[e] += a * d[e];
}

/// The report's refinement, for a person.
std::string refinement_line(const sparse_direct_report& r, index_t perturbed) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%d refinement step%s%s, backward error %.2e, %lld pivot%s perturbed", r.refinement_steps,
                r.refinement_steps == 1 ? "" : "s",
                r.gmres_iterations > 0 ? (" (GMRES-based, " + std::to_string(r.gmres_iterations) + " GMRES iterations)").c_str() : "",
                r.backward_error, static_cast<long long>(perturbed), perturbed == 1 ? "" : "s");
  return buf;
}

}  // namespace

sparse_direct_solver::host_factors sparse_direct_solver::download_factors() const {
  const impl& p = *p_;
  LA_EXPECTS(p.factored, "sparse direct solver: download_factors() before factor()");
  if (p.host) return sparse_detail::fronts_to_factors(p.sym, p.hF);
  std::vector<double> f(static_cast<std::size_t>(p.sym.front_total));
  LA_CUDA_TRY(cudaMemcpyAsync(f.data(), p.F.data(), sizeof(double) * f.size(), cudaMemcpyDeviceToHost, p.ctx->stream()));
  LA_CUDA_TRY(cudaStreamSynchronize(p.ctx->stream()));
  return sparse_detail::fronts_to_factors(p.sym, f);
}

sparse_direct_report sparse_direct_solver::solve(std::vector<double>& b, index_t k) {
  impl& p = *p_;
  LA_EXPECTS(k >= 0 && b.size() == static_cast<std::size_t>(p.n) * static_cast<std::size_t>(k),
             "sparse direct solver: b has " + std::to_string(b.size()) + " entries, A has " + std::to_string(p.n) + " rows");
  if (p.host) {
    if (p.n == 0 || k == 0) return {};
    if (!p.factored && p.singular == 0) throw invalid_argument("sparse direct solver: solve() before factor()");
    if (p.singular)
      throw invalid_argument("sparse direct solver: A is singular: " +
                             std::string(p.factored ? "no positive pivot in column " : "no row matches column ") +
                             std::to_string(p.singular));
    sparse_direct_report r = p.solve_host(b, k);
    r.message = description() + ": " + refinement_line(r, p.perturbed);
    return r;
  }
  device_vector<double> d(*p.ctx, static_cast<index_t>(b.size()));
  if (!b.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(d.data(), b.data(), sizeof(double) * b.size(), cudaMemcpyHostToDevice, p.ctx->stream()));
  sparse_direct_report r = solve(d, k);
  if (!b.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(b.data(), d.data(), sizeof(double) * b.size(), cudaMemcpyDeviceToHost, p.ctx->stream()));
  LA_CUDA_TRY(cudaStreamSynchronize(p.ctx->stream()));
  return r;
}

namespace {
/// One solve of k columns on the GPU: the steps (the factors' solve by levels, the norms, the
/// backward error, a refinement step) over the state they share. `Impl` is
/// sparse_direct_solver::impl.
template <typename Impl>
class gpu_solve {
 public:
  gpu_solve(Impl& p, index_t k)
      : p_(p), c_(*p.ctx), st_(c_.stream()), n_(p.n), k_(k), nk_(static_cast<long>(p.n) * k), W_(workspace(p, k)),
        t_(p.table()), m_(static_cast<int>(std::min<index_t>(p.n, p.opt.gmres_restart))) {}

  /// x = A^-1 B, refined; B overwritten with x.
  sparse_direct_report run(double* B) {
    LA_CUDA_TRY(cudaMemcpyAsync(W_.b0.data(), B, sizeof(double) * nk_, cudaMemcpyDeviceToDevice, st_));
    norms(W_.b0.data(), bmax_, b2_);
    factor_solve(W_.b0.data(), W_.x.data(), k_);
    double be = backward(), rel = rep_.relative_residual;
    keep_best();
    const int steps = sparse_detail::refine(
        p_.opt, be, rel, [&](bool gmres, double& sbe, double& srel) { step(gmres, sbe, srel); }, [&] { keep_best(); },
        [&] {
          LA_CUDA_TRY(cudaMemcpyAsync(W_.x.data(), W_.best.data(), sizeof(double) * nk_, cudaMemcpyDeviceToDevice, st_));
          backward();
        });
    LA_CUDA_TRY(cudaMemcpyAsync(B, W_.best.data(), sizeof(double) * nk_, cudaMemcpyDeviceToDevice, st_));
    LA_CUDA_TRY(cudaStreamSynchronize(st_));
    rep_.refinement_steps = steps;
    rep_.backward_error = be;  // refine() leaves the best x's
    rep_.relative_residual = rel;
    return rep_;
  }

  /// w = M^-1 A v for one column (GMRES-based refinement's operator): tmp = 0 - A v, then
  /// w = -M^-1 tmp.
  void operator()(const double* v, double* w) {
    residual_kernel<<<blocks_for(n_), threads, 0, st_>>>(p_.d_aptr.data(), p_.d_aidx.data(), p_.aval.data(), n_, v,
                                                         zero_.data(), tmp_.data());
    LA_CHECK_LAUNCH(st_);
    factor_solve(tmp_.data(), w, 1);
    axpy_kernel<<<blocks_for(n_), threads, 0, st_>>>(w, w, n_, -2.0);  // w = -w
    LA_CHECK_LAUNCH(st_);
  }

 private:
  struct op_ref {  // the basis's operator: this solve's operator()
    gpu_solve* s;
    void operator()(const double* v, double* w) const { (*s)(v, w); }
  };

  /// The buffers for k right-hand sides, kept across solves (graphs made for fewer dropped).
  static sparse_detail::solve_workspace& workspace(Impl& p, index_t k) {
    if (!p.ws || p.ws->k < k) {
      context& c = *p.ctx;
      p.ws.reset();
      auto w = std::make_unique<sparse_detail::solve_workspace>();
      const auto kk = static_cast<std::size_t>(k), nn = static_cast<std::size_t>(p.n) * kk;
      w->k = k;
      w->b0 = c.allocate<double>(nn);  // b kept for the residuals
      w->x = c.allocate<double>(nn), w->r = c.allocate<double>(nn), w->y = c.allocate<double>(nn), w->best = c.allocate<double>(nn);
      w->wv = c.allocate<double>(static_cast<std::size_t>(p.sym.vec_total) * kk);
      w->pmax = c.allocate<double>(norm_blocks * kk), w->psq = c.allocate<double>(norm_blocks * kk);
      p.ws = std::move(w);
    }
    return *p.ws;
  }
  void keep_best() {
    LA_CUDA_TRY(cudaMemcpyAsync(W_.best.data(), W_.x.data(), sizeof(double) * nk_, cudaMemcpyDeviceToDevice, st_));
  }

  /// A block a front: 1,024 threads on a level of few fronts (more rows' loads in flight), else 256.
  static unsigned front_threads(unsigned count) { return count < 264 ? 1024 : threads; }

  /// The forward substitution, level by level from the leaves, for kk right-hand sides in y.
  void queue_forward(index_t kk) {
    const long split_at = static_cast<long>(p_.opt.big_front) * p_.opt.big_front;
    double* wv = W_.wv.data();
    for (std::size_t l = 0; l + 1 < p_.sym.level_ptr.size(); ++l) {
      const auto count = static_cast<unsigned>(p_.sym.level_ptr[l + 1] - p_.sym.level_ptr[l]);
      const int* list = p_.d_list.data() + p_.sym.level_ptr[l];
      const bool warp = p_.level_m[l] <= warp_front_rows;  // a warp a front, 8 a block
      const dim3 grid(warp ? blocks_for(count, 8) : count, static_cast<unsigned>(kk));
      forward_init_kernel<<<grid, warp ? threads : 128, 0, st_>>>(wv, p_.sym.vec_total, t_, list, static_cast<int>(count),
                                                                  W_.y.data(), n_, warp ? threads / 32 : 1);
      LA_CHECK_LAUNCH(st_);
      const long i0 = static_cast<long>(p_.sym.level_items[l]), i1 = static_cast<long>(p_.sym.level_items[l + 1]);
      if (i1 > i0) {
        forward_gather_kernel<<<dim3(blocks_for(i1 - i0), static_cast<unsigned>(kk)), threads, 0, st_>>>(
            wv, p_.sym.vec_total, t_, p_.d_item_front.data() + i0, p_.d_item_row.data() + i0, p_.d_item_ptr.data() + i0,
            p_.d_con_child.data(), p_.d_con_row.data(), i1 - i0);
        LA_CHECK_LAUNCH(st_);
      }
      if (warp)
        forward_warp_kernel<<<grid, threads, 0, st_>>>(p_.F.data(), wv, p_.sym.vec_total, t_, list, static_cast<int>(count),
                                                      W_.y.data(), n_);
      else
        forward_front_kernel<<<grid, front_threads(count), 0, st_>>>(p_.F.data(), wv, p_.sym.vec_total, t_, list, W_.y.data(),
                                                                    n_, split_at);
      LA_CHECK_LAUNCH(st_);
      if (const auto split = static_cast<unsigned>(p_.split_ptr[l + 1] - p_.split_ptr[l])) {
        forward_below_kernel<<<dim3(split, blocks_for(p_.split_below[l], split_rows), static_cast<unsigned>(kk)), threads, 0, st_>>>(
            p_.F.data(), wv, p_.sym.vec_total, t_, p_.d_split.data() + p_.split_ptr[l]);
        LA_CHECK_LAUNCH(st_);
      }
    }
  }
  /// The backward substitution, from the roots.
  void queue_backward(index_t kk) {
    const long split_at = static_cast<long>(p_.opt.big_front) * p_.opt.big_front;
    double* wv = W_.wv.data();
    for (std::size_t l = p_.sym.level_ptr.size() - 1; l-- > 0;) {
      const auto count = static_cast<unsigned>(p_.sym.level_ptr[l + 1] - p_.sym.level_ptr[l]);
      if (const auto split = static_cast<unsigned>(p_.split_ptr[l + 1] - p_.split_ptr[l])) {
        backward_above_kernel<<<dim3(split, blocks_for(p_.split_own[l], split_rows), static_cast<unsigned>(kk)), threads, 0, st_>>>(
            p_.F.data(), wv, p_.sym.vec_total, t_, p_.d_split.data() + p_.split_ptr[l], W_.y.data(), n_);
        LA_CHECK_LAUNCH(st_);
      }
      const int* list = p_.d_list.data() + p_.sym.level_ptr[l];
      if (p_.level_m[l] <= warp_front_rows)
        backward_warp_kernel<<<dim3(blocks_for(count, 8), static_cast<unsigned>(kk)), threads, 0, st_>>>(
            p_.F.data(), t_, list, static_cast<int>(count), W_.y.data(), n_);
      else
        backward_front_kernel<<<dim3(count, static_cast<unsigned>(kk)), front_threads(count), 0, st_>>>(
            p_.F.data(), wv, p_.sym.vec_total, t_, list, W_.y.data(), n_, split_at);
      LA_CHECK_LAUNCH(st_);
    }
  }

  /// out = A^-1 in (the factors' solve), in and out n x kk (kk <= k): permuted and scaled into
  /// y, the levels' kernels (captured once per kk as a graph and replayed), and back.
  void factor_solve(const double* in, double* out, index_t kk) {
    const long nkk = static_cast<long>(n_) * kk;
    permute_kernel<<<blocks_for(nkk), threads, 0, st_>>>(in, W_.y.data(), p_.d_in_idx.data(), p_.d_in_scale.data(), n_, kk, true);
    LA_CHECK_LAUNCH(st_);
    auto g = std::find_if(W_.graphs.begin(), W_.graphs.end(), [&](const auto& e) { return e.first == kk; });
    if (g == W_.graphs.end()) {
      cudaGraphExec_t exec = nullptr;
      cg_detail::capture_graph(st_, exec, [&] {
        queue_forward(kk);
        queue_backward(kk);
      });
      W_.graphs.emplace_back(kk, exec);
      g = W_.graphs.end() - 1;
    }
    LA_CUDA_TRY(cudaGraphLaunch(g->second, st_));
    permute_kernel<<<blocks_for(nkk), threads, 0, st_>>>(W_.y.data(), out, p_.d_out_idx.data(), p_.d_out_scale.data(), n_, kk, false);
    LA_CHECK_LAUNCH(st_);
  }

  /// Per column: max |v| and ||v||_2 (scaled sums: no overflow or underflow).
  void norms(const double* v, std::vector<double>& mx, std::vector<double>& l2) {
    norms_kernel<<<dim3(norm_blocks, static_cast<unsigned>(k_)), threads, 0, st_>>>(v, n_, W_.pmax.data(), W_.psq.data());
    LA_CHECK_LAUNCH(st_);
    std::vector<double> hm(static_cast<std::size_t>(norm_blocks) * k_), hs(hm.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hm.data(), W_.pmax.data(), sizeof(double) * hm.size(), cudaMemcpyDeviceToHost, st_));
    LA_CUDA_TRY(cudaMemcpyAsync(hs.data(), W_.psq.data(), sizeof(double) * hs.size(), cudaMemcpyDeviceToHost, st_));
    LA_CUDA_TRY(cudaStreamSynchronize(st_));
    mx.assign(static_cast<std::size_t>(k_), 0), l2.assign(static_cast<std::size_t>(k_), 0);
    for (std::size_t col = 0; col < static_cast<std::size_t>(k_); ++col) {
      double scale = 0, ssq = 0;
      for (std::size_t q = col * norm_blocks; q < (col + 1) * norm_blocks; ++q) {
        if (std::isnan(hs[q])) scale = INFINITY, ssq = NAN;
        else if (!std::isnan(ssq)) add_scaled(scale, ssq, hm[q], hs[q]);
      }
      mx[col] = scale, l2[col] = std::isnan(ssq) ? NAN : scale * std::sqrt(ssq);
    }
  }

  /// The worst column's backward error of x (r = b - A x left in r); the worst relative
  /// residual in rep_.
  double backward() {
    residual_kernel<<<dim3(blocks_for(n_), static_cast<unsigned>(k_)), threads, 0, st_>>>(
        p_.d_aptr.data(), p_.d_aidx.data(), p_.aval.data(), n_, W_.x.data(), W_.b0.data(), W_.r.data());
    LA_CHECK_LAUNCH(st_);
    norms(W_.x.data(), xmax_, x2_);
    norms(W_.r.data(), rmax_, r2_);
    double worst = 0, rel = 0;
    for (std::size_t col = 0; col < static_cast<std::size_t>(k_); ++col) {
      const double den = p_.a_inf * xmax_[col] + bmax_[col];
      const double be = den > 0 ? rmax_[col] / den : (rmax_[col] > 0 ? INFINITY : 0.0);
      worst = std::isfinite(rmax_[col]) ? std::max(worst, be) : INFINITY;
      rel = std::isnan(r2_[col]) ? INFINITY : std::max(rel, b2_[col] > 0 ? r2_[col] / b2_[col] : (r2_[col] > 0 ? INFINITY : 0.0));
    }
    rep_.relative_residual = rel;
    return worst;
  }

  /// One refinement step: classical (the correction by the factors, every column at once) or
  /// GMRES-based (one cycle per column, from its residual; the basis made at the first).
  void step(bool gmres, double& sbe, double& srel) {
    if (gmres) {
      if (!basis_) {
        tmp_ = c_.allocate<double>(static_cast<std::size_t>(n_)), zero_ = c_.allocate<double>(static_cast<std::size_t>(n_));
        LA_CUDA_TRY(cudaMemsetAsync(zero_.data(), 0, sizeof(double) * n_, st_));
        basis_ = std::make_unique<refine_detail::device_basis<op_ref>>(c_, n_, m_, op_ref{this});
      }
      for (index_t col = 0; col < k_; ++col) {
        factor_solve(W_.r.data() + static_cast<long>(col) * n_, basis_->vec(0), 1);
        const int its = refine_detail::gmres_cycle(*basis_, m_, p_.opt.gmres_tolerance);
        rep_.gmres_iterations += its;
        if (its == 0) continue;
        axpy_kernel<<<blocks_for(n_), threads, 0, st_>>>(W_.x.data() + static_cast<long>(col) * n_, basis_->correction(), n_, 1.0);
        LA_CHECK_LAUNCH(st_);
      }
    } else {
      factor_solve(W_.r.data(), W_.r.data(), k_);  // r read into y first, the correction written over r
      axpy_kernel<<<blocks_for(nk_), threads, 0, st_>>>(W_.x.data(), W_.r.data(), nk_, 1.0);
      LA_CHECK_LAUNCH(st_);
    }
    sbe = backward();
    srel = rep_.relative_residual;
  }

  Impl& p_;
  context& c_;
  cudaStream_t st_;
  index_t n_, k_;
  long nk_;
  sparse_detail::solve_workspace& W_;
  front_table t_;
  int m_;  // GMRES-based refinement's basis size
  sparse_direct_report rep_;
  std::vector<double> bmax_, b2_, xmax_, x2_, rmax_, r2_;
  device_buffer<double> tmp_, zero_;
  std::unique_ptr<refine_detail::device_basis<op_ref>> basis_;
};
}  // namespace

sparse_direct_report sparse_direct_solver::solve(device_vector<double>& bv, index_t k) {
  impl& p = *p_;
  if (p.host)
    throw invalid_argument("sparse direct solver: this solver runs on the host (made without a context); solve a "
                           "std::vector, or make it with a context for device vectors");
  const auto t0 = clock_type::now();
  const index_t n = p.n;
  LA_EXPECTS(k >= 1 && static_cast<long>(bv.size()) == static_cast<long>(n) * k,
             "sparse direct solver: b has " + std::to_string(bv.size()) + " entries for " + std::to_string(k) +
                 " right-hand sides of " + std::to_string(n));
  if (n == 0) return {};
  if (!p.factored && p.singular == 0) throw invalid_argument("sparse direct solver: solve() before factor()");
  if (p.singular)
    throw invalid_argument("sparse direct solver: A is singular: " +
                           std::string(p.factored ? "no positive pivot in column " : "no row matches column ") +
                           std::to_string(p.singular));
  sparse_direct_report rep = gpu_solve<impl>(p, k).run(bv.data());
  rep.seconds = since(t0);
  rep.message = description() + ": " + refinement_line(rep, p.perturbed);
  return rep;
}

}  // namespace la
