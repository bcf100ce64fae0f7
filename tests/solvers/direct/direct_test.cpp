// The dense factorizations on the host (solvers/direct/dense_host.hpp) against Eigen's, on
// random matrices of awkward sizes, singular and indefinite ones, and the condition estimate
// against the true ||A||_1 ||A^-1||_1; then the direct method through solve_host on real
// systems (the ones the Krylov methods fail on among them), a singular one named by column,
// and the same on the GPU.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <random>
#include <vector>

#include <la/solvers/device_solve.hpp>
#include <la/solvers/direct/dense_host.hpp>
#include <la/solvers/method.hpp>

#include "solvers/eigen_util.hpp"
#include "test_util.hpp"

using namespace la;

namespace {
using Mat = Eigen::MatrixXd;

using test::from_eigen;
using test::random_matrix;
/// b = A * ones, the solution known.
std::vector<double> times_ones(const csr_matrix<double>& a) {
  std::vector<double> ones(static_cast<std::size_t>(a.cols()), 1.0), b(ones.size());
  reference::spmv(1.0, a, ones, 0.0, b);
  return b;
}
/// auto's options at tolerance rtol.
cg_options automatic(double rtol) {
  cg_options o;
  o.method = krylov_method::automatic;
  o.rtol = rtol;
  return o;
}
/// solve_device with o: converged, by the direct method, to relres 1e-10.
void expect_solved_directly_on_the_gpu(const csr_matrix<double>& a, const std::vector<double>& b, const cg_options& o,
                                       const std::string& name) {
  context ctx;
  device_vector<double> dx;
  const solve_result g = solve_device(ctx, to_device(ctx, a), to_device(ctx, b), dx, o);
  EXPECT_EQ(g.status, solve_status::converged) << name << ": " << g.message;
  EXPECT_EQ(g.solver, krylov_method::direct) << name << ": " << g.solver_choice;
  EXPECT_LT(test::true_relres(a, b, to_host(ctx, dx)), 1e-10) << name;
}
/// The direct method on la's own factorizations (the host fronts, the GPU's oracle; the host's
/// default, SuiteSparse where built, is direct_model_test's).
cg_options direct() {
  cg_options o;
  o.method = krylov_method::direct;
  o.rtol = 1e-12;
  o.direct.host_factor = host_factorization::la;
  return o;
}
}  // namespace

TEST(DenseLu, SolvesAsEigenOnAwkwardSizes) {
  std::mt19937 g(5);
  for (int n : {1, 31, 33, 200}) {
    const Mat a = random_matrix(n, g);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    dense_matrix<double> f = from_eigen(a);
    std::vector<index_t> piv;
    ASSERT_TRUE(lu_factor(f, piv).ok()) << n;
    // Two right-hand sides at once: b and 2b.
    std::vector<double> x(2 * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[i] = b(i), x[n + i] = 2 * b(i);
    lu_solve(f, piv, x.data(), 2);
    const Eigen::VectorXd want = a.partialPivLu().solve(b);
    const double cond = a.norm() * a.inverse().norm();
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(x[i], want(i), 1e-14 * cond * (1 + std::abs(want(i)))) << n << " row " << i;
      EXPECT_NEAR(x[n + i], 2 * want(i), 2e-14 * cond * (1 + std::abs(want(i)))) << n << " row " << i;
    }
    // The transposed solve.
    std::vector<double> y(b.data(), b.data() + n);
    lu_transpose_solve(f, piv, y.data());
    const Eigen::VectorXd want_t = a.transpose().partialPivLu().solve(b);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(y[i], want_t(i), 1e-14 * cond * (1 + std::abs(want_t(i)))) << n;
  }
}

