// The host oracles algebraic multigrid is built on (its sparse product C = A B is tested in
// kernels/reference_test.cpp): the aggregation's invariants, and the smoothed-aggregation V-cycle as a CG preconditioner on 2D and 3D Poisson (iterations
// that do not grow with the grid; M^-1 symmetric).
#include <cmath>
#include <limits>
#include <random>

#include <la/formats/generate.hpp>
#include <la/kernels/reference/spgemm.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/device_solver.hpp>
#include "amg_util.hpp"
#include "test_util.hpp"

namespace la {
using test::amg_pcg;
using test::expect_symmetric;
using test::gpu_apply;
namespace {

// Every node is in exactly one aggregate, within distance 2 of its root in the strength graph,
// the aggregates are larger than pairs on a 2D grid (a coarsening ratio over 4), and two runs
// give the same aggregates.
TEST(Aggregation, CoversEveryNodeWithLargeAggregates) {
  for (const auto& a : {poisson_2d<double>(40), poisson_3d<double>(12), test::system_matrix("bcsstk09.mtx", test::data_dir())}) {
    const auto g = amg::strength_of(a, 0.08);
    const auto ag = amg::aggregate(g);
    ASSERT_GT(ag.count, 0);
    std::vector<index_t> size(static_cast<std::size_t>(ag.count), 0);
    for (index_t i = 0; i < a.rows(); ++i) {
      ASSERT_GE(ag.of[i], 0) << "node " << i << " in no aggregate";
      ASSERT_LT(ag.of[i], ag.count);
      ++size[ag.of[i]];
    }
    EXPECT_LE(ag.count * 4, a.rows()) << "aggregates average " << double(a.rows()) / ag.count << " nodes";
    EXPECT_EQ(amg::aggregate(g).of, ag.of);
  }
}

// Smoothed-aggregation AMG-CG: at most 15 iterations on 2D Poisson 64^2 to 256^2 and 3D
// Poisson 16^3 to 32^3, growing by at most 20% across each range (PETSc's GAMG: 11-12 and
// 9-11, ../shared/anchors/petsc-3.18.md); operator complexity under 2.
TEST(Amg, PcgIterationsDoNotGrowWithTheGrid) {
  for (int dims : {2, 3}) {
    std::vector<long long> its;
    for (index_t n : dims == 2 ? std::vector<index_t>{64, 128, 256} : std::vector<index_t>{16, 24, 32}) {
      const auto a = dims == 2 ? poisson_2d<double>(n) : poisson_3d<double>(n);
      const host_amg m(a);
      const long long k = amg_pcg(a, m);
      std::printf("poisson%dd:%d  %lld iterations, %d levels (", dims, (int)n, k, (int)m.levels());
      for (index_t l = 0; l < m.levels(); ++l) std::printf("%s%d", l ? " " : "", (int)m.rows(l));
      std::printf(" rows), operator complexity %.2f, grid complexity %.2f\n", m.operator_complexity(), m.grid_complexity());
      EXPECT_GT(k, 0);
      EXPECT_LE(k, 15);
      EXPECT_LT(m.operator_complexity(), 2.0);
      its.push_back(k);
    }
    EXPECT_LE(double(its.back()), 1.2 * double(its.front()) + 1) << dims << "D";
  }
}

// The L1-Jacobi smoother (two sweeps before and after): AMG-CG converges in a count that
// grows slowly with the grid (measured 2D 64^2-256^2 and 3D 16^3-32^3, bound below), and the
// V-cycle stays symmetric (D_l1 is diagonal).
TEST(Amg, L1JacobiSmoother) {
  amg_options o;
  o.smoother = amg_smoother::l1_jacobi;
  std::vector<long long> its;
  for (index_t n : {64, 128, 256}) {
    const auto a = poisson_2d<double>(n);
    const host_amg m(a, o);
    const long long k = amg_pcg(a, m);
    std::printf("poisson2d:%d L1-Jacobi: %lld iterations\n", (int)n, k);
    EXPECT_GT(k, 0);
    EXPECT_LE(k, 25);
    its.push_back(k);
  }
  EXPECT_LE(double(its.back()), 1.3 * double(its.front()) + 1);
  const auto a = poisson_3d<double>(20);
  const host_amg m(a, o);
  EXPECT_GT(amg_pcg(a, m), 0);
  EXPECT_NE(m.describe().find("L1-Jacobi sweeps 2"), std::string::npos);
  expect_symmetric(a, m, 6);
}

// The F-cycle as a stationary iteration x += M^-1 (b - A x) on 2D Poisson 128^2: the error
// falls at least as fast as with the V-cycle (10 steps each), below 1e-5 of ||b||.
TEST(Amg, FCycleContractsAtLeastAsTheVCycle) {
  const auto a = poisson_2d<double>(128);
  std::vector<double> b(a.rows());
  reference::spmv(1.0, a, std::vector<double>(a.rows(), 1.0), 0.0, b);
  double bb = 0;
  for (double v : b) bb += v * v;
  auto richardson = [&](amg_cycle c) {
    amg_options o;
    o.cycle = c;
    const host_amg m(a, o);
    EXPECT_NE(m.describe().find(c == amg_cycle::f ? "F-cycle" : "V-cycle"), std::string::npos);
    std::vector<double> x(a.rows(), 0.0), r, z;
    for (int k = 0; k < 10; ++k) {
      r = b;
      reference::spmv(-1.0, a, x, 1.0, r);
      m.apply(r, z);
      for (index_t i = 0; i < a.rows(); ++i) x[i] += z[i];
    }
    r = b;
    reference::spmv(-1.0, a, x, 1.0, r);
    double rr = 0;
    for (double v : r) rr += v * v;
    return std::sqrt(rr / bb);
  };
  const double v = richardson(amg_cycle::v), f = richardson(amg_cycle::f);
  std::printf("10 Richardson steps: V-cycle %.2e, F-cycle %.2e\n", v, f);
  EXPECT_LE(f, v * 1.01);
  EXPECT_LE(f, 1e-5);  // measured: V 3.4e-5, F 5.7e-6
}

// M^-1 is symmetric (the same Chebyshev polynomial before and after the coarse correction):
// z1'r2 = z2'r1 for two random vectors, to 1e-12 of the products' magnitude.
TEST(Amg, VCycleIsSymmetric) {
  const auto a = poisson_2d<double>(30);
  const host_amg m(a, {0.08, 2, 20, 25, 0});
  ASSERT_GE(m.levels(), 3);
  expect_symmetric(a, m, 3);
}

// Setup reuse: new values on the same pattern (changed by up to 30%, which leaves 2D
// Poisson's strength graph as it was) give the hierarchy a fresh setup builds on them, bit for
// bit (the same V-cycle output), and a different pattern is refused.
TEST(Amg, UpdateValuesMatchesAFreshSetup) {
  const auto a = poisson_2d<double>(40);
  std::vector<double> v2(a.values());
  for (std::size_t k = 0; k < v2.size(); ++k) v2[k] *= 1 + 0.3 * std::sin(0.1 * double(k));  // not symmetric: fine here
  const csr_matrix<double> b(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), v2);
  host_amg reused(a);
  reused.update_values(b);
  const host_amg fresh(b);
  ASSERT_EQ(reused.levels(), fresh.levels());
  std::mt19937 g(5);
  const auto r = test::random_vector<double>(a.rows(), g);
  std::vector<double> z1, z2;
  reused.apply(r, z1), fresh.apply(r, z2);
  EXPECT_EQ(z1, z2);
  test::expect_throw_with<invalid_argument>([&] { reused.update_values(poisson_2d<double>(41)); }, {"pattern"});
}

}  // namespace
}  // namespace la

