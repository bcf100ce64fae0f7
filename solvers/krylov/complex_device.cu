// The complex Krylov methods on the GPU (issue 69): CG (Hermitian), COCG (complex symmetric),
// BiCGSTAB and GMRES(m), with Jacobi or no preconditioner, step for step the host oracles of
// <la/solvers/complex_krylov.hpp>. The host drives the loop: each step's inner products are
// summed on the device (block partials, then one block per product in block order: the same
// order every run) and read back together, the scalars are formed on the host in
// complex<double>, and the vector updates are element-wise kernels. Values are computed as
// detail::dcomplex (std::complex's layout); products by la's SpMV registry.
#include <chrono>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/detail/instantiate.hpp>
#include <la/solvers/complex_krylov.hpp>
#include <la/solvers/detail/complex_engine.cuh>

namespace la {
namespace complex_device_detail {
using complex_krylov_detail::finite;

template <typename T, typename O>
solve_result cg_like(engine<T, O>& c, T* x, bool hermitian) {
  const char* name = hermitian ? "cg" : "cocg";
  device_vector<T> r(c.ctx, c.n), z(c.ctx, c.n), p(c.ctx, c.n), q(c.ctx, c.n);
  c.residual(x, r.data());
  c.precondition(r.data(), z.data());
  auto d = c.dots({{r.data(), r.data(), true}, {r.data(), z.data(), hermitian}});
  double rnorm = c.norm_of(d, 0);
  if (rnorm <= c.target) return c.end(x, rnorm, true, name, r.data());
  LA_CUDA_TRY(cudaMemcpyAsync(p.data(), z.data(), sizeof(T) * std::size_t(c.n), cudaMemcpyDeviceToDevice, c.s));
  zd rz = d[1];
  if (hermitian ? !(rz.real() > 0) : std::abs(rz) == 0) {
    c.fail(solve_status::breakdown, hermitian ? "r^H M^-1 r <= 0: the preconditioner is not Hermitian positive definite"
                                              : "r^T M^-1 r = 0 with r != 0: COCG met a quasi-null residual");
    return c.end(x, rnorm, false, name, r.data());
  }
  for (std::int64_t it = 0; it < c.limit; ++it) {
    c.apply(p.data(), q.data());
    ++c.res.iterations;
    const zd pq = c.dots({{p.data(), q.data(), hermitian}})[0];
    if (hermitian ? !(pq.real() > 0) : std::abs(pq) == 0) {
      c.fail(solve_status::breakdown, hermitian ? "p^H A p <= 0: A is not Hermitian positive definite"
                                                : "p^T A p = 0: COCG met a quasi-null direction");
      return c.end(x, rnorm, false, name, r.data());
    }
    const zd alpha = rz / pq;
    if (!finite(alpha)) {
      c.fail(solve_status::breakdown, std::string(name) + "'s step length is not finite: A is singular to the precision");
      return c.end(x, rnorm, false, name, r.data());
    }
    c.combine(x, 1, x, alpha, p.data());
    c.combine(r.data(), 1, r.data(), -alpha, q.data());
    c.precondition(r.data(), z.data());
    d = c.dots({{r.data(), r.data(), true}, {r.data(), z.data(), hermitian}});
    rnorm = c.norm_of(d, 0);
    if (rnorm <= c.target) return c.end(x, rnorm, true, name, r.data());
    const zd rz_new = d[1];
    if (hermitian ? !(rz_new.real() > 0) : std::abs(rz_new) == 0) {
      c.fail(solve_status::breakdown, hermitian ? "r^H M^-1 r <= 0: the preconditioned A is not Hermitian positive definite"
                                                : "r^T M^-1 r = 0 with r != 0: COCG met a quasi-null residual");
      return c.end(x, rnorm, false, name, r.data());
    }
    const zd beta = rz_new / rz;
    rz = rz_new;
    c.combine(p.data(), 1, z.data(), beta, p.data());
  }
  return c.end(x, rnorm, false, name, r.data());
}

template <typename T, typename O>
solve_result bicgstab(engine<T, O>& c, T* x) {
  device_vector<T> r(c.ctx, c.n), r0(c.ctx, c.n), p(c.ctx, c.n), v(c.ctx, c.n), ph(c.ctx, c.n), sv(c.ctx, c.n),
      sh(c.ctx, c.n), t(c.ctx, c.n);
  const std::size_t bytes = sizeof(T) * std::size_t(c.n);
  LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, bytes, c.s));
  LA_CUDA_TRY(cudaMemsetAsync(v.data(), 0, bytes, c.s));
  c.residual(x, r.data());
  double rnorm = c.norm_of(c.dots({{r.data(), r.data(), true}}), 0);
  if (rnorm <= c.target) return c.end(x, rnorm, true, "bicgstab", r.data());
  LA_CUDA_TRY(cudaMemcpyAsync(r0.data(), r.data(), bytes, cudaMemcpyDeviceToDevice, c.s));
  zd rho(1), alpha(1), omega(1);
  while (c.res.iterations < c.limit) {
    const zd rho_new = c.dots({{r0.data(), r.data(), true}})[0];
    if (std::abs(rho_new) == 0) {
      c.fail(solve_status::breakdown, "r0^H r = 0: BiCGSTAB's shadow residual is orthogonal to the residual");
      return c.end(x, rnorm, false, "bicgstab", r.data());
    }
    const zd beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
    c.combine(p.data(), 1, r.data(), beta, p.data(), -beta * omega, v.data());
    c.precondition(p.data(), ph.data());
    c.apply(ph.data(), v.data());
    ++c.res.iterations;
    const zd r0v = c.dots({{r0.data(), v.data(), true}})[0];
    if (std::abs(r0v) == 0) {
      c.fail(solve_status::breakdown, "r0^H v = 0: BiCGSTAB cannot take its step");
      return c.end(x, rnorm, false, "bicgstab", r.data());
    }
    alpha = rho / r0v;
    if (!finite(alpha)) {
      c.fail(solve_status::breakdown, "BiCGSTAB's step length is not finite: A is singular to the precision");
      return c.end(x, rnorm, false, "bicgstab", r.data());
    }
    c.combine(sv.data(), 1, r.data(), -alpha, v.data());
    const double snorm = c.norm_of(c.dots({{sv.data(), sv.data(), true}}), 0);
    if (snorm <= c.target) {
      c.combine(x, 1, x, alpha, ph.data());
      return c.end(x, snorm, true, "bicgstab", r.data());
    }
    c.precondition(sv.data(), sh.data());
    c.apply(sh.data(), t.data());
    ++c.res.iterations;
    const auto ts = c.dots({{t.data(), t.data(), true}, {t.data(), sv.data(), true}});
    omega = std::abs(ts[0]) == 0 ? zd(0) : ts[1] / ts[0];
    if (std::abs(omega) == 0 || !finite(omega)) {
      c.fail(solve_status::breakdown, "omega = 0 or not finite: BiCGSTAB's stabilizing step vanished");
      return c.end(x, snorm, false, "bicgstab", r.data());
    }
    c.combine(x, 1, x, alpha, ph.data(), omega, sh.data());
    c.combine(r.data(), 1, sv.data(), -omega, t.data());
    rnorm = c.norm_of(c.dots({{r.data(), r.data(), true}}), 0);
    if (rnorm <= c.target) return c.end(x, rnorm, true, "bicgstab", r.data());
  }
  return c.end(x, rnorm, false, "bicgstab", r.data());
}

