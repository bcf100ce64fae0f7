// Complex systems on the host (issue 69): the Helmholtz generator, and CG (Hermitian), COCG
// (complex symmetric), BiCGSTAB and GMRES against a dense complex LU solve in long double, on
// generated systems of awkward sizes and the complex matrices of data/; breakdowns, bad input
// and bit-identical reruns.
#include <cmath>
#include <complex>
#include <random>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/complex_krylov.hpp>
#include <la/solvers/detail/complex_ic0.hpp>
#include <la/solvers/precond/ilu.hpp>
#include <la/solvers/matrix_properties.hpp>
#include "complex_util.hpp"
#include "test_util.hpp"

namespace la {
namespace {

using z = std::complex<double>;
using test::dense_solve;
using test::hpd;
using test::max_error;
using test::times;

TEST(Helmholtz, ComplexSymmetricWithTheAbsorbingBoundaryOnItsDiagonal) {
  for (int d : {2, 3}) {
    for (index_t n : {1, 5, 12}) {
      const double kappa = helmholtz_kappa(n, 10);
      const auto a = helmholtz<z>(d, n, kappa, 0.5);
      const std::int64_t rows = d == 2 ? n * n : n * n * n;
      ASSERT_EQ(a.rows(), rows);
      ASSERT_EQ(a.nnz(), d == 2 ? 5 * rows - 4 * n : 7 * rows - 6 * n * n);
      const auto p = properties_of(a);
      EXPECT_EQ(p.max_asymmetry, 0) << d << " " << n;  // complex symmetric
      EXPECT_FALSE(p.hermitian());
      // A corner has d boundary faces, each -1 / (1 - i kappa h); the interior -kappa^2 h^2 (1 + 0.5 i) + 2d.
      const double h = 1.0 / (n + 1), kh = kappa * h;
      const z corner = z(2.0 * d - kh * kh, -0.5 * kh * kh) - double(n == 1 ? 2 * d : d) / z(1, -kh);
      EXPECT_NEAR(std::abs(to_dense(a)(0, 0) - corner), 0, 1e-14) << d << " " << n;
    }
  }
  const auto f = helmholtz<std::complex<float>>(2, 9, helmholtz_kappa(9, 10), 0.5);
  EXPECT_EQ(f.nnz(), helmholtz<z>(2, 9, helmholtz_kappa(9, 10), 0.5).nnz());
  EXPECT_THROW(helmholtz<z>(4, 3, 1, 0), invalid_argument);
  EXPECT_THROW(helmholtz<z>(2, 3, -1, 0), invalid_argument);
  EXPECT_THROW(helmholtz<z>(2, 3, 1, -0.5), invalid_argument);
}

struct krylov_case {
  const char* name;
  csr_matrix<z> a;
  complex_method method;
  preconditioner precond;
};

TEST(ComplexKrylov, EveryMethodMatchesTheDenseSolveOnAwkwardSizes) {
  std::mt19937 g(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<krylov_case> cases;
  for (index_t n : {1, 5, 6}) {  // 1, 25 and 36 rows (and 1, 31 and 33 below)
    cases.push_back({"cg hpd", hpd(n), complex_method::cg, preconditioner::jacobi});
    cases.push_back({"cg hpd none", hpd(n), complex_method::cg, preconditioner::none});
    const auto h = helmholtz<z>(2, n, helmholtz_kappa(n, 10), 0.5);
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres})
      for (auto pc : {preconditioner::jacobi, preconditioner::none}) cases.push_back({"helmholtz2d", h, m, pc});
  }
  for (index_t n : {31, 33}) {  // awkward row counts: Helmholtz on 31 x 1 and 33 x 1 grids through 3D's n = 1 would be 1 row;
    // a random complex symmetric, diagonally dominant n x n instead
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
    const auto a = to_csr(coo_matrix<z>(n, n, r, c, v));
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres})
      cases.push_back({"random symmetric", a, m, preconditioner::jacobi});
  }
  for (const auto& k : cases) {
    const std::size_t n = static_cast<std::size_t>(k.a.rows());
    std::vector<z> want(n);
    for (auto& w : want) w = z(u(g), u(g));
    const auto b = times(k.a, want);
    cg_options o;
    o.rtol = 1e-12;
    o.precond = k.precond;
    o.max_iterations = 2000;
    o.restart = 20;
    std::vector<z> x;
    const auto r = solve_complex_host(k.a, b, x, k.method, o);
    ASSERT_EQ(r.status, solve_status::converged) << k.name << " " << to_string(k.method) << " n " << n << ": " << r.message;
    EXPECT_LE(r.true_residual, 1e-11) << k.name << " " << to_string(k.method);
    EXPECT_LE(max_error(x, dense_solve(k.a, b)), 1e-8) << k.name << " " << to_string(k.method) << " n " << n;
    EXPECT_EQ(r.method.find(to_string(k.method)), 0u) << r.method;
    std::vector<z> again;
    const auto r2 = solve_complex_host(k.a, b, again, k.method, o);
    EXPECT_EQ(again, x) << "rerun not bit-identical: " << k.name << " " << to_string(k.method);
    EXPECT_EQ(r2.iterations, r.iterations);
  }
}

