// The host Krylov methods (the oracles of the GPU ones): BiCGSTAB and GMRES/FGMRES against
// Eigen and each other, the method's choice and refusals, and the edges every method shares
// (scale, a tolerance below the precision, messages).
#include <cmath>
#include <complex>
#include <limits>

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>

#include <la/formats/generate.hpp>
#include <la/solvers/gmres.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>
#include "eigen_cg.hpp"
#include "test_util.hpp"

namespace la {
namespace {

using test::to_eigen;

/// The options of these tests: auto's Krylov choices, so without its direct method first on
/// small non-SPD systems and on SPD ones predicted cheap to factor (direct_test tests those).
cg_options with(krylov_method m, preconditioner p, double tol = 1e-8) {
  cg_options o;
  o.method = m, o.precond = p, o.rtol = tol;
  o.auto_direct_rows = 0, o.auto_direct_flops = 0;
  return o;
}

struct method_case {
  std::string system;
  krylov_method method;
  preconditioner pc;
};

class Methods : public ::testing::TestWithParam<method_case> {};

// Every method converges with the true residual at the tolerance (100x: the stated factor),
// and BiCGSTAB's count is Eigen's (which is right-preconditioned the same way) within 10%.
TEST_P(Methods, ConvergeWithTrueResidual) {
  const auto& c = GetParam();
  const csr_matrix<double> a = test::system_matrix(c.system, test::data_dir());
  std::vector<double> b(a.rows(), 0.0);  // b = A ones, as PETSc's counts (../shared/anchors)
  reference::spmv(1.0, a, std::vector<double>(a.rows(), 1.0), 0.0, b);
  std::vector<double> x;
  const solve_result r = solve_host(a, b, x, with(c.method, c.pc));
  ASSERT_EQ(r.status, solve_status::converged) << r.message << " / " << r.method;
  EXPECT_EQ(r.solver, c.method);
  EXPECT_LE(test::true_relres(a, b, x), 100 * 1e-8);
  EXPECT_NEAR(r.true_residual, test::true_relres(a, b, x), 1e-3 * r.true_residual + 1e-15);
  // PETSc 3.18's count where ../shared/anchors/petsc-3.18.md has one (b = A ones).
  if (c.system == "adder_dcop_05.mtx" && c.method == krylov_method::bicgstab && c.pc == preconditioner::jacobi)
    // The count moves with the dots' rounding (BiCGSTAB here is sensitive to it): long double
    // dots gave PETSc's within 10%, the compensated double ones 11%, plain double ones 30%.
    EXPECT_LE(std::abs(double(r.iterations - 2049)), 0.15 * 2049) << "la " << r.iterations << ", PETSc 2049";
  // Eigen's BiCGSTAB restarts when r0'r nearly vanishes, which PETSc's and la's do not: its
  // counts compare on the systems where that does not happen.
  else if (c.method == krylov_method::bicgstab && c.pc != preconditioner::ilu0) {
    const auto m = to_eigen(a);
    Eigen::VectorXd eb = Eigen::Map<const Eigen::VectorXd>(b.data(), b.size());
    long its;
    if (c.pc == preconditioner::jacobi) {
      Eigen::BiCGSTAB<decltype(m), Eigen::DiagonalPreconditioner<double>> s(m);
      s.setTolerance(1e-8);
      Eigen::VectorXd ex = s.solve(eb);
      its = s.iterations();
    } else {
      Eigen::BiCGSTAB<decltype(m), Eigen::IdentityPreconditioner> s(m);
      s.setTolerance(1e-8);
      Eigen::VectorXd ex = s.solve(eb);
      its = s.iterations();
    }
    EXPECT_LE(std::abs(double(r.iterations - its)), std::max(2.0, 0.1 * its)) << "la " << r.iterations << ", Eigen " << its;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Systems, Methods,
    ::testing::Values(method_case{"convdiff2d:30", krylov_method::bicgstab, preconditioner::none},
                      method_case{"convdiff2d:30", krylov_method::bicgstab, preconditioner::jacobi},
                      method_case{"convdiff2d:30", krylov_method::bicgstab, preconditioner::ilu0},
                      method_case{"convdiff2d:30", krylov_method::gmres, preconditioner::none},
                      method_case{"convdiff2d:30", krylov_method::gmres, preconditioner::jacobi},
                      method_case{"convdiff2d:30", krylov_method::gmres, preconditioner::ilu0},
                      method_case{"convdiff2d:30", krylov_method::fgmres, preconditioner::ilu0},
                      method_case{"convdiff3d:10", krylov_method::bicgstab, preconditioner::ilu0},
                      method_case{"convdiff3d:10", krylov_method::gmres, preconditioner::jacobi},
                      method_case{"adder_dcop_05.mtx", krylov_method::bicgstab, preconditioner::jacobi},
                      method_case{"gr_30_30.mtx", krylov_method::gmres, preconditioner::jacobi},
                      method_case{"gr_30_30.mtx", krylov_method::bicgstab, preconditioner::none}),
    [](const auto& info) {
      return test::test_name(info.param.system + "_" + to_string(info.param.method) + "_" + to_string(info.param.pc));
    });

// With a fixed M, FGMRES builds the same iterates as GMRES (in exact arithmetic): the counts
// agree within one.
TEST(Gmres, FlexibleMatchesPlainWithAFixedPreconditioner) {
  const auto a = convdiff<double>(2, 25, 50);
  const std::vector<double> b(a.rows(), 1.0);
  std::vector<double> x1, x2;
  const auto r1 = gmres_host(a, b, x1, with(krylov_method::gmres, preconditioner::ilu0), false);
  const auto r2 = gmres_host(a, b, x2, with(krylov_method::fgmres, preconditioner::ilu0), true);
  ASSERT_TRUE(r1.converged()) << r1.message;
  ASSERT_TRUE(r2.converged()) << r2.message;
  EXPECT_LE(std::abs(r1.iterations - r2.iterations), 1);
}

// Without restarts GMRES is exact after at most n iterations (n = 31, awkward).
TEST(Gmres, FullGmresSolvesInAtMostNIterations) {
  std::mt19937 g(5);
  const auto a = test::random_nonsymmetric<double>(31, 4, g);
  const auto b = test::random_vector<double>(31, g);
  std::vector<double> x;
  cg_options o = with(krylov_method::gmres, preconditioner::none, 1e-10);
  o.restart = 40;
  const auto r = gmres_host(a, b, x, o);
  ASSERT_TRUE(r.converged()) << r.message;
  EXPECT_LE(r.iterations, 31);
  EXPECT_LE(test::true_relres(a, b, x), 1e-9);
}

// A restart shorter than the count still converges, and recomputes the residual at each
// restart: the recurrence and the true residual agree.
TEST(Gmres, RestartsConverge) {
  const auto a = convdiff<double>(2, 30, 100);
  const std::vector<double> b(a.rows(), 1.0);
  for (int m : {1, 5, 31}) {
    std::vector<double> x;
    cg_options o = with(krylov_method::gmres, preconditioner::jacobi);
    o.restart = m;
    const auto r = gmres_host(a, b, x, o);
    ASSERT_TRUE(r.converged()) << "m " << m << ": " << r.message;
    EXPECT_LE(test::true_relres(a, b, x), 100 * 1e-8) << "m " << m;
  }
}

TEST(Methods, EveryFormatGivesTheSameIterations) {
  const auto a = convdiff<double>(2, 12, 100);
  const std::vector<double> b(a.rows(), 1.0);
  for (krylov_method m : {krylov_method::bicgstab, krylov_method::gmres}) {
    std::vector<double> x0;
    const auto r0 = solve_host(a, b, x0, with(m, preconditioner::jacobi));
    ASSERT_TRUE(r0.converged());
    auto check = [&](const auto& mat) {
      std::vector<double> x;
      const auto r = solve_host(mat, b, x, with(m, preconditioner::jacobi));
      EXPECT_EQ(r.iterations, r0.iterations) << to_string(m) << " " << r.method;
    };
    check(to_coo(a)), check(to_csc(a)), check(to_ell(a)), check(to_jds(a)), check(to_sell(a)), check(to_dense(a));
  }
}

TEST(Method, AutoPicksCgForSpdAndBicgstabOtherwise) {
  const std::vector<double> b(400, 1.0);
  std::vector<double> x;
  const auto r1 = solve_host(poisson_2d<double>(20), b, x, with(krylov_method::automatic, preconditioner::jacobi));
  EXPECT_EQ(r1.solver, krylov_method::cg);
  EXPECT_NE(r1.solver_choice.find("looks SPD"), std::string::npos) << r1.solver_choice;
  x.clear();
  const auto r2 = solve_host(convdiff<double>(2, 20, 100), b, x, with(krylov_method::automatic, preconditioner::automatic));
  EXPECT_EQ(r2.solver, krylov_method::bicgstab);
  EXPECT_EQ(r2.precond.kind, preconditioner::ilu0);  // auto_precond_for's measured rule
  EXPECT_NE(r2.solver_choice.find("not symmetric"), std::string::npos) << r2.solver_choice;
  EXPECT_TRUE(r2.converged()) << r2.message;
}

// precond auto for the non-symmetric methods: AMG only where A is nearly symmetric (pattern
// and values to 1%) and CG's size rule takes AMG; ILU(0) otherwise, and CG's own rule for CG.
TEST(Method, AutoPreconditionerForNonSymmetricMethodsFollowsTheMeasuredRule) {
  matrix_properties p;
  p.rows = p.cols = 2000000, p.nnz = 5 * p.rows, p.max_asymmetry = 0.005;  // a 2D grid, Peclet ~10
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, p), preconditioner::amg);
  EXPECT_EQ(auto_precond_for(krylov_method::gmres, preconditioner::automatic, p), preconditioner::amg);
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::jacobi, p), preconditioner::jacobi);  // asked
  EXPECT_EQ(auto_precond_for(krylov_method::cg, preconditioner::automatic, p), preconditioner::automatic);
  matrix_properties q = p;
  q.max_asymmetry = 0.02;  // convection-dominated
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, q), preconditioner::ilu0);
  q = p, q.pattern_symmetric = false;
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, q), preconditioner::ilu0);
  q = p, q.rows = q.cols = 500000, q.nnz = 5 * q.rows;  // below AMG's sizes
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, q), preconditioner::ilu0);
  q = p, q.nnz = 27 * q.rows;  // long rows at 2M: not AMG's (3D grids only past 12M rows)
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, q), preconditioner::ilu0);
  EXPECT_EQ(auto_precond_for(krylov_method::bicgstab, preconditioner::automatic, matrix_properties{}),
            preconditioner::ilu0);  // properties not computed
  // The host oracle reports its nnz, which the rule reads.
  EXPECT_EQ(properties_of(poisson_2d<double>(7)).nnz, poisson_2d<double>(7).nnz());
}

