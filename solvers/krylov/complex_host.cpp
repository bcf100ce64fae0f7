// The complex Krylov methods' host oracles (issue 69; <la/solvers/complex_krylov.hpp>
// declares solve_complex_host): sequential, every reduction in wider_t (complex<long double>
// for complex<double>), reruns bit-identical; the GPU forms (complex_device.cu) are checked
// against them.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/detail/instantiate.hpp>
#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/complex_krylov.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/detail/complex_ic0.hpp>
#include <la/solvers/detail/complex_ilu0.hpp>

namespace la {
namespace complex_krylov_detail {

/// The loop's shared state: A, b, the preconditioner, the norms, the result.
template <typename T, typename O>
struct context {
  using R = real_of_t<T>;
  const csr_matrix<T, O>& a;
  const std::vector<T>& b;
  const cg_options& o;
  solve_result res;
  std::vector<T> inv_diag;  // empty: no preconditioner (or ILU(0))
  bool ilu = false;         // ILU(0) (ilu0): its factors in ilu_f
  ilu0_factors<T, O> ilu_f;
  bool ic = false;  // IC(0) (ic0, Hermitian A): its factor in ic_f
  ic0_factors<T, O> ic_f;
  reference::accumulator<T> acc;
  double bnorm = 0, target = 0;
  std::int64_t limit = 0;
  bool failed = false;  // fail() set the status: end() keeps it

  context(const csr_matrix<T, O>& a_, const std::vector<T>& b_, const cg_options& o_) : a(a_), b(b_), o(o_) {}