TEST(ComplexKrylov, TheDataMatricesWhereEachMethodApplies) {
  // arrowc (general, condition 10.8): GMRES and BiCGSTAB. mhd1280b (Hermitian positive
  // definite, condition 4.7e12): CG with Jacobi reduces the residual but a tolerance of 1e-8
  // is for the direct solvers; here CG must not break down within 300 iterations.
  const auto arrow = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/arrowc.mtx");
  std::vector<z> ones(static_cast<std::size_t>(arrow.rows()), z(1, 0));
  const auto b = times(arrow, ones);
  for (auto m : {complex_method::gmres, complex_method::bicgstab}) {
    std::vector<z> x;
    cg_options o;
    o.max_iterations = 1000;
    const auto r = solve_complex_host(arrow, b, x, m, o);
    ASSERT_EQ(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    EXPECT_LE(max_error(x, ones), 1e-6) << to_string(m);
  }
  const auto mhd = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/mhd1280b.mtx");
  std::vector<z> x, one(static_cast<std::size_t>(mhd.rows()), z(1, 0));
  cg_options o;
  o.max_iterations = 300;
  o.precond = preconditioner::jacobi;
  const auto r = solve_complex_host(mhd, times(mhd, one), x, complex_method::cg, o);
  EXPECT_TRUE(r.status == solve_status::converged || r.status == solve_status::max_iterations) << r.message;
  EXPECT_LT(r.true_residual, 1e-2) << r.message;
}

// b near the ends of double's range, b = 0, and singular or numerically singular A: converged
// only with a finite x whose true residual meets the tolerance, never a wrong answer.
TEST(ComplexKrylov, ExtremeScalesZeroRightHandSideAndSingularMatrices) {
  const auto h = helmholtz<z>(2, 6, helmholtz_kappa(6, 10), 0.5);
  const std::vector<z> ones(36, z(1, 0));
  for (double s : {1e300, 1e-300, 1e-310}) {
    std::vector<z> b = times(h, ones);
    for (z& v : b) v *= s;
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
      std::vector<z> x;
      cg_options o;
      o.rtol = 1e-10;
      const auto r = solve_complex_host(h, b, x, m, o);
      ASSERT_EQ(r.status, solve_status::converged) << s << " " << to_string(m) << ": " << r.message;
      EXPECT_LE(r.true_residual, 1e-9) << s << " " << to_string(m);
      for (const z& v : x) ASSERT_NEAR(std::abs(v / s - z(1)), 0, 1e-6) << s << " " << to_string(m);
    }
  }
  {  // x = A^-1 b past double's range (A = 1e-10 I, b = 1e300): non_finite, never "converged"
    const csr_matrix<z> tiny(2, 2, {0, 1, 2}, {0, 1}, {z(1e-10), z(0, 1e-10)});
    std::vector<z> x;
    const auto r = solve_complex_host(tiny, {z(1e300), z(1e300)}, x, complex_method::gmres);
    EXPECT_EQ(r.status, solve_status::non_finite) << r.message;
    EXPECT_NE(r.message.find("scaled back"), std::string::npos) << r.message;
  }
  {  // b = 0: x = 0 at once
    std::vector<z> x;
    const auto r = solve_complex_host(h, std::vector<z>(36, z(0)), x, complex_method::gmres);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_EQ(x, std::vector<z>(36, z(0)));
  }
  // Singular: the last row and column zero, b reaching that row (inconsistent). Numerically
  // singular: a 1e-17 pivot on an otherwise identity 3 x 3 with a coupling, b consistent with
  // no x of moderate size. Neither converges; no status is "converged".
  const csr_matrix<z> sing(3, 3, {0, 2, 4, 4}, {0, 1, 0, 1}, {z(2), z(1), z(1), z(3)});
  const csr_matrix<z> near(3, 3, {0, 1, 3, 5}, {0, 1, 2, 1, 2}, {z(1), z(1), z(1), z(1), z(1 + 1e-17)});
  for (const auto* a : {&sing, &near})
    for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
      std::vector<z> x;
      cg_options o;
      o.max_iterations = 50;
      const auto r = solve_complex_host(*a, {z(1), z(1), z(0, 1)}, x, m, o);
      EXPECT_NE(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
      EXPECT_GT(r.true_residual, 1e-8) << to_string(m) << " " << to_string(r.status) << ": " << r.message << " it " << r.iterations;
    }
}

