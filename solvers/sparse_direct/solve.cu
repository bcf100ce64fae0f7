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
/// Per column and block: the largest |v| (NaN as infinity) and the sum of squares; a fixed grid,
/// so the host's sums come out in a fixed order.
__global__ void norms_kernel(const double* v, index_t n, double* part_max, double* part_sq) {
  __shared__ double smax[threads / 32], ssq[threads / 32];
  const long col = blockIdx.y;
  double mx = 0, sq = 0;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double a = v[col * n + i];
    mx = isnan(a) ? INFINITY : fmax(mx, fabs(a));
    sq += a * a;
  }
  for (int o = 16; o > 0; o >>= 1) mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, o)), sq += __shfl_down_sync(0xffffffffu, sq, o);
  if ((threadIdx.x & 31) == 0) smax[threadIdx.x / 32] = mx, ssq[threadIdx.x / 32] = sq;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < threads / 32; ++q) mx = fmax(mx, smax[q]), sq += ssq[q];
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

sparse_direct_report sparse_direct_solver::solve(device_vector<double>& bv, index_t k) {
  impl& p = *p_;
  if (p.host)
    throw invalid_argument("sparse direct solver: this solver runs on the host (made without a context); solve a "
                           "std::vector, or make it with a context for device vectors");
  context& c = *p.ctx;
  cudaStream_t st = c.stream();
  const auto t0 = clock_type::now();
  const index_t n = p.n;
  LA_EXPECTS(k >= 1 && static_cast<long>(bv.size()) == static_cast<long>(n) * k,
             "sparse direct solver: b has " + std::to_string(bv.size()) + " entries for " + std::to_string(k) +
                 " right-hand sides of " + std::to_string(n));
  sparse_direct_report rep;
  if (n == 0) return rep;
  if (!p.factored && p.singular == 0) throw invalid_argument("sparse direct solver: solve() before factor()");
  if (p.singular)
    throw invalid_argument("sparse direct solver: A is singular: " +
                           std::string(p.factored ? "no positive pivot in column " : "no row matches column ") +
                           std::to_string(p.singular));
  const long nk = static_cast<long>(n) * k;
  double* B = bv.data();
  if (!p.ws || p.ws->k < k) {  // buffers for k right-hand sides (graphs made for the old ones dropped)
    p.ws.reset();
    auto w = std::make_unique<solve_workspace>();
    const auto kk = static_cast<std::size_t>(k), nn = static_cast<std::size_t>(nk);
    w->k = k;
    w->b0 = c.allocate<double>(nn);  // b kept for the residuals
    w->x = c.allocate<double>(nn), w->r = c.allocate<double>(nn), w->y = c.allocate<double>(nn), w->best = c.allocate<double>(nn);
    w->wv = c.allocate<double>(static_cast<std::size_t>(p.sym.vec_total) * kk);
    w->pmax = c.allocate<double>(norm_blocks * kk), w->psq = c.allocate<double>(norm_blocks * kk);
    p.ws = std::move(w);
  }
  solve_workspace& W = *p.ws;
  device_buffer<double>&b0 = W.b0, &x = W.x, &r = W.r, &y = W.y, &wv = W.wv, &best = W.best, &pmax = W.pmax, &psq = W.psq;
  LA_CUDA_TRY(cudaMemcpyAsync(b0.data(), B, sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  const front_table t = p.table();
  const std::size_t levels = p.sym.level_ptr.size() - 1;
  const long split_at = static_cast<long>(p.opt.big_front) * p.opt.big_front;
  // A block a front: 1,024 threads on a level of few fronts (more rows' loads in flight), else 256.
  auto front_threads = [](unsigned count) { return count < 264 ? 1024 : threads; };
  // The levels' kernels for kk right-hand sides: y (the analysis's numbering) overwritten with
  // the factors' solution. Captured once per kk as a graph (factor_solve) and replayed.
  auto queue_levels = [&](index_t kk) {
    for (std::size_t l = 0; l < levels; ++l) {
      const auto count = static_cast<unsigned>(p.sym.level_ptr[l + 1] - p.sym.level_ptr[l]);
      const int* list = p.d_list.data() + p.sym.level_ptr[l];
      const bool warp = p.level_m[l] <= warp_front_rows;  // a warp a front, 8 a block
      const dim3 grid(warp ? blocks_for(count, 8) : count, static_cast<unsigned>(kk));
      forward_init_kernel<<<grid, warp ? threads : 128, 0, st>>>(wv.data(), p.sym.vec_total, t, list, static_cast<int>(count), y.data(),
                                                                 n, warp ? threads / 32 : 1);
      LA_CHECK_LAUNCH(st);
      const long i0 = static_cast<long>(p.sym.level_items[l]), i1 = static_cast<long>(p.sym.level_items[l + 1]);
      if (i1 > i0) {
        forward_gather_kernel<<<dim3(blocks_for(i1 - i0), static_cast<unsigned>(kk)), threads, 0, st>>>(
            wv.data(), p.sym.vec_total, t, p.d_item_front.data() + i0, p.d_item_row.data() + i0, p.d_item_ptr.data() + i0,
            p.d_con_child.data(), p.d_con_row.data(), i1 - i0);
        LA_CHECK_LAUNCH(st);
      }
      if (warp)
        forward_warp_kernel<<<grid, threads, 0, st>>>(p.F.data(), wv.data(), p.sym.vec_total, t, list, static_cast<int>(count), y.data(), n);
      else
        forward_front_kernel<<<grid, front_threads(count), 0, st>>>(p.F.data(), wv.data(), p.sym.vec_total, t, list, y.data(), n,
                                                                           split_at);
      LA_CHECK_LAUNCH(st);
      if (const auto split = static_cast<unsigned>(p.split_ptr[l + 1] - p.split_ptr[l])) {
        forward_below_kernel<<<dim3(split, blocks_for(p.split_below[l], split_rows), static_cast<unsigned>(kk)), threads, 0, st>>>(
            p.F.data(), wv.data(), p.sym.vec_total, t, p.d_split.data() + p.split_ptr[l]);
        LA_CHECK_LAUNCH(st);
      }
    }
    for (std::size_t l = levels; l-- > 0;) {
      const auto count = static_cast<unsigned>(p.sym.level_ptr[l + 1] - p.sym.level_ptr[l]);
      if (const auto split = static_cast<unsigned>(p.split_ptr[l + 1] - p.split_ptr[l])) {
        backward_above_kernel<<<dim3(split, blocks_for(p.split_own[l], split_rows), static_cast<unsigned>(kk)), threads, 0, st>>>(
            p.F.data(), wv.data(), p.sym.vec_total, t, p.d_split.data() + p.split_ptr[l], y.data(), n);
        LA_CHECK_LAUNCH(st);
      }
      const int* list = p.d_list.data() + p.sym.level_ptr[l];
      if (p.level_m[l] <= warp_front_rows)
        backward_warp_kernel<<<dim3(blocks_for(count, 8), static_cast<unsigned>(kk)), threads, 0, st>>>(p.F.data(), t, list,
                                                                                                     static_cast<int>(count), y.data(), n);
      else
        backward_front_kernel<<<dim3(count, static_cast<unsigned>(kk)), front_threads(count), 0, st>>>(
            p.F.data(), wv.data(), p.sym.vec_total, t, list, y.data(), n, split_at);
      LA_CHECK_LAUNCH(st);
    }
  };
  // out = A^-1 in (the factors' solve), in and out n x kk (kk <= k).
  auto factor_solve = [&](const double* in, double* out, index_t kk) {
    const long nkk = static_cast<long>(n) * kk;
    permute_kernel<<<blocks_for(nkk), threads, 0, st>>>(in, y.data(), p.d_in_idx.data(), p.d_in_scale.data(), n, kk, true);
    LA_CHECK_LAUNCH(st);
    auto g = std::find_if(W.graphs.begin(), W.graphs.end(), [&](const auto& e) { return e.first == kk; });
    if (g == W.graphs.end()) {
      cudaGraphExec_t exec = nullptr;
      cg_detail::capture_graph(st, exec, [&] { queue_levels(kk); });
      W.graphs.emplace_back(kk, exec);
      g = W.graphs.end() - 1;
    }
    LA_CUDA_TRY(cudaGraphLaunch(g->second, st));
    permute_kernel<<<blocks_for(nkk), threads, 0, st>>>(y.data(), out, p.d_out_idx.data(), p.d_out_scale.data(), n, kk, false);
    LA_CHECK_LAUNCH(st);
  };
  // Per column: max |v| and ||v||_2.
  auto norms = [&](const double* v, std::vector<double>& mx, std::vector<double>& l2) {
    norms_kernel<<<dim3(norm_blocks, static_cast<unsigned>(k)), threads, 0, st>>>(v, n, pmax.data(), psq.data());
    LA_CHECK_LAUNCH(st);
    std::vector<double> hm(static_cast<std::size_t>(norm_blocks) * k), hs(hm.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hm.data(), pmax.data(), sizeof(double) * hm.size(), cudaMemcpyDeviceToHost, st));
    LA_CUDA_TRY(cudaMemcpyAsync(hs.data(), psq.data(), sizeof(double) * hs.size(), cudaMemcpyDeviceToHost, st));
    LA_CUDA_TRY(cudaStreamSynchronize(st));
    mx.assign(static_cast<std::size_t>(k), 0), l2.assign(static_cast<std::size_t>(k), 0);
    for (index_t col = 0; col < k; ++col) {
      double m = 0, s = 0;
      for (int q = 0; q < norm_blocks; ++q)
        m = std::max(m, hm[static_cast<std::size_t>(col) * norm_blocks + q]), s += hs[static_cast<std::size_t>(col) * norm_blocks + q];
      mx[static_cast<std::size_t>(col)] = m, l2[static_cast<std::size_t>(col)] = std::sqrt(s);
    }
  };
  std::vector<double> bmax, b2, xmax, x2, rmax, r2;
  norms(b0.data(), bmax, b2);
  // The worst column's backward error of x (r = b - A x left in r).
  auto backward = [&] {
    residual_kernel<<<dim3(blocks_for(n), static_cast<unsigned>(k)), threads, 0, st>>>(p.d_aptr.data(), p.d_aidx.data(), p.aval.data(),
                                                                                        n, x.data(), b0.data(), r.data());
    LA_CHECK_LAUNCH(st);
    norms(x.data(), xmax, x2);
    norms(r.data(), rmax, r2);
    double worst = 0, rel = 0;
    for (std::size_t col = 0; col < static_cast<std::size_t>(k); ++col) {
      const double den = p.a_inf * xmax[col] + bmax[col];
      const double be = den > 0 ? rmax[col] / den : (rmax[col] > 0 ? INFINITY : 0.0);
      worst = std::isfinite(rmax[col]) ? std::max(worst, be) : INFINITY;
      rel = std::max(rel, b2[col] > 0 ? r2[col] / b2[col] : (r2[col] > 0 ? INFINITY : 0.0));
    }
    rep.relative_residual = rel;
    return worst;
  };
  factor_solve(b0.data(), x.data(), k);
  double be = backward(), rel = rep.relative_residual;
  LA_CUDA_TRY(cudaMemcpyAsync(best.data(), x.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  // GMRES-based refinement's operator, w = M^-1 A v for one column: tmp = 0 - A v, then
  // w = -M^-1 tmp. Its basis is made at the first GMRES-based step.
  const int m = static_cast<int>(std::min<index_t>(n, p.opt.gmres_restart));
  device_buffer<double> tmp, zero;
  auto op = [&](const double* v, double* w) {
    residual_kernel<<<blocks_for(n), threads, 0, st>>>(p.d_aptr.data(), p.d_aidx.data(), p.aval.data(), n, v, zero.data(),
                                                       tmp.data());
    LA_CHECK_LAUNCH(st);
    factor_solve(tmp.data(), w, 1);
    axpy_kernel<<<blocks_for(n), threads, 0, st>>>(w, w, n, -2.0);  // w = -w
    LA_CHECK_LAUNCH(st);
  };
  std::unique_ptr<refine_detail::device_basis<decltype(op)>> basis;
  auto step = [&](bool gmres, double& sbe, double& srel) {
    if (gmres) {
      if (!basis) {
        tmp = c.allocate<double>(static_cast<std::size_t>(n)), zero = c.allocate<double>(static_cast<std::size_t>(n));
        LA_CUDA_TRY(cudaMemsetAsync(zero.data(), 0, sizeof(double) * n, st));
        basis = std::make_unique<refine_detail::device_basis<decltype(op)>>(c, n, m, op);
      }
      for (index_t col = 0; col < k; ++col) {  // one cycle per column, from its residual
        factor_solve(r.data() + static_cast<long>(col) * n, basis->vec(0), 1);
        const int its = refine_detail::gmres_cycle(*basis, m, p.opt.gmres_tolerance);
        rep.gmres_iterations += its;
        if (its == 0) continue;
        axpy_kernel<<<blocks_for(n), threads, 0, st>>>(x.data() + static_cast<long>(col) * n, basis->correction(), n, 1.0);
        LA_CHECK_LAUNCH(st);
      }
    } else {
      factor_solve(r.data(), r.data(), k);  // r read into y first, the correction written over r
      axpy_kernel<<<blocks_for(nk), threads, 0, st>>>(x.data(), r.data(), nk, 1.0);
      LA_CHECK_LAUNCH(st);
    }
    sbe = backward();
    srel = rep.relative_residual;
  };
  const int steps = sparse_detail::refine(
      p.opt, be, rel, step,
      [&] { LA_CUDA_TRY(cudaMemcpyAsync(best.data(), x.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st)); },
      [&] {
        LA_CUDA_TRY(cudaMemcpyAsync(x.data(), best.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
        backward();
      });
  LA_CUDA_TRY(cudaMemcpyAsync(B, best.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  LA_CUDA_TRY(cudaStreamSynchronize(st));
  rep.refinement_steps = steps;
  rep.backward_error = be;  // refine() leaves the best x's
  rep.relative_residual = rel;
  rep.seconds = since(t0);
  rep.message = description() + ": " + refinement_line(rep, p.perturbed);
  return rep;
}

}  // namespace la
