// GPU CG against Eigen and the host CG: every path (plain, graph, persistent), every format,
// float and double, with and without Jacobi; every status; bit-identical reruns.
#include <cmath>
#include <cstring>
#include <limits>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/host_backend.hpp>
#include "solvers/eigen_cg.hpp"
#include "kernels/spmv/extra_spmv_variant.hpp"
#include "test_util.hpp"

namespace la {
namespace {

// The test's own SpMV variants join the registry first, so the every-format test below
// solves with them too.
const bool extras_added = test::add_extra_spmv_variants();

const cg_path paths[] = {cg_path::plain, cg_path::graph, cg_path::persistent};

template <typename T>
struct gpu_solve {
  solve_result r;
  std::vector<T> x;
};

template <typename T, typename O>
gpu_solve<T> solve_gpu(context& ctx, const csr_matrix<T, O>& a, const std::vector<T>& b, const cg_options& opt,
                       cg_path path, std::optional<spmv_choice> choice = {}) {
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  device_vector<T> dx;
  device_cg_options d;
  d.path = path;
  d.choice = std::move(choice);
  gpu_solve<T> s;
  s.r = cg_device(ctx, da, db, dx, opt, d);
  s.x = dx.size() ? to_host(ctx, dx) : std::vector<T>{};
  return s;
}

/// A random SPD matrix of n rows: a random symmetric pattern (about `per_row` off-diagonal
/// entries a row, values in +-[0.01, 1]) plus a diagonal that dominates each row by 0.5.
template <typename T>
csr_matrix<T> random_spd(index_t n, int per_row, std::mt19937& g) {
  std::vector<std::vector<std::pair<index_t, double>>> rows(static_cast<std::size_t>(n));
  std::uniform_int_distribution<index_t> col(0, n - 1);
  for (index_t i = 0; i < n; ++i)
    for (int k = 0; k < per_row / 2; ++k) {
      const index_t j = col(g);
      if (j == i) continue;
      const double v = test::random_value<double>(g);
      rows[i].push_back({j, v});
      rows[j].push_back({i, v});
    }
  std::vector<index_t> rp{0}, ci;
  std::vector<T> vals;
  for (index_t i = 0; i < n; ++i) {
    auto& r = rows[i];
    std::sort(r.begin(), r.end());
    std::vector<std::pair<index_t, double>> merged;
    for (auto& e : r)
      if (!merged.empty() && merged.back().first == e.first) merged.back().second += e.second;
      else merged.push_back(e);
    double off = 0;
    for (auto& e : merged) off += std::abs(e.second);
    merged.push_back({i, off + 0.5});
    std::sort(merged.begin(), merged.end());
    for (auto& e : merged) ci.push_back(e.first), vals.push_back(static_cast<T>(e.second));
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<T>(n, n, std::move(rp), std::move(ci), std::move(vals));
}

std::string path_name(cg_path p) { return to_string(p); }

// ---- against Eigen on the bundled systems and Poisson ---------------------------------------

struct system_case {
  std::string name;
  preconditioner pc;
};

class GpuAgainstEigen : public ::testing::TestWithParam<system_case> {};

TEST_P(GpuAgainstEigen, EveryPathMatchesEigenAndTheHost) {
  LA_SKIP_WITHOUT_GPU();
  const auto& c = GetParam();
  // Under a sanitizer the Poisson cases alone: the real systems run the same kernels for more
  // iterations.
  if (test::under_sanitizer() && c.name != "poisson2d:64") GTEST_SKIP() << "under a sanitizer";
  const csr_matrix<double> a = test::system_matrix(c.name, test::data_dir());
  std::mt19937 g(7);
  const std::vector<double> b = test::random_vector<double>(a.rows(), g);
  const double tol = 1e-8;
  cg_options opt = test::eigen_comparison_options(tol, c.pc, a.rows());
  opt.stagnation_window = 0;
  std::vector<double> xh;
  const solve_result host = cg_host(a, b, xh, opt);
  const test::eigen_result e = c.pc == preconditioner::jacobi
                                   ? test::eigen_cg<Eigen::DiagonalPreconditioner<double>>(a, b, tol, opt.max_iterations)
                                   : test::eigen_cg<Eigen::IdentityPreconditioner>(a, b, tol, opt.max_iterations);
  ASSERT_TRUE(e.converged);
  ASSERT_TRUE(host.converged()) << host.message;
  context ctx;
  for (cg_path p : paths) {
    SCOPED_TRACE(path_name(p));
    const auto s = solve_gpu(ctx, a, b, opt, p);
    ASSERT_EQ(s.r.status, solve_status::converged) << s.r.message << " / " << s.r.method;
    EXPECT_LE(s.r.residual, tol);
    // Rounding differs (the device sums in double with another order): counts within 10%.
    EXPECT_LE(std::abs(s.r.iterations - e.iterations), std::max(1.0, 0.1 * e.iterations))
        << "gpu " << s.r.iterations << ", Eigen " << e.iterations;
    EXPECT_LE(std::abs(s.r.iterations - host.iterations), std::max(1.0, 0.1 * host.iterations));
    // The true residual within 10x the tolerance (100x on the ill-conditioned bcsstk01/09,
    // where the recurrence drifts the same way on the host: see cg_test).
    EXPECT_LE(s.r.true_residual, (c.name.rfind("bcsstk", 0) == 0 ? 100 : 10) * tol) << s.r.method;
    EXPECT_LE(test::rel_diff(s.x, e.x), 1e-4);
    EXPECT_LE(test::rel_diff(s.x, xh), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Systems, GpuAgainstEigen,
    ::testing::Values(system_case{"poisson2d:64", preconditioner::none}, system_case{"poisson2d:64", preconditioner::jacobi},
                      system_case{"poisson3d:14", preconditioner::none}, system_case{"poisson3d:14", preconditioner::jacobi},
                      system_case{"gr_30_30.mtx", preconditioner::none}, system_case{"gr_30_30.mtx", preconditioner::jacobi},
                      system_case{"bcsstk01.mtx", preconditioner::none}, system_case{"bcsstk01.mtx", preconditioner::jacobi},
                      system_case{"bcsstk09.mtx", preconditioner::none}, system_case{"bcsstk09.mtx", preconditioner::jacobi},
                      system_case{"bcsstk21.mtx", preconditioner::jacobi},
                      system_case{"1138_bus.mtx", preconditioner::jacobi},
                      system_case{"Trefethen_2000.mtx", preconditioner::none},
                      system_case{"Trefethen_2000.mtx", preconditioner::jacobi}),
    [](const auto& info) { return test::test_name(info.param.name + "_" + to_string(info.param.pc)); });

// ---- every format, precision, preconditioner and path ---------------------------------------

template <typename T>
class GpuCg : public ::testing::Test {};
using value_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuCg, value_types);

/// The kernels CG runs for each format (what --format picks), every registry variant in its
/// format's default parameters, and a few format parameters forced.
std::vector<spmv_choice> every_format(const spmv_stats& s) {
  std::vector<spmv_choice> out;
  for (format f : all_formats) out.push_back(cg_choice_for(to_string(f), s));
  for (const auto& v : spmv_variants<double>()) out.push_back({v.fmt, std::string(v.name), {}, -1, "forced"});
  spmv_choice sell_sorted = cg_choice_for("sell", s);
  sell_sorted.sell = {4, 16};
  spmv_choice hyb_narrow = cg_choice_for("hyb", s);
  hyb_narrow.hyb_width = 2;  // most entries in the COO part
  out.push_back(sell_sorted);
  out.push_back(hyb_narrow);
  return out;
}

TYPED_TEST(GpuCg, EveryFormatPathAndPreconditionerAgreesWithTheHost) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(11);
  // Awkward sizes: a 1x1 system, sizes around a warp, and one not a multiple of anything.
  // Under a sanitizer: 1 and 33 rows (every format) and 1000 (the default kernel, several
  // blocks), to a looser tolerance (fewer iterations of the same kernels).
  const std::vector<index_t> sizes = test::under_sanitizer() ? std::vector<index_t>{1, 33, 1000}
                                                               : std::vector<index_t>{1, 31, 33, 1000};
  for (index_t n : sizes) {
    const auto a = random_spd<T>(n, 6, g);
    const auto b = test::random_vector<T>(static_cast<std::size_t>(n), g);
    for (preconditioner pc : {preconditioner::none, preconditioner::jacobi}) {
      // Under a sanitizer the 1x1 system runs unpreconditioned only (Jacobi's kernels run on
      // the 33-row one), and under racecheck on the default format only (one row shares nothing).
      if (test::under_sanitizer() && n == 1 && pc == preconditioner::jacobi) continue;
      cg_options opt;
      opt.rtol = std::is_same_v<T, float> ? 1e-5 : test::under_sanitizer() ? 1e-6 : 1e-10;
      opt.precond = pc;
      std::vector<T> xh;
      const auto host = cg_host(a, b, xh, opt);
      ASSERT_TRUE(host.converged()) << host.message;
      std::vector<spmv_choice> choices = every_format(row_stats(a));
      // Under a sanitizer the 1000-row system takes the default format's kernel only (its
      // several blocks); every format's kernels run on the 1-, 31- and 33-row ones.
      if ((test::under_sanitizer() && n > 64) || (test::under_racecheck() && n == 1)) choices.resize(1);
      for (const spmv_choice& choice : choices) {
        for (cg_path p : paths) {
          SCOPED_TRACE("n=" + std::to_string(n) + " " + to_string(pc) + " " + choice.kernel + " " + path_name(p));
          if (p == cg_path::persistent && find_spmv<T>(choice.kernel).walk == row_walk::none) {
            EXPECT_THROW(solve_gpu(ctx, a, b, opt, p, choice), not_supported);  // no fused form
            continue;
          }
          const auto s = solve_gpu(ctx, a, b, opt, p, choice);
          ASSERT_EQ(s.r.status, solve_status::converged) << s.r.message << " / " << s.r.method;
          EXPECT_LE(std::abs(s.r.iterations - host.iterations), std::max<std::int64_t>(2, host.iterations / 10))
              << "gpu " << s.r.iterations << ", host " << host.iterations;
          // Both meet ||b - Ax|| <= rtol ||b|| up to rounding; these systems are diagonally
          // dominant (cond < ~20), so the solutions agree to ~100 rtol.
          double d = 0, m = 0;
          for (index_t i = 0; i < n; ++i)
            d = std::max(d, std::abs(double(s.x[i]) - double(xh[i]))), m = std::max(m, std::abs(double(xh[i])));
          EXPECT_LE(d, 100 * opt.rtol * std::max(1.0, m) + (std::is_same_v<T, float> ? 1e-4 : 0));
          EXPECT_LE(s.r.true_residual, 10 * opt.rtol);
        }
      }
    }
  }
}

TYPED_TEST(GpuCg, SolvesWithAnAddedVariantFusedOrNot) {
  // The variants of extra_spmv_variant.cu, which no library code names: the solver fuses
  // the one with a row walk (persistent path by default) and runs the other's own kernel
  // on the graph path; a matrix its can_implement refuses is refused before any work.
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ASSERT_TRUE(extras_added);
  context ctx;
  const auto a = test::poisson_2d<T>(40);
  std::mt19937 g(5);
  const auto b = test::random_vector<T>(a.rows(), g);
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.rtol = std::is_same_v<T, float> ? 1e-5 : 1e-10;
  const std::string fused(test::extra_fused), plain(test::extra_plain);
  const auto f = solve_gpu(ctx, a, b, opt, cg_path::automatic, spmv_choice{format::csr, fused, {}, -1, "forced"});
  ASSERT_EQ(f.r.status, solve_status::converged) << f.r.message;
  EXPECT_NE(f.r.method.find("csr/" + fused + " fused with p'Ap, persistent path"), std::string::npos) << f.r.method;
  const long long before = test::extra_spmv_runs();
  const auto p = solve_gpu(ctx, a, b, opt, cg_path::automatic, spmv_choice{format::csr, plain, {}, -1, "forced"});
  ASSERT_EQ(p.r.status, solve_status::converged) << p.r.message;
  EXPECT_NE(p.r.method.find("csr/" + plain + " then p'Ap, graph path"), std::string::npos) << p.r.method;
  EXPECT_GT(test::extra_spmv_runs(), before) << "the solver did not run the added kernel";
  EXPECT_LE(std::abs(f.r.iterations - p.r.iterations), std::max<std::int64_t>(2, f.r.iterations / 10));
  const auto big = test::poisson_2d<T>(317);  // 100489 rows: over the plain one's limit
  const std::vector<T> ones(static_cast<std::size_t>(big.rows()), T(1));
  test::expect_throw_with<invalid_argument>(
      [&] { solve_gpu(ctx, big, ones, opt, cg_path::graph, spmv_choice{format::csr, plain, {}, -1, "forced"}); },
      {plain, "cannot run"});
}

TYPED_TEST(GpuCg, RerunsAreBitIdenticalOnEveryPath) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  const auto a = test::poisson_2d<T>(test::under_sanitizer() ? 20 : 50);  // fewer iterations under a sanitizer
  std::mt19937 g(3);
  const auto b = test::random_vector<T>(a.rows(), g);
  cg_options opt;
  opt.rtol = 1e-6;
  opt.record_history = true;
  for (cg_path p : paths)
    for (const char* kernel : {"csr_scalar", "csr_vector", "sell"}) {
      SCOPED_TRACE(path_name(p) + std::string(" ") + kernel);
      spmv_choice c = cg_choice_for(std::string(kernel) == "sell" ? "sell" : "csr", row_stats(a));
      c.kernel = kernel;
      for (preconditioner pc : {preconditioner::none, preconditioner::jacobi}) {
        opt.precond = pc;
        const auto s1 = solve_gpu(ctx, a, b, opt, p, c), s2 = solve_gpu(ctx, a, b, opt, p, c);
        ASSERT_TRUE(s1.r.converged()) << s1.r.message;
        EXPECT_EQ(s1.r.iterations, s2.r.iterations);
        EXPECT_EQ(0, std::memcmp(s1.x.data(), s2.x.data(), s1.x.size() * sizeof(T)));
        ASSERT_EQ(s1.r.history.size(), static_cast<std::size_t>(s1.r.iterations));
        EXPECT_EQ(s1.r.history, s2.r.history);
        // The stop came at the first iteration whose residual met the tolerance.
        EXPECT_LE(s1.r.history.back(), opt.rtol);
        if (s1.r.history.size() > 1) EXPECT_GT(s1.r.history[s1.r.history.size() - 2], opt.rtol);
      }
    }
}

// ---- statuses, the same on every path -------------------------------------------------------

TEST(GpuCgStatus, IndefiniteMatrixBreaksDown) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  csr_matrix<double> a(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 3, 3, 1});  // eigenvalues 4, -2
  for (cg_path p : paths) {
    const auto s = solve_gpu(ctx, a, std::vector<double>{1, -1}, {}, p);
    EXPECT_EQ(s.r.status, solve_status::breakdown) << path_name(p) << ": " << s.r.message;
    EXPECT_NE(s.r.message.find("not symmetric positive definite"), std::string::npos) << s.r.message;
  }
  // Jacobi refuses a non-positive diagonal before iterating, naming the entry.
  csr_matrix<double> neg(2, 2, {0, 1, 2}, {0, 1}, {1, -2});
  cg_options jac;
  jac.precond = preconditioner::jacobi;
  const auto s = solve_gpu(ctx, neg, std::vector<double>{1, 1}, jac, cg_path::graph);
  EXPECT_EQ(s.r.status, solve_status::breakdown);
  EXPECT_NE(s.r.message.find("A(2,2) = -2"), std::string::npos) << s.r.message;
}