TEST(ComplexKrylov, BreakdownsAndBadInputAreStatusesThatSayWhy) {
  // CG on an indefinite Hermitian matrix: p^H A p <= 0.
  const csr_matrix<z> indef(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(-1)});
  std::vector<z> x;
  auto r = solve_complex_host(indef, {z(1), z(1)}, x, complex_method::cg);
  EXPECT_EQ(r.status, solve_status::breakdown);
  EXPECT_NE(r.message.find("not Hermitian positive definite"), std::string::npos) << r.message;
  // COCG's quasi-null residual: A = I (nonsingular, A^T = A), b = (1, i): r^T r = 1 + i^2 = 0
  // with r != 0, so the bilinear form cannot steer; GMRES solves it in one step.
  const csr_matrix<z> qn(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(1)});
  x.clear();
  cg_options none;
  none.precond = preconditioner::none;
  r = solve_complex_host(qn, {z(1), z(0, 1)}, x, complex_method::cocg, none);
  EXPECT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("quasi-null residual"), std::string::npos) << r.message;
  x.clear();
  r = solve_complex_host(qn, {z(1), z(0, 1)}, x, complex_method::gmres, none);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(max_error(x, {z(1), z(0, 1)}), 1e-15);
  // Jacobi with a zero diagonal entry, asked for by name: refused; automatic: none instead.
  const auto w156 = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/w156.mtx");
  std::vector<z> b(156, z(1));
  cg_options jac;
  jac.precond = preconditioner::jacobi;
  x.clear();
  r = solve_complex_host(w156, b, x, complex_method::gmres, jac);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("Jacobi needs a nonzero diagonal; row 1"), std::string::npos) << r.message;
  x.clear();
  cg_options few;
  few.max_iterations = 5;
  r = solve_complex_host(w156, b, x, complex_method::gmres, few);
  EXPECT_EQ(r.status, solve_status::max_iterations) << r.message;
  EXPECT_EQ(r.method, "gmres, host, csr");  // automatic took no preconditioner
  // NaN in b, a size mismatch, a preconditioner that does not take complex values.
  x.clear();
  r = solve_complex_host(indef, {z(1), z(std::nan(""), 0)}, x, complex_method::gmres);
  EXPECT_EQ(r.status, solve_status::non_finite);
  x.clear();
  r = solve_complex_host(indef, {z(1)}, x, complex_method::gmres);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  cg_options ic;
  ic.precond = preconditioner::fsai;
  x.clear();
  r = solve_complex_host(hpd(3), std::vector<z>(9, z(1)), x, complex_method::cg, ic);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("does not take complex values yet"), std::string::npos) << r.message;
  // Single precision converges to a float tolerance.
  const auto hf = helmholtz<std::complex<float>>(2, 8, helmholtz_kappa(8, 10), 0.5);
  std::vector<std::complex<float>> xf, bf(64, std::complex<float>(1, -1));
  cg_options of;
  of.rtol = 1e-5;
  r = solve_complex_host(hf, bf, xf, complex_method::cocg, of);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
}