TEST(DenseCholesky, SolvesAsEigenAndStopsWhereNotPositive) {
  std::mt19937 g(6);
  for (int n : {1, 31, 33, 200}) {
    const Mat r = random_matrix(n, g);
    const Mat a = r * r.transpose() + n * Mat::Identity(n, n);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    dense_matrix<double> f = from_eigen(a);
    ASSERT_TRUE(cholesky_factor(f).ok()) << n;
    std::vector<double> x(b.data(), b.data() + n);
    cholesky_solve(f, x.data());
    const Eigen::VectorXd want = a.llt().solve(b);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(x[i], want(i), 1e-12 * (1 + std::abs(want(i)))) << n;
  }
  // Indefinite: diag(1, 1, -1, 1) stops at column 3.
  dense_matrix<double> d(4, 4);
  for (index_t i = 0; i < 4; ++i) d(i, i) = i == 2 ? -1 : 1;
  EXPECT_EQ(cholesky_factor(d).bad_column, 3);
}

TEST(DenseLu, NamesTheColumnOfASingularMatrix) {
  // Column 3 is twice column 1: after two eliminations column 3 has nothing left.
  std::mt19937 g(7);
  Mat a = random_matrix(5, g);
  a.col(2) = 2 * a.col(0);
  dense_matrix<double> f = from_eigen(a);
  std::vector<index_t> piv;
  const dense_factor_status s = lu_factor(f, piv);
  // Rounding may leave a pivot of rounding size there instead of an exact zero.
  if (s.ok()) EXPECT_LT(std::abs(f(2, 2)), 1e-13 * a.cwiseAbs().maxCoeff());
  else EXPECT_EQ(s.bad_column, 3);
  dense_matrix<double> z(3, 3);
  z(0, 0) = 1, z(1, 0) = 2, z(2, 2) = 3;  // column 2 is zero
  EXPECT_EQ(lu_factor(z, piv).bad_column, 2);
  dense_matrix<double> empty(0, 0);
  EXPECT_TRUE(lu_factor(empty, piv).ok());
}

TEST(DenseLu, ConditionEstimateIsWithinAFactorThreeOfTheTruth) {
  std::mt19937 g(8);
  std::vector<Mat> cases{random_matrix(31, g), random_matrix(100, g)};
  Mat h(8, 8);  // Hilbert: condition about 3e10
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) h(i, j) = 1.0 / (i + j + 1);
  cases.push_back(h);
  for (const Mat& a : cases) {
    const int n = static_cast<int>(a.rows());
    dense_matrix<double> f = from_eigen(a);
    std::vector<index_t> piv;
    ASSERT_TRUE(lu_factor(f, piv).ok());
    const double est = inverse_norm1_estimate<double>(
        n, [&](double* v) { lu_solve(f, piv, v); }, [&](double* v) { lu_transpose_solve(f, piv, v); });
    const double truth = a.inverse().cwiseAbs().colwise().sum().maxCoeff();
    EXPECT_LE(est, truth * (1 + 1e-6)) << n;  // a lower bound
    EXPECT_GE(est, truth / 3) << n;
  }
}

