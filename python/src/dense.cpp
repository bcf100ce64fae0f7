// la.solve on a dense matrix (python/la/__init__.py's dense path): A and B as numpy arrays
// (copied to the GPU, or factored on the host with device='cpu') or CuPy arrays (used in place
// on their GPU), factored by la::dense_solver (LU or Cholesky, fp64 or mixed precision) or,
// on the host, by the oracle of dense_host.hpp. The answer is checked: the report carries the
// worst column's relative residual and backward error, and the condition estimate when asked.
#include <chrono>
#include <cmath>

#include <la/solvers/dense_solver.hpp>

#include "binding.hpp"

namespace la::pybind_detail {
namespace {

/// What a dense solve reports (built without the GIL; made a dict with it).
struct dense_out {
  double factor_seconds = 0, setup_seconds = 0, solve_seconds = 0;
  std::string description;
  long singular_column = 0;
  bool cholesky = false, refactored = false, non_finite = false;
  double condition = std::nan(""), backward_error = std::nan(""), relative_residual = std::nan("");
  int refinement_steps = 0, gmres_iterations = 0;
  py::dict dict() const {
    py::dict d;
    d["factor_seconds"] = factor_seconds, d["setup_seconds"] = setup_seconds, d["solve_seconds"] = solve_seconds;
    d["description"] = description, d["singular_column"] = singular_column, d["cholesky"] = cholesky;
    d["refactored"] = refactored, d["condition"] = condition, d["backward_error"] = backward_error;
    d["relative_residual"] = relative_residual, d["refinement_steps"] = refinement_steps;
    d["gmres_iterations"] = gmres_iterations, d["non_finite"] = non_finite;
    return d;
  }
};

refinement_kind refinement_named(const std::string& r) {
  if (const auto k = parse_refinement(r)) return *k;
  throw invalid_argument("direct_refinement must be 'auto', 'classical' or 'gmres', got '" + r + "'");
}


/// The GPU: A (n x n, lda elements a row) and B (n x k, packed) at device pointers; X over B.
template <typename T>
dense_out solve_gpu(std::uintptr_t a, std::int64_t n, std::int64_t lda, std::uintptr_t b, std::int64_t k, int device,
                   dense_solver_options o, bool want_cond) {
  const auto t0 = clock_type::now();
  context ctx(device);
  ctx.synchronize();
  device_dense<T> av(static_cast<index_t>(n), static_cast<index_t>(n), static_cast<index_t>(lda),
                     device_buffer<T>::borrow(reinterpret_cast<T*>(a), static_cast<std::size_t>(n * lda), device));
  device_dense<T> bv(static_cast<index_t>(n), static_cast<index_t>(k), static_cast<index_t>(k),
                     device_buffer<T>::borrow(reinterpret_cast<T*>(b), static_cast<std::size_t>(n * k), device));
  dense_solver<T> s(ctx, av, std::move(o));
  dense_out d;
  d.factor_seconds = s.factor_seconds();
  d.description = s.description();
  d.setup_seconds = since(t0);
  if (!s.ok()) {
    d.singular_column = static_cast<long>(s.status().bad_column);
    d.cholesky = s.cholesky();
    return d;
  }
  const auto t1 = clock_type::now();
  const dense_solve_report r = s.solve(bv);
  d.description = s.description();  // after a stalled mixed-precision solve: the fp64 refactor's
  d.condition = want_cond ? s.condition_estimate() : std::nan("");
  ctx.synchronize();
  d.solve_seconds = since(t1);
  d.backward_error = r.backward_error;
  d.relative_residual = r.relative_residual;
  d.refinement_steps = r.refinement_steps;
  d.gmres_iterations = r.gmres_iterations;
  d.refactored = r.refactored;
  d.singular_column = 0;
  d.cholesky = s.cholesky();
  return d;
}

/// The GPU from numpy arrays: A and B copied to the device, X copied back over B.
template <typename T>
dense_out solve_gpu_from_host(const T* a, std::int64_t n, T* b, std::int64_t k, dense_solver_options o, bool want_cond) {
  context ctx;
  const index_t nn = static_cast<index_t>(n), kk = static_cast<index_t>(k);
  device_dense<T> da(ctx, nn, nn), db(ctx, nn, kk);
  if (n > 0) {
    LA_CUDA_TRY(cudaMemcpyAsync(da.view().values, a, sizeof(T) * n * n, cudaMemcpyHostToDevice, ctx.stream()));
    LA_CUDA_TRY(cudaMemcpyAsync(db.view().values, b, sizeof(T) * n * k, cudaMemcpyHostToDevice, ctx.stream()));
  }
  copies += 2;
  dense_out d = solve_gpu<T>(reinterpret_cast<std::uintptr_t>(da.view().values), n, n,
                            reinterpret_cast<std::uintptr_t>(db.view().values), k, ctx.device(), std::move(o), want_cond);
  if (n > 0) {
    LA_CUDA_TRY(cudaMemcpyAsync(b, db.view().values, sizeof(T) * n * k, cudaMemcpyDeviceToHost, ctx.stream()));
    ctx.synchronize();
    copies += 1;
  }
  return d;
}

/// The host: the oracle (dense_host.hpp) on a copy of A; X (n x k, row-major) over B.
template <typename T>
dense_out solve_host_dense(const T* a, std::int64_t n, T* b, std::int64_t k, dense_factorization f, bool want_cond) {
  const auto t0 = clock_type::now();
  const index_t nn = static_cast<index_t>(n);
  dense_matrix<T> m(nn, nn);
  std::copy(a, a + n * n, m.values().begin());
  bool sym = f != dense_factorization::lu;
  if (f == dense_factorization::automatic)
    for (index_t i = 0; i < nn && sym; ++i) {
      sym = m(i, i) > T(0);
      for (index_t j = i + 1; j < nn && sym; ++j) sym = m(i, j) == m(j, i);
    }
  dense_matrix<T> fac = m;
  std::vector<index_t> piv;
  bool chol = false;
  dense_factor_status st;
  if (sym) {
    st = cholesky_factor(fac);
    chol = st.ok();
    if (!chol && f == dense_factorization::automatic) fac = m, st = {};
  }
  if (!chol && f != dense_factorization::cholesky) st = lu_factor(fac, piv);
  dense_out d;
  d.description = std::string(chol ? "Cholesky" : "LU with partial pivoting") + " (host, " +
                     (sizeof(T) == 8 ? "double" : "float") + ")";
  d.factor_seconds = since(t0);
  d.setup_seconds = since(t0);
  d.cholesky = chol || f == dense_factorization::cholesky;
  if (!st.ok()) {
    d.singular_column = static_cast<long>(st.bad_column);
    return d;
  }
  const auto t1 = clock_type::now();
  // Column c of B: gather, solve, scatter (the oracle solves contiguous vectors).
  std::vector<T> col(static_cast<std::size_t>(n)), orig(col.size());
  double worst_be = 0, worst_rel = 0, ainf = 0;
  for (index_t i = 0; i < nn; ++i) {
    double s = 0;
    for (index_t j = 0; j < nn; ++j) s += std::abs(static_cast<double>(m(i, j)));
    ainf = std::max(ainf, s);
  }
  for (std::int64_t c = 0; c < k; ++c) {
    for (std::int64_t i = 0; i < n; ++i) col[i] = orig[i] = b[i * k + c];
    if (chol) cholesky_solve(fac, col.data());
    else lu_solve(fac, piv, col.data());
    // In long double (no overflow or underflow for double's range), and a NaN or an x that does
    // not fit taken as the worst (std::max drops a NaN).
    long double r2 = 0, b2 = 0;
    double rmax = 0, bmax = 0, xmax = 0;
    bool finite = true;
    for (index_t i = 0; i < nn; ++i) {
      long double s = orig[static_cast<std::size_t>(i)];
      for (index_t j = 0; j < nn; ++j) s -= static_cast<long double>(m(i, j)) * col[static_cast<std::size_t>(j)];
      rmax = std::max(rmax, std::abs(static_cast<double>(s))), r2 += s * s;
      b2 += static_cast<long double>(orig[i]) * orig[i], bmax = std::max(bmax, std::abs(double(orig[i])));
      xmax = std::max(xmax, std::abs(double(col[i])));
      finite = finite && std::isfinite(static_cast<double>(col[i])) && std::isfinite(static_cast<double>(s));
    }
    const double den = ainf * xmax + bmax;
    const double be = !finite ? INFINITY : den > 0 ? rmax / den : 0.0;
    const double rel = !finite ? INFINITY : b2 > 0 ? static_cast<double>(std::sqrt(r2 / b2)) : 0.0;
    if (!(be <= worst_be)) worst_be = be;
    if (!(rel <= worst_rel)) worst_rel = rel;
    d.non_finite = d.non_finite || !finite;
    for (std::int64_t i = 0; i < n; ++i) b[i * k + c] = col[i];
  }
  double cond = std::nan("");
  if (want_cond) {
    double a1 = 0;
    for (index_t j = 0; j < nn; ++j) {
      double s = 0;
      for (index_t i = 0; i < nn; ++i) s += std::abs(static_cast<double>(m(i, j)));
      a1 = std::max(a1, s);
    }
    cond = a1 * inverse_norm1_estimate<T>(
                    nn, [&](T* v) { chol ? cholesky_solve(fac, v) : lu_solve(fac, piv, v); },
                    [&](T* v) { chol ? cholesky_solve(fac, v) : lu_transpose_solve(fac, piv, v); });
  }
  d.condition = cond;
  d.solve_seconds = since(t1);
  d.backward_error = worst_be;
  d.relative_residual = worst_rel;
  d.refinement_steps = 0;
  d.refactored = false;
  d.singular_column = 0;
  return d;
}
/// f(a, b, n, k) with the GIL released on numpy A (n x n) and B (n x k, or n), both
/// C-contiguous of one type (float32 or float64, as the Python side makes them); B is written
/// in place, so it must be that very array (no converted copy).
template <typename F>
py::dict on_numpy(const py::array& a, const py::array& b, F&& f) {
  const std::int64_t n = a.shape(0), k = b.ndim() == 1 ? 1 : b.shape(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using arr = py::array_t<T, py::array::c_style>;
    if (!py::isinstance<arr>(a) || !py::isinstance<arr>(b))
      throw invalid_argument("dense solve: A and b must be C-contiguous arrays of one type, float32 or float64");
    const arr av = a.cast<arr>();
    arr bv = b.cast<arr>();
    const T* ap = av.data();
    T* bp = bv.mutable_data();
    dense_out r;
    {
      py::gil_scoped_release release;
      r = f(ap, bp, n, k);
    }
    return r.dict();
  };
  return a.dtype().is(py::dtype::of<float>()) ? run(float{}) : run(double{});
}
}  // namespace

void bind_dense(py::module_& mod) {
  mod.def(
      "dense_solve_gpu",
      [](std::uintptr_t a, std::int64_t n, std::int64_t lda, std::uintptr_t b, std::int64_t k, char code, int device,
         const std::string& factorization, const std::string& precision, const std::string& refinement, bool want_cond) {
        dense_solver_options o;
        o.factorization = factorization_named(factorization);
        o.factor_precision = precision;
        o.refinement = refinement_named(refinement);
        dense_out r;
        {
          py::gil_scoped_release release;
          r = code == 'f' ? solve_gpu<float>(a, n, lda, b, k, device, o, want_cond)
                          : solve_gpu<double>(a, n, lda, b, k, device, o, want_cond);
        }
        return r.dict();
      },
      "A x = B on the GPU from device pointers (A n x n with lda, B n x k packed; X over B).");
  mod.def(
      "dense_solve_gpu_from_host",
      [](py::array a, py::array b, const std::string& factorization, const std::string& precision,
         const std::string& refinement, bool want_cond) {
        dense_solver_options o;
        o.factorization = factorization_named(factorization);
        o.factor_precision = precision;
        o.refinement = refinement_named(refinement);
        return on_numpy(a, b, [&](const auto* ap, auto* bp, std::int64_t n, std::int64_t k) {
          using T = std::remove_const_t<std::remove_pointer_t<decltype(ap)>>;
          return solve_gpu_from_host<T>(ap, n, bp, k, o, want_cond);
        });
      },
      "A x = B on the GPU from numpy arrays (C-contiguous, A's type); X copied back over B.");
  mod.def(
      "dense_solve_host",
      [](py::array a, py::array b, const std::string& factorization, bool want_cond) {
        const dense_factorization f = factorization_named(factorization);
        return on_numpy(a, b, [&](const auto* ap, auto* bp, std::int64_t n, std::int64_t k) {
          using T = std::remove_const_t<std::remove_pointer_t<decltype(ap)>>;
          return solve_host_dense<T>(ap, n, bp, k, f, want_cond);
        });
      },
      "A x = B on the host (the oracle of dense_host.hpp); X over B (a C-contiguous array of A's type).");
}

}  // namespace la::pybind_detail