TEST(Method, CgOnANonSymmetricMatrixIsRefusedUnlessForced) {
  const auto a = convdiff<double>(2, 10, 100);
  const std::vector<double> b(a.rows(), 1.0);
  std::vector<double> x;
  auto r = solve_host(a, b, x, with(krylov_method::cg, preconditioner::none));
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("bicgstab"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("{force}"), std::string::npos) << r.message;
  cg_options o = with(krylov_method::cg, preconditioner::none);
  o.force = true;
  x.clear();
  r = solve_host(a, b, x, o);
  EXPECT_NE(r.status, solve_status::invalid_input) << r.message;
}

TEST(Method, SymmetricOnlyPreconditionersAreRefusedForTheOthers) {
  const auto a = convdiff<double>(2, 10, 100);
  const std::vector<double> b(a.rows(), 1.0);
  for (preconditioner p : {preconditioner::fsai, preconditioner::ic0, preconditioner::block_jacobi}) {
    std::vector<double> x;
    const auto r = solve_host(a, b, x, with(krylov_method::gmres, p));
    EXPECT_EQ(r.status, solve_status::invalid_input) << to_string(p);
    EXPECT_NE(r.message.find("ilu0"), std::string::npos) << r.message;
  }
}

TEST(Method, PropertiesOfHandCheckedMatrices) {
  // [[2, 1], [1.5, -1]]: not symmetric by 0.5 of max 2, one positive and one negative diagonal.
  const csr_matrix<double> a(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {2, 1, 1.5, -1});
  const auto p = properties_of(a);
  EXPECT_DOUBLE_EQ(p.max_asymmetry, 0.25);
  EXPECT_TRUE(p.pattern_symmetric);
  EXPECT_EQ(p.diag_positive, 1);
  EXPECT_EQ(p.diag_negative, 1);
  EXPECT_EQ(p.dominant_rows, 1);  // |2| >= 1; |-1| < 1.5
  EXPECT_FALSE(p.symmetric());
  const auto q = properties_of(poisson_2d<double>(5));
  EXPECT_EQ(q.max_asymmetry, 0);
  EXPECT_TRUE(q.looks_spd());
  // A missing diagonal and a one-sided entry: pattern not symmetric.
  const csr_matrix<double> c(2, 2, {0, 1, 1}, {1}, {3});
  const auto pc = properties_of(c);
  EXPECT_FALSE(pc.pattern_symmetric);
  EXPECT_EQ(pc.diag_zero, 2);
  EXPECT_DOUBLE_EQ(pc.max_asymmetry, 1);
}