// The method through solve_host: real systems (rajat19 and west2021, where the Krylov
// methods fail; an SPD one without pivoting), to a true residual of 1e-12 or better: double
// through the multifrontal LU on the host's threads, float through the up-looking oracles.
TEST(DirectMethod, SolvesRealSystemsOnTheHost) {
  for (const char* name : {"west0479.mtx", "impcol_a.mtx", "rajat19.mtx", "west2021.mtx", "bcsstk09.mtx"}) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    const std::vector<double> b = times_ones(a);
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, direct());
    EXPECT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct);
    EXPECT_LT(test::true_relres(a, b, x), 1e-12) << name;
    EXPECT_NE(r.message.find("backward error"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(std::string(name) == "bcsstk09.mtx" ? "multifrontal L D L^T (no pivoting"
                                                                  : "multifrontal LU (static pivoting"),
              std::string::npos)
        << r.message;
  }
  // The sparse LU's condition estimate (the fronts' transposed solves) against the truth.
  {
    const csr_matrix<double> a = test::system_matrix("west0479.mtx", test::data_dir());
    std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0), x;
    cg_options o = direct();
    o.direct.condition = condition_estimate::yes;  // (auto skips it where it costs more than a tenth of the setup)
    const solve_result r = solve_host(a, b, x, o);
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(a.rows(), a.cols());
    for (index_t i = 0; i < a.rows(); ++i)
      for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) d(i, a.col_idx()[p]) = a.values()[p];
    const double truth = d.cwiseAbs().colwise().sum().maxCoeff() * d.inverse().cwiseAbs().colwise().sum().maxCoeff();
    const auto at = r.message.find("condition estimate ");
    ASSERT_NE(at, std::string::npos) << r.message;
    const double est = std::stod(r.message.substr(at + 19));
    EXPECT_LE(est, truth * 1.01) << r.message;
    EXPECT_GE(est, truth / 3) << r.message;
  }
  // float: the up-looking sparse Cholesky of an SPD matrix.
  const csr_matrix<float> pf = test::poisson_2d<float>(30);
  std::vector<float> bf(static_cast<std::size_t>(pf.rows()), 1.0f), xf;
  cg_options o = direct();
  o.rtol = 1e-4;
  const solve_result rf = solve_host(pf, bf, xf, o);
  EXPECT_EQ(rf.status, solve_status::converged) << rf.message;
  EXPECT_NE(rf.message.find("sparse Cholesky"), std::string::npos) << rf.message;
}