// ILU(0) on the host (the oracle a GPU form will be checked against): on Helmholtz it cuts the
// iterations of BiCGSTAB, GMRES and COCG against Jacobi; on w156 (no diagonal at all) it runs
// after the maximum-product matching and GMRES converges; CG refuses it (not Hermitian).
TEST(ComplexKrylov, Ilu0CutsIterationsAndMatchesWhereTheDiagonalHasGaps) {
  const auto h = helmholtz<z>(2, 30, helmholtz_kappa(30, 10), 0.5);
  std::vector<z> want(900);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = z(std::cos(0.1 * double(i)), std::sin(0.07 * double(i)));
  const auto b = times(h, want);
  for (auto m : {complex_method::cocg, complex_method::bicgstab, complex_method::gmres}) {
    cg_options jac, ilu;
    jac.precond = preconditioner::jacobi, ilu.precond = preconditioner::ilu0;
    jac.rtol = ilu.rtol = 1e-10;
    std::vector<z> xj, xi;
    const auto rj = solve_complex_host(h, b, xj, m, jac);
    const auto ri = solve_complex_host(h, b, xi, m, ilu);
    ASSERT_EQ(ri.status, solve_status::converged) << to_string(m) << ": " << ri.message;
    EXPECT_LE(max_error(xi, want), 1e-7) << to_string(m);
    EXPECT_LT(ri.iterations, rj.iterations) << to_string(m) << ": ilu0 " << ri.iterations << ", jacobi " << rj.iterations;
    EXPECT_EQ(ri.precond.kind, preconditioner::ilu0);
    EXPECT_NE(ri.method.find("+ ilu0"), std::string::npos) << ri.method;
    std::vector<z> again;
    solve_complex_host(h, b, again, m, ilu);
    EXPECT_EQ(again, xi) << "rerun not bit-identical: " << to_string(m);
  }
  // ILU(0) with no fill is exact on a tridiagonal matrix: one GMRES step.
  const csr_matrix<z> tri(4, 4, {0, 2, 5, 8, 10}, {0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
                          {z(4, 1), z(1), z(1, -1), z(4), z(2), z(0, 1), z(5, 2), z(1), z(1), z(3)});
  std::vector<z> x;
  cg_options ilu;
  ilu.precond = preconditioner::ilu0;
  const std::vector<z> four = {z(1, 2), z(0, -1), z(3), z(1, 1)};
  auto r = solve_complex_host(tri, four, x, complex_method::gmres, ilu);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(r.iterations, 1);
  EXPECT_LE(max_error(times(tri, x), four), 1e-14);
  // w156: no diagonal entry at all; the matching puts one there.
  const auto w = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/w156.mtx");
  const std::vector<z> ones(156, z(1));
  x.clear();
  ilu.rtol = 1e-10;
  r = solve_complex_host(w, times(w, ones), x, complex_method::gmres, ilu);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NE(r.method.find("ilu0 (matched)"), std::string::npos) << r.method;
  // CG refuses it; a structurally singular A has no ILU(0).
  x.clear();
  r = solve_complex_host(hpd(4), std::vector<z>(16, z(1)), x, complex_method::cg, ilu);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("Hermitian preconditioner"), std::string::npos) << r.message;
  const csr_matrix<z> sing(2, 2, {0, 1, 2}, {0, 0}, {z(1), z(2)});
  x.clear();
  r = solve_complex_host(sing, {z(1), z(1)}, x, complex_method::gmres, ilu);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("ILU(0) does not exist"), std::string::npos) << r.message;
}

