// The direct method for complex systems (issue 69): the host's sparse LU with static pivoting
// (solve_complex_direct_host) and the GPU's dense LU (dense_lu_device against its host oracle
// dense_lu_host: the same pivots, the factors to rounding; solve_complex_direct_device), on
// random matrices of awkward sizes around the panel (32) and tile (64) widths, the complex
// matrices of data/ (w156: no diagonal at all), Helmholtz systems, a matrix whose real part
// alone is singular; singular and non-finite input as statuses that say why.
#include <cmath>
#include <complex>
#include <cstring>
#include <random>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/complex_direct.hpp>
#include <la/solvers/complex_solve.hpp>
#include <la/solvers/detail/complex_ldl.hpp>
#include "complex_util.hpp"
#include "test_util.hpp"

namespace la {
namespace {

using z = std::complex<double>;
using test::max_error;
using test::times;

/// A random sparse complex matrix with no diagonal preference (partial pivoting must pivot).
csr_matrix<z> random_sparse(index_t n, double density, std::mt19937& g) {
  auto a = test::random_csr<z>({n, n, density, false, false}, g);
  // Every row and column gets an entry (a permuted diagonal), so A is nonsingular almost surely.
  std::vector<index_t> r, c;
  std::vector<z> v;
  const auto coo = to_coo(a);
  for (std::size_t k = 0; k < coo.values().size(); ++k)
    r.push_back(coo.row_idx()[k]), c.push_back(coo.col_idx()[k]), v.push_back(coo.values()[k]);
  for (index_t i = 0; i < n; ++i) r.push_back(i), c.push_back((i * 7 + 3) % n), v.push_back(test::random_value<z>(g));
  return to_csr(coo_matrix<z>(n, n, r, c, v));
}

TEST(ComplexDirectHost, SolvesGeneralSymmetricAndDiagonalFreeSystems) {
  std::mt19937 g(3);
  std::vector<std::pair<std::string, csr_matrix<z>>> systems = {
      {"w156", read_matrix_market_csr<z>(test::data_dir() + "/w156.mtx")},
      {"arrowc", read_matrix_market_csr<z>(test::data_dir() + "/arrowc.mtx")},
      {"mhd1280b", read_matrix_market_csr<z>(test::data_dir() + "/mhd1280b.mtx")},
      {"helmholtz2d", helmholtz<z>(2, 30, helmholtz_kappa(30, 10), 0.5)},
      {"helmholtz3d", helmholtz<z>(3, 9, helmholtz_kappa(9, 10), 0)},
  };
  for (index_t n : {1, 31, 33, 300}) systems.push_back({"random " + std::to_string(n), random_sparse(n, 0.05, g)});
  // Real part alone singular (rank one plus a zero row's worth), the imaginary part making A nonsingular.
  systems.push_back({"real part singular", csr_matrix<z>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1, 0), z(1, 1), z(1, -1), z(1, 0)})});
  for (const auto& [name, a] : systems) {
    std::vector<z> want(static_cast<std::size_t>(a.rows()));
    for (auto& w : want) w = test::random_value<z>(g);
    const auto b = times(a, want);
    std::vector<z> x;
    const auto r = solve_complex_direct_host(a, b, x);
    ASSERT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_LE(r.true_residual, 1e-12) << name;
    EXPECT_LE(max_error(x, want), name == "w156" || name == "mhd1280b" ? 1e-3 : 1e-9) << name;  // condition 9.6e8, 4.7e12
    std::vector<z> again;
    solve_complex_direct_host(a, b, again);
    EXPECT_EQ(again, x) << "rerun not bit-identical: " << name;
  }
}

// b near the ends of double's range: the solution scales with b, checked with overflow-safe norms.
TEST(ComplexDirectHost, ExtremeScales) {
  const auto h = helmholtz<z>(2, 6, helmholtz_kappa(6, 10), 0.5);
  const std::vector<z> ones(36, z(1, 0));
  for (double s : {1e300, 1e-300, 1e-310}) {
    std::vector<z> b = times(h, ones);
    for (z& v : b) v *= s;
    std::vector<z> x;
    const auto r = solve_complex_direct_host(h, b, x);
    ASSERT_EQ(r.status, solve_status::converged) << s << ": " << r.message;
    for (const z& v : x) ASSERT_NEAR(std::abs(v / s - z(1)), 0, 1e-9) << s;
  }
}