TEST(DirectMethod, SaysWhatItCannotSolve) {
  // ca-GrQc is structurally singular: a breakdown naming the column.
  const csr_matrix<double> g = test::system_matrix("ca-GrQc.mtx", test::data_dir());
  std::vector<double> x;
  const solve_result s = solve_host(g, std::vector<double>(static_cast<std::size_t>(g.rows()), 1.0), x, direct());
  EXPECT_EQ(s.status, solve_status::breakdown);
  EXPECT_NE(s.message.find("A is singular"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("column"), std::string::npos) << s.message;
  // NaN in b; a zero b (x = 0); float.
  const csr_matrix<double> a = test::poisson_2d<double>(6);
  std::vector<double> b(36, 1.0);
  b[7] = std::nan("");
  x.clear();
  EXPECT_EQ(solve_host(a, b, x, direct()).status, solve_status::non_finite);
  x.clear();
  const solve_result z = solve_host(a, std::vector<double>(36, 0.0), x, direct());
  EXPECT_EQ(z.status, solve_status::converged) << z.message;
  for (double v : x) EXPECT_EQ(v, 0.0);
  std::vector<float> xf;
  cg_options of = direct();
  of.rtol = 1e-6;
  const solve_result f = solve_host(test::poisson_2d<float>(6), std::vector<float>(36, 1.0f), xf, of);
  EXPECT_EQ(f.status, solve_status::converged) << f.message;
}

// The method on the GPU (la::dense_solver behind it): the same real systems, the singular one
// named by column, NaN refused, and the report's words.
TEST(DirectMethod, SolvesRealSystemsOnTheGpu) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  // Under a sanitizer the smaller systems (the same kernels); ca-GrQc (5,242 rows) is left to the plain run.
  const std::vector<const char*> names = test::under_sanitizer()
                                             ? std::vector<const char*>{"west0479.mtx", "bcsstk09.mtx"}
                                             : std::vector<const char*>{"west0479.mtx", "impcol_a.mtx", "rajat19.mtx",
                                                                        "west2021.mtx", "bcsstk09.mtx"};
  for (const char* name : names) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    const std::vector<double> b = times_ones(a);
    device_vector<double> dx;
    const solve_result r = solve_device(ctx, to_device(ctx, a), to_device(ctx, b), dx, direct());
    EXPECT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct);
    EXPECT_LT(test::true_relres(a, b, to_host(ctx, dx)), 1e-12) << name;
    EXPECT_NE(r.message.find("backward error"), std::string::npos) << r.message;
    // The sparse direct solver on the GPU (double): the unpivoted path for the SPD one.
    EXPECT_NE(r.method.find("direct, gpu, sparse"), std::string::npos) << r.method;
    EXPECT_NE(r.message.find(std::string(name) == "bcsstk09.mtx" ? "no pivoting" : "static pivoting"), std::string::npos)
        << r.message;
  }
  // float: A's dense form (the sparse solver is double's).
  {
    const csr_matrix<float> af = test::poisson_2d<float>(20);
    std::vector<float> ones(static_cast<std::size_t>(af.cols()), 1.0f), b(ones.size());
    reference::spmv(1.0f, af, ones, 0.0f, b);
    device_vector<float> dx;
    cg_options o = direct();
    o.rtol = 1e-4;
    const solve_result r = solve_device(ctx, to_device(ctx, af), to_device(ctx, b), dx, o);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    EXPECT_NE(r.method.find("direct, gpu, dense"), std::string::npos) << r.method;
  }
  if (test::under_sanitizer()) return;
  const csr_matrix<double> g = test::system_matrix("ca-GrQc.mtx", test::data_dir());
  device_vector<double> dx;
  const solve_result s = solve_device(ctx, to_device(ctx, g), to_device(ctx, std::vector<double>(static_cast<std::size_t>(g.rows()), 1.0)),
                                      dx, direct());
  EXPECT_EQ(s.status, solve_status::breakdown) << s.message;
  EXPECT_NE(s.message.find("A is singular"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("the sparse LU could not start"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("column"), std::string::npos) << s.message;
  const csr_matrix<double> a = test::poisson_2d<double>(6);
  std::vector<double> b(36, 1.0);
  b[7] = std::nan("");
  device_vector<double> dy;
  EXPECT_EQ(solve_device(ctx, to_device(ctx, a), to_device(ctx, b), dy, direct()).status, solve_status::non_finite);
}

// auto on a small system that does not look SPD: the direct method first (host and GPU);
// where it does not solve A (singular), the Krylov methods, saying why; an SPD A stays with
// CG; --auto-direct-rows 0 turns it off, and a float A is not taken.
TEST(DirectMethod, AutoSolvesSmallNonSpdSystemsDirectlyFirst) {
  for (const char* name : {"rajat19.mtx", "west0479.mtx"}) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    const std::vector<double> b = times_ones(a);
    const cg_options o = automatic(1e-10);
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct) << name << ": " << r.solver_choice;
    EXPECT_NE(r.solver_choice.find("(at most 20000, {auto-direct-rows}): the direct method first"), std::string::npos)
        << r.solver_choice;
    cg_options d = direct();
    d.direct.host_factor = host_factorization::automatic;  // auto's direct method is the default one
    d.rtol = o.rtol;
    EXPECT_EQ(r.iterations, solve_host(a, b, x, d).iterations) << name;  // the direct method's own run
    EXPECT_LT(test::true_relres(a, b, x), 1e-10) << name;
    cg_options off = o;
    off.auto_direct_rows = 0;
    std::vector<double> y;
    EXPECT_NE(solve_host(a, b, y, off).solver_choice.find("not SPD: bicgstab"), std::string::npos) << name;
    cg_options below = o;
    below.auto_direct_rows = a.rows() - 1;
    EXPECT_EQ(solve_host(a, b, y, below).solver_choice.find("the direct method first"), std::string::npos) << name;
    const csr_matrix<float> af(a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                               std::vector<float>(a.values().begin(), a.values().end()));
    std::vector<float> bf(b.begin(), b.end()), xf;
    EXPECT_EQ(solve_host(af, bf, xf, o).solver_choice.find("the direct method first"), std::string::npos) << name << " (float)";
    if (!cuda_available()) continue;
    expect_solved_directly_on_the_gpu(a, b, o, name);
  }
  // Singular (an empty column): the direct method says so, then the Krylov methods run (and
  // stop short on this inconsistent system), the choice saying both.
  const csr_matrix<double> s(3, 3, std::vector<std::int32_t>{0, 1, 3, 4}, std::vector<index_t>{0, 0, 1, 1},
                             std::vector<double>{2, 1, 3, 1});
  std::vector<double> bs{1, 2, 3}, xs;
  const solve_result rs = solve_host(s, bs, xs, automatic(1e-10));
  EXPECT_NE(rs.solver, krylov_method::direct) << rs.solver_choice;
  EXPECT_NE(rs.solver_choice.find("the direct method, tried first"), std::string::npos) << rs.solver_choice;
  EXPECT_NE(rs.solver_choice.find("did not solve A (breakdown"), std::string::npos) << rs.solver_choice;
  // SPD, its factorization not predicted small: CG.
  const csr_matrix<double> p = test::poisson_2d<double>(60);
  std::vector<double> bp(3600, 1.0), xp;
  EXPECT_EQ(solve_host(p, bp, xp, automatic(1e-8)).solver, krylov_method::cg);
}