// Complex values (issue 69): Hermitian, complex symmetric, both (a real-valued matrix), neither.
TEST(Method, PropertiesOfComplexMatricesTellHermitianFromComplexSymmetric) {
  using z = std::complex<double>;
  // [[2, 1+i], [1-i, 3]]: Hermitian, not complex symmetric (|a_01 - a_10| = |2i| = 2 of max |a| 3).
  const csr_matrix<z> h(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(2, 0), z(1, 1), z(1, -1), z(3, 0)});
  const auto ph = properties_of(h);
  EXPECT_TRUE(ph.complex_values);
  EXPECT_EQ(ph.max_non_hermitian, 0);
  EXPECT_TRUE(ph.hermitian());
  EXPECT_DOUBLE_EQ(ph.max_asymmetry, 2.0 / 3.0);
  EXPECT_FALSE(ph.symmetric());
  EXPECT_TRUE(ph.looks_spd());
  EXPECT_EQ(ph.diag_positive, 2);
  EXPECT_NE(describe(ph).find("Hermitian values"), std::string::npos) << describe(ph);
  // [[2+i, 1+i], [1+i, -3]]: complex symmetric; not Hermitian (the diagonal's i, the mirror's conjugate).
  const csr_matrix<z> cs(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(2, 1), z(1, 1), z(1, 1), z(-3, 0)});
  const auto pcs = properties_of(cs, /*values_symmetric=*/true);  // a complex file's "symmetric" is checked anyway
  EXPECT_EQ(pcs.max_asymmetry, 0);
  EXPECT_TRUE(pcs.symmetric());
  EXPECT_FALSE(pcs.hermitian());
  EXPECT_FALSE(pcs.looks_spd());
  EXPECT_DOUBLE_EQ(pcs.max_non_hermitian, 2 / std::abs(z(-3, 0)));  // |1+i - (1-i)| = 2 of max |a| 3
  EXPECT_EQ(pcs.diag_positive, 1);
  EXPECT_EQ(pcs.diag_negative, 1);
  EXPECT_NE(describe(pcs).find("complex symmetric values"), std::string::npos) << describe(pcs);
  // Filled as the GPU's properties_of fills it for real values (no max_non_hermitian): Hermitian
  // means symmetric there, so a non-symmetric real matrix never looks SPD.
  matrix_properties real;
  real.rows = real.cols = 3, real.max_asymmetry = 0.5, real.diag_positive = 3;
  EXPECT_FALSE(real.hermitian());
  EXPECT_FALSE(real.looks_spd());
  real.max_asymmetry = 0;
  EXPECT_TRUE(real.looks_spd());
  // Real values stored as complex: both at once.
  const auto pr = properties_of(csr_matrix<z>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {z(4), z(1), z(1), z(5)}));
  EXPECT_TRUE(pr.hermitian() && pr.symmetric());
  // A one-sided entry and a zero diagonal: neither, pattern not symmetric.
  const auto pn = properties_of(csr_matrix<z>(2, 2, {0, 1, 1}, {1}, {z(0, 3)}));
  EXPECT_FALSE(pn.pattern_symmetric);
  EXPECT_DOUBLE_EQ(pn.max_asymmetry, 1);
  EXPECT_DOUBLE_EQ(pn.max_non_hermitian, 1);
  EXPECT_EQ(pn.diag_zero, 2);
  EXPECT_NE(describe(pn).find("neither Hermitian nor complex symmetric"), std::string::npos) << describe(pn);
  // The real data's Hermitian matrix, and the same values through a dense check.
  const auto mhd = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/mhd1280b.mtx");
  const auto pm = properties_of(mhd);
  EXPECT_EQ(pm.max_non_hermitian, 0);
  EXPECT_TRUE(pm.looks_spd());
  const auto w = read_matrix_market_csr<z>(std::string(LA_DATA_DIR) + "/w156.mtx");
  const auto pw = properties_of(w);
  const auto d = to_dense(w);
  double herm = 0, sym = 0, big = 0;
  for (index_t i = 0; i < d.rows(); ++i)
    for (index_t j = 0; j < d.cols(); ++j)
      herm = std::max(herm, std::abs(d(i, j) - std::conj(d(j, i)))), sym = std::max(sym, std::abs(d(i, j) - d(j, i))),
      big = std::max(big, std::abs(d(i, j)));
  EXPECT_DOUBLE_EQ(pw.max_non_hermitian, herm / big);
  EXPECT_DOUBLE_EQ(pw.max_asymmetry, sym / big);
}