TEST(ComplexDirectHost, SingularAndNonFiniteInputAreStatuses) {
  std::vector<z> x;
  // Column 2 empty: structurally singular.
  const csr_matrix<z> sing(2, 2, {0, 1, 2}, {0, 0}, {z(1), z(2)});
  auto r = solve_complex_direct_host(sing, {z(1), z(1)}, x);
  EXPECT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("structurally singular"), std::string::npos) << r.message;
  // Numerically singular: the true residual is checked, never "converged" on an inconsistent b.
  const csr_matrix<z> rank1(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1, 1), z(2, 2), z(1, 1), z(2, 2)});
  r = solve_complex_direct_host(rank1, {z(1), z(0, 1)}, x);
  EXPECT_NE(r.status, solve_status::converged) << r.message;
  r = solve_complex_direct_host(rank1, {z(1), z(std::nan(""))}, x);
  EXPECT_EQ(r.status, solve_status::non_finite);
  r = solve_complex_direct_host(rank1, {z(1)}, x);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  r = solve_complex_direct_host(rank1, {z(0), z(0)}, x);  // b = 0: x = 0
  EXPECT_EQ(r.status, solve_status::converged);
  EXPECT_EQ(x, std::vector<z>(2, z(0)));
}

/// A random sparse complex symmetric (or Hermitian) n x n matrix, indefinite: off-diagonal
/// entries of size up to 1, a diagonal of +-(2..3) (real for Hermitian, complex otherwise).
csr_matrix<z> random_symmetric(index_t n, bool hermitian, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<index_t> r, c;
  std::vector<z> v;
  for (index_t i = 0; i < n; ++i) {
    const double d = (i % 3 == 0 ? -1 : 1) * (2 + std::abs(u(g)));
    r.push_back(i), c.push_back(i), v.push_back(hermitian ? z(d, 0) : z(d, u(g)));
    for (index_t j : {(i * 7 + 3) % n, (i + 5) % n})
      if (j < i) {
        const z x(u(g) / 2, u(g) / 2);
        r.push_back(i), c.push_back(j), v.push_back(x), r.push_back(j), c.push_back(i), v.push_back(hermitian ? std::conj(x) : x);
      }
  }
  return to_csr(coo_matrix<z>(n, n, r, c, v));
}

