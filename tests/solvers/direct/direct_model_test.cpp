// The direct method inside the solver model, and the adversarial cases that once gave a silent
// wrong answer, a crash or a wrong exit: norms near overflow and underflow, b = 0, subnormal
// and huge matrices, numerically singular ones, refactor() on values that change the path,
// set up once and k columns (host_direct, host_solver, device_solver), auto's rules the same for
// one column or many. Every converged answer is checked against a residual recomputed here in
// long double.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include <la/formats/matrix_market.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/device_solver.hpp>
#include <la/solvers/direct/detail/suitesparse.hpp>
#include <la/solvers/direct/host_direct.hpp>
#include <la/solvers/host_solver.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

#include "test_util.hpp"

using namespace la;

namespace {
/// ||b - A x|| / ||b|| in long double, scaled so that 1e160 entries neither overflow nor the
/// test's own check go wrong (long double's exponent reaches 1e4932).
double relres(const csr_matrix<double>& a, const std::vector<double>& b, const std::vector<double>& x) {
  long double rr = 0, bb = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    long double s = b[static_cast<std::size_t>(i)];
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s -= (long double)a.values()[k] * x[a.col_idx()[k]];
    rr += s * s, bb += (long double)b[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(i)];
  }
  return bb > 0 ? double(std::sqrt(rr / bb)) : double(std::sqrt(rr));
}
bool direct_detail_available(bool spd) { return la::direct_detail::suitesparse_available(spd); }
cg_options with(krylov_method m, double rtol = 1e-8) {
  cg_options o;
  o.method = m;
  o.rtol = rtol;
  return o;
}
csr_matrix<double> dense_csr(index_t n, const std::vector<double>& v) {
  std::vector<int> p(static_cast<std::size_t>(n) + 1);
  std::vector<index_t> c;
  std::vector<double> val;
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j)
      if (v[static_cast<std::size_t>(i * n + j)] != 0) c.push_back(j), val.push_back(v[static_cast<std::size_t>(i * n + j)]);
    p[static_cast<std::size_t>(i) + 1] = static_cast<int>(c.size());
  }
  return csr_matrix<double>(n, n, std::move(p), std::move(c), std::move(val));
}
/// A converged result must hold: its x meets the tolerance in long double.
void expect_honest(const solve_result& r, const csr_matrix<double>& a, const std::vector<double>& b,
                   const std::vector<double>& x, double rtol, const std::string& what) {
  if (r.status != solve_status::converged) return;
  ASSERT_EQ(x.size(), b.size()) << what;
  EXPECT_LE(relres(a, b, x), 100 * rtol) << what << ": converged but the residual misses: " << r.message;
}
}  // namespace