// A right-hand side near the ends of double's range: every method converges to the
// tolerance of the system as given (the loop scales by a power of two).
TEST(Edges, ExtremeRightHandSideScales) {
  const auto spd = poisson_2d<double>(30);
  const auto ns = convdiff<double>(2, 30, 100);
  for (double s : {1e-160, 1e-170, 1e-300, 1e160, 1e300}) {
    for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres}) {
      const auto& a = m == krylov_method::cg ? spd : ns;
      std::vector<double> ones(a.rows(), 1.0), b(a.rows(), 0.0), x;
      reference::spmv(s, a, ones, 0.0, b);
      const auto r = solve_host(a, b, x, with(m, preconditioner::jacobi));
      ASSERT_EQ(r.status, solve_status::converged) << s << " " << to_string(m) << ": " << r.message;
      EXPECT_GT(r.true_residual, 0) << s;
      EXPECT_LE(r.true_residual, 100 * 1e-8) << s << " " << to_string(m);
      EXPECT_LE(test::true_relres(a, b, x), 100 * 1e-8) << s << " " << to_string(m);
      EXPECT_NEAR(x[7] / s, 1.0, 1e-5) << s << " " << to_string(m);
    }
  }
}

// A tolerance below what the iteration resolves ends in precision_limit (or stagnation),
// never in a breakdown that blames the matrix.
TEST(Edges, ToleranceBelowThePrecisionIsNotABreakdown) {
  const auto a = poisson_2d<double>(20);
  const std::vector<double> b(a.rows(), 1.0);
  for (auto [rtol, atol] : {std::pair{0.0, 0.0}, std::pair{4.9e-324, 0.0}, std::pair{0.0, 1e-300}}) {
    for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres}) {
      std::vector<double> x;
      cg_options o = with(m, preconditioner::jacobi, rtol);
      o.atol = atol;
      const auto r = solve_host(a, b, x, o);
      EXPECT_TRUE(r.status == solve_status::precision_limit || r.status == solve_status::stagnation)
          << to_string(m) << " rtol " << rtol << ": " << to_string(r.status) << " " << r.message;
      EXPECT_EQ(r.message.find("not symmetric positive definite"), std::string::npos) << r.message;
      EXPECT_LE(r.true_residual, 1e-12);
    }
  }
}