// Sparse LDL^T (complex symmetric) and LDL^H (Hermitian) on the host: P A P^T = L D L^T (L^H)
// entry by entry, the direct method takes them (its method says so), the solution against the
// known x; a zero diagonal that the ordering cannot avoid sends it to the matched LU.
TEST(ComplexDirectHost, SparseLdlForSymmetricAndHermitianSystems) {
  using namespace complex_direct_detail;
  std::mt19937 g(31);
  for (bool herm : {false, true})
    for (index_t n : {1, 31, 33, 300}) {
      const auto a = random_symmetric(n, herm, g);
      const sparse_ldl f = sparse_ldl_host(a, herm, fill_ordering::automatic);
      EXPECT_EQ(f.perturbed, 0) << n;
      if (n <= 33) {  // the factors reproduce P A P^T
        std::vector<z> L(static_cast<std::size_t>(n) * n, z(0)), dense(L.size(), z(0));
        for (index_t j = 0; j < n; ++j) {
          L[j + j * std::size_t(n)] = 1;
          for (count_t p = f.col_ptr[j]; p < f.col_ptr[j + 1]; ++p) L[f.row_idx[p] + j * std::size_t(n)] = f.values[p];
        }
        for (index_t i = 0; i < n; ++i)
          for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
            dense[f.analysis.inverse[i] + f.analysis.inverse[a.col_idx()[k]] * std::size_t(n)] += a.values()[k];
        double err = 0;
        for (index_t i = 0; i < n; ++i)
          for (index_t j = 0; j < n; ++j) {
            z s(0);
            for (index_t k = 0; k < n; ++k) {
              const z ljk = L[j + k * std::size_t(n)];
              s += L[i + k * std::size_t(n)] * f.d[k] * (herm ? std::conj(ljk) : ljk);
            }
            err = std::max(err, std::abs(s - dense[i + j * std::size_t(n)]));
          }
        EXPECT_LE(err, 1e-13) << n << (herm ? " LDL^H" : " LDL^T");
      }
      std::vector<z> want(static_cast<std::size_t>(n));
      for (auto& w : want) w = test::random_value<z>(g);
      std::vector<z> x, again;
      const auto r = solve_complex_direct_host(a, times(a, want), x);
      ASSERT_EQ(r.status, solve_status::converged) << r.message;
      EXPECT_NE(r.method.find(herm ? "LDL^H" : "LDL^T"), std::string::npos) << r.method;
      EXPECT_LE(max_error(x, want), 1e-9) << n;
      solve_complex_direct_host(a, times(a, want), again);
      EXPECT_EQ(again, x);
    }
  // [[0, 1], [1, 0]]: LDL^T's first pivot is zero in any order; the matched LU solves it.
  const csr_matrix<z> swap(2, 2, {0, 1, 2}, {1, 0}, {z(1), z(1)});
  std::vector<z> x;
  const auto r = solve_complex_direct_host(swap, {z(1, 2), z(3)}, x);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NE(r.method.find("sparse LU"), std::string::npos) << r.method;
  EXPECT_LE(max_error(x, std::vector<z>{z(3), z(1, 2)}), 1e-15);
  EXPECT_TRUE(complex_symmetric(swap));
  EXPECT_FALSE(complex_symmetric(csr_matrix<z>(2, 2, {0, 1, 2}, {1, 0}, {z(1), z(2)})));
  EXPECT_FALSE(complex_symmetric(csr_matrix<z>(2, 2, {0, 2, 3}, {0, 1, 1}, {z(4), z(1), z(4)})));  // mirror not stored
}

/// Factored once, three right-hand sides solved and checked, each as the one-system call's
/// answer; singular and refused A are every solve's status, b = 0 answered all the same.
void factor_once(context* ctx) {
  std::mt19937 g(17);
  const auto a = helmholtz<z>(2, 12, helmholtz_kappa(12, 10), 0.5);
  complex_direct<index_t> d(ctx, a);
  ASSERT_EQ(d.status(), solve_status::converged) << d.message();
  EXPECT_GE(d.factor_seconds(), 0.0);
  for (int k = 0; k < 3; ++k) {
    std::vector<z> want(static_cast<std::size_t>(a.rows()));
    for (auto& w : want) w = test::random_value<z>(g);
    const auto b = times(a, want);
    std::vector<z> x, one;
    const auto r = d.solve(b, x);
    ASSERT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_LE(max_error(x, want), 1e-9);
    EXPECT_EQ(r.setup_seconds, d.factor_seconds());
    ctx ? solve_complex_direct_device(*ctx, a, b, one) : solve_complex_direct_host(a, b, one);
    EXPECT_EQ(one, x) << "the kept factors give the one-system answer";
  }
  std::vector<z> x;
  EXPECT_EQ(d.solve({z(1)}, x).status, solve_status::invalid_input);  // b of the wrong size
  const csr_matrix<z> rank1(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1, 1), z(2, 2), z(1, 1), z(2, 2)});
  const csr_matrix<z> empty_col(2, 2, {0, 1, 2}, {0, 0}, {z(1), z(2)});
  complex_direct<index_t> s(ctx, ctx ? rank1 : empty_col);
  EXPECT_EQ(s.status(), solve_status::breakdown) << s.message();
  EXPECT_EQ(s.solve({z(1), z(1)}, x).status, solve_status::breakdown);
  EXPECT_EQ(s.solve({z(0), z(0)}, x).status, solve_status::converged);  // b = 0: x = 0
  EXPECT_EQ(x, std::vector<z>(2, z(0)));
  const csr_matrix<z> nan_a(2, 2, {0, 1, 2}, {0, 1}, {z(1), z(std::nan(""))});
  complex_direct<index_t> bad(ctx, nan_a);
  EXPECT_EQ(bad.status(), solve_status::non_finite);
  EXPECT_EQ(bad.solve({z(0), z(0)}, x).status, solve_status::non_finite);  // A refused before b is looked at
}