TEST(GpuCgStatus, NonFiniteInputsAndIterates) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = test::poisson_2d<double>(6);
  std::vector<double> b(a.rows(), 1.0);
  b[5] = std::numeric_limits<double>::quiet_NaN();
  for (cg_path p : paths) {
    auto s = solve_gpu(ctx, a, b, {}, p);
    EXPECT_EQ(s.r.status, solve_status::non_finite) << s.r.message;
    EXPECT_NE(s.r.message.find("right-hand side holds a non-finite value at entry 6 (1-based)"), std::string::npos)
        << s.r.message;
  }
  auto bad = a;
  bad.values()[7] = std::numeric_limits<double>::infinity();
  const auto s = solve_gpu(ctx, bad, std::vector<double>(a.rows(), 1.0), {}, cg_path::plain);
  EXPECT_EQ(s.r.status, solve_status::non_finite);
  EXPECT_NE(s.r.message.find("matrix holds a non-finite value at stored entry 8 (1-based)"), std::string::npos) << s.r.message;
  // Entries whose squares overflow: the loop scales b by a power of two (krylov.hpp), so the
  // dots stay in range and the solve converges.
  csr_matrix<double> huge(2, 2, {0, 1, 2}, {0, 1}, {1e300, 2e300});
  for (cg_path p : paths)
    EXPECT_EQ(solve_gpu(ctx, huge, std::vector<double>{1e300, 1e300}, {}, p).r.status, solve_status::converged);
  // A subnormal b (below 2^-1022): ||b|| is summed scaled by a power of two (1 / max|b|
  // overflows there), so x comes out at b's scale, never a "converged" zero.
  std::vector<double> tiny(a.rows(), 0.0);
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) tiny[i] += a.values()[k];
  for (double& v : tiny) v *= 1e-310;
  for (cg_path p : paths) {
    const auto t = solve_gpu(ctx, a, tiny, {}, p);
    ASSERT_EQ(t.r.status, solve_status::converged) << t.r.message;
    for (double v : t.x) ASSERT_NEAR(v / 1e-310, 1.0, 1e-6);
  }
}