// ||b|| past 1e154 once overflowed a sum of squares: the tolerance became infinite and an
// inconsistent system "converged" with residual 0.
TEST(DirectModel, NormsDoNotOverflowOnAHugeRightHandSide) {
  const csr_matrix<double> a = dense_csr(3, {1, 2, 3, 2, 4, 6, 1, 1, 1});  // rank 2
  for (double scale : {1e160, 1e300}) {
    const std::vector<double> b(3, scale);  // inconsistent
    for (krylov_method m : {krylov_method::direct, krylov_method::automatic}) {
      std::vector<double> x;
      const solve_result r = solve_host(a, b, x, with(m));
      EXPECT_NE(r.status, solve_status::converged) << to_string(m) << " " << scale << ": " << r.message;
      expect_honest(r, a, b, x, 1e-8, "rank 2, b = 1e160 or 1e300");
    }
  }
  {  // A well-posed system with b = 1e300: x near 1e300 still fits, and is checked
    const csr_matrix<double> p = test::poisson_2d<double>(5);
    std::vector<double> xt(static_cast<std::size_t>(p.rows()), 1e299), b(xt.size());
    reference::spmv(1.0, p, xt, 0.0, b);
    std::vector<double> x;
    const solve_result r = solve_host(p, b, x, with(krylov_method::direct));
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    expect_honest(r, p, b, x, 1e-8, "b near 1e300");
  }
  // A 40 x 40 of condition about 1e20, b = 1e160: converged only where true.
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const index_t n = 40;
  std::vector<double> v(static_cast<std::size_t>(n * n));
  for (double& e : v) e = u(g);
  for (index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = i < n / 2 ? 1.0 : 1e-20;
  for (index_t i = n / 2; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      if (j != i) v[static_cast<std::size_t>(i * n + j)] *= 1e-20;
  const csr_matrix<double> ill = dense_csr(n, v);
  std::vector<double> bb(static_cast<std::size_t>(n));
  for (double& e : bb) e = 1e160 * u(g);
  std::vector<double> x;
  const solve_result r = solve_host(ill, bb, x, with(krylov_method::direct));
  expect_honest(r, ill, bb, x, 1e-8, "condition 1e20, b = 1e160");
  EXPECT_TRUE(std::isfinite(r.true_residual) || r.status != solve_status::converged) << r.message;
}

// ||b|| below 1e-154 once underflowed to 0: the solve "missed" with x right.
TEST(DirectModel, NormsDoNotUnderflowOnATinyRightHandSide) {
  const csr_matrix<double> a = test::poisson_2d<double>(12);
  for (double scale : {1e-160, 1e-300}) {
    std::vector<double> b(static_cast<std::size_t>(a.rows()), scale), x;
    b[3] = -0.3 * scale;
    const solve_result r = solve_host(a, b, x, with(krylov_method::direct));
    EXPECT_EQ(r.status, solve_status::converged) << scale << ": " << r.message;
    expect_honest(r, a, b, x, 1e-8, "b = 1e-160 or 1e-300");
  }
}

// b = 0 with a matrix that is not SPD: x = 0 at once (it once fell to the O(n^3) dense LU on a
// NaN backward error).
TEST(DirectModel, ZeroRightHandSideIsAnsweredAtOnce) {
  std::mt19937 g(3);
  const csr_matrix<double> a = test::random_nonsymmetric<double>(300, 5, g);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 0.0);
  std::vector<double> x(b.size(), 5.0);
  const solve_result r = solve_host(a, b, x, with(krylov_method::direct));
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NE(r.message.find("b = 0"), std::string::npos) << r.message;
  for (double v : x) EXPECT_EQ(v, 0.0);
}

// Entries all subnormal (condition about 7) were called singular; entries near overflow too.
TEST(DirectModel, SubnormalAndHugeMatricesAreSolved) {
  for (double s : {1e-310, 1e-300, 1e300}) {
    csr_matrix<double> a = test::poisson_2d<double>(6);
    std::vector<double> v(a.values());
    for (double& e : v) e *= s;
    const csr_matrix<double> as(a.rows(), a.cols(), std::vector<int>(a.row_ptr()), std::vector<index_t>(a.col_idx()), std::move(v));
    // b = A_s * x_true with x_true near 1/s's reach: b in range, x of order 1.
    std::vector<double> xt(static_cast<std::size_t>(a.rows()), 1.0), b(xt.size());
    for (std::size_t i = 0; i < xt.size(); ++i) xt[i] = 1.0 + 0.1 * double(i % 7);
    reference::spmv(1.0, as, xt, 0.0, b);
    std::vector<double> x;
    const solve_result r = solve_host(as, b, x, with(krylov_method::direct));
    EXPECT_EQ(r.status, solve_status::converged) << "scale " << s << ": " << r.message;
    for (std::size_t i = 0; i < xt.size(); ++i) EXPECT_NEAR(x[i], xt[i], 1e-6) << "scale " << s;
  }
}

// Numerically but not structurally singular: no exit-0 answer that is not one.
TEST(DirectModel, NumericallySingularIsNotConverged) {
  // Row 3 = row 1 + row 2 (1-based), a zero-free diagonal: structurally fine.
  const csr_matrix<double> s = dense_csr(4, {4, 1, 0, 1, 1, 5, 1, 0, 5, 6, 1, 1, 0, 1, 1, 3});
  const std::vector<double> b{1, 2, 4, 1};  // inconsistent with row 2 = row 0 + row 1 (1 + 2 != 4)
  for (krylov_method m : {krylov_method::direct, krylov_method::automatic}) {
    std::vector<double> x;
    const solve_result r = solve_host(s, b, x, with(m));
    EXPECT_NE(r.status, solve_status::converged) << r.message;
    expect_honest(r, s, b, x, 1e-8, "numerically singular");
  }
}

// A one-entry matrix of a million rows: structurally singular, said at once (it once ran 47 s
// before a memory refusal).
TEST(DirectModel, EmptyRowsAreRefusedAtOnce) {
  const index_t n = 1000000;
  std::vector<int> p(static_cast<std::size_t>(n) + 1, 1);
  p[0] = 0;
  const csr_matrix<double> a(n, n, std::move(p), std::vector<index_t>{0}, std::vector<double>{2.0});
  const std::vector<double> b(static_cast<std::size_t>(n), 1.0);
  std::vector<double> x;
  const auto t0 = std::chrono::steady_clock::now();
  const solve_result r = solve_host(a, b, x, with(krylov_method::direct));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("row 2 holds no nonzero"), std::string::npos) << r.message;
  EXPECT_LT(s, 5.0);
}

