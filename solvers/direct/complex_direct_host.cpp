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
#include <la/solvers/detail/complex_direct_common.hpp>
#include <la/solvers/detail/refinement.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la {

template <typename O>
solve_result solve_complex_direct_host(const csr_matrix<std::complex<double>, O>& a,
                                       const std::vector<std::complex<double>>& b, std::vector<std::complex<double>>& x,
                                       const cg_options& o) {
  using z = std::complex<double>;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  solve_result r;
  const auto fail = [&](solve_status s, std::string why) {
    r.status = s;
    r.message = std::move(why);
    return r;
  };
  complex_direct_detail::input in;
  if (!complex_direct_detail::start(a, b, x, "direct (sparse LU, static pivoting), host, csr", r, in,
                                    [] { return std::string(); }))
    return r;
  const std::size_t n = b.size();
  sparse_lu<z> f;
  try {
    f = sparse_lu_host(a, o.direct.ordering);
  } catch (const invalid_argument& e) {  // the matching gave up on this pattern
    return fail(solve_status::breakdown, std::string("the sparse LU could not start: ") + e.what());
  }
  if (!f.ok())
    return fail(solve_status::breakdown, "A is structurally singular: no row can be matched to column " +
                                             std::to_string(f.singular_column) + ", so no LU factorization exists");
  const auto t1 = clock::now();
  r.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  reference::accumulator<z> acc;
  std::vector<z> res(n), best;
  double be = 0, rel = 0;
  const auto measure = [&] {  // res = b - A x (summed in complex<long double>), be and rel
    reference::spmv(z(-1), a, x, z(0), res, acc);
    for (std::size_t i = 0; i < n; ++i) res[i] += b[i];
    complex_direct_detail::measures(res, x, in, be, rel);
  };
  x = b;
  f.solve(x.data());
  measure();
  best = x;  // the best x so far (refine keeps a better one, and the end takes it)
  detail::refine_rule rule;
  rule.how = refinement_kind::classical;
  rule.max_steps = o.direct.max_refinement;
  const int steps = detail::refine(
      rule, be, rel,
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
  complex_direct_detail::verdict(r, x, rel, in, o,
                                 std::to_string(f.perturbed) + " pivot" + (f.perturbed == 1 ? "" : "s") + " perturbed, " +
                                     std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") +
                                     ", backward error " + short_number(be));
  return r;
}

template solve_result solve_complex_direct_host<std::int32_t>(const csr_matrix<std::complex<double>, std::int32_t>&,
                                                              const std::vector<std::complex<double>>&,
                                                              std::vector<std::complex<double>>&, const cg_options&);
template solve_result solve_complex_direct_host<std::int64_t>(const csr_matrix<std::complex<double>, std::int64_t>&,
                                                              const std::vector<std::complex<double>>&,
                                                              std::vector<std::complex<double>>&, const cg_options&);

}  // namespace la
