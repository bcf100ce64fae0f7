// The complex Krylov methods on the GPU (issue 69) against their host oracles
// (solve_complex_host) and a dense complex LU in long double: CG (Hermitian), COCG (complex
// symmetric), BiCGSTAB and GMRES, with and without Jacobi, on generated systems of awkward
// sizes (1, 25, 31, 33, 36 and 1000-odd rows), complex<float> and complex<double>, 32- and
// 64-bit offsets, the complex matrices of data/; reruns bit-identical; extreme scales, b = 0,
// singular matrices, breakdowns and bad input as the oracle reports them.
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <tuple>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/complex_krylov.hpp>
#include "complex_util.hpp"
#include "test_util.hpp"

namespace la {
namespace {

using z = std::complex<double>;
using test::dense_solve;
using test::hpd;
using test::max_error;
using test::times;

/// A random complex symmetric, diagonally dominant n x n matrix (any n).
csr_matrix<z> random_symmetric(index_t n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<index_t> r, c;
  std::vector<z> v;
  for (index_t i = 0; i < n; ++i) {
    r.push_back(i), c.push_back(i), v.push_back(z(6 + u(g), u(g)));
    for (index_t j : {(i + 1) % n, (i + 7) % n})
      if (j > i) {
        const z x(u(g), u(g));
        r.push_back(i), c.push_back(j), v.push_back(x), r.push_back(j), c.push_back(i), v.push_back(x);
      }
  }
  return to_csr(coo_matrix<z>(n, n, r, c, v));
}

/// A random general (neither symmetric nor Hermitian) diagonally dominant n x n matrix.
csr_matrix<z> random_general(index_t n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<index_t> r, c;
  std::vector<z> v;
  for (index_t i = 0; i < n; ++i) {
    r.push_back(i), c.push_back(i), v.push_back(z(5 + u(g), 2 * u(g)));
    for (index_t j : {(i + 2) % n, (i + 5) % n, (i * 3 + 1) % n})
      if (j != i) r.push_back(i), c.push_back(j), v.push_back(z(u(g), u(g)));
  }
  return to_csr(coo_matrix<z>(n, n, r, c, v));
}

template <typename T>
csr_matrix<T> cast(const csr_matrix<z>& a) {
  std::vector<T> v(a.values().begin(), a.values().end());
  return csr_matrix<T>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), std::move(v));
}

struct gpu_case {
  std::string name;
  csr_matrix<z> a;
  complex_method method;
  preconditioner precond;
};

std::vector<gpu_case> cases() {
  std::mt19937 g(41);
  std::vector<gpu_case> out;
  // Under a sanitizer (each launch 10-100x slower, and these solves launch per step) the
  // smallest of each kind: every kernel is still reached.
  const bool small = test::under_sanitizer();
  std::vector<index_t> sizes = {1, 5, 6, 32};  // 1, 25, 36 and 1024 rows
  if (small) sizes = {1, 5};
  for (index_t n : sizes) {
    out.push_back({"cg hpd", hpd(n), complex_method::cg, preconditioner::jacobi});
    out.push_back({"cg hpd none", hpd(n), complex_method::cg, preconditioner::none});
    const auto h = helmholtz<z>(2, n, helmholtz_kappa(n, 10), 0.5);
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres})
      for (auto pc : {preconditioner::jacobi, preconditioner::none}) out.push_back({"helmholtz2d", h, m, pc});
  }
  // A complex matrix whose real part alone is singular (the imaginary part makes it regular).
  out.push_back({"real part singular",
                 csr_matrix<z>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1, 0), z(1, 1), z(1, -1), z(1, 0)}),
                 complex_method::gmres, preconditioner::none});
  for (index_t n : small ? std::vector<index_t>{31} : std::vector<index_t>{31, 33}) {
    const auto a = random_symmetric(n, g);
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres})
      out.push_back({"random symmetric", a, m, preconditioner::jacobi});
    const auto b = random_general(n, g);
    for (auto m : {complex_method::bicgstab, complex_method::gmres}) out.push_back({"random general", b, m, preconditioner::jacobi});
  }
  return out;
}