// refactor = factor: new values that make A indefinite (SPD path -> matched LU) solve as a
// fresh factorization does, on la::sparse_direct_solver, host_direct and host_solver.
TEST(DirectModel, RefactorDoesWhatFactorDoes) {
  const csr_matrix<double> a = test::poisson_2d<double>(10);
  std::vector<double> v(a.values());
  for (index_t i = 0; i < a.rows(); ++i)
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i && i % 3 == 0) v[static_cast<std::size_t>(k)] = -v[static_cast<std::size_t>(k)];  // indefinite
  const csr_matrix<double> ind(a.rows(), a.cols(), std::vector<int>(a.row_ptr()), std::vector<index_t>(a.col_idx()), std::move(v));
  std::mt19937 g(1);
  const std::vector<double> b = test::random_vector<double>(static_cast<std::size_t>(a.rows()), g);
  {
    sparse_direct_solver s(to_csr<count_t>(a));
    s.factor();
    ASSERT_TRUE(s.ok());
    s.refactor(to_csr<count_t>(ind));
    ASSERT_TRUE(s.ok()) << "refactor called the indefinite values singular";
    std::vector<double> x = b;
    s.solve(x);
    EXPECT_LT(relres(ind, b, x), 1e-12);
  }
  {
    const csr_matrix<double, count_t> a64 = to_csr<count_t>(a), ind64 = to_csr<count_t>(ind);
    host_direct<double> d(a64, with(krylov_method::direct));
    d.refactor(ind64);
    std::vector<double> x;
    const solve_result r = d.solve(b, x);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_LT(relres(ind, b, x), 1e-10);
  }
  {
    csr_matrix<double> mine = a;
    host_solver<csr_matrix<double>> hs(mine, with(krylov_method::direct));
    hs.update_values(ind);
    std::vector<double> x;
    const solve_result r = hs.solve(b, x);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_LT(relres(ind, b, x), 1e-10);
  }
}