// complex_solver: auto on a complex symmetric system keeps the direct method's factors; a
// Hermitian one runs CG each solve; a singular A under auto falls back to the Krylov method.
void solver_object(context* ctx) {
  const auto h = helmholtz<z>(2, 12, helmholtz_kappa(12, 10), 0.5);
  complex_solver<z, index_t> s(ctx, h);
  EXPECT_TRUE(s.factored()) << s.choice().why;
  const std::vector<z> ones(static_cast<std::size_t>(h.rows()), z(1, -1));
  for (int k = 1; k <= 2; ++k) {
    std::vector<z> x;
    std::vector<z> b = times(h, ones);
    for (z& v : b) v *= double(k);
    const auto r = s.solve(b, x);
    ASSERT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct);
    EXPECT_LE(max_error(x, std::vector<z>(ones.size(), double(k) * z(1, -1))), 1e-9);
    EXPECT_EQ(r.solver_choice, s.choice().why);
  }
  const auto p = test::hpd(6);
  complex_solver<z, index_t> c(ctx, p);
  EXPECT_FALSE(c.factored());
  EXPECT_EQ(c.choice().krylov, complex_method::cg);
  std::vector<z> x;
  EXPECT_EQ(c.solve(times(p, std::vector<z>(36, z(1))), x).status, solve_status::converged);
  const csr_matrix<z> sing(3, 3, {0, 1, 2, 3}, {0, 0, 2}, {z(1), z(2), z(3)});  // column 2 empty
  complex_solver<z, index_t> f(ctx, sing);
  EXPECT_FALSE(f.factored());
  EXPECT_NE(f.note().find("could not factor"), std::string::npos) << f.note();
  EXPECT_NE(f.solve({z(1), z(2), z(3)}, x).status, solve_status::converged);  // inconsistent: never converged
  EXPECT_THROW((complex_solver<z, index_t>(ctx, h, "nope")), invalid_argument);
}

TEST(ComplexDirectHost, FactoredOnceSolvedManyTimes) {
  factor_once(nullptr);
  solver_object(nullptr);
}

TEST(ComplexDirectDevice, FactoredOnceSolvedManyTimes) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  factor_once(&ctx);
  solver_object(&ctx);
}

/// A random x (want) and b = A x for the column-major n x n A.
void random_product(const std::vector<z>& a, index_t n, std::mt19937& g, std::vector<z>& want, std::vector<z>& b) {
  want.resize(static_cast<std::size_t>(n));
  for (auto& w : want) w = test::random_value<z>(g);
  b.assign(static_cast<std::size_t>(n), z(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) b[i] += a[i + static_cast<std::size_t>(j) * n] * want[j];
}

/// A random Hermitian positive definite n x n matrix, column-major: B B^H / n + I.
std::vector<z> random_hpd(index_t n, std::mt19937& g) {
  std::vector<z> b(static_cast<std::size_t>(n) * n), a(b.size(), z(0));
  for (auto& v : b) v = test::random_value<z>(g);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      z s(0);
      for (index_t k = 0; k < n; ++k) s += b[i + k * std::size_t(n)] * std::conj(b[j + k * std::size_t(n)]);
      a[i + j * std::size_t(n)] = s / double(n) + (i == j ? z(1) : z(0));
    }
  for (index_t i = 0; i < n; ++i) a[i + i * std::size_t(n)] = z(a[i + i * std::size_t(n)].real(), 0);
  return a;
}

// The host oracle: L L^H gives A back; an indefinite matrix stops at its first non-positive pivot.
TEST(ComplexDenseCholesky, TheHostOracle) {
  std::mt19937 g(23);
  for (index_t n : {1, 7, 40}) {
    const auto a = random_hpd(n, g);
    auto l = a;
    ASSERT_EQ(dense_cholesky_host(l, n), 0);
    double err = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j; i < n; ++i) {
        z s(0);
        for (index_t k = 0; k <= j; ++k) s += l[i + k * std::size_t(n)] * std::conj(l[j + k * std::size_t(n)]);
        err = std::max(err, std::abs(s - a[i + j * std::size_t(n)]));
      }
    EXPECT_LE(err, 1e-13 * n) << n;
  }
  std::vector<z> indef = {z(1), z(0, 2), z(0, -2), z(1)};  // eigenvalues -1 and 3
  EXPECT_EQ(dense_cholesky_host(indef, 2), 2);
}