TEST(ComplexDevice, EveryMethodMatchesItsOracleAndTheDenseSolve) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& k : cases()) {
    const std::size_t n = static_cast<std::size_t>(k.a.rows());
    std::vector<z> want(n);
    for (auto& w : want) w = z(u(g), u(g));
    const auto b = times(k.a, want);
    cg_options o;
    o.rtol = 1e-12;
    o.precond = k.precond;
    o.max_iterations = 3000;
    o.restart = 20;
    const std::string what = k.name + " " + to_string(k.method) + " " + to_string(k.precond) + " n " + std::to_string(n);
    std::vector<z> xh, xd;
    const auto rh = solve_complex_host(k.a, b, xh, k.method, o);
    const auto rd = solve_complex_device(ctx, k.a, b, xd, k.method, o);
    ASSERT_EQ(rd.status, solve_status::converged) << what << ": " << rd.message;
    ASSERT_EQ(rh.status, solve_status::converged) << what << ": " << rh.message;
    EXPECT_LE(rd.true_residual, 1e-11) << what;
    EXPECT_LE(max_error(xd, dense_solve(k.a, b)), 1e-8) << what;
    // The same steps: the iteration counts agree to rounding's effect on the last steps.
    EXPECT_LE(std::abs(rd.iterations - rh.iterations), std::max<std::int64_t>(2, rh.iterations / 10))
        << what << ": gpu " << rd.iterations << ", host " << rh.iterations;
    EXPECT_EQ(rd.method.find(to_string(k.method)), 0u) << rd.method;
    EXPECT_NE(rd.method.find("gpu"), std::string::npos) << rd.method;
    EXPECT_EQ(rd.method.find("jacobi") != std::string::npos, k.precond == preconditioner::jacobi) << rd.method;
    std::vector<z> again;
    const auto r2 = solve_complex_device(ctx, k.a, b, again, k.method, o);
    ASSERT_EQ(again.size(), xd.size());
    EXPECT_EQ(std::memcmp(again.data(), xd.data(), xd.size() * sizeof(z)), 0) << "rerun not bit-identical: " << what;
    EXPECT_EQ(r2.iterations, rd.iterations) << what;
  }
}

TEST(ComplexDevice, SinglePrecisionAndWideOffsetsAndAnInitialGuess) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(11);
  const auto a = helmholtz<z>(2, 20, helmholtz_kappa(20, 10), 0.5);
  std::vector<z> want(400);
  for (auto& w : want) w = z(std::uniform_real_distribution<double>(-1, 1)(g), 0.5);
  const auto b = times(a, want);
  for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
    using c = std::complex<float>;
    const auto af = cast<c>(a);
    const std::vector<c> bf(b.begin(), b.end());
    std::vector<c> x;
    cg_options o;
    o.rtol = 1e-5;
    const auto r = solve_complex_device(ctx, af, bf, x, m, o);
    ASSERT_EQ(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    EXPECT_LE(max_error(x, want), 1e-3) << to_string(m);
    // 64-bit offsets, an initial guess near the answer.
    const auto a64 = to_csr<std::int64_t>(a);
    std::vector<z> x0 = want;
    for (auto& v : x0) v *= 1.001;
    cg_options od;
    od.rtol = 1e-10;
    const auto r64 = solve_complex_device(ctx, a64, b, x0, m, od);
    ASSERT_EQ(r64.status, solve_status::converged) << to_string(m) << ": " << r64.message;
    EXPECT_LE(max_error(x0, want), 1e-7) << to_string(m);
  }
}