// Set up once, then k columns: the factors made once (setup_seconds the same in every column's
// result), every column checked, a zero column answered with zeros, a non-finite one refused;
// the same answers as one column at a time.
TEST(DirectModel, ManyColumnsThroughOneSetup) {
  const csr_matrix<double> a = test::poisson_2d<double>(20);
  std::mt19937 g(5);
  std::mt19937 gn(9);
  const csr_matrix<double> ns = test::random_nonsymmetric<double>(400, 6, gn);
  for (host_factorization hf : {host_factorization::automatic, host_factorization::la})
  for (const csr_matrix<double>* m : {&a, &ns}) {
    const auto n = static_cast<std::size_t>(m->rows());
    const index_t k = 5;
    std::vector<double> b(n * k);
    for (double& e : b) e = std::uniform_real_distribution<double>(-1, 1)(g);
    std::fill(b.begin() + static_cast<std::ptrdiff_t>(2 * n), b.begin() + static_cast<std::ptrdiff_t>(3 * n), 0.0);  // column 3: zero
    const csr_matrix<double, count_t> m64 = to_csr<count_t>(*m);
    cg_options o = with(krylov_method::direct, 1e-10);
    o.direct.host_factor = hf;
    host_direct<double> d(m64, o);
    std::vector<double> x;
    const std::vector<solve_result> rs = d.solve_columns(b, x, k);
    ASSERT_EQ(rs.size(), std::size_t(k));
    for (index_t c = 0; c < k; ++c) {
      const std::vector<double> bc(b.begin() + static_cast<std::ptrdiff_t>(c * n), b.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
      const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
      EXPECT_EQ(rs[static_cast<std::size_t>(c)].status, solve_status::converged) << c << ": " << rs[static_cast<std::size_t>(c)].message;
      EXPECT_EQ(rs[static_cast<std::size_t>(c)].setup_seconds, d.setup_seconds());
      if (c == 2) {
        for (double e : xc) EXPECT_EQ(e, 0.0);
        continue;
      }
      EXPECT_LT(relres(*m, bc, xc), 1e-9) << c;
      std::vector<double> one;
      d.solve(bc, one);
      for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(xc[i], one[i], 1e-9 * (1 + std::abs(one[i])));
    }
    b[5] = std::nan("");
    const std::vector<solve_result> bad = d.solve_columns(b, x, k);
    EXPECT_EQ(bad[0].status, solve_status::non_finite) << bad[0].message;
    EXPECT_EQ(bad[1].status, solve_status::converged) << bad[1].message;
  }
}

// auto's rules and fallbacks with k columns are those of one column: host_solver's columns
// end as solve_host's do, column by column (BiCGSTAB's breakdown, GMRES, the direct method).
TEST(DirectModel, AutoIsTheSameForOneColumnOrMany) {
  for (const char* name : {"west0479.mtx", "impcol_a.mtx", "bcsstk01.mtx"}) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    const auto n = static_cast<std::size_t>(a.rows());
    std::mt19937 g(2);
    std::vector<double> b(2 * n);
    for (double& e : b) e = std::uniform_real_distribution<double>(-1, 1)(g);
    for (std::int64_t rows : {std::int64_t(0), std::int64_t(20000)}) {  // the direct-first rule off, then on
      cg_options o = with(krylov_method::automatic);
      o.auto_direct_rows = rows;
      host_solver<csr_matrix<double>> s(a, o);
      std::vector<double> x;
      const std::vector<solve_result> rs = s.solve_columns(b, x, 2);
      for (std::size_t c = 0; c < 2; ++c) {
        const std::vector<double> bc(b.begin() + static_cast<std::ptrdiff_t>(c * n), b.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
        std::vector<double> y;
        const solve_result one = solve_host(a, bc, y, o);
        EXPECT_EQ(rs[c].status, one.status) << name << " column " << c << ": " << rs[c].message << " / " << one.message;
        EXPECT_EQ(rs[c].solver, one.solver) << name << " column " << c;
        const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
        expect_honest(rs[c], a, bc, xc, 1e-8, name);
      }
    }
  }
}

// The host's default factorization: SuiteSparse's CHOLMOD (A looks SPD) or UMFPACK where this
// build found them, named in the report, its answers checked as la's own; la's fronts asked by name.
TEST(DirectModel, TheHostFactorsWithSuiteSparseWhereBuilt) {
  const csr_matrix<double> spd = test::poisson_2d<double>(40);
  std::mt19937 g(6);
  const csr_matrix<double> ns = test::random_nonsymmetric<double>(700, 7, g);
  for (const csr_matrix<double>* m : {&spd, &ns}) {
    const bool is_spd = m == &spd;
    std::vector<double> b = test::random_vector<double>(static_cast<std::size_t>(m->rows()), g), x, y;
    cg_options o = with(krylov_method::direct, 1e-12);
    const solve_result r = solve_host(*m, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_LT(relres(*m, b, x), 1e-12);
    const bool built = direct_detail_available(is_spd);
    EXPECT_EQ(r.message.find(is_spd ? "CHOLMOD" : "UMFPACK") != std::string::npos, built) << r.message;
    o.direct.host_factor = host_factorization::la;
    const solve_result q = solve_host(*m, b, y, o);
    EXPECT_NE(q.message.find("multifrontal"), std::string::npos) << q.message;
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-8 * (1 + std::abs(y[i])));
    o.direct.host_factor = host_factorization::suitesparse;
    if (!built) EXPECT_THROW(solve_host(*m, b, y, o), not_supported);
  }
}

// Without METIS and AMD the automatic ordering is natural and the analysis says so loudly; where
// the set-up promised them (LA_EXPECT_ORDERINGS), their absence fails here.
TEST(DirectModel, TheOrderingIsSaidWhenNoLibraryWasFound) {
  const csr_matrix<double> a = test::poisson_2d<double>(8);
  const sparse_analysis s = analyze_pattern(a);
  const bool any = ordering_available(fill_ordering::amd) || ordering_available(fill_ordering::metis);
  EXPECT_EQ(s.no_ordering_library, !any);
  if (!any) EXPECT_NE(s.summary().find("no fill-reducing ordering"), std::string::npos) << s.summary();
#ifdef LA_EXPECT_ORDERINGS
  EXPECT_TRUE(ordering_available(fill_ordering::amd)) << "the set-up installed SuiteSparse, but this build did not find AMD";
  EXPECT_TRUE(ordering_available(fill_ordering::metis)) << "the set-up installed METIS, but this build did not find it";
#endif
}

// The GPU's side: device_solver keeps the factors, k columns, b = 0, a huge b.
TEST(DirectModel, DeviceSolverKeepsTheFactors) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const csr_matrix<double> a = test::poisson_2d<double>(30);
  const auto da = to_device(ctx, a);
  device_solver<double, int> s(ctx, da, with(krylov_method::direct, 1e-10));
  ASSERT_NE(s.direct(), nullptr);
  std::mt19937 g(4);
  for (int c = 0; c < 3; ++c) {
    std::vector<double> b = test::random_vector<double>(static_cast<std::size_t>(a.rows()), g);
    if (c == 1) std::fill(b.begin(), b.end(), 0.0);
    if (c == 2)
      for (double& e : b) e *= 1e160;
    device_vector<double> dx;
    const solve_result r = s.solve(to_device(ctx, b), dx);
    EXPECT_EQ(r.status, solve_status::converged) << c << ": " << r.message;
    const std::vector<double> x = to_host(ctx, dx);
    if (c == 1) for (double e : x) EXPECT_EQ(e, 0.0);
    else EXPECT_LT(relres(a, b, x), 1e-9) << c;
  }
  // The rank-2 system with an inconsistent b = 1e160: not converged on the GPU either (the
  // GPU's sums of squares overflow there; the verdict is the host's long double residual).
  const csr_matrix<double> r2 = dense_csr(3, {1, 2, 3, 2, 4, 6, 1, 1, 1});
  const std::vector<double> big(3, 1e160);
  for (krylov_method m : {krylov_method::direct, krylov_method::automatic}) {
    device_vector<double> dx;
    const solve_result r = solve_device(ctx, to_device(ctx, r2), to_device(ctx, big), dx, with(m));
    EXPECT_NE(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    if (r.status == solve_status::converged) EXPECT_LE(relres(r2, big, to_host(ctx, dx)), 1e-6);
  }
}