TEST(GpuCgStatus, ZeroRightHandSideReturnsZeroAtOnce) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = test::poisson_2d<double>(5);
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, std::vector<double>(a.rows(), 0.0));
  for (cg_path p : paths) {
    auto dx = to_device(ctx, std::vector<double>(a.rows(), 3.0));
    device_cg_options d;
    d.path = p;
    const auto r = cg_device(ctx, da, db, dx, {}, d);
    EXPECT_EQ(r.status, solve_status::converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(to_host(ctx, dx), std::vector<double>(a.rows(), 0.0));
  }
}

/// The 1D Laplacian with free ends (singular: the null space is the constant vector).
csr_matrix<double> neumann_1d(index_t n) {
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) ci.push_back(i - 1), v.push_back(-1);
    ci.push_back(i), v.push_back(i == 0 || i == n - 1 ? 1 : 2);
    if (i + 1 < n) ci.push_back(i + 1), v.push_back(-1);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<double>(n, n, std::move(rp), std::move(ci), std::move(v));
}

TEST(GpuCgStatus, SingularSystems) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const index_t n = 100;
  const auto a = neumann_1d(n);
  // Consistent (b sums to zero, so it is in the range): CG converges as on the host.
  std::vector<double> b(n);
  for (index_t i = 0; i < n; ++i) b[i] = std::sin(0.1 * i) - std::sin(0.1 * (n - 1 - i));
  std::vector<double> xh;
  const auto host = cg_host(a, b, xh);
  for (cg_path p : paths) {
    const auto s = solve_gpu(ctx, a, b, {}, p);
    EXPECT_EQ(s.r.status, host.status) << path_name(p) << ": " << s.r.message;
    EXPECT_TRUE(s.r.status == solve_status::converged || s.r.status == solve_status::max_iterations);
  }
  // Inconsistent (b has a component along the null space): no x solves it; the residual
  // cannot fall below that component, so CG stops on stagnation (or the iteration limit).
  std::vector<double> c = b;
  for (double& v : c) v += 0.1;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.stagnation_window = 50;
  opt.max_iterations = 100000;
  const auto hs = cg_host(a, c, xh = {}, opt);
  EXPECT_EQ(hs.status, solve_status::stagnation) << hs.message;
  for (cg_path p : paths) {
    const auto s = solve_gpu(ctx, a, c, opt, p);
    EXPECT_EQ(s.r.status, solve_status::stagnation) << path_name(p) << ": " << s.r.message;
    EXPECT_LT(s.r.iterations, 100000);
  }
}