TEST(ComplexDevice, AutoRunsTheComplexRulesFormat) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  // 108,900 rows of a stencil: auto holds A as SELL-32 (select_spmv_complex), and a fixed
  // number of steps agrees with the same steps on the named CSR kernel to rounding.
  const auto a = helmholtz<z>(2, 330, helmholtz_kappa(330, 10), 0.5);
  const std::vector<z> b = times(a, std::vector<z>(static_cast<std::size_t>(a.rows()), z(1, -1)));
  cg_options o;
  o.max_iterations = test::under_sanitizer() ? 3 : 25;
  o.rtol = 1e-14;
  o.precond = preconditioner::jacobi;
  for (auto m : {complex_method::cocg, complex_method::gmres}) {
    std::vector<z> xs, xc, again;
    const auto rs = solve_complex_device(ctx, a, b, xs, m, o);
    const auto rc = solve_complex_device(ctx, a, b, xc, m, o, "csr_vector");
    EXPECT_NE(rs.method.find("sell"), std::string::npos) << rs.method;
    EXPECT_NE(rc.method.find("csr_vector"), std::string::npos) << rc.method;
    EXPECT_EQ(rs.iterations, rc.iterations) << to_string(m);
    double diff = 0, mag = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) diff = std::max(diff, std::abs(xs[i] - xc[i])), mag = std::max(mag, std::abs(xc[i]));
    EXPECT_LE(diff, 1e-9 * mag) << to_string(m);
    solve_complex_device(ctx, a, b, again, m, o);  // reruns bit-identical on SELL too
    EXPECT_EQ(std::memcmp(again.data(), xs.data(), xs.size() * sizeof(z)), 0) << to_string(m);
  }
}