TEST(Edges, MessagesSayWhatCouldHelp) {
  const auto a = convdiff<double>(2, 30, 100);
  const std::vector<double> b(a.rows(), 1.0);
  std::vector<double> x;
  cg_options o = with(krylov_method::bicgstab, preconditioner::none);
  o.max_iterations = 3;
  const auto r = solve_host(a, b, x, o);
  EXPECT_EQ(r.status, solve_status::max_iterations);
  EXPECT_NE(r.message.find("{precond}"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("{maxit}"), std::string::npos) << r.message;
  // A NaN in the matrix is named by its row and column.
  const auto& [p, i, v0] = a.arrays();
  std::vector<double> v(v0.begin(), v0.end());
  v[7] = std::numeric_limits<double>::quiet_NaN();
  const csr_matrix<double> nan(a.rows(), a.cols(), p, i, v);
  x.clear();
  const auto rn = solve_host(nan, b, x, with(krylov_method::gmres, preconditioner::none));
  EXPECT_EQ(rn.status, solve_status::non_finite);
  EXPECT_NE(rn.message.find("A(3,2)"), std::string::npos) << rn.message;
  // Jacobi with zero diagonal entries: taken as 1 for the non-symmetric methods, said so.
  const csr_matrix<double> z(3, 3, {0, 2, 4, 6}, {1, 2, 0, 1, 1, 2}, {1, 2, 3, 4, 5, 6});
  x.clear();
  const auto rz = solve_host(z, std::vector<double>{1, 2, 3}, x, with(krylov_method::gmres, preconditioner::jacobi));
  EXPECT_TRUE(rz.converged()) << rz.message;
  EXPECT_NE(rz.precond.detail.find("taken as 1"), std::string::npos) << rz.precond.detail;
}

// ILU(0) of an SPD matrix need not be SPD: CG with it breaks down on bcsstk09 at once, and
// the message says why and what to use instead.
TEST(Edges, Ilu0WithCgOnAnSpdMatrixSaysWhatToUse) {
  const auto a = test::system_matrix("bcsstk09.mtx", test::data_dir());
  std::vector<double> b(a.rows(), 1.0), x;
  const auto r = solve_host(a, b, x, with(krylov_method::cg, preconditioner::ilu0));
  ASSERT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("ILU(0) of a symmetric positive definite matrix need not be SPD"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("ic0 or fsai"), std::string::npos) << r.message;
}

TEST(Edges, BicgstabBreakdownNamesTheQuantity) {
  // A = [[0, 1], [1, 0]], b = (1, 0): rho = r0'r stays positive but r0'A r0 = 0 at once.
  const csr_matrix<double> a(2, 2, {0, 1, 2}, {1, 0}, {1.0, 1.0});
  std::vector<double> x;
  const auto r = solve_host(a, std::vector<double>{1, 0}, x, with(krylov_method::bicgstab, preconditioner::none));
  EXPECT_EQ(r.status, solve_status::breakdown);
  EXPECT_NE(r.message.find("BiCGSTAB"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("gmres"), std::string::npos) << r.message;
  x.clear();
  const auto g = solve_host(a, std::vector<double>{1, 0}, x, with(krylov_method::gmres, preconditioner::none));
  EXPECT_TRUE(g.converged()) << g.message;
}

// A solution outside double's range is never reported converged: the loop solves a scaled
// system, and x scaled back may overflow (inf) or fall below the normal range (digits lost).
TEST(Edges, SolutionsOutsideDoublesRangeAreNotConverged) {
  for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres}) {
    cg_options o = with(m, preconditioner::none);
    o.force = true;
    std::vector<double> x;
    const csr_matrix<double> tiny(1, 1, {0, 1}, {0}, {1e-300});
    const auto r = solve_host(tiny, std::vector<double>{1e300}, x, o);
    EXPECT_EQ(r.status, solve_status::non_finite) << to_string(m) << ": " << r.message;
    EXPECT_NE(r.message.find("does not fit in double"), std::string::npos) << r.message;
    // diag(1e-150 ... 1e150) with b = 1e-300: the large diagonal's x underflow.
    const index_t n = 61;
    std::vector<index_t> p(n + 1), c(n);
    std::vector<double> v(n), b(n, 1e-300);
    for (index_t i = 0; i < n; ++i) p[i + 1] = i + 1, c[i] = i, v[i] = std::pow(10.0, -150.0 + 5.0 * i);
    const csr_matrix<double> d(n, n, p, c, v);
    for (double bi : {1e-300, 1e300}) {
      std::fill(b.begin(), b.end(), bi);
      for (preconditioner pc : {preconditioner::none, preconditioner::jacobi}) {
        x.clear();
        const auto rd = solve_host(d, b, x, with(m, pc));
        bool finite = true;
        for (double xi : x) finite = finite && std::isfinite(xi);
        if (rd.converged()) {
          EXPECT_TRUE(finite) << to_string(m) << " b " << bi;
          EXPECT_LE(test::true_relres(d, b, x), 100 * 1e-8) << to_string(m) << " b " << bi << ": " << rd.message;
        } else if (pc == preconditioner::jacobi) {  // one step solves the scaled system: x is out of range
          EXPECT_TRUE(rd.status == solve_status::non_finite || rd.status == solve_status::precision_limit)
              << to_string(m) << " b " << bi << ": " << to_string(rd.status) << ": " << rd.message;
        }
        EXPECT_FALSE(rd.converged() && !finite);
      }
    }
  }
  // A subnormal but finite b is solved (it used to be refused as "initial residual is not finite").
  const csr_matrix<double> eye(2, 2, {0, 1, 2}, {0, 1}, {1.0, 1.0});
  std::vector<double> x;
  const auto r = solve_host(eye, std::vector<double>{4e-320, 4e-320}, x, with(krylov_method::cg, preconditioner::none));
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(x[0], 4e-320);
}

