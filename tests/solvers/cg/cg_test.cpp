// Host CG / Jacobi-PCG against Eigen's ConjugateGradient on the bundled SuiteSparse systems
// and a 2D Poisson matrix, plus every non-converging status.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <limits>

#include <la/formats/matrix_market.hpp>
#include <la/solvers/host_backend.hpp>
#include "solvers/eigen_cg.hpp"
#include "test_util.hpp"

// Counts every allocation of the process, for the loop test below.
std::atomic<long> test_allocations{0};
void* operator new(std::size_t n) {
  ++test_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace la {
namespace {
using test::eigen_cg;
using test::eigen_result;
using test::rel_diff;

struct system_case {
  std::string name;
  preconditioner pc;
};

class AgainstEigen : public ::testing::TestWithParam<system_case> {};

TEST_P(AgainstEigen, SameSolutionAndIterationCount) {
  const auto& c = GetParam();
  const csr_matrix<double> a = test::system_matrix(c.name, test::data_dir());
  std::mt19937 g(1);
  const std::vector<double> b = test::random_vector<double>(a.rows(), g);
  const double tol = 1e-8;
  const cg_options opt = test::eigen_comparison_options(tol, c.pc, a.rows());
  std::vector<double> x;
  const solve_result r = cg_host(a, b, x, opt);
  const eigen_result e = c.pc == preconditioner::jacobi ? eigen_cg<Eigen::DiagonalPreconditioner<double>>(a, b, tol, opt.max_iterations)
                                                        : eigen_cg<Eigen::IdentityPreconditioner>(a, b, tol, opt.max_iterations);
  ASSERT_TRUE(e.converged);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(r.residual, tol);
  // The recurrence residual drifts from the true one on ill-conditioned systems; allow 100x.
  EXPECT_LE(r.true_residual, 100 * tol);
  // Iteration counts within 10% (rounding differs: la accumulates dots in long double).
  EXPECT_LE(std::abs(r.iterations - e.iterations), std::max(1.0, 0.1 * e.iterations))
      << "la " << r.iterations << ", Eigen " << e.iterations;
  // Both satisfy ||b - Ax|| <= tol ||b||; their difference is bounded by cond(A) times that.
  // We ask for agreement to 1e-4 relative, which holds for these systems' conditioning.
  EXPECT_LE(rel_diff(x, e.x), 1e-4) << "la " << r.iterations << " its, Eigen " << e.iterations;
}

INSTANTIATE_TEST_SUITE_P(
    Systems, AgainstEigen,
    ::testing::Values(system_case{"poisson2d:40", preconditioner::none}, system_case{"poisson2d:40", preconditioner::jacobi},
                      system_case{"gr_30_30.mtx", preconditioner::none}, system_case{"gr_30_30.mtx", preconditioner::jacobi},
                      system_case{"bcsstk01.mtx", preconditioner::none}, system_case{"bcsstk01.mtx", preconditioner::jacobi},
                      system_case{"bcsstk09.mtx", preconditioner::none}, system_case{"bcsstk09.mtx", preconditioner::jacobi},
                      system_case{"1138_bus.mtx", preconditioner::jacobi},
                      system_case{"Trefethen_2000.mtx", preconditioner::none},
                      system_case{"Trefethen_2000.mtx", preconditioner::jacobi}),
    [](const auto& info) { return test::test_name(info.param.name + "_" + to_string(info.param.pc)); });

TEST(Cg, EveryFormatGivesTheSameIterations) {
  const auto a = test::poisson_2d<double>(20);
  std::vector<double> b(a.rows(), 1.0);
  std::vector<double> x_csr;
  const auto r = cg_host(a, b, x_csr);
  ASSERT_TRUE(r.converged());
  auto check = [&](const auto& m) {
    std::vector<double> x;
    const auto s = cg_host(m, b, x);
    EXPECT_EQ(s.status, solve_status::converged);
    EXPECT_EQ(s.iterations, r.iterations) << typeid(m).name();
    EXPECT_LE(rel_diff(x, x_csr), 1e-12) << typeid(m).name();
  };
  check(to_coo(a));
  check(to_csc(a));
  check(to_ell(a));
  check(to_jds(a));
  check(to_hyb(a));
  check(to_hyb(a, 2));  // most entries in the COO part
  check(to_sell(a));
  check(to_sell(a, {4, 16}));
  check(to_dense(a));
  // The 64-bit offset path (forced): the same iterates.
  check(to_csr<std::int64_t>(a));
  check(to_csc<std::int64_t>(a));
  check(to_jds<std::int64_t>(a));
  check(to_sell<std::int64_t>(a, {4, 16}));
}

TEST(Cg, CountsStayRightPastTwoToTheThirtyOne) {
  // The default limit 2n for n near the 32-bit index limit: no int overflow.
  EXPECT_EQ(default_max_iterations(1'500'000'000), 3'000'000'000LL);
  EXPECT_EQ(default_max_iterations(max_index), 2 * max_index);
  static_assert(std::is_same_v<decltype(cg_options{}.max_iterations), std::int64_t>);
  static_assert(std::is_same_v<decltype(solve_result{}.iterations), std::int64_t>);
  // A limit above 2^31 is honored (the loop counter is 64-bit): a converging solve stops early.
  const auto a = test::poisson_2d<double>(4);
  std::vector<double> b(a.rows(), 1.0), x;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.max_iterations = std::int64_t(1) << 33;
  EXPECT_TRUE(cg_host(a, b, x, opt).converged());
}

TEST(Cg, NonFiniteTolerancesAreInvalidInput) {
  const auto a = test::poisson_2d<double>(4);
  std::vector<double> b(a.rows(), 1.0);
  for (double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), -1.0}) {
    for (bool absolute : {false, true}) {
      cg_options opt;
      opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
      (absolute ? opt.atol : opt.rtol) = bad;
      std::vector<double> x;
      const auto r = cg_host(a, b, x, opt);
      EXPECT_EQ(r.status, solve_status::invalid_input) << bad;
      EXPECT_NE(r.message.find(absolute ? "atol" : "rtol"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("finite and non-negative"), std::string::npos) << r.message;
    }
  }
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.max_iterations = -2;
  std::vector<double> x;
  EXPECT_EQ(cg_host(a, b, x, opt).status, solve_status::invalid_input);
}

TEST(Cg, HostBackendDoesNotCopyOrAllocateInTheLoop) {
  // The loop runs several chunks; between the first progress report and the last, nothing is
  // allocated and x stays where it is.
  for (preconditioner pc : {preconditioner::none, preconditioner::jacobi}) {
    const auto sys = test::poisson_2d<double>(40);
    std::vector<double> b(sys.rows(), 1.0), x(sys.rows(), 0.0);
    std::vector<long> seen;
    std::vector<const double*> where;
    cg_options opt;
    opt.rtol = 1e-12;
    opt.precond = pc;
    opt.progress = [&](const cg_progress&) {
      seen.push_back(test_allocations.load());
      where.push_back(x.data());
    };
    seen.reserve(1000), where.reserve(1000);
    const auto r = cg_host(sys, b, x, opt);
    ASSERT_TRUE(r.converged()) << r.message;
    ASSERT_GE(seen.size(), 3u) << "the loop ran in too few chunks to tell";
    EXPECT_EQ(seen.front(), seen.back()) << to_string(pc) << ": the loop allocated";
    EXPECT_EQ(where.front(), where.back());
  }
  // The Jacobi diagonal is read from each format's own storage, equal across formats.
  const auto a = test::poisson_2d<double>(6);
  const auto d = detail::diagonal(a);
  EXPECT_EQ(d, std::vector<double>(36, 4.0));
  EXPECT_EQ(detail::diagonal(to_coo(a)), d);
  EXPECT_EQ(detail::diagonal(to_csc(a)), d);
  EXPECT_EQ(detail::diagonal(to_ell(a)), d);
  EXPECT_EQ(detail::diagonal(to_jds(a)), d);
  EXPECT_EQ(detail::diagonal(to_hyb(a, 2)), d);
  EXPECT_EQ(detail::diagonal(to_hyb(a, 4)), d);
  EXPECT_EQ(detail::diagonal(to_sell(a, {4, 8})), d);
  EXPECT_EQ(detail::diagonal(to_dense(a)), d);
  // The SpMV accumulator keeps its storage from call to call.
  reference::accumulator<double> acc;
  std::vector<double> x(36, 1.0), y(36);
  reference::spmv(1.0, a, x, 0.0, y, acc);
  const auto* storage = acc.data();
  reference::spmv(1.0, a, x, 0.0, y, acc);
  EXPECT_EQ(acc.data(), storage);
}

TEST(Cg, FloatConvergesToFloatTolerance) {
  const auto a = test::poisson_2d<float>(30);
  std::vector<float> b(a.rows(), 1.0f), x;
  cg_options opt;
  opt.rtol = 1e-5;
  opt.precond = preconditioner::jacobi;
  const auto r = cg_host(a, b, x, opt);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LE(r.true_residual, 1e-4);
}

TEST(Cg, ZeroRightHandSideGivesZeroWithoutIterating) {
  const auto a = test::poisson_2d<double>(5);
  std::vector<double> b(a.rows(), 0.0), x(a.rows(), 3.0);
  const auto r = cg_host(a, b, x);
  EXPECT_EQ(r.status, solve_status::converged);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(x, std::vector<double>(a.rows(), 0.0));
}

TEST(Cg, ExactInitialGuessNeedsNoIteration) {
  const auto a = test::poisson_2d<double>(5);
  std::vector<double> x(a.rows(), 1.0), b(a.rows());
  reference::spmv(1.0, a, x, 0.0, b);
  const auto r = cg_host(a, b, x);
  EXPECT_EQ(r.status, solve_status::converged);
  EXPECT_EQ(r.iterations, 0);
}

TEST(Cg, IndefiniteMatrixBreaksDown) {
  csr_matrix<double> a(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 3, 3, 1});  // eigenvalues 4, -2
  std::vector<double> b{1, -1}, x;
  const auto r = cg_host(a, b, x);
  EXPECT_EQ(r.status, solve_status::breakdown);
  EXPECT_NE(r.message.find("not symmetric positive definite"), std::string::npos) << r.message;
}

TEST(Cg, NegativeDefiniteBreaksDownAtFirstStep) {
  csr_matrix<double> a(2, 2, {0, 1, 2}, {0, 1}, {-1, -2});
  std::vector<double> b{1, 1}, x;
  EXPECT_EQ(cg_host(a, b, x).status, solve_status::breakdown);
  cg_options jac;
  jac.precond = preconditioner::jacobi;
  x.clear();
  const auto r = cg_host(a, b, x, jac);
  EXPECT_EQ(r.status, solve_status::breakdown);
  EXPECT_NE(r.message.find("A(1,1) = -1"), std::string::npos) << r.message;
}

TEST(Cg, NonFiniteInputIsNonFinite) {
  const auto a = test::poisson_2d<double>(3);
  std::vector<double> b(a.rows(), 1.0), x;
  b[4] = std::numeric_limits<double>::infinity();
  auto r = cg_host(a, b, x);
  EXPECT_EQ(r.status, solve_status::non_finite);
  EXPECT_NE(r.message.find("right-hand side"), std::string::npos);
  auto bad = a;
  bad.values()[2] = std::numeric_limits<double>::quiet_NaN();
  b[4] = 1;
  x.clear();
  r = cg_host(bad, b, x);
  EXPECT_EQ(r.status, solve_status::non_finite);
  EXPECT_NE(r.message.find("matrix holds a non-finite value"), std::string::npos) << r.message;
}

// Entries whose squares overflow used to end in non_finite; the loop now scales b by a power
// of two (krylov.hpp), so the dots stay in range and the solve is right.
TEST(Cg, HugeEntriesAreSolvedByScaling) {
  csr_matrix<double> a(2, 2, {0, 1, 2}, {0, 1}, {1e300, 2e300});
  std::vector<double> b{1e300, 1e300}, x;
  const auto r = cg_host(a, b, x);
  ASSERT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_NEAR(x[0], 1.0, 1e-12);
  EXPECT_NEAR(x[1], 0.5, 1e-12);
}

TEST(Cg, SizeMismatchAndNonSquareAreInvalid) {
  const auto a = test::poisson_2d<double>(3);
  std::vector<double> b(5, 1.0), x;
  EXPECT_EQ(cg_host(a, b, x).status, solve_status::invalid_input);
  csr_matrix<double> rect(2, 3, {0, 1, 2}, {0, 1}, {1, 1});
  std::vector<double> b2(2, 1.0), x2;
  const auto r = cg_host(rect, b2, x2);
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_NE(r.message.find("square"), std::string::npos);
}

TEST(Cg, IterationLimitIsAStatus) {
  const auto a = test::poisson_2d<double>(20);
  std::vector<double> b(a.rows(), 1.0), x;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.max_iterations = 3;
  opt.record_history = true;
  const auto r = cg_host(a, b, x, opt);
  EXPECT_EQ(r.status, solve_status::max_iterations);
  EXPECT_EQ(r.iterations, 3);
  EXPECT_EQ(r.history.size(), 3u);
  EXPECT_GT(r.residual, 1e-8);
}

TEST(Cg, AbsoluteToleranceStopsEarly) {
  const auto a = test::poisson_2d<double>(20);
  std::vector<double> b(a.rows(), 1.0), x1, x2;
  cg_options rel;
  rel.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  const auto r1 = cg_host(a, b, x1, rel);
  cg_options abs = rel;
  abs.atol = 1e-2;
  const auto r2 = cg_host(a, b, x2, abs);
  EXPECT_TRUE(r2.converged());
  EXPECT_LT(r2.iterations, r1.iterations);
}

// ---- the stopping rule, directly ------------------------------------------------------

TEST(CgStop, ThresholdIsRelativeToTheRightHandSide) {
  // ||r|| <= rtol ||b||: scaling b scales every residual, so the iteration count and the
  // relative history do not change; a threshold of rtol alone would stop at once for a large b
  // and never for a small one.
  const auto a = test::poisson_2d<double>(20);
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.rtol = 1e-6;
  opt.record_history = true;
  std::vector<int> counts;
  for (double scale : {1e-6, 1.0, 1e6}) {
    std::vector<double> b(a.rows()), x;
    for (index_t i = 0; i < a.rows(); ++i) b[i] = scale * (1.0 + (i % 7));
    const auto r = cg_host(a, b, x, opt);
    ASSERT_TRUE(r.converged()) << r.message;
    EXPECT_LE(r.history.back(), opt.rtol);
    ASSERT_GT(r.history.size(), 1u);
    EXPECT_GT(r.history[r.history.size() - 2], opt.rtol) << "it stopped late";
    counts.push_back(static_cast<int>(r.iterations));
  }
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_EQ(counts[1], counts[2]);
}

TEST(CgStop, IterationLimitIsExact) {
  const auto a = test::poisson_2d<double>(20);
  const std::vector<double> b(a.rows(), 1.0);
  for (std::int64_t limit : {0, 1, 2, 7, 30}) {
    cg_options opt;
    opt.precond = preconditioner::none;  // unpreconditioned: more than 30 iterations
    opt.max_iterations = limit;
    opt.record_history = true;
    std::vector<double> x;
    const auto r = cg_host(a, b, x, opt);
    EXPECT_EQ(r.status, solve_status::max_iterations) << limit;
    EXPECT_EQ(r.iterations, limit);
    EXPECT_EQ(r.history.size(), static_cast<std::size_t>(limit));
  }
}

TEST(CgStop, ConvergedMeansTheTrueResidualMetTheTolerance) {
  // Float cannot resolve 1e-8 on this system: the recurrence gets there, the true residual
  // does not, and the status says so instead of converged.
  const auto a = test::poisson_2d<float>(40);
  std::vector<float> b(a.rows(), 1.0f), x;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.rtol = 1e-8;
  const auto r = cg_host(a, b, x, opt);
  EXPECT_EQ(r.status, solve_status::precision_limit) << r.message;
  EXPECT_GT(r.true_residual, opt.true_residual_factor * opt.rtol);
  EXPECT_NE(r.message.find("true residual"), std::string::npos) << r.message;
  // At a tolerance float resolves, converged, with the true residual within the factor.
  opt.rtol = 1e-4;
  const auto ok = cg_host(a, b, x, opt);
  EXPECT_EQ(ok.status, solve_status::converged) << ok.message;
  EXPECT_LE(ok.true_residual, opt.true_residual_factor * opt.rtol);
  // Messages print numbers short: no 300-digit ratio at rtol = 0.
  opt.rtol = 0;
  opt.max_iterations = 50;
  const auto z = cg_host(a, b, x, opt);
  EXPECT_LT(z.message.size(), 300u) << z.message;
}

}  // namespace
}  // namespace la