/// GMRES(m), right-preconditioned; the basis orthogonalized by classical Gram-Schmidt run
/// twice (h = V^H w, w -= V h, and again); the least-squares problem on the host in
/// complex<double>, as the oracle's Givens rotations.
template <typename T, typename O>
solve_result gmres(engine<T, O>& c, T* x) {
  using C = typename engine<T, O>::C;
  using R = real_of_t<T>;
  const int m = c.o.restart;
  const long long n = c.nn;
  const std::size_t un = std::size_t(c.n);
  device_vector<T> V = device_vector<T>(c.ctx.template allocate<T>(un * std::size_t(m + 1)));
  device_vector<T> r(c.ctx, c.n), w(c.ctx, c.n), z(c.ctx, c.n), u(c.ctx, c.n);
  device_buffer<T> ydev = c.ctx.template allocate<T>(std::size_t(m));
  std::vector<std::vector<zd>> H(std::size_t(m) + 1, std::vector<zd>(std::size_t(m), zd(0)));
  const std::size_t um = static_cast<std::size_t>(m);
  std::vector<zd> rot_c(um), rot_s(um), g(um + 1), y(um);
  std::vector<T> yt(um);
  const auto col = [&](int k) { return V.data() + std::size_t(k) * un; };
  double rnorm = 0;
  for (;;) {
    c.residual(x, r.data());
    rnorm = c.norm_of(c.dots({{r.data(), r.data(), true}}), 0);
    if (rnorm <= c.target) return c.end(x, rnorm, true, "gmres", r.data());
    if (c.res.iterations >= c.limit) return c.end(x, rnorm, false, "gmres", r.data());
    if (n > 0) c.launch(divide<C, R>, c.d(col(0)), c.d(r.data()), static_cast<R>(rnorm), n);
    std::fill(g.begin(), g.end(), zd(0));
    g[0] = zd(rnorm);
    int j = 0;
    bool met = false;
    for (; j < m && c.res.iterations < c.limit; ++j) {
      c.precondition(col(j), z.data());
      c.apply(z.data(), w.data());
      ++c.res.iterations;
      // Both passes and ||w||^2 queued, one read-back: h = h1 + h2 (sums [0, j], [j + 1, 2j + 1]).
      const std::size_t k = std::size_t(j) + 1;
      for (std::size_t pass = 0; pass < 2; ++pass) {
        c.project_async(V.data(), (long long)un, w.data(), j + 1, pass * k);
        if (n > 0) c.launch(subtract_basis<C, R>, c.d(w.data()), c.d(V.data()), (long long)un, c.sums.data() + pass * k, j + 1, n);
      }
      c.dots_async({{w.data(), w.data(), true}}, 2 * k);
      const std::vector<zd> got = c.read(2 * k + 1);
      for (std::size_t i = 0; i < k; ++i) H[i][std::size_t(j)] = zd(0) + got[i] + got[k + i];
      const double hn = c.norm_of(got, 2 * k);
      H[std::size_t(j) + 1][std::size_t(j)] = zd(hn);
      if (hn > 0 && n > 0) c.launch(divide<C, R>, c.d(col(j + 1)), c.d(w.data()), static_cast<R>(hn), n);
      complex_krylov_detail::givens(H, rot_c, rot_s, g, j);
      rnorm = std::abs(g[std::size_t(j) + 1]);
      if (rnorm <= c.target || hn == 0) {
        met = true;
        ++j;
        break;
      }
    }
    for (int i = j - 1; i >= 0; --i) {
      zd sum = g[std::size_t(i)];
      for (int k = i + 1; k < j; ++k) sum -= H[std::size_t(i)][std::size_t(k)] * y[std::size_t(k)];
      if (std::abs(H[std::size_t(i)][std::size_t(i)]) == 0) {
        c.fail(solve_status::breakdown, "GMRES's Hessenberg matrix is singular (A M^-1 is singular on the Krylov space)");
        return c.end(x, rnorm, false, "gmres", r.data());
      }
      y[std::size_t(i)] = sum / H[std::size_t(i)][std::size_t(i)];
    }
    for (int k = 0; k < j; ++k) yt[std::size_t(k)] = T(static_cast<R>(y[std::size_t(k)].real()), static_cast<R>(y[std::size_t(k)].imag()));
    if (j > 0 && n > 0) {
      LA_CUDA_TRY(cudaMemcpyAsync(ydev.data(), yt.data(), sizeof(T) * std::size_t(j), cudaMemcpyHostToDevice, c.s));
      c.launch(combine_basis<C>, c.d(u.data()), c.d(V.data()), (long long)un, c.d(ydev.data()), j, n);
      c.precondition(u.data(), z.data());
      c.combine(x, 1, x, 1, z.data());
    }
    if (met) {
      c.residual(x, r.data());
      const double t = c.norm_of(c.dots({{r.data(), r.data(), true}}), 0);
      if (t <= std::max(c.target * c.o.true_residual_factor, c.target) || c.res.iterations >= c.limit)
        return c.end(x, rnorm, true, "gmres", r.data());
    }
  }
}

}  // namespace complex_device_detail