// GMRES on a singular matrix says it is singular; it does not blame rounding.
TEST(Edges, GmresOnASingularMatrixSaysSo) {
  const csr_matrix<double> zero1(1, 1, {0, 1}, {0}, {0.0});
  const csr_matrix<double> diag(5, 5, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4}, {1, 1, 0, 1, 1});
  const csr_matrix<double> zero5(5, 5, {0, 0, 0, 0, 0, 0}, {}, {});
  for (const auto* a : {&zero1, &diag, &zero5}) {
    for (krylov_method m : {krylov_method::gmres, krylov_method::fgmres}) {
      std::vector<double> x, b(static_cast<std::size_t>(a->rows()), 1.0);
      const auto r = solve_host(*a, b, x, with(m, preconditioner::none));
      EXPECT_EQ(r.status, solve_status::breakdown) << a->rows() << ": " << r.message;
      EXPECT_NE(r.message.find("singular"), std::string::npos) << r.message;
      EXPECT_EQ(r.message.find("rounding"), std::string::npos) << r.message;
      EXPECT_GT(r.residual, 0.1);
    }
  }
}

// An exact solve in one step does not warn that the true residual is far above the recurrence's.
TEST(Edges, AnExactSolveDoesNotWarn) {
  const csr_matrix<double> eye(3, 3, {0, 1, 2, 3}, {0, 1, 2}, {2.0, 2.0, 2.0});
  for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres}) {
    std::vector<double> x;
    const auto r = solve_host(eye, std::vector<double>{1, 3, 7}, x, with(m, preconditioner::none));
    EXPECT_TRUE(r.converged()) << r.message;
    EXPECT_EQ(r.message.find("recurrence residual"), std::string::npos) << to_string(m) << ": " << r.message;
  }
}

// NaN in b: the true residual is not computed, and says so (NaN), not 0.
TEST(Edges, NanRightHandSideHasNoTrueResidual) {
  const auto a = poisson_2d<double>(4);
  std::vector<double> b(a.rows(), 1.0), x;
  b[3] = std::numeric_limits<double>::quiet_NaN();
  const auto r = solve_host(a, b, x, with(krylov_method::automatic, preconditioner::automatic));
  EXPECT_EQ(r.status, solve_status::non_finite);
  EXPECT_TRUE(std::isnan(r.true_residual)) << r.true_residual;
}