namespace la {
namespace {

/// A 1D Laplacian with a random positive diagonal shift (SPD, awkward sizes).
csr_matrix<double> laplacian_1d(index_t n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(0.01, 0.5);
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) ci.push_back(i - 1), v.push_back(-1);
    ci.push_back(i), v.push_back(2 + u(g));
    if (i + 1 < n) ci.push_back(i + 1), v.push_back(-1);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<double>(n, n, std::move(rp), std::move(ci), std::move(v));
}


// The GPU hierarchy is the host oracle's: the same levels and sizes (the aggregation is the
// same rounds, bit for bit on the finest level), the same complexities, and one V-cycle
// within 1e-10 (relative, in norm) of the oracle's on a random vector, in double, on
// sizes 1, 31, 33, 1000 (1D), 2D and 3D Poisson and a structural matrix; float within 1e-4;
// with either smoother, and the F-cycle.
TEST(GpuAmg, HierarchyAndCycleMatchTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(21);
  std::vector<csr_matrix<double>> systems;
  // Under a sanitizer the 1D sizes and one 2D grid: every kernel of the setup and the cycle.
  const bool small = test::under_sanitizer();
  for (index_t n : {1, 31, 33, 1000})
    if (!small || n != 31) systems.push_back(laplacian_1d(n, g));
  systems.push_back(poisson_2d<double>(small ? 20 : 64));
  if (!small) systems.push_back(poisson_3d<double>(16));
  if (!small) systems.push_back(test::system_matrix("bcsstk09.mtx", test::data_dir()));
  for (const auto& a : systems) {
    for (const auto [sm, cy] : {std::pair{amg_smoother::chebyshev, amg_cycle::v}, std::pair{amg_smoother::l1_jacobi, amg_cycle::v},
                                std::pair{amg_smoother::chebyshev, amg_cycle::f}}) {
    // Under a sanitizer the F-cycle runs on the 2D grid only (the V-cycle's kernels, in another order).
    if (small && cy == amg_cycle::f && a.rows() < 400) continue;
    precond_options po;
    po.amg.coarse_size = 20;  // several levels even at 31 rows
    po.amg.smoother = sm;
    po.amg.cycle = cy;
    const host_amg h(a, po.amg);
    const auto da = to_device(ctx, a);  // AMG's finest level is A itself: it must outlive m
    const device_preconditioner<double> m(ctx, da, preconditioner::amg, po);
    const std::string want = h.describe();
    ASSERT_EQ(m.report().detail.substr(0, want.size()), want) << "rows " << a.rows();
    EXPECT_GT(m.report().bytes, 0);
    const auto r = test::random_vector<double>(a.rows(), g);
    std::vector<double> zh;
    h.apply(r, zh);
    const auto z = gpu_apply(ctx, m, r);
    double dd = 0, hh = 0;
    for (index_t i = 0; i < a.rows(); ++i) {
      ASSERT_TRUE(std::isfinite(z[i])) << "row " << i << " unwritten or not finite";
      dd += (z[i] - zh[i]) * (z[i] - zh[i]), hh += zh[i] * zh[i];
    }
    EXPECT_LE(std::sqrt(dd / hh), 1e-10) << "rows " << a.rows() << ": " << m.report().detail;
    // Reruns of the cycle are bit-identical.
    EXPECT_EQ(gpu_apply(ctx, m, r), z);
    // Float: the same hierarchy shape, the cycle within 1e-4.
    const auto af = to_device(ctx, csr_matrix<float>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                                                      std::vector<float>(a.values().begin(), a.values().end())));
    const device_preconditioner<float> mf(ctx, af, preconditioner::amg, po);
    const auto zf = gpu_apply(ctx, mf, std::vector<float>(r.begin(), r.end()));
    double df = 0;
    for (index_t i = 0; i < a.rows(); ++i) df += (zf[i] - zh[i]) * (zf[i] - zh[i]);
    EXPECT_LE(std::sqrt(df / hh), 1e-4) << "float, rows " << a.rows();
    }
  }
}