// ILU(0) and IC(0) on the GPU: the host oracle's factors solved on the device by levels;
// the same iterations as the host's (or one apart) and x to rounding, reruns bit-identical, the
// matching where the diagonal has gaps (w156), the refusals in the host's words.
TEST(ComplexDevice, Ilu0AndIc0MatchTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const index_t side = test::under_sanitizer() ? 8 : 30;
  const auto h = helmholtz<z>(2, side, helmholtz_kappa(side, 10), 0.5);
  auto hp = test::hpd(side);
  std::vector<z> want(static_cast<std::size_t>(h.rows()));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = z(std::cos(0.1 * double(i)), std::sin(0.07 * double(i)));
  struct run {
    const csr_matrix<z>* a;
    complex_method m;
    preconditioner p;
  };
  const std::vector<run> runs = {{&h, complex_method::gmres, preconditioner::ilu0}, {&h, complex_method::bicgstab, preconditioner::ilu0},
                                 {&h, complex_method::cocg, preconditioner::ilu0}, {&hp, complex_method::cg, preconditioner::ic0},
                                 {&hp, complex_method::gmres, preconditioner::ic0}};
  for (const auto& k : runs) {
    cg_options o;
    o.precond = k.p;
    o.rtol = 1e-10;
    const auto b = times(*k.a, want);
    std::vector<z> xh, xd, again;
    const auto rh = solve_complex_host(*k.a, b, xh, k.m, o);
    const auto rd = solve_complex_device(ctx, *k.a, b, xd, k.m, o);
    const std::string what = to_string(k.m) + std::string(" + ") + to_string(k.p);
    ASSERT_EQ(rd.status, solve_status::converged) << what << ": " << rd.message;
    EXPECT_LE(std::abs(rd.iterations - rh.iterations), 1) << what << ": gpu " << rd.iterations << ", host " << rh.iterations;
    EXPECT_LE(max_error(xd, xh), 1e-7) << what;
    EXPECT_LE(max_error(xd, want), 1e-6) << what;
    EXPECT_EQ(rd.precond.kind, k.p) << what;
    EXPECT_NE(rd.method.find(std::string("+ ") + to_string(k.p)), std::string::npos) << rd.method;
    EXPECT_NE(rd.method.find("gpu"), std::string::npos) << rd.method;
    solve_complex_device(ctx, *k.a, b, again, k.m, o);
    EXPECT_EQ(std::memcmp(again.data(), xd.data(), xd.size() * sizeof(z)), 0) << "rerun not bit-identical: " << what;
  }
  {  // w156: no diagonal at all; the matching puts one there
    const auto w = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/w156.mtx");
    cg_options o;
    o.precond = preconditioner::ilu0;
    o.rtol = 1e-10;
    std::vector<z> x;
    const auto r = solve_complex_device(ctx, w, times(w, std::vector<z>(156, z(1))), x, complex_method::gmres, o);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_NE(r.method.find("ilu0 (matched)"), std::string::npos) << r.method;
  }
  {  // complex float: factors in wider precision, stored in float
    using c = std::complex<float>;
    const auto hf = cast<c>(h);
    const std::vector<c> bf(static_cast<std::size_t>(h.rows()), c(1, -1));
    cg_options o;
    o.precond = preconditioner::ilu0;
    o.rtol = 1e-5;
    std::vector<c> x;
    EXPECT_EQ(solve_complex_device(ctx, hf, bf, x, complex_method::gmres, o).status, solve_status::converged);
  }
  // The refusals: the host's words on the GPU.
  const csr_matrix<z> sym(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(4), z(1, 1), z(1, 1), z(4)});  // not Hermitian
  const csr_matrix<z> sing(2, 2, {0, 1, 2}, {0, 0}, {z(1), z(2)});                          // structurally singular
  for (const auto& [a, m, p] : std::vector<std::tuple<const csr_matrix<z>*, complex_method, preconditioner>>{
           {&sym, complex_method::gmres, preconditioner::ic0}, {&sing, complex_method::gmres, preconditioner::ilu0},
           {&hp, complex_method::cg, preconditioner::ilu0}, {&h, complex_method::cocg, preconditioner::ic0}}) {
    cg_options o;
    o.precond = p;
    std::vector<z> xh, xd;
    const std::vector<z> b(static_cast<std::size_t>(a->rows()), z(1));
    const auto rh = solve_complex_host(*a, b, xh, m, o);
    const auto rd = solve_complex_device(ctx, *a, b, xd, m, o);
    EXPECT_EQ(rd.status, solve_status::invalid_input) << rd.message;
    EXPECT_EQ(rd.status, rh.status);
    EXPECT_EQ(rd.message, rh.message);
  }
}

TEST(ComplexDevice, TheDataMatrices) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto arrow = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/arrowc.mtx");
  const std::vector<z> ones(static_cast<std::size_t>(arrow.rows()), z(1, 0));
  for (auto m : {complex_method::gmres, complex_method::bicgstab}) {
    std::vector<z> x;
    cg_options o;
    o.max_iterations = 1000;
    const auto r = solve_complex_device(ctx, arrow, times(arrow, ones), x, m, o);
    ASSERT_EQ(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    EXPECT_LE(max_error(x, ones), 1e-6) << to_string(m);
  }
  const auto mhd = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/mhd1280b.mtx");
  const std::vector<z> one(static_cast<std::size_t>(mhd.rows()), z(1, 0));
  std::vector<z> x;
  cg_options o;
  o.precond = preconditioner::jacobi;
  const auto b = times(mhd, one);
  const auto r = solve_complex_device(ctx, mhd, b, x, complex_method::cg, o);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(r.true_residual, 1e-8 * o.true_residual_factor);
  std::vector<z> xh;
  const auto rh = solve_complex_host(mhd, b, xh, complex_method::cg, o);
  EXPECT_LE(std::abs(r.iterations - rh.iterations), std::max<std::int64_t>(2, rh.iterations / 10));
}

