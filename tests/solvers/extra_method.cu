// The test-only method of extra_method.hpp, written from scratch: preconditioned Richardson
// iteration, x_{k+1} = x_k + w M^-1 (b - A x_k), with any preconditioner of the registry
// (none, Jacobi's diagonal, or one its entry builds). Its entry, its option, its host solver
// (the oracle) and its GPU solver are all in this file. Slow (its rate is 1 - w/cond(M^-1 A)),
// plain, and right: it stops when ||b - A x|| <= max(rtol ||b||, atol).
#include "extra_method.hpp"

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/precond.hpp>

namespace la::test {
namespace {
std::atomic<long long> host_runs{0}, device_runs{0};

double weight_of(const cg_options& o) {
  const auto it = o.extra.find(extra_method_option);
  return it == o.extra.end() ? 1.0 : it->second;
}

/// The loop both sides share: residual(r) computes r = b - A x and returns ||r||;
/// precondition(r, z) is z = M^-1 r; update(z) is x += w z.
template <typename Residual, typename Precondition, typename Update>
solve_result richardson(double bnorm, std::int64_t n, const cg_options& o, Residual&& residual,
                        Precondition&& precondition, Update&& update) {
  solve_result r;
  const double target = std::max(o.rtol * bnorm, o.atol);
  const std::int64_t limit = o.max_iterations >= 0 ? o.max_iterations : std::max<std::int64_t>(20000, 2 * n);
  double rn = residual();
  while (!(rn <= target) && std::isfinite(rn) && r.iterations < limit) {
    precondition();
    update();
    ++r.iterations;
    rn = residual();
  }
  const double scale = bnorm > 0 ? bnorm : 1;
  r.residual = r.true_residual = rn / scale;
  r.status = !std::isfinite(rn) ? solve_status::non_finite
             : rn <= target     ? solve_status::converged
                                : solve_status::max_iterations;
  r.message = r.converged() ? "||b - Ax|| <= max(rtol*||b||, atol)"
                            : "stopped after " + std::to_string(r.iterations) + " iterations at ||r||/||b|| = " +
                                  short_number(r.residual) + " (Richardson is slow: {method} auto is faster)";
  return r;
}

template <typename T>
solve_result solve_host(const host_matrix_ref<T>& any, const std::vector<T>& b, std::vector<T>& x,
                        const cg_options& o) {
  ++host_runs;
  const csr_matrix<T, count_t>& a = any.csr();  // the method works on CSR
  const std::size_t n = b.size();
  if (x.empty()) x.assign(n, T(0));
  std::optional<host_preconditioner<T>> pre;
  std::vector<T> d(n, T(1));  // diagonal form: D^-1
  const precond_form form = form_of(o.precond);
  solve_result refused;
  refused.solver = o.method;
  try {
    if (form == precond_form::apart) pre.emplace(a, o.precond, o.precond_opt);
  } catch (const invalid_argument& e) {
    refused.message = e.what(), refused.precond_failed = true, refused.status = solve_status::breakdown;
    return refused;
  }
  if (form == precond_form::diagonal)
    for (index_t i = 0; i < a.rows(); ++i)
      for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
        if (a.col_idx()[k] == i && a.values()[k] != T(0)) d[static_cast<std::size_t>(i)] = T(1) / a.values()[k];
  std::vector<T> r(n), z(n);
  double bn = 0;
  for (const T& v : b) bn += static_cast<double>(v) * v;
  const double w = weight_of(o);
  solve_result res = richardson(
      std::sqrt(bn), static_cast<std::int64_t>(n), o,
      [&] {
        double s = 0;
        for (index_t i = 0; i < a.rows(); ++i) {
          double v = b[static_cast<std::size_t>(i)];
          for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) v -= static_cast<double>(a.values()[k]) * x[a.col_idx()[k]];
          r[static_cast<std::size_t>(i)] = static_cast<T>(v), s += v * v;
        }
        return std::sqrt(s);
      },
      [&] {
        if (pre) pre->apply(r, z);
        else
          for (std::size_t i = 0; i < n; ++i) z[i] = d[i] * r[i];
      },
      [&] {
        for (std::size_t i = 0; i < n; ++i) x[i] += static_cast<T>(w) * z[i];
      });
  res.solver = o.method;
  res.method = "host, extra-richardson";
  if (pre) res.precond = pre->report();
  else res.precond.kind = o.precond;
  return res;
}

template <typename T, typename O>
__global__ void residual_kernel(csr_view<const T, O> a, const T* b, const T* x, T* r) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < a.rows;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    double v = b[i];
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) v -= static_cast<double>(a.values[k]) * x[a.col_idx[k]];
    r[i] = static_cast<T>(v);
  }
}
template <typename T, typename O>
__global__ void inverse_diagonal(csr_view<const T, O> a, T* d) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < a.rows;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    T v = T(1);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i && a.values[k] != T(0)) v = T(1) / a.values[k];
    d[i] = v;
  }
}
template <typename T>
__global__ void scale_kernel(const T* d, const T* r, T* z, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    z[i] = d ? d[i] * r[i] : r[i];
}
template <typename T>
__global__ void update_kernel(T* x, const T* z, T w, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x[i] += w * z[i];
}
unsigned blocks(long long n) { return static_cast<unsigned>(std::max<long long>(1, std::min<long long>((n + 255) / 256, 4096))); }