// auto on a small SPD system: the sparse analysis's predicted multiply-adds decide. bcsstk01
// (6e3) and a 20 x 20 grid go direct first (host and GPU), gr_30_30 (4e5, above 2e5) CG;
// --auto-direct-flops 0 turns it off, and a threshold just under the prediction leaves CG.
TEST(DirectMethod, AutoSolvesSmallSpdSystemsDirectlyWhereTheAnalysisPredictsACheapFactor) {
  const csr_matrix<double> grid = test::poisson_2d<double>(20);
  const std::vector<std::pair<std::string, csr_matrix<double>>> cheap = {
      {"bcsstk01.mtx", test::system_matrix("bcsstk01.mtx", test::data_dir())}, {"poisson2d:20", grid}};
  for (const auto& [name, a] : cheap) {
    const std::vector<double> b = times_ones(a);
    const cg_options o = automatic(1e-10);
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct) << name << ": " << r.solver_choice;
    EXPECT_NE(r.solver_choice.find("{auto-direct-flops}): the direct method first"), std::string::npos) << r.solver_choice;
    EXPECT_LT(test::true_relres(a, b, x), 1e-10) << name;
    const double flops = analyze_pattern(a).factor_flops;
    EXPECT_LE(flops, o.auto_direct_flops) << name;
    cg_options off = o, under = o;
    off.auto_direct_flops = 0;
    under.auto_direct_flops = 0.99 * flops;
    std::vector<double> y;
    EXPECT_EQ(solve_host(a, b, y, off).solver, krylov_method::cg) << name;
    EXPECT_EQ(solve_host(a, b, y, under).solver, krylov_method::cg) << name;
    if (!cuda_available()) continue;
    expect_solved_directly_on_the_gpu(a, b, o, name);
  }
  const csr_matrix<double> gr = test::system_matrix("gr_30_30.mtx", test::data_dir());
  EXPECT_GT(analyze_pattern(gr).factor_flops, automatic(1e-8).auto_direct_flops);
  std::vector<double> x;
  EXPECT_EQ(solve_host(gr, times_ones(gr), x, automatic(1e-8)).solver, krylov_method::cg);
}