// A coarse size above the stall limit (512) asks for that dense solve: a 1,600-row system
// with coarse size 2,000 is one level, factored exactly (PCG converges at once), on the host
// and on the GPU (la::dense_solver); the limit itself still holds for the default.
TEST(GpuAmg, CoarseSizeAboveTheStallLimitIsSolvedDensely) {
  const auto a = poisson_2d<double>(40);
  std::vector<double> b(a.rows());
  reference::spmv(1.0, a, std::vector<double>(a.rows(), 1.0), 0.0, b);
  amg_options big;
  big.coarse_size = 2000;
  const host_amg h(a, big);
  EXPECT_EQ(h.levels(), 1);
  EXPECT_EQ(h.describe().find("smoothed"), std::string::npos) << h.describe();
  EXPECT_LE(amg_pcg(a, h), 2);
  big.coarse_size = amg_coarse_size_max + 1;
  EXPECT_THROW(host_amg(a, big), invalid_argument);
  amg_options one;
  one.max_levels = 1;  // the default coarse size and a 1,600-row level: smoothed, not factored
  EXPECT_NE(host_amg(a, one).describe().find("smoothed"), std::string::npos);
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  cg_options o;
  o.precond = preconditioner::amg;
  o.precond_opt.amg.coarse_size = 2000;
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  device_vector<double> x;
  const solve_result r = cg_device(ctx, da, db, x, o);
  ASSERT_TRUE(r.converged()) << r.message;
  EXPECT_LE(r.iterations, 2) << r.precond.detail;
  EXPECT_EQ(r.precond.detail.find("smoothed"), std::string::npos) << r.precond.detail;
}