TEST(ComplexDenseCholesky, TheGpuFactorMatchesTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(29);
  const std::vector<index_t> sizes = test::under_sanitizer() ? std::vector<index_t>{1, 33, 300} : std::vector<index_t>{1, 2, 31, 32, 33, 65, 300, 1000};
  for (index_t n : sizes) {
    const auto a = random_hpd(n, g);
    auto l = a;
    ASSERT_EQ(dense_cholesky_host(l, n), 0);
    auto d = to_device(ctx, a);
    ASSERT_EQ(dense_cholesky_device(ctx, d.data(), n, n), 0) << n;
    const auto got = to_host(ctx, d);
    double err = 0, mag = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j; i < n; ++i) {  // the lower triangle: L
        const std::size_t k = i + j * std::size_t(n);
        err = std::max(err, std::abs(got[k] - l[k])), mag = std::max(mag, std::abs(l[k]));
      }
    EXPECT_LE(err, 1e-12 * mag * std::max<index_t>(n, 1)) << "n " << n;
    std::vector<z> want, b;
    random_product(a, n, g, want, b);
    auto db = to_device(ctx, b);
    dense_cholesky_solve_device(ctx, d.data(), n, n, db.data());
    EXPECT_LE(max_error(to_host(ctx, db), want), 1e-9) << "n " << n;
    auto d2 = to_device(ctx, a);
    dense_cholesky_device(ctx, d2.data(), n, n);
    const auto again = to_host(ctx, d2);
    EXPECT_EQ(std::memcmp(again.data(), got.data(), got.size() * sizeof(z)), 0) << "n " << n;
  }
  // Indefinite (in the second outer panel, past the first 256 columns): its column.
  auto a = random_hpd(300, g);
  a[280 + 280 * std::size_t(300)] = z(-5, 0);
  auto l = a;
  const index_t want = dense_cholesky_host(l, 300);
  ASSERT_GT(want, 256);
  auto d = to_device(ctx, a);
  EXPECT_EQ(dense_cholesky_device(ctx, d.data(), 300, 300), want);
}

// The GPU's direct method takes Cholesky for Hermitian A with positive pivots, LU where the
// pivots are not (Hermitian, positive diagonal, indefinite).
TEST(ComplexDirectDevice, CholeskyWhereHermitianPositiveDefinite) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto h = test::hpd(20);
  std::vector<z> x;
  auto r = solve_complex_direct_device(ctx, h, times(h, std::vector<z>(400, z(1, 2))), x);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NE(r.method.find("Cholesky"), std::string::npos) << r.method;
  EXPECT_LE(max_error(x, std::vector<z>(400, z(1, 2))), 1e-10);
  const csr_matrix<z> indef(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1), z(0, 2), z(0, -2), z(1)});
  r = solve_complex_direct_device(ctx, indef, {z(1), z(1)}, x);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NE(r.method.find("LU"), std::string::npos) << r.method;
  EXPECT_LE(max_error(times(indef, x), std::vector<z>{z(1), z(1)}), 1e-14);
}