// IC(0) on the host for Hermitian positive definite A (M = L L^H): exact on a tridiagonal
// Hermitian matrix (no fill: one CG step), the real IC(0)'s factor where the values are real,
// fewer CG, BiCGSTAB and GMRES iterations than Jacobi on a nearly singular Hermitian matrix; a
// shift where the unshifted pivots fail; refused for COCG, for a non-Hermitian A and on the GPU.
TEST(ComplexKrylov, Ic0ForHermitianSystems) {
  cg_options ic;
  ic.precond = preconditioner::ic0;
  // Tridiagonal Hermitian positive definite: IC(0) is the exact Cholesky factor.
  const csr_matrix<z> tri(4, 4, {0, 2, 5, 8, 10}, {0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
                          {z(4), z(1, 1), z(1, -1), z(5), z(0, 2), z(0, -2), z(6), z(1, -0.5), z(1, 0.5), z(3)});
  const std::vector<z> rhs = {z(1, 2), z(0, -1), z(3), z(1, 1)};
  std::vector<z> x;
  auto r = solve_complex_host(tri, rhs, x, complex_method::cg, ic);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(r.iterations, 1);
  EXPECT_LE(max_error(times(tri, x), rhs), 1e-14);
  EXPECT_NE(r.method.find("+ ic0"), std::string::npos) << r.method;
  EXPECT_EQ(r.precond.kind, preconditioner::ic0);
  // Real values: the real IC(0)'s factor (precond/ilu.hpp), entry for entry.
  {
    const auto p = poisson_2d<double>(7);
    complex_krylov_detail::ic0_factors<z, index_t> f;
    std::vector<z> pv(p.values().begin(), p.values().end());
    ASSERT_EQ(f.build(csr_matrix<z>(p.rows(), p.cols(), p.row_ptr(), p.col_idx(), std::move(pv)), 1.0), "");
    const auto real_f = ic0_factor(p, 1.0);
    ASSERT_EQ(f.l.values().size(), real_f.l.values().size());
    for (std::size_t k = 0; k < f.l.values().size(); ++k) {
      EXPECT_NEAR(f.l.values()[k].real(), real_f.l.values()[k], 1e-14) << k;
      EXPECT_EQ(f.l.values()[k].imag(), 0.0) << k;
    }
  }
  // Nearly singular (diagonal 4.2 against off-diagonal sums of 4.18): IC(0) cuts iterations.
  auto h = hpd(30);
  std::vector<z> v = h.values();
  for (index_t i = 0; i < h.rows(); ++i)
    for (index_t k = h.row_ptr()[i]; k < h.row_ptr()[i + 1]; ++k)
      if (h.col_idx()[k] == i) v[k] = z(4.2, 0);
  h = csr_matrix<z>(h.rows(), h.cols(), h.row_ptr(), h.col_idx(), std::move(v));
  std::vector<z> want(900);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = z(std::cos(0.1 * double(i)), std::sin(0.07 * double(i)));
  const auto b = times(h, want);
  for (auto m : {complex_method::cg, complex_method::bicgstab, complex_method::gmres}) {
    cg_options jac = ic;
    jac.precond = preconditioner::jacobi;
    jac.rtol = ic.rtol = 1e-10;
    std::vector<z> xj, xi, again;
    const auto rj = solve_complex_host(h, b, xj, m, jac);
    const auto ri = solve_complex_host(h, b, xi, m, ic);
    ASSERT_EQ(ri.status, solve_status::converged) << to_string(m) << ": " << ri.message;
    EXPECT_LE(max_error(xi, want), 1e-6) << to_string(m);
    EXPECT_LT(ri.iterations, rj.iterations) << to_string(m) << ": ic0 " << ri.iterations << ", jacobi " << rj.iterations;
    solve_complex_host(h, b, again, m, ic);
    EXPECT_EQ(again, xi) << "rerun not bit-identical: " << to_string(m);
  }
  // Indefinite Hermitian (a negative eigenvalue, positive diagonal): the unshifted pivots fail,
  // a shift makes the factor; or no shift in range does, which is said.
  const csr_matrix<z> indef(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1), z(0, 2), z(0, -2), z(1)});
  complex_krylov_detail::ic0_factors<z, index_t> f;
  EXPECT_EQ(f.build(indef, 10.0), "");
  EXPECT_GT(f.shift, 0.0);
  EXPECT_NE(f.build(indef, 0.0).find("no shift"), std::string::npos);
  // COCG refuses it (L L^H is not complex symmetric); a non-Hermitian A has no IC(0).
  x.clear();
  r = solve_complex_host(tri, rhs, x, complex_method::cocg, ic);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("complex symmetric preconditioner"), std::string::npos) << r.message;
  const csr_matrix<z> sym(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(4), z(1, 1), z(1, 1), z(4)});
  x.clear();
  r = solve_complex_host(sym, {z(1), z(1)}, x, complex_method::gmres, ic);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("not Hermitian"), std::string::npos) << r.message;
  // An entry above the diagonal whose mirror is not stored: not Hermitian either.
  const csr_matrix<z> upper(2, 2, {0, 2, 3}, {0, 1, 1}, {z(4), z(1), z(4)});
  x.clear();
  r = solve_complex_host(upper, {z(1), z(1)}, x, complex_method::gmres, ic);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("not Hermitian"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace la