// AMG-CG on the GPU: iterations that stay flat with the grid (at most 15 from 64^2 to 256^2,
// as the host's), within one of the oracle's, the solution bit-identical on a rerun; the W-cycle
// takes no more iterations than the V-cycle.
TEST(GpuAmg, PcgIterationsMatchTheOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  for (const auto& a : {poisson_2d<double>(64), poisson_2d<double>(256), poisson_3d<double>(32)}) {
    if (test::under_sanitizer() && a.rows() > 64 * 64) continue;  // the same kernels on the smallest
    cg_options o;
    o.precond = preconditioner::amg;
    std::vector<double> b(a.rows());
    reference::spmv(1.0, a, std::vector<double>(a.rows(), 1.0), 0.0, b);
    const long long host_its = amg_pcg(a, host_amg(a));
    const auto da = to_device(ctx, a);
    const auto db = to_device(ctx, b);
    device_vector<double> x1, x2;
    const solve_result r1 = cg_device(ctx, da, db, x1, o), r2 = cg_device(ctx, da, db, x2, o);
    ASSERT_TRUE(r1.converged()) << r1.message;
    EXPECT_EQ(r1.precond.kind, preconditioner::amg);
    EXPECT_LE(r1.iterations, 15);
    EXPECT_LE(std::abs(r1.iterations - host_its), 1) << "gpu " << r1.iterations << ", host " << host_its;
    EXPECT_EQ(to_host(ctx, x1), to_host(ctx, x2)) << "rerun differs";
    o.precond_opt.amg.cycle = amg_cycle::w;
    device_vector<double> xw;
    const solve_result w = cg_device(ctx, da, db, xw, o);
    ASSERT_TRUE(w.converged()) << w.message;
    EXPECT_LE(w.iterations, r1.iterations);
    EXPECT_NE(w.precond.detail.find("W-cycle"), std::string::npos);
  }
}