template <typename T, typename O>
solve_result solve_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          const cg_options& o, const device_cg_options&) {
  ++device_runs;
  const long long n = a.rows();
  const cudaStream_t s = ctx.stream();
  if (x.size() == 0) {
    x = device_vector<T>(ctx, a.rows());
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * static_cast<std::size_t>(n), s));
  }
  const precond_form form = form_of(o.precond);
  std::optional<device_preconditioner<T>> pre;
  solve_result refused;
  refused.solver = o.method;
  try {
    if (form == precond_form::apart) pre.emplace(ctx, a, o.precond, o.precond_opt);
  } catch (const invalid_argument& e) {
    refused.message = e.what(), refused.precond_failed = true, refused.status = solve_status::breakdown;
    return refused;
  }
  device_vector<T> r(ctx, a.rows()), z(ctx, a.rows()), d;
  if (form == precond_form::diagonal && n > 0) {
    d = device_vector<T>(ctx, a.rows());
    inverse_diagonal<<<blocks(n), 256, 0, s>>>(a.view(), d.data());
    LA_CHECK_LAUNCH(s);
  }
  const std::vector<T> hb = to_host(ctx, b);
  double bn = 0;
  for (const T& v : hb) bn += static_cast<double>(v) * v;
  const T w = static_cast<T>(weight_of(o));
  solve_result res = richardson(
      std::sqrt(bn), n, o,
      [&] {
        if (n == 0) return 0.0;
        residual_kernel<<<blocks(n), 256, 0, s>>>(a.view(), b.data(), x.data(), r.data());
        LA_CHECK_LAUNCH(s);
        double sum = 0;
        for (const T& v : to_host(ctx, r)) sum += static_cast<double>(v) * v;
        return std::sqrt(sum);
      },
      [&] {
        if (pre) pre->apply(r.data(), z.data(), s);
        else scale_kernel<<<blocks(n), 256, 0, s>>>(d.size() ? d.data() : nullptr, r.data(), z.data(), n);
        LA_CHECK_LAUNCH(s);
      },
      [&] {
        update_kernel<<<blocks(n), 256, 0, s>>>(x.data(), z.data(), w, n);
        LA_CHECK_LAUNCH(s);
      });
  ctx.synchronize();
  res.solver = o.method;
  res.method = "gpu, extra-richardson";
  if (pre) res.precond = pre->report();
  else res.precond.kind = o.precond;
  return res;
}

constexpr option_spec options[] = {
    {extra_method_option, option_type::real, "1", 1e-3, 2, "", "W", "extra-richardson: the step's weight w",
     {option_scope::on::method, extra_method_name, "{method} extra-richardson"}, {}, "",
     [](cg_options& o, const option_value& v) { o.extra[extra_method_option] = v.number; }},
};
static_assert(options_are_valid(options));

constexpr method_entry entry{extra_method_name, krylov_method::automatic,
                             "x += w M^-1 (b - A x) (the tests' own)", false, false, false, true,
                             LA_METHOD_SOLVERS(solve_host, solve_device)};
}  // namespace

krylov_method add_extra_method() {
  static const krylov_method kind = add_method(entry, options, 1);
  return kind;
}
long long extra_method_host_runs() { return host_runs.load(); }
long long extra_method_device_runs() { return device_runs.load(); }

}  // namespace la::test