// auto: where its Krylov methods stop short on a system whose factor fits (the direct method
// first off), the direct method solves it, and the report says what happened (host and GPU).
TEST(DirectMethod, AutoSolvesDirectlyWhereItsKrylovMethodsStopShort) {
  for (const char* name : {"rajat19.mtx", "west2021.mtx"}) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    const std::vector<double> b = times_ones(a);
    cg_options o = automatic(1e-10);
    o.auto_direct_rows = 0;
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << name << ": " << r.message;
    EXPECT_EQ(r.solver, krylov_method::direct) << name << ": " << r.solver_choice;
    EXPECT_NE(r.solver_choice.find("so auto solved it directly"), std::string::npos) << r.solver_choice;
    EXPECT_LT(test::true_relres(a, b, x), 1e-10) << name;
    // A caller's own iteration limit is respected: no direct solve behind it.
    cg_options capped = o;
    capped.max_iterations = 5;
    std::vector<double> y;
    EXPECT_NE(solve_host(a, b, y, capped).solver, krylov_method::direct) << name;
    if (!cuda_available() || (test::under_sanitizer() && std::string(name) != "rajat19.mtx")) continue;
    expect_solved_directly_on_the_gpu(a, b, o, name);
  }
}

// Past the dense limits (16,384 rows on the host): ten copies of west2021 on the diagonal
// (20,210 rows), where auto's Krylov methods stop short as on one copy; double's sparse factor
// fits, so auto solves it directly and says so. Where the factor does not fit (a memory limit
// below it), the Krylov result stays, with the reason.
TEST(DirectMethod, AutoSolvesDirectlyPastTheDenseLimitThroughTheSparseFactor) {
  const csr_matrix<double> w = test::system_matrix("west2021.mtx", test::data_dir());
  const index_t copies = 10, n = w.rows() * copies;
  std::vector<std::int32_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  for (index_t c = 0; c < copies; ++c)
    for (index_t i = 0; i < w.rows(); ++i) {
      for (auto p = w.row_ptr()[i]; p < w.row_ptr()[i + 1]; ++p) idx.push_back(w.col_idx()[p] + c * w.rows()), val.push_back(w.values()[p]);
      ptr.push_back(static_cast<std::int32_t>(idx.size()));
    }
  const csr_matrix<double> a(n, n, std::move(ptr), std::move(idx), std::move(val));
  const std::vector<double> b = times_ones(a);
  const cg_options o = automatic(1e-10);
  std::vector<double> x;
  const solve_result r = solve_host(a, b, x, o);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_EQ(r.solver, krylov_method::direct) << r.solver_choice;
  EXPECT_NE(r.solver_choice.find("its sparse factor fits"), std::string::npos) << r.solver_choice;
  EXPECT_LT(test::true_relres(a, b, x), 1e-10);
  // With a dense-ish block beside them (3,000 rows, 10 random entries a row on a dominant
  // diagonal: its LU fills about half its square) and a host memory limit between what the
  // Krylov methods need (about 12 MB) and the factor's fronts: the Krylov result stays, and why.
  std::vector<std::int32_t> ptr2(a.row_ptr().begin(), a.row_ptr().end());
  std::vector<index_t> idx2(a.col_idx().begin(), a.col_idx().end());
  std::vector<double> val2(a.values().begin(), a.values().end());
  const index_t m = 3000;
  std::mt19937 g(8);
  std::uniform_int_distribution<index_t> pick(0, m - 1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (index_t i = 0; i < m; ++i) {
    std::vector<index_t> cols{i};
    for (int e = 0; e < 10; ++e) cols.push_back(pick(g));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (index_t c : cols) idx2.push_back(n + c), val2.push_back(c == i ? 20.0 : u(g));
    ptr2.push_back(static_cast<std::int32_t>(idx2.size()));
  }
  const csr_matrix<double> big(n + m, n + m, std::move(ptr2), std::move(idx2), std::move(val2));
  const std::vector<double> b2 = times_ones(big);
  setenv("LA_HOST_MEMORY_LIMIT", "30000000", 1);
  std::vector<double> y;
  const solve_result k = solve_host(big, b2, y, o);
  unsetenv("LA_HOST_MEMORY_LIMIT");
  EXPECT_NE(k.solver, krylov_method::direct) << k.solver_choice;
  EXPECT_NE(k.solver_choice.find("does not fit"), std::string::npos) << k.solver_choice;
  EXPECT_FALSE(k.converged()) << k.message;
}