// Setup reuse on the GPU: update_values with new values on the same pattern gives the cycle a
// fresh setup gives, bit for bit; another pattern, and update_values on a preconditioner that
// keeps no setup, are refused; a zero diagonal entry is named.
TEST(GpuAmg, UpdateValuesAndRefusals) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = poisson_2d<double>(60);
  std::vector<double> v2(a.values());
  for (std::size_t k = 0; k < v2.size(); ++k) v2[k] *= 1.5;
  const csr_matrix<double> b(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), v2);
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  device_preconditioner<double> reused(ctx, da, preconditioner::amg, {});
  reused.update_values(db);
  const device_preconditioner<double> fresh(ctx, db, preconditioner::amg, {});
  std::mt19937 g(4);
  const auto r = test::random_vector<double>(a.rows(), g);
  EXPECT_EQ(gpu_apply(ctx, reused, r), gpu_apply(ctx, fresh, r));
  const auto other = to_device(ctx, poisson_2d<double>(61));
  test::expect_throw_with<invalid_argument>([&] { reused.update_values(other); }, {"pattern"});
  device_preconditioner<double> fsai(ctx, da, preconditioner::fsai, {});
  test::expect_throw_with<not_supported>([&] { fsai.update_values(db); }, {"keeps no setup"});
  std::vector<double> v3(a.values());
  for (index_t k = a.row_ptr()[7]; k < a.row_ptr()[8]; ++k)
    if (a.col_idx()[k] == 7) v3[k] = 0;
  const auto dz = to_device(ctx, csr_matrix<double>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), v3));
  test::expect_throw_with<invalid_argument>([&] { device_preconditioner<double>(ctx, dz, preconditioner::amg, {}); },
                                            {"A(8,8)", "zero or missing"});
  test::expect_throw_with<invalid_argument>([&] { host_amg(csr_matrix<double>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), v3)); },
                                            {"A(8,8)", "zero or missing"});
}

}  // namespace
}  // namespace la

namespace la {
namespace {

// la::device_solver keeps the setup: its solves give what solve_device gives (bit for bit:
// the same hierarchy, built once), with new right-hand sides and after update_values on new
// values (AMG's numeric re-setup; FSAI rebuilt), and its refusals are solve_device's words
// (new values that are not symmetric included, for CG).
TEST(GpuAmg, DeviceSolverReusesTheSetup) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = poisson_2d<double>(80);
  std::vector<double> v2(a.values());
  for (double& v : v2) v *= 3;
  const csr_matrix<double> a2(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), v2);
  const auto da = to_device(ctx, a);
  const auto da2 = to_device(ctx, a2);
  for (preconditioner pc : {preconditioner::amg, preconditioner::fsai}) {
    cg_options o;
    o.precond = pc;
    device_solver<double, index_t> s(ctx, da, o);
    EXPECT_EQ(s.method(), krylov_method::cg);
    ASSERT_NE(s.report(), nullptr);
    const double built = s.report()->setup_seconds;
    std::mt19937 g(8);
    for (int k = 0; k < 3; ++k) {
      const auto b = to_device(ctx, test::random_vector<double>(a.rows(), g));
      device_vector<double> x1, x2;
      const solve_result r1 = s.solve(b, x1), r2 = solve_device(ctx, da, b, x2, o);
      ASSERT_TRUE(r1.converged()) << r1.message;
      EXPECT_EQ(r1.iterations, r2.iterations);
      EXPECT_EQ(to_host(ctx, x1), to_host(ctx, x2)) << to_string(pc) << " rhs " << k;
      EXPECT_EQ(s.report()->setup_seconds, built);  // not built again
    }
    s.update_values(da2);
    const auto b = to_device(ctx, test::random_vector<double>(a.rows(), g));
    device_vector<double> x1, x2;
    const solve_result r1 = s.solve(b, x1), r2 = solve_device(ctx, da2, b, x2, o);
    ASSERT_TRUE(r1.converged()) << r1.message;
    EXPECT_EQ(to_host(ctx, x1), to_host(ctx, x2)) << to_string(pc) << " after update_values";
  }
  cg_options o;
  o.method = krylov_method::gmres;
  o.precond = preconditioner::fsai;
  test::expect_throw_with<invalid_argument>([&] { device_solver<double, index_t>(ctx, da, o); }, {"fsai is built for"});
  const auto other = to_device(ctx, poisson_2d<double>(81));
  device_solver<double, index_t> s(ctx, da, {});
  test::expect_throw_with<invalid_argument>([&] { s.update_values(other); }, {"same shape and pattern"});
  std::vector<double> skew(a.values());
  for (std::size_t k = 0; k < skew.size(); ++k) skew[k] *= 1 + 0.3 * std::sin(0.1 * double(k));
  const auto dskew = to_device(ctx, csr_matrix<double>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), skew));
  test::expect_throw_with<invalid_argument>([&] { s.update_values(dskew); }, {"CG needs a symmetric"});
}

}  // namespace
}  // namespace la