// auto's BiCGSTAB on a skew-symmetric matrix (r0'A r0 = 0 to rounding): GMRES takes over and
// solves it, and the choice says so without contradicting itself.
TEST(Method, AutoContinuesWithGmresWhereBicgstabFails) {
  const index_t n = 40;  // tridiagonal, +1 above and -1 below the (zero) diagonal: skew, non-singular
  std::vector<index_t> p{0}, c;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) c.push_back(i - 1), v.push_back(-1);
    if (i + 1 < n) c.push_back(i + 1), v.push_back(1);
    p.push_back(static_cast<index_t>(c.size()));
  }
  const csr_matrix<double> a(n, n, p, c, v);
  std::vector<double> b(n, 0.0), x;
  reference::spmv(1.0, a, std::vector<double>(n, 1.0), 0.0, b);
  const auto r = solve_host(a, b, x, with(krylov_method::automatic, preconditioner::none));
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(r.solver, krylov_method::gmres);
  EXPECT_NE(r.solver_choice.find("so gmres(30) continued"), std::string::npos) << r.solver_choice;
  EXPECT_NE(r.message.find("bicgstab"), std::string::npos) << r.message;
  EXPECT_LE(test::true_relres(a, b, x), 100 * 1e-8);
}

// Stagnation and divergence name what may help.
TEST(Edges, StagnationNamesWhatMayHelp) {
  const auto a = convdiff<double>(2, 30, 100);
  const std::vector<double> b(a.rows(), 1.0);
  std::vector<double> x;
  cg_options o = with(krylov_method::bicgstab, preconditioner::none);
  o.stagnation_window = 2;
  o.rtol = 1e-15;
  const auto r = solve_host(a, b, x, o);
  ASSERT_EQ(r.status, solve_status::stagnation) << r.message;
  EXPECT_NE(r.message.find("what may help"), std::string::npos) << r.message;
}

// The host's property scan (binary searches for the mirrors, threads past 1M entries) agrees
// with a plain dense comparison on random matrices, symmetric and not.
TEST(Method, PropertiesAgreeWithADenseCheck) {
  for (int seed = 0; seed < 6; ++seed) {
    const index_t n = seed == 0 ? 1 : 31 + 17 * seed;
    std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
    std::uint64_t state = 12345 + seed;
    auto rnd = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 11; };
    for (int k = 0; k < 4 * n; ++k) {
      const index_t i = rnd() % n, j = rnd() % n;
      const double val = double(rnd() % 1000) / 100 - 5;
      dense[i * n + j] = val;
      if (seed % 2 == 0) dense[j * n + i] = val;  // even seeds: symmetric
    }
    std::vector<index_t> p{0}, c;
    std::vector<double> v;
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j)
        if (dense[i * n + j] != 0) c.push_back(j), v.push_back(dense[i * n + j]);
      p.push_back(static_cast<index_t>(c.size()));
    }
    const csr_matrix<double> a(n, n, p, c, v);
    double diff = 0, big = 0;
    bool pattern = true;
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) {
        diff = std::max(diff, std::abs(dense[i * n + j] - dense[j * n + i]));
        big = std::max(big, std::abs(dense[i * n + j]));
        pattern = pattern && ((dense[i * n + j] != 0) == (dense[j * n + i] != 0));
      }
    const auto q = properties_of(a);
    EXPECT_DOUBLE_EQ(q.max_asymmetry, big > 0 ? diff / big : 0) << seed;
    EXPECT_EQ(q.pattern_symmetric, pattern) << seed;
    EXPECT_EQ(q.max_abs, big);
    if (seed % 2 == 0) EXPECT_TRUE(q.symmetric());
    const auto choice = properties_of(a, false, true);  // for the choice: may stop early
    EXPECT_EQ(choice.symmetric(), q.symmetric()) << seed;
    EXPECT_EQ(choice.pattern_symmetric && choice.max_asymmetry <= 0.01, q.pattern_symmetric && q.max_asymmetry <= 0.01);
    EXPECT_LE(choice.max_asymmetry, q.max_asymmetry);
    EXPECT_EQ(choice.diag_positive, q.diag_positive);
    const auto known = properties_of(a, true);  // told symmetric: the diagonal alone
    EXPECT_EQ(known.diag_positive, q.diag_positive);
    EXPECT_EQ(known.dominant_rows, q.dominant_rows);
  }
}