  void fail(solve_status s, std::string why) {
    failed = true;
    res.status = s;
    res.message = std::move(why);
  }
  void apply(const std::vector<T>& x, std::vector<T>& y) { reference::spmv(T(1), a, x, T(0), y, acc); }
  /// y = M^-1 x (a copy without a preconditioner).
  void precondition(const std::vector<T>& x, std::vector<T>& y) const {
    if (ilu) return ilu_f.solve(x, y);
    if (ic) return ic_f.solve(x, y);
    if (inv_diag.empty()) {
      y = x;
      return;
    }
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = inv_diag[i] * x[i];
  }
  /// Sizes, finiteness, the preconditioner, ||b||; false (with the status set) when the
  /// solve cannot start.
  bool begin(std::vector<T>& x) {
    if (a.rows() != a.cols())
      return fail(solve_status::invalid_input, "A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                                   "; a Krylov method needs a square matrix"),
             false;
    if (b.size() != static_cast<std::size_t>(a.rows()))
      return fail(solve_status::invalid_input, "b has " + std::to_string(b.size()) + " entries, A has " +
                                                   std::to_string(a.rows()) + " rows"),
             false;
    if (x.empty()) x.assign(b.size(), T(0));
    if (x.size() != b.size())
      return fail(solve_status::invalid_input, "x0 has " + std::to_string(x.size()) + " entries, b has " + std::to_string(b.size())),
             false;
    if (const std::string why = option_problem(o); !why.empty()) return fail(solve_status::invalid_input, why), false;
    for (const T& v : a.values())
      if (!finite(v)) return fail(solve_status::non_finite, "A holds a NaN or Inf value"), false;
    for (const T& v : b)
      if (!finite(v)) return fail(solve_status::non_finite, "b holds a NaN or Inf value"), false;
    for (const T& v : x)
      if (!finite(v)) return fail(solve_status::non_finite, "the initial guess holds a NaN or Inf value"), false;
    const bool want_jacobi = o.precond == preconditioner::jacobi;
    if (const std::string why = precond_problem(o); !why.empty()) return fail(solve_status::invalid_input, why), false;
    if (o.precond == preconditioner::ilu0) {
      if (const std::string why = ilu_f.build(a); !why.empty())
        return fail(solve_status::invalid_input, "ILU(0) does not exist for this A: " + why + " (use precond jacobi or none)"),
               false;
      ilu = true;
    } else if (o.precond == preconditioner::ic0) {
      if (const std::string why = ic_f.build(a, o.precond_opt.max_shift); !why.empty())
        return fail(solve_status::invalid_input, "IC(0) does not exist for this A: " + why + " (use precond jacobi or ilu0)"),
               false;
      ic = true;
    } else if (o.precond != preconditioner::none) {
      std::vector<T> d(b.size(), T(0));
      for (index_t i = 0; i < a.rows(); ++i)
        for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
          if (a.col_idx()[k] == i) d[static_cast<std::size_t>(i)] += a.values()[k];
      std::size_t zero = d.size();
      for (std::size_t i = 0; i < d.size() && zero == d.size(); ++i)
        if (d[i] == T(0)) zero = i;
      if (zero < d.size()) {
        if (want_jacobi)
          return fail(solve_status::invalid_input, "Jacobi needs a nonzero diagonal; row " + std::to_string(zero + 1) +
                                                       " has none (use precond none)"),
                 false;
      } else {
        inv_diag.resize(d.size());
        for (std::size_t i = 0; i < d.size(); ++i) inv_diag[i] = T(1) / d[i];
      }
    }
    bnorm = static_cast<double>(reference::nrm2(b));
    target = std::max(o.rtol * bnorm, o.atol);
    limit = o.max_iterations >= 0 ? o.max_iterations : 2 * std::int64_t(a.rows());
    return true;
  }
  double relative(double r) const { return bnorm > 0 ? r / bnorm : r; }
  /// The end: the true residual, and converged / precision_limit / the status given.
  solve_result end(const std::vector<T>& x, double recurrence, bool met, const std::string& method) {
    std::vector<T> r(b.size());
    reference::spmv(T(-1), a, x, T(0), r, acc);
    for (std::size_t i = 0; i < r.size(); ++i) r[i] += b[i];
    const double t = static_cast<double>(reference::nrm2(r));
    res.residual = relative(recurrence);
    res.true_residual = relative(t);
    bool x_finite = true;
    for (const T& v : x) x_finite = x_finite && finite(v);
    verdict(res, failed, x_finite, met, t, target, o, limit);
    res.method = method +
                 (ilu  ? (ilu_f.matched() ? " + ilu0 (matched)" : " + ilu0")
                  : ic ? (ic_f.shift > 0 ? " + ic0 (shift " + short_number(ic_f.shift) + ")" : std::string(" + ic0"))
                  : inv_diag.empty() ? ""
                                     : " + jacobi") +
                 ", host, csr";
    res.precond.kind = ilu ? preconditioner::ilu0 : ic ? preconditioner::ic0 : inv_diag.empty() ? preconditioner::none : preconditioner::jacobi;
    res.precond.bytes =
        static_cast<double>((ilu ? ilu_f.lu.values().size() : ic ? ic_f.l.values().size() : inv_diag.size()) * sizeof(T));
    return res;
  }
};

/// CG (Hermitian: x^H y) or COCG (complex symmetric: x^T y), preconditioned with z = M^-1 r.
template <typename T, typename O>
solve_result cg_like(context<T, O>& c, std::vector<T>& x, bool hermitian) {
  const auto inner = [hermitian](const std::vector<T>& u, const std::vector<T>& v) {
    return hermitian ? reference::dotc(u, v) : reference::dotu(u, v);
  };
  const char* name = hermitian ? "cg" : "cocg";
  const std::size_t n = x.size();
  std::vector<T> r(n), z(n), p(n), q(n);
  c.apply(x, r);
  for (std::size_t i = 0; i < n; ++i) r[i] = c.b[i] - r[i];
  double rnorm = static_cast<double>(reference::nrm2(r));
  if (rnorm <= c.target) return c.end(x, rnorm, true, name);
  c.precondition(r, z);
  p = z;
  T rz = inner(r, z);
  if (hermitian ? !(rz.real() > 0) : std::abs(rz) == 0) {
    c.fail(solve_status::breakdown, hermitian ? "r^H M^-1 r <= 0: the preconditioner is not Hermitian positive definite"
                                              : "r^T M^-1 r = 0 with r != 0: COCG met a quasi-null residual");
    return c.end(x, rnorm, false, name);
  }
  for (std::int64_t it = 0; it < c.limit; ++it) {
    c.apply(p, q);
    ++c.res.iterations;
    const T pq = inner(p, q);
    if (hermitian ? !(pq.real() > 0) : std::abs(pq) == 0) {
      c.fail(solve_status::breakdown, hermitian ? "p^H A p <= 0: A is not Hermitian positive definite"
                                                : "p^T A p = 0: COCG met a quasi-null direction");
      return c.end(x, rnorm, false, name);
    }
    const T alpha = rz / pq;
    if (!finite(alpha)) {  // pq underflowed against rz (A singular to the precision): keep the last x
      c.fail(solve_status::breakdown, std::string(name) + "'s step length is not finite: A is singular to the precision");
      return c.end(x, rnorm, false, name);
    }
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i], r[i] -= alpha * q[i];
    rnorm = static_cast<double>(reference::nrm2(r));
    if (rnorm <= c.target) return c.end(x, rnorm, true, name);
    c.precondition(r, z);
    const T rz_new = inner(r, z);
    if (hermitian ? !(rz_new.real() > 0) : std::abs(rz_new) == 0) {
      c.fail(solve_status::breakdown, hermitian ? "r^H M^-1 r <= 0: the preconditioned A is not Hermitian positive definite"
                                                : "r^T M^-1 r = 0 with r != 0: COCG met a quasi-null residual");
      return c.end(x, rnorm, false, name);
    }
    const T beta = rz_new / rz;
    rz = rz_new;
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  return c.end(x, rnorm, false, name);
}

/// BiCGSTAB, right-preconditioned, shadow residual r0.
template <typename T, typename O>
solve_result bicgstab(context<T, O>& c, std::vector<T>& x) {
  const std::size_t n = x.size();
  std::vector<T> r(n), r0, p(n, T(0)), v(n, T(0)), ph(n), s(n), sh(n), t(n);
  c.apply(x, r);
  for (std::size_t i = 0; i < n; ++i) r[i] = c.b[i] - r[i];
  double rnorm = static_cast<double>(reference::nrm2(r));
  if (rnorm <= c.target) return c.end(x, rnorm, true, "bicgstab");
  r0 = r;
  T rho(1), alpha(1), omega(1);
  while (c.res.iterations < c.limit) {
    const T rho_new = reference::dotc(r0, r);
    if (std::abs(rho_new) == 0) {
      c.fail(solve_status::breakdown, "r0^H r = 0: BiCGSTAB's shadow residual is orthogonal to the residual");
      return c.end(x, rnorm, false, "bicgstab");
    }
    const T beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    c.precondition(p, ph);
    c.apply(ph, v);
    ++c.res.iterations;
    const T r0v = reference::dotc(r0, v);
    if (std::abs(r0v) == 0) {
      c.fail(solve_status::breakdown, "r0^H v = 0: BiCGSTAB cannot take its step");
      return c.end(x, rnorm, false, "bicgstab");
    }
    alpha = rho / r0v;
    if (!finite(alpha)) {
      c.fail(solve_status::breakdown, "BiCGSTAB's step length is not finite: A is singular to the precision");
      return c.end(x, rnorm, false, "bicgstab");
    }
    for (std::size_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    const double snorm = static_cast<double>(reference::nrm2(s));
    if (snorm <= c.target) {
      for (std::size_t i = 0; i < n; ++i) x[i] += alpha * ph[i];
      return c.end(x, snorm, true, "bicgstab");
    }
    c.precondition(s, sh);
    c.apply(sh, t);
    ++c.res.iterations;
    const T tt = reference::dotc(t, t);
    omega = std::abs(tt) == 0 ? T(0) : reference::dotc(t, s) / tt;
    if (std::abs(omega) == 0 || !finite(omega)) {
      c.fail(solve_status::breakdown, "omega = 0 or not finite: BiCGSTAB's stabilizing step vanished");
      return c.end(x, snorm, false, "bicgstab");
    }
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * ph[i] + omega * sh[i], r[i] = s[i] - omega * t[i];
    rnorm = static_cast<double>(reference::nrm2(r));
    if (rnorm <= c.target) return c.end(x, rnorm, true, "bicgstab");
  }
  return c.end(x, rnorm, false, "bicgstab");
}

/// GMRES(m), right-preconditioned: A M^-1 u = b, x = M^-1 u; modified Gram-Schmidt; the
/// least-squares problem by complex Givens rotations (c real, s complex).
template <typename T, typename O>
solve_result gmres(context<T, O>& c, std::vector<T>& x) {
  using W = wider_t<T>;
  const std::size_t n = x.size();
  const int m = c.o.restart;
  std::vector<std::vector<T>> V(static_cast<std::size_t>(m) + 1, std::vector<T>(n));
  std::vector<std::vector<W>> H(static_cast<std::size_t>(m) + 1, std::vector<W>(static_cast<std::size_t>(m), W(0)));
  std::vector<W> cs(static_cast<std::size_t>(m)), sn(static_cast<std::size_t>(m)), g(static_cast<std::size_t>(m) + 1);
  std::vector<T> r(n), w(n), z(n), u(n);  // u: V y, the cycle's correction before M^-1
  std::vector<W> y(static_cast<std::size_t>(m));
  double rnorm = 0;
  for (;;) {
    c.apply(x, r);
    for (std::size_t i = 0; i < n; ++i) r[i] = c.b[i] - r[i];
    rnorm = static_cast<double>(reference::nrm2(r));
    if (rnorm <= c.target) return c.end(x, rnorm, true, "gmres");
    if (c.res.iterations >= c.limit) return c.end(x, rnorm, false, "gmres");
    for (std::size_t i = 0; i < n; ++i) V[0][i] = r[i] / static_cast<real_of_t<T>>(rnorm);
    std::fill(g.begin(), g.end(), W(0));
    g[0] = W(rnorm);
    int j = 0;
    bool met = false;
    for (; j < m && c.res.iterations < c.limit; ++j) {
      c.precondition(V[j], z);
      c.apply(z, w);
      ++c.res.iterations;
      for (int i = 0; i <= j; ++i) {  // modified Gram-Schmidt
        const T h = reference::dotc(V[i], w);
        H[i][j] = widen(h);
        for (std::size_t e = 0; e < n; ++e) w[e] -= h * V[i][e];
      }
      const double hn = static_cast<double>(reference::nrm2(w));
      H[j + 1][j] = W(hn);
      if (hn > 0)
        for (std::size_t e = 0; e < n; ++e) V[j + 1][e] = w[e] / static_cast<real_of_t<T>>(hn);
      givens(H, cs, sn, g, j);
      rnorm = static_cast<double>(std::abs(g[j + 1]));
      if (rnorm <= c.target || hn == 0) {
        met = true;
        ++j;
        break;
      }
    }
    // y = H^-1 g (upper triangular j x j), then x += M^-1 (V y).
    for (int i = j - 1; i >= 0; --i) {
      W s = g[i];
      for (int k = i + 1; k < j; ++k) s -= H[i][k] * y[k];
      if (std::abs(H[i][i]) == 0) {
        c.fail(solve_status::breakdown, "GMRES's Hessenberg matrix is singular (A M^-1 is singular on the Krylov space)");
        return c.end(x, rnorm, false, "gmres");
      }
      y[i] = s / H[i][i];
    }
    std::fill(u.begin(), u.end(), T(0));
    for (int k = 0; k < j; ++k)
      for (std::size_t e = 0; e < n; ++e) u[e] += static_cast<T>(y[k]) * V[k][e];
    c.precondition(u, z);
    for (std::size_t e = 0; e < n; ++e) x[e] += z[e];
    if (met) {  // the recurrence met the target: the true residual decides (a restart if it did not)
      c.apply(x, r);
      for (std::size_t i = 0; i < n; ++i) r[i] = c.b[i] - r[i];
      const double t = static_cast<double>(reference::nrm2(r));
      if (t <= std::max(c.target * c.o.true_residual_factor, c.target) || c.res.iterations >= c.limit)
        return c.end(x, rnorm, true, "gmres");
    }
  }
}

}  // namespace complex_krylov_detail

template <typename T, typename O>
solve_result solve_complex_host(const csr_matrix<T, O>& a, const std::vector<T>& b, std::vector<T>& x, complex_method method,
                                const cg_options& o) {
  static_assert(is_complex_v<T>, "solve_complex_host takes complex values; real systems go through solve_host");
  // b and x0 scaled by a power of two (exact, part by part) so that ||b|| is near 1: the inner
  // products are returned in T, where a b near 1e300 or 1e-300 would overflow or underflow.
  const double bn = static_cast<double>(reference::nrm2(b));
  const int e = bn > 0 && std::isfinite(bn) ? std::ilogb(bn) : 0;
  const auto scaled = [](std::vector<T>& v, int by) {
    for (T& t : v) t = T(std::ldexp(t.real(), by), std::ldexp(t.imag(), by));
  };
  std::vector<T> bs = b;
  scaled(bs, -e);
  scaled(x, -e);
  cg_options os = o;
  os.atol = std::ldexp(o.atol, -e);
  complex_krylov_detail::context<T, O> c(a, bs, os);
  solve_result r;
  if (std::string why = complex_krylov_detail::precond_method_problem(method, o); !why.empty()) {
    r.status = solve_status::invalid_input;
    r.message = std::move(why);
    r.true_residual = std::nan("");
    r.method = std::string(to_string(method)) + ", host, csr";
  } else if (!c.begin(x)) {
    r = c.res;
    r.true_residual = std::nan("");
    r.method = std::string(to_string(method)) + ", host, csr";
  } else {
    switch (method) {
      case complex_method::cg: r = complex_krylov_detail::cg_like(c, x, true); break;
      case complex_method::cocg: r = complex_krylov_detail::cg_like(c, x, false); break;
      case complex_method::bicgstab: r = complex_krylov_detail::bicgstab(c, x); break;
      case complex_method::gmres: r = complex_krylov_detail::gmres(c, x); break;
    }
  }
  scaled(x, e);
  bool x_finite = true;
  for (const T& v : x) x_finite = x_finite && complex_krylov_detail::finite(v);
  complex_krylov_detail::check_scaled_back(r, x_finite, e);
  return r;
}

#define LA_INSTANTIATE(T, O)                                                                                           \
  template solve_result solve_complex_host<T, O>(const csr_matrix<T, O>&, const std::vector<T>&, std::vector<T>&, \
                                                 complex_method, const cg_options&);
LA_FOR_EACH_COMPLEX_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