TEST(ComplexDenseLu, TheGpuFactorsMatchTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(19);
  std::vector<index_t> sizes = {1, 2, 31, 32, 33, 63, 65, 100};
  if (!test::under_sanitizer()) sizes.push_back(1000);
  for (index_t n : sizes) {
    std::vector<z> a(static_cast<std::size_t>(n) * n);
    for (auto& v : a) v = test::random_value<z>(g);
    std::vector<z> lu = a;
    std::vector<index_t> piv;
    ASSERT_EQ(dense_lu_host(lu, n, piv), 0) << n;
    auto d = to_device(ctx, a);
    device_buffer<index_t> dp = ctx.allocate<index_t>(static_cast<std::size_t>(n));
    ASSERT_EQ(dense_lu_device(ctx, d.data(), n, n, dp.data()), 0) << n;
    const auto got = to_host(ctx, d);
    std::vector<index_t> gp(static_cast<std::size_t>(n));
    dp.copy_to_host_async(gp.data(), gp.size());
    ctx.synchronize();
    EXPECT_EQ(gp, piv) << "n " << n;
    double err = 0, mag = 0;
    for (std::size_t k = 0; k < lu.size(); ++k) err = std::max(err, std::abs(got[k] - lu[k])), mag = std::max(mag, std::abs(lu[k]));
    EXPECT_LE(err, 1e-12 * mag * std::max<index_t>(n, 1)) << "n " << n;
    // The solve against the product A x.
    std::vector<z> want, b;
    random_product(a, n, g, want, b);
    auto db = to_device(ctx, b);
    dense_lu_solve_device(ctx, d.data(), n, n, dp.data(), db.data());
    EXPECT_LE(max_error(to_host(ctx, db), want), 1e-8) << "n " << n;
    // Reruns are bit-identical.
    auto d2 = to_device(ctx, a);
    dense_lu_device(ctx, d2.data(), n, n, dp.data());
    const auto again = to_host(ctx, d2);
    EXPECT_EQ(std::memcmp(again.data(), got.data(), got.size() * sizeof(z)), 0) << "n " << n;
  }
  // A singular matrix: its first zero pivot's column.
  std::vector<z> s = {z(1), z(2), z(2), z(4)};  // columns (1, 2) and (2, 4): rank one
  auto ds = to_device(ctx, s);
  device_buffer<index_t> dp = ctx.allocate<index_t>(2);
  EXPECT_EQ(dense_lu_device(ctx, ds.data(), 2, 2, dp.data()), 2);
}

TEST(ComplexDirectDevice, SolvesTheSystemsTheHostSolves) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(5);
  std::vector<std::pair<std::string, csr_matrix<z>>> systems = {
      {"w156", read_matrix_market_csr<z>(test::data_dir() + "/w156.mtx")},
      {"arrowc", read_matrix_market_csr<z>(test::data_dir() + "/arrowc.mtx")},
      {"helmholtz2d", helmholtz<z>(2, 20, helmholtz_kappa(20, 10), 0.5)},
      {"random 33", random_sparse(33, 0.1, g)},
  };
  for (const auto& [name, a] : systems) {
    std::vector<z> want(static_cast<std::size_t>(a.rows()));
    for (auto& w : want) w = test::random_value<z>(g);
    const auto b = times(a, want);
    std::vector<z> x;
    const auto r = solve_complex_direct_device(ctx, a, b, x);
    ASSERT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_LE(r.true_residual, 1e-12) << name;
    EXPECT_LE(max_error(x, want), name == "w156" ? 1e-3 : 1e-9) << name;
    EXPECT_NE(r.method.find("gpu"), std::string::npos);
  }
  {  // b near the ends of double's range
    const auto h = helmholtz<z>(2, 6, helmholtz_kappa(6, 10), 0.5);
    for (double sc : {1e300, 1e-300}) {
      std::vector<z> b = times(h, std::vector<z>(36, z(1, 0)));
      for (z& v : b) v *= sc;
      std::vector<z> x;
      const auto r = solve_complex_direct_device(ctx, h, b, x);
      ASSERT_EQ(r.status, solve_status::converged) << sc << ": " << r.message;
      for (const z& v : x) ASSERT_NEAR(std::abs(v / sc - z(1)), 0, 1e-9) << sc;
    }
  }
  std::vector<z> x;
  const csr_matrix<z> rank1(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(1, 1), z(2, 2), z(1, 1), z(2, 2)});
  auto r = solve_complex_direct_device(ctx, rank1, {z(1), z(0, 1)}, x);
  EXPECT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("singular"), std::string::npos) << r.message;
  r = solve_complex_direct_device(ctx, rank1, {z(1), z(std::nan(""))}, x);
  EXPECT_EQ(r.status, solve_status::non_finite);
}

}  // namespace
}  // namespace la