TEST(ComplexDevice, ExtremeScalesZeroRightHandSideAndSingularMatrices) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto h = helmholtz<z>(2, 6, helmholtz_kappa(6, 10), 0.5);
  const std::vector<z> ones(36, z(1, 0));
  for (double s : {1e300, 1e-300, 1e-310}) {
    std::vector<z> b = times(h, ones);
    for (z& v : b) v *= s;
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
      std::vector<z> x;
      cg_options o;
      o.rtol = 1e-10;
      const auto r = solve_complex_device(ctx, h, b, x, m, o);
      ASSERT_EQ(r.status, solve_status::converged) << s << " " << to_string(m) << ": " << r.message;
      for (const z& v : x) ASSERT_NEAR(std::abs(v / s - z(1)), 0, 1e-6) << s << " " << to_string(m);
    }
  }
  {  // x = A^-1 b past double's range: non_finite, as the oracle says
    const csr_matrix<z> tiny(2, 2, {0, 1, 2}, {0, 1}, {z(1e-10), z(0, 1e-10)});
    std::vector<z> x;
    const auto r = solve_complex_device(ctx, tiny, {z(1e300), z(1e300)}, x, complex_method::gmres);
    EXPECT_EQ(r.status, solve_status::non_finite) << r.message;
  }
  {
    std::vector<z> x;
    const auto r = solve_complex_device(ctx, h, std::vector<z>(36, z(0)), x, complex_method::gmres);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_EQ(x, std::vector<z>(36, z(0)));
  }
  const csr_matrix<z> sing(3, 3, {0, 2, 4, 4}, {0, 1, 0, 1}, {z(2), z(1), z(1), z(3)});
  const csr_matrix<z> near(3, 3, {0, 1, 3, 5}, {0, 1, 2, 1, 2}, {z(1), z(1), z(1), z(1), z(1 + 1e-17)});
  for (const auto* a : {&sing, &near})
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
      std::vector<z> x;
      cg_options o;
      o.max_iterations = 50;
      const auto r = solve_complex_device(ctx, *a, {z(1), z(1), z(0, 1)}, x, m, o);
      EXPECT_NE(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    }
}

TEST(ComplexDevice, BreakdownsAndBadInputSayWhatTheOracleSays) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const csr_matrix<z> indef(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(-1)});
  const csr_matrix<z> qn(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(1)});
  const auto w156 = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/w156.mtx");
  cg_options none, jac, ic, bad;
  none.precond = preconditioner::none;
  jac.precond = preconditioner::jacobi;
  ic.precond = preconditioner::fsai;  // not built for complex values: refused by both
  bad.restart = 0;
  struct call {
    const csr_matrix<z>* a;
    std::vector<z> b;
    complex_method m;
    cg_options o;
  };
  const std::vector<call> calls = {
      {&indef, {z(1), z(1)}, complex_method::cg, {}},
      {&qn, {z(1), z(0, 1)}, complex_method::cocg, none},
      {&w156, std::vector<z>(156, z(1)), complex_method::gmres, jac},
      {&indef, {z(1), z(std::nan(""), 0)}, complex_method::gmres, {}},
      {&indef, {z(1)}, complex_method::gmres, {}},
      {&indef, {z(1), z(1)}, complex_method::gmres, ic},
      {&indef, {z(1), z(1)}, complex_method::gmres, bad},
  };
  for (const auto& c : calls) {
    std::vector<z> xh, xd;
    const auto rh = solve_complex_host(*c.a, c.b, xh, c.m, c.o);
    const auto rd = solve_complex_device(ctx, *c.a, c.b, xd, c.m, c.o);
    EXPECT_EQ(rd.status, rh.status) << rh.message << " / " << rd.message;
    EXPECT_EQ(rd.message, rh.message);
    EXPECT_NE(rd.status, solve_status::converged);
  }
  // NaN in A.
  const csr_matrix<z> nan_a(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(0, std::nan(""))});
  std::vector<z> x;
  EXPECT_EQ(solve_complex_device(ctx, nan_a, {z(1), z(1)}, x, complex_method::gmres).status, solve_status::non_finite);
}

}  // namespace
}  // namespace la