TEST(GpuCgStatus, IterationLimitIsExactAndHistoryHasOneValuePerIteration) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = test::poisson_2d<double>(40);
  const std::vector<double> b(a.rows(), 1.0);
  for (std::int64_t limit : {0, 1, 7, 9, 50}) {
    cg_options opt;
    opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
    opt.max_iterations = limit;
    opt.record_history = true;
    std::vector<double> xh;
    const auto host = cg_host(a, b, xh, opt);
    for (cg_path p : paths) {
      SCOPED_TRACE(path_name(p) + " limit " + std::to_string(limit));
      const auto s = solve_gpu(ctx, a, b, opt, p);
      EXPECT_EQ(s.r.status, solve_status::max_iterations);
      EXPECT_EQ(s.r.iterations, limit);
      ASSERT_EQ(s.r.history.size(), static_cast<std::size_t>(limit));
      for (std::size_t i = 0; i < s.r.history.size(); ++i)
        EXPECT_NEAR(s.r.history[i], host.history[i], 1e-6 * host.history[i]);
      // x after `limit` steps matches the host's (iterations past the stop are not applied).
      if (limit > 0) EXPECT_LE(test::rel_diff(s.x, xh), 1e-7);
      else EXPECT_EQ(s.x, xh);
    }
  }
}