template <typename T, typename O>
solve_result solve_complex_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                                  complex_method method, const cg_options& o, std::string_view kernel) {
  static_assert(is_complex_v<T>, "solve_complex_device takes complex values");
  using namespace complex_device_detail;
  using R = real_of_t<T>;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  solve_result refused;
  refused.true_residual = std::nan("");
  refused.method = std::string(to_string(method)) + ", gpu, csr";
  const auto refuse = [&](solve_status st, std::string why) {
    refused.status = st;
    refused.message = std::move(why);
    return refused;
  };
  if (a.rows() != a.cols())
    return refuse(solve_status::invalid_input, "A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                                   "; a Krylov method needs a square matrix");
  if (b.size() != a.rows())
    return refuse(solve_status::invalid_input,
                  "b has " + std::to_string(b.size()) + " entries, A has " + std::to_string(a.rows()) + " rows");
  if (x.size() != b.size())
    return refuse(solve_status::invalid_input,
                  "x0 has " + std::to_string(x.size()) + " entries, b has " + std::to_string(b.size()));
  if (std::string why = complex_krylov_detail::option_problem(o); !why.empty()) return refuse(solve_status::invalid_input, why);
  if (std::string why = complex_krylov_detail::precond_problem(o); !why.empty()) return refuse(solve_status::invalid_input, why);
  if (std::string why = complex_krylov_detail::precond_method_problem(method, o); !why.empty())
    return refuse(solve_status::invalid_input, why);
  const index_t n = a.rows();
  checked_index(2 * static_cast<std::int64_t>(n), "twice the rows of a complex system (its parts)");
  // NaN or Inf in A, b or x0 (their parts scanned as reals).
  {
    device_buffer<unsigned long long> flags = ctx.allocate<unsigned long long>(3);
    const auto at = cg_detail::first_non_finite_of(ctx, reinterpret_cast<const R*>(a.view().values), 2 * a.nnz(),
                                                   reinterpret_cast<const R*>(b.data()), reinterpret_cast<const R*>(x.data()),
                                                   2 * n, flags.data());
    if (at[0] != ~0ull) return refuse(solve_status::non_finite, "A holds a NaN or Inf value");
    if (at[1] != ~0ull) return refuse(solve_status::non_finite, "b holds a NaN or Inf value");
    if (at[2] != ~0ull) return refuse(solve_status::non_finite, "the initial guess holds a NaN or Inf value");
  }
  // b and x0 scaled by a power of two so that ||b|| is near 1 (exact, as the oracle does).
  const unsigned red_blocks = std::min<unsigned>(detail::grid_for(std::max<index_t>(n, 1)), 256u);
  const unsigned blocks = cg_detail::blocks_for(std::max<index_t>(n, 1), ctx.sm_count());
  device_buffer<double> scratch = ctx.allocate<double>(2 + red_blocks);
  device_buffer<unsigned> ticket = ctx.allocate<unsigned>(1);
  LA_CUDA_TRY(cudaMemsetAsync(ticket.data(), 0, sizeof(unsigned), ctx.stream()));
  const double bn0 = cg_detail::safe_nrm2(reinterpret_cast<const R*>(b.data()), 2 * n, red_blocks, scratch.data(),
                                          scratch.data() + 2, ticket.data(), ctx.stream());
  const int e = bn0 > 0 && std::isfinite(bn0) ? std::ilogb(bn0) : 0;
  cg_options os = o;
  os.atol = std::ldexp(o.atol, -e);
  engine<T, O> c(ctx, a, os, kernel);
  c.bs = device_vector<T>(ctx, n);
  // 2^-e in two factors: for b near the ends of double's range (e down to -1074, up to 1023)
  // 2^-e itself is not a double (2^1027 overflows), each half is.
  const int half = -e / 2, rest = -e - half;
  if (n > 0) {
    cg_detail::copy_scaled<<<blocks, block_threads, 0, ctx.stream()>>>(reinterpret_cast<const R*>(b.data()),
                                                                       reinterpret_cast<R*>(c.bs.data()), 2 * n, std::ldexp(1.0, half));
    LA_CHECK_LAUNCH(ctx.stream());
  }
  cg_detail::scale_async(ctx, reinterpret_cast<R*>(c.bs.data()), 2 * n, std::ldexp(1.0, rest), blocks);
  cg_detail::scale_async(ctx, reinterpret_cast<R*>(x.data()), 2 * n, std::ldexp(1.0, half), blocks);
  cg_detail::scale_async(ctx, reinterpret_cast<R*>(x.data()), 2 * n, std::ldexp(1.0, rest), blocks);
  const auto unscale = [&] {
    cg_detail::scale_async(ctx, reinterpret_cast<R*>(x.data()), 2 * n, std::ldexp(1.0, -half), blocks);
    cg_detail::scale_async(ctx, reinterpret_cast<R*>(x.data()), 2 * n, std::ldexp(1.0, -rest), blocks);
    ctx.synchronize();
  };
  // ILU(0) or IC(0): the host oracle's factors (A copied down once), solved on the device.
  if (o.precond == preconditioner::ilu0 || o.precond == preconditioner::ic0) {
    c.fact.emplace();
    if (std::string why = c.fact->build(ctx, to_host(ctx, a), o.precond, o.precond_opt.max_shift); !why.empty()) {
      unscale();
      return refuse(solve_status::invalid_input, why);
    }
  } else if (o.precond != preconditioner::none && n > 0) {  // Jacobi: the inverse diagonal, where every row has one (automatic: none otherwise)
    using C = detail::device_value_t<T>;
    device_vector<T> dg(ctx, n);
    device_buffer<unsigned long long> zero = ctx.allocate<unsigned long long>(1);
    unsigned long long first = ~0ull;
    LA_CUDA_TRY(cudaMemcpyAsync(zero.data(), &first, sizeof first, cudaMemcpyHostToDevice, ctx.stream()));
    diagonal_of<<<blocks, block_threads, 0, ctx.stream()>>>(detail::rebind_view<csr_view<const C, O>>(a.view()),
                                                            detail::device_ptr(dg.data()), zero.data());
    LA_CHECK_LAUNCH(ctx.stream());
    LA_CUDA_TRY(cudaMemcpyAsync(&first, zero.data(), sizeof first, cudaMemcpyDeviceToHost, ctx.stream()));
    ctx.synchronize();
    if (first != ~0ull) {
      if (o.precond == preconditioner::jacobi) {
        unscale();
        return refuse(solve_status::invalid_input, "Jacobi needs a nonzero diagonal; row " + std::to_string(first + 1) +
                                                       " has none (use precond none)");
      }
    } else {
      invert<<<blocks, block_threads, 0, ctx.stream()>>>(detail::device_ptr(dg.data()), static_cast<long long>(n));
      LA_CHECK_LAUNCH(ctx.stream());
      c.inv_diag = std::move(dg);
    }
  }
  c.bnorm = c.norm_of(c.dots({{c.bs.data(), c.bs.data(), true}}), 0);
  c.target = std::max(os.rtol * c.bnorm, os.atol);
  if (!std::isfinite(c.bnorm) || !std::isfinite(c.target)) {  // never a "converged" against an infinite target
    unscale();
    return refuse(solve_status::non_finite, "||b|| is not finite after scaling b towards 1 (b = " + short_number(bn0) +
                                                "): scale b (or A) towards 1");
  }
  c.limit = os.max_iterations >= 0 ? os.max_iterations : 2 * std::int64_t(n);
  const auto t1 = clock::now();
  solve_result r;
  switch (method) {
    case complex_method::cg: r = cg_like(c, x.data(), true); break;
    case complex_method::cocg: r = cg_like(c, x.data(), false); break;
    case complex_method::bicgstab: r = bicgstab(c, x.data()); break;
    case complex_method::gmres: r = gmres(c, x.data()); break;
  }
  unscale();
  complex_krylov_detail::check_scaled_back(r, c.all_finite(x.data()), e);
  r.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  r.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
  return r;
}

template <typename T, typename O>
solve_result solve_complex_device(context& ctx, const csr_matrix<T, O>& a, const std::vector<T>& b, std::vector<T>& x,
                                  complex_method method, const cg_options& o, std::string_view kernel) {
  if (x.empty()) x.assign(b.size(), T(0));
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  auto dx = to_device(ctx, x);
  const solve_result r = solve_complex_device(ctx, da, db, dx, method, o, kernel);
  x = to_host(ctx, dx);
  return r;
}

#define LA_INSTANTIATE(T, O)                                                                                           \
  template solve_result solve_complex_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,         \
                                                   device_vector<T>&, complex_method, const cg_options&, std::string_view); \
  template solve_result solve_complex_device<T, O>(context&, const csr_matrix<T, O>&, const std::vector<T>&,           \
                                                   std::vector<T>&, complex_method, const cg_options&, std::string_view);
LA_FOR_EACH_COMPLEX_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