// Where auto preconditions and where it runs: the host's own thresholds, and small systems on
// the host even when a GPU is present.
TEST(Method, HostAutoRuleAndDeviceChoice) {
  EXPECT_EQ(select_preconditioner(128 * 128, 5 * 128 * 128, false), preconditioner::amg);
  EXPECT_EQ(select_preconditioner(128 * 128, 5 * 128 * 128, true), preconditioner::fsai);
  EXPECT_EQ(select_preconditioner(1922, 30336, false), preconditioner::fsai);  // bcsstk26
  EXPECT_EQ(select_preconditioner(300000, 7 * 300000, false), preconditioner::amg);
  const auto a = poisson_2d<double>(64);
  std::vector<double> b(a.rows(), 1.0), x;
  const auto r = solve_host(a, b, x, cg_options{});  // the default preconditioner: auto
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(r.precond.kind, preconditioner::amg);
  EXPECT_TRUE(choose_device(237, 2000).host);
  EXPECT_FALSE(choose_device(1000000, 5000000).host);
  EXPECT_NE(choose_device(237, 2000).why.find("start-up"), std::string::npos);
}

// An empty row is named as such, not as an unmatched column, when ILU(0) is asked for.
TEST(Edges, AnEmptyRowIsNamed) {
  const csr_matrix<double> a(3, 3, {0, 2, 2, 4}, {0, 1, 1, 2}, {2, 1, 1, 3});  // row 2 empty
  std::vector<double> x;
  const auto r = solve_host(a, std::vector<double>{1, 1, 1}, x, with(krylov_method::gmres, preconditioner::ilu0));
  EXPECT_EQ(r.status, solve_status::breakdown) << r.message;
  EXPECT_NE(r.message.find("row 2 of the matrix is empty"), std::string::npos) << r.message;
}

// auto's CG on a symmetric matrix with a positive diagonal that is not positive definite
// breaks down (p'Ap < 0); GMRES takes over from the initial guess and solves it.
TEST(Method, AutoContinuesWithGmresWhereCgBreaksDown) {
  const csr_matrix<double> a(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 2, 1});  // eigenvalues 3 and -1
  for (preconditioner pc : {preconditioner::automatic, preconditioner::none}) {
    std::vector<double> x;
    const auto r = solve_host(a, std::vector<double>{1, 0}, x, with(krylov_method::automatic, pc));
    EXPECT_TRUE(r.converged()) << r.message;
    EXPECT_EQ(r.solver, krylov_method::gmres);
    EXPECT_NE(r.solver_choice.find("cg broke down (A is not positive definite), so gmres(30) continued"),
              std::string::npos) << r.solver_choice;
    EXPECT_NEAR(x[0], -1.0 / 3, 1e-8);
    EXPECT_NEAR(x[1], 2.0 / 3, 1e-8);
  }
  // Asked for, CG's breakdown stays CG's.
  std::vector<double> x;
  const auto c = solve_host(a, std::vector<double>{1, 0}, x, with(krylov_method::cg, preconditioner::none));
  EXPECT_EQ(c.status, solve_status::breakdown);
}

// The registries' names are the enums' (to_string), every enum value has an entry, and the
// method= and precond= options take exactly the registries' names, each setting its kind.
TEST(Registry, EntriesNameTheirKindsAndTheOptionsTakeThem) {
  for (const method_entry& e : methods()) EXPECT_EQ(e.name, to_string(e.kind));
  for (const preconditioner_entry& e : preconditioners()) EXPECT_EQ(e.name, to_string(e.kind));
  for (krylov_method m : {krylov_method::automatic, krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres,
                          krylov_method::fgmres})
    EXPECT_NE(find_method(to_string(m)), nullptr) << to_string(m);
  for (preconditioner p : {preconditioner::none, preconditioner::jacobi, preconditioner::block_jacobi, preconditioner::fsai,
                           preconditioner::ic0, preconditioner::ilu0, preconditioner::amg, preconditioner::automatic})
    EXPECT_NE(find_preconditioner(to_string(p)), nullptr) << to_string(p);
  const option_spec& method = *find_option("method");
  const option_spec& precond = *find_option("precond");
  ASSERT_EQ(choices_of(method).size(), methods().size());
  ASSERT_EQ(choices_of(precond).size(), preconditioners().size());
  for (const std::string& c : choices_of(precond)) {
    cg_options o;
    option_value v;
    v.text = c;
    precond.set(o, v);
    EXPECT_EQ(to_string(o.precond), c);
  }
  for (const std::string& c : choices_of(method)) {
    cg_options o;
    option_value v;
    v.text = c;
    method.set(o, v);
    EXPECT_EQ(to_string(o.method), c);
  }
  EXPECT_EQ(find_option("no-such-option"), nullptr);
}

}  // namespace
}  // namespace la