TEST(GpuCgStatus, ProgressIsReportedAndSizeErrorsAreInvalidInput) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = test::poisson_2d<double>(30);
  int calls = 0;
  std::int64_t last = -1;
  cg_options opt;
  opt.precond = preconditioner::none;  // unpreconditioned (the default is auto)
  opt.progress = [&](const cg_progress& p) {
    ++calls;
    EXPECT_GE(p.iteration, last);
    last = p.iteration;
  };
  const auto s = solve_gpu(ctx, a, std::vector<double>(a.rows(), 1.0), opt, cg_path::graph);
  EXPECT_TRUE(s.r.converged());
  EXPECT_GT(calls, 0);
  EXPECT_EQ(last, s.r.iterations);
  const auto wrong = solve_gpu(ctx, a, std::vector<double>(5, 1.0), {}, cg_path::graph);
  EXPECT_EQ(wrong.r.status, solve_status::invalid_input);
  csr_matrix<double> rect(2, 3, {0, 1, 2}, {0, 1}, {1, 1});
  EXPECT_EQ(solve_gpu(ctx, rect, std::vector<double>(2, 1.0), {}, cg_path::graph).r.status, solve_status::invalid_input);
}

TEST(GpuCg, AutomaticPathFollowsTheKernel) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = test::poisson_2d<double>(64);
  const std::vector<double> b(a.rows(), 1.0);
  cg_options none;
  none.precond = preconditioner::none;  // FSAI (auto's pick) runs on the persistent path whatever the kernel
  // A fused kernel: the persistent path, with a thread per (short) row.
  const auto s = solve_gpu(ctx, a, b, none, cg_path::automatic);
  EXPECT_TRUE(s.r.converged());
  EXPECT_NE(s.r.method.find("csr/csr_scalar fused with p'Ap, persistent path"), std::string::npos) << s.r.method;
  // HYB has no fused form: the graph path.
  const auto h = solve_gpu(ctx, a, b, none, cg_path::automatic, cg_choice_for("hyb", row_stats(a)));
  EXPECT_TRUE(h.r.converged());
  EXPECT_NE(h.r.method.find("graph path"), std::string::npos) << h.r.method;
}

}  // namespace
}  // namespace la
