// The direct method for complex systems on the host (issue 69; <la/solvers/complex_direct.hpp>
// declares it): la's sparse LU with static pivoting, refined classically with residuals of A
// summed in complex<long double>.
#include <chrono>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/detail/complex_direct_common.hpp>
#include <la/solvers/detail/complex_ldl.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la {

namespace complex_direct_detail {

/// The host's kept factors: la's sparse LU with static pivoting, or the sparse LDL^T / LDL^H.
template <typename O, typename F>
struct host_backend final : direct_backend<O> {
  const csr_matrix<z, O>& a;
  cg_options o;
  F f;
  reference::accumulator<z> acc;

  host_backend(const csr_matrix<z, O>& a_, const cg_options& o_, F f_) : a(a_), o(o_), f(std::move(f_)) {}

  void solve(const std::vector<z>& b, std::vector<z>& x, solve_result& r, const input& in) override {
    using clock = std::chrono::steady_clock;
    const auto t1 = clock::now();
    const std::size_t n = b.size();
    std::vector<z> res(n), best;
    double be = 0, rel = 0;
    const auto measure = [&] {  // res = b - A x (summed in complex<long double>), be and rel
      reference::spmv(z(-1), a, x, z(0), res, acc);
      for (std::size_t i = 0; i < n; ++i) res[i] += b[i];
      measures(res, x, in, be, rel);
    };
    x = b;
    f.solve(x.data());
    measure();
    best = x;  // the best x so far (refine keeps a better one, and the end takes it)
    const int steps = detail::refine(
        classical_rule(o), be, rel,
        [&](bool, double& be_out, double& rel_out) {
          std::vector<z> d = res;
          f.solve(d.data());
          for (std::size_t i = 0; i < n; ++i) x[i] += d[i];
          measure();
          be_out = be, rel_out = rel;
        },
        [&] { best = x; }, [&] { x = best; });
    x = best;
    measure();
    r.iterations = steps;
    r.iterate_seconds = std::chrono::duration<double>(clock::now() - t1).count();
    verdict(r, x, rel, in, o,
            std::to_string(f.perturbed) + " pivot" + (f.perturbed == 1 ? "" : "s") + " perturbed, " + std::to_string(steps) +
                " refinement step" + (steps == 1 ? "" : "s") + ", backward error " + short_number(be));
  }
};

template <typename O>
std::unique_ptr<direct_backend<O>> factor_host(const csr_matrix<z, O>& a, const cg_options& o, solve_result& r, const input&) {
  // Hermitian or complex symmetric A: LDL^H or LDL^T on the fill-reducing ordering alone (half
  // the LU's work); where a pivot had to be perturbed (no matching puts a heavy diagonal there),
  // the matched LU instead.
  const bool herm = complex_krylov_detail::hermitian_problem(a).empty();
  if (herm || complex_symmetric(a)) {
    sparse_ldl l = sparse_ldl_host(a, herm, o.direct.ordering);
    if (l.perturbed == 0) {
      r.method = herm ? "direct (sparse LDL^H), host, csr" : "direct (sparse LDL^T), host, csr";
      return std::make_unique<host_backend<O, sparse_ldl>>(a, o, std::move(l));
    }
  }
  sparse_lu<z> f;
  try {
    f = sparse_lu_host(a, o.direct.ordering);
  } catch (const invalid_argument& e) {  // the matching gave up on this pattern
    r.status = solve_status::breakdown;
    r.message = std::string("the sparse LU could not start: ") + e.what();
    return nullptr;
  }
  if (!f.ok()) {
    r.status = solve_status::breakdown;
    r.message = "A is structurally singular: no row can be matched to column " + std::to_string(f.singular_column) +
                ", so no LU factorization exists";
    return nullptr;
  }
  return std::make_unique<host_backend<O, sparse_lu<z>>>(a, o, std::move(f));
}

template std::unique_ptr<direct_backend<std::int32_t>> factor_host<std::int32_t>(const csr_matrix<z, std::int32_t>&,
                                                                                 const cg_options&, solve_result&, const input&);
template std::unique_ptr<direct_backend<std::int64_t>> factor_host<std::int64_t>(const csr_matrix<z, std::int64_t>&,
                                                                                 const cg_options&, solve_result&, const input&);

}  // namespace complex_direct_detail

template <typename O>
complex_direct<O>::complex_direct(context* ctx, const csr_matrix<std::complex<double>, O>& a, const cg_options& o)
    : rows_(a.rows()) {
  using namespace complex_direct_detail;
  const auto t0 = std::chrono::steady_clock::now();
  factor_ = named(ctx ? "direct (dense LU, partial pivoting), gpu" : "direct (sparse LU, static pivoting), host, csr");
  input in;
  if (!check_matrix(a, factor_, in)) {
    refused_ = true;
    return;
  }
  anorm_ = in.anorm;
  if (ctx && a.rows() > complex_dense_rows) {
    refused_ = true;
    factor_.status = solve_status::invalid_input;
    factor_.message = "the GPU's direct method for complex systems factors A's dense form, at most " +
                      std::to_string(complex_dense_rows) + " rows; A has " + std::to_string(a.rows()) +
                      " (the host's sparse LU takes it: device cpu)";
    return;
  }
  backend_ = ctx ? factor_device(*ctx, a, o, factor_, in) : factor_host(a, o, factor_, in);
  if (backend_) factor_.status = solve_status::converged, factor_.message = "factored";
  factor_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename O>
complex_direct<O>::~complex_direct() = default;
template <typename O>
complex_direct<O>::complex_direct(complex_direct&&) noexcept = default;
template <typename O>
complex_direct<O>& complex_direct<O>::operator=(complex_direct&&) noexcept = default;

template <typename O>
solve_result complex_direct<O>::solve(const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x) {
  using namespace complex_direct_detail;
  solve_result r = named(factor_.method);
  if (refused_) {
    r.status = factor_.status, r.message = factor_.message;
    return r;
  }
  input in;
  in.anorm = anorm_;
  if (!start_solve(rows_, b, x, r, in)) return r;
  r.setup_seconds = factor_.setup_seconds;
  if (!backend_) {
    r.status = factor_.status, r.message = factor_.message;
    return r;
  }
  backend_->solve(b, x, r, in);
  return r;
}

template <typename O>
solve_result solve_complex_direct_host(const csr_matrix<std::complex<double>, O>& a,
                                       const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                       const cg_options& o) {
  return complex_direct<O>(nullptr, a, o).solve(b, x);
}

template class complex_direct<std::int32_t>;
template class complex_direct<std::int64_t>;
template solve_result solve_complex_direct_host<std::int32_t>(const csr_matrix<std::complex<double>, std::int32_t>&,
                                                              const std::vector<std::complex<double>>&,
                                                              std::vector<std::complex<double>>&, const cg_options&);
template solve_result solve_complex_direct_host<std::int64_t>(const csr_matrix<std::complex<double>, std::int64_t>&,
                                                              const std::vector<std::complex<double>>&,
                                                              std::vector<std::complex<double>>&, const cg_options&);

}  // namespace la
