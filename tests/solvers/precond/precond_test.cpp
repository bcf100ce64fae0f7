// The FSAI host factor (solvers/precond/fsai.hpp), the oracle a GPU setup will be compared with: a
// hand-checked small case, the defining properties on random and real SPD matrices, the
// errors for matrices that are not SPD, and the iterations it saves in a plain host PCG.
#include <cmath>
#include <random>

#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/precond/fsai.hpp>
#include <chrono>
#include <la/solvers/host_backend.hpp>
#include <la/solvers/precond.hpp>
#include "test_util.hpp"

namespace la {
namespace {

csr_matrix<double> system(const std::string& name) { return test::system_matrix(name, test::data_dir()); }

/// (G A) and (G A G^T) entry (i, j) in double, from the CSR arrays.
double ga(const csr_matrix<double>& g, const csr_matrix<double>& a, index_t i, index_t j) {
  double s = 0;
  for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k) {
    const index_t c = g.col_idx()[k];
    for (index_t l = a.row_ptr()[c]; l < a.row_ptr()[c + 1]; ++l)
      if (a.col_idx()[l] == j) s += g.values()[k] * a.values()[l];
  }
  return s;
}
double gagt_diag(const csr_matrix<double>& g, const csr_matrix<double>& a, index_t i) {
  double s = 0;
  for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k) s += g.values()[k] * ga(g, a, i, g.col_idx()[k]);
  return s;
}

/// Checks the defining properties of G on every row: lower triangular with the diagonal,
/// (G A)_ij = 0 for j in row i's pattern other than i, (G A G^T)_ii = 1. Tolerance: the
/// small solves run in long double, the check sums in double over a row of G times a row
/// of A: 1e-10 relative to the row's magnitude.
void expect_fsai(const csr_matrix<double>& g, const csr_matrix<double>& a, const std::string& what) {
  int bad = 0;
  for (index_t i = 0; i < a.rows() && bad < 3; ++i) {
    const index_t b = g.row_ptr()[i], e = g.row_ptr()[i + 1];
    ASSERT_GT(e, b) << what << ": row " << i << " of G is empty";
    EXPECT_EQ(g.col_idx()[e - 1], i) << what << ": row " << i << " does not end at the diagonal";
    double scale = 0;
    for (index_t k = b; k < e; ++k) scale = std::max(scale, std::abs(g.values()[k]));
    for (index_t k = b; k + 1 < e; ++k) {
      const double v = ga(g, a, i, g.col_idx()[k]);
      if (!(std::abs(v) <= 1e-10 * scale * (1 + std::abs(ga(g, a, i, i))))) {
        ++bad;
        ADD_FAILURE() << what << ": (G A)(" << i << "," << g.col_idx()[k] << ") = " << v;
      }
    }
    const double d = gagt_diag(g, a, i);
    if (!(std::abs(d - 1) <= 1e-10)) ++bad, ADD_FAILURE() << what << ": (G A G^T)(" << i << "," << i << ") = " << d;
  }
}

TEST(Fsai, HandCheckedTridiagonal) {
  // A = tridiag(-1, 2, -1), 3 x 3. Row 0: 1/sqrt(2). Row 1: A[0..1, 0..1]^-1 e_1 = (1/3, 2/3),
  // scaled by 1/sqrt(2/3). Row 2: the same block shifted, (1/3, 2/3) / sqrt(2/3) on columns 1, 2.
  const csr_matrix<double> a(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {2, -1, -1, 2, -1, -1, 2});
  const auto g = fsai_factor(a);
  ASSERT_EQ(g.nnz(), 5);
  EXPECT_EQ(std::vector<index_t>(g.col_idx().begin(), g.col_idx().end()), (std::vector<index_t>{0, 0, 1, 1, 2}));
  const double s = std::sqrt(1.5);
  const std::vector<double> want{1 / std::sqrt(2.0), s / 3, 2 * s / 3, s / 3, 2 * s / 3};
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(g.values()[k], want[k], 1e-15) << k;
  // A diagonal matrix: G = diag(1 / sqrt(a_ii)), the Jacobi scaling.
  const auto d = fsai_factor(csr_matrix<double>(2, 2, {0, 1, 2}, {0, 1}, {4, 9}));
  EXPECT_DOUBLE_EQ(d.values()[0], 0.5);
  EXPECT_DOUBLE_EQ(d.values()[1], 1.0 / 3);
}

TEST(Fsai, PropertiesOnGeneratedAndRealSystems) {
  for (const std::string name : {"poisson2d:20", "poisson3d:6", "bcsstk09.mtx", "gr_30_30.mtx"}) {
    const csr_matrix<double> a = system(name);
    const auto lower = fsai_factor(a);
    expect_fsai(lower, a, name + " tril(A)");
    count_t tril = 0;
    for (index_t i = 0; i < a.rows(); ++i)
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) tril += a.col_idx()[k] <= i;
    EXPECT_EQ(lower.nnz(), tril) << name;
    const auto squared = fsai_factor(a, {fsai_pattern::lower_squared, 0.0});
    expect_fsai(squared, a, name + " tril(|A|^2)");
    EXPECT_GT(squared.nnz(), lower.nnz()) << name;
    const auto dropped = fsai_factor(a, {fsai_pattern::lower_squared, 0.5});
    expect_fsai(dropped, a, name + " tril(|A|^2), drop 0.5");
    EXPECT_LE(dropped.nnz(), squared.nnz()) << name;
    EXPECT_GE(dropped.nnz(), lower.nnz()) << name;
  }
}

TEST(Fsai, MatricesThatAreNotSpdAreRefused) {
  // A zero diagonal, an indefinite 2 x 2 block, a rectangular matrix, a bad drop.
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(2, 2, {0, 1, 2}, {1, 0}, {1, 1})); }, {"A(1,1)", "not symmetric positive definite"});
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 2, 1})); },
      {"row 2", "not symmetric positive definite"});
  test::expect_throw_with<invalid_argument>([] { fsai_factor(csr_matrix<double>(2, 3, {0, 1, 2}, {0, 1}, {1, 1})); },
                                            {"2 x 3", "square"});
  test::expect_throw_with<invalid_argument>(
      [] { fsai_factor(csr_matrix<double>(1, 1, {0, 1}, {0}, {1}), {fsai_pattern::lower_squared, -1}); }, {"drop"});
}

/// Plain PCG in double with M^-1 = G^T G (G empty: no preconditioner); the iterations to
/// ||r|| <= 1e-8 ||b||.
int pcg_iterations(const csr_matrix<double>& a, const csr_matrix<double>* g) {
  const std::size_t n = static_cast<std::size_t>(a.rows());
  std::vector<double> x(n, 0), r(n, 1.0), z(n), p(n), q(n), t(n);
  auto dot = [](const std::vector<double>& u, const std::vector<double>& v) {
    long double s = 0;
    for (std::size_t i = 0; i < u.size(); ++i) s += static_cast<long double>(u[i]) * v[i];
    return static_cast<double>(s);
  };
  auto precondition = [&] {
    if (!g) return void(z = r);
    reference::spmv(1.0, *g, r, 0.0, t);
    std::fill(z.begin(), z.end(), 0.0);  // z = G^T t: row i of G scatters G_ij t_i into z_j
    for (index_t i = 0; i < g->rows(); ++i)
      for (index_t k = g->row_ptr()[i]; k < g->row_ptr()[i + 1]; ++k) z[g->col_idx()[k]] += g->values()[k] * t[i];
  };
  const double stop = 1e-8 * std::sqrt(dot(r, r));
  precondition();
  p = z;
  double rz = dot(r, z);
  for (int it = 1; it <= 20000; ++it) {
    reference::spmv(1.0, a, p, 0.0, q);
    const double alpha = rz / dot(p, q);
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i], r[i] -= alpha * q[i];
    if (std::sqrt(dot(r, r)) <= stop) return it;
    precondition();
    const double rz_new = dot(r, z);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz_new / rz * p[i];
    rz = rz_new;
  }
  return -1;
}

TEST(Fsai, CutsIterationsOnRealSystems) {
  // bcsstk09 (structural, not an M-matrix) and 2D Poisson: FSAI on tril(A) needs fewer
  // iterations than no preconditioner, and tril(|A|^2) fewer still.
  for (const std::string name : {"bcsstk09.mtx", "poisson2d:40"}) {
    const csr_matrix<double> a = system(name);
    const auto g1 = fsai_factor(a);
    const auto g2 = fsai_factor(a, {fsai_pattern::lower_squared, 0.0});
    const int none = pcg_iterations(a, nullptr), lower = pcg_iterations(a, &g1), squared = pcg_iterations(a, &g2);
    ASSERT_GT(none, 0) << name;
    ASSERT_GT(lower, 0) << name;
    ASSERT_GT(squared, 0) << name;
    EXPECT_LT(lower, none) << name;
    EXPECT_LT(squared, lower) << name;
    std::printf("%s: CG %d iterations, FSAI tril(A) %d, tril(|A|^2) %d\n", name.c_str(), none, lower, squared);
  }
}


solve_result host_pcg(const csr_matrix<double>& a, preconditioner pc, const precond_options& po = {}) {
  std::vector<double> b(static_cast<std::size_t>(a.rows())), x;
  reference::spmv(1.0, a, std::vector<double>(b.size(), 1.0), 0.0, b);
  cg_options opt;
  opt.precond = pc;
  opt.precond_opt = po;
  return cg_host(a, b, x, opt);
}

TEST(LevelSchedule, HandCheckedPatterns) {
  // Lower bidiagonal 4 x 4: every row waits for the one above (4 levels forward) and, for
  // L^T, for the one below (4 levels, in reverse order). A diagonal matrix: one level.
  const csr_matrix<double> bi(4, 4, {0, 1, 3, 5, 7}, {0, 0, 1, 1, 2, 2, 3}, {1, 1, 1, 1, 1, 1, 1});
  const auto f = levels_of_lower(4, bi.row_ptr().data(), bi.col_idx().data());
  EXPECT_EQ(f.levels(), 4);
  EXPECT_EQ(f.order, (std::vector<index_t>{0, 1, 2, 3}));
  const auto bt = reference::transpose(bi);  // L^T's solve: the upper levels of L^T
  const auto b = levels_of_upper(4, bt.row_ptr().data(), bt.col_idx().data());
  EXPECT_EQ(b.levels(), 4);
  EXPECT_EQ(b.order, (std::vector<index_t>{3, 2, 1, 0}));
  // Rows 0 and 1 independent, row 2 needs both, row 3 needs row 0 only.
  const csr_matrix<double> m(4, 4, {0, 1, 2, 5, 7}, {0, 1, 0, 1, 2, 0, 3}, {1, 1, 1, 1, 1, 1, 1});
  const auto g = levels_of_lower(4, m.row_ptr().data(), m.col_idx().data());
  EXPECT_EQ(g.ptr, (std::vector<index_t>{0, 2, 4}));
  EXPECT_EQ(g.order, (std::vector<index_t>{0, 1, 2, 3}));
  const auto mt = reference::transpose(m);
  const auto h = levels_of_upper(4, mt.row_ptr().data(), mt.col_idx().data());
  EXPECT_EQ(h.ptr, (std::vector<index_t>{0, 2, 4}));  // rows 2 and 3 first, then 0 and 1
  EXPECT_EQ(h.order, (std::vector<index_t>{2, 3, 0, 1}));
}

TEST(Ic0, ExactOnATridiagonalMatrixSoPcgTakesOneIteration) {
  // A tridiagonal matrix has no fill: IC(0) is its Cholesky factor, M = A, and PCG converges
  // in one iteration. L is checked by hand on tridiag(-1, 2, -1), 3 x 3: 
  // L = [sqrt2; -1/sqrt2, sqrt(3/2); -sqrt(2/3), sqrt(4/3)] (scaling folded in).
  const csr_matrix<double> a(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {2, -1, -1, 2, -1, -1, 2});
  const auto f = ic0_factor(a);
  EXPECT_EQ(f.shift, 0);
  const std::vector<double> want{std::sqrt(2.0), -1 / std::sqrt(2.0), std::sqrt(1.5), -std::sqrt(2.0 / 3), std::sqrt(4.0 / 3)};
  ASSERT_EQ(f.l.nnz(), 5);
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(f.l.values()[k], want[k], 1e-15) << k;
  const auto r = host_pcg(a, preconditioner::ic0);
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(r.iterations, 1);
  EXPECT_EQ(r.precond.kind, preconditioner::ic0);
}

TEST(BlockJacobi, SupervariablesAndExactOnABlockDiagonalMatrix) {
  // Rows 0-1 share the pattern {0,1}, rows 2-4 share {2,3,4}, row 5 is alone.
  const csr_matrix<double> a(6, 6, {0, 2, 4, 7, 10, 13, 14},
                             {0, 1, 0, 1, 2, 3, 4, 2, 3, 4, 2, 3, 4, 5},
                             {4, 1, 1, 3, 5, 1, 0.5, 1, 6, 1, 0.5, 1, 7, 2});
  EXPECT_EQ(supervariable_blocks(a, 32), (std::vector<index_t>{0, 2, 5, 6}));
  EXPECT_EQ(supervariable_blocks(a, 2), (std::vector<index_t>{0, 2, 4, 5, 6}));
  const auto inv = block_inverses(a, supervariable_blocks(a, 32));
  ASSERT_EQ(inv.size(), 4u + 9u + 1u);
  // [4 1; 1 3]^-1 = [3 -1; -1 4] / 11.
  EXPECT_NEAR(inv[0], 3.0 / 11, 1e-15);
  EXPECT_NEAR(inv[1], -1.0 / 11, 1e-15);
  EXPECT_NEAR(inv[3], 4.0 / 11, 1e-15);
  EXPECT_NEAR(inv[13], 0.5, 1e-15);
  const auto r = host_pcg(a, preconditioner::block_jacobi);  // M = A: one iteration
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(r.iterations, 1);
  EXPECT_NE(r.precond.detail.find("3 blocks of up to 3 rows"), std::string::npos) << r.precond.detail;
}

TEST(Preconditioners, CutIterationsOnRealSystemsThroughTheHostSolver) {
  // Iterations to 1e-8 through cg_host: FSAI and IC(0) below Jacobi on these systems; block-
  // Jacobi no worse than Jacobi (on a matrix without supervariables it is
  // Jacobi itself). Every solve converges with its true residual checked by cg().
  for (const std::string name : {"bcsstk09.mtx", "gr_30_30.mtx", "poisson2d:40", "poisson3d:12"}) {
    const auto a = system(name);
    const auto jacobi = host_pcg(a, preconditioner::jacobi);
    const auto bj = host_pcg(a, preconditioner::block_jacobi);
    const auto fsai = host_pcg(a, preconditioner::fsai);
    precond_options sq;
    sq.fsai.pattern = fsai_pattern::lower_squared;
    const auto fsai2 = host_pcg(a, preconditioner::fsai, sq);
    const auto ic0 = host_pcg(a, preconditioner::ic0);
    for (const auto* r : {&jacobi, &bj, &fsai, &fsai2, &ic0}) EXPECT_TRUE(r->converged()) << name << ": " << r->message;
    EXPECT_LE(bj.iterations, jacobi.iterations + jacobi.iterations / 10) << name;
    EXPECT_LT(fsai.iterations, jacobi.iterations) << name;
    EXPECT_LT(fsai2.iterations, fsai.iterations) << name;
    EXPECT_LT(ic0.iterations, jacobi.iterations) << name;
    std::printf("%s: jacobi %lld, block-jacobi %lld (%s), fsai %lld, fsai tril(|A|^2) %lld, ic0 %lld (%s)\n",
                name.c_str(), (long long)jacobi.iterations, (long long)bj.iterations, bj.precond.detail.c_str(),
                (long long)fsai.iterations, (long long)fsai2.iterations, (long long)ic0.iterations,
                ic0.precond.detail.c_str());
  }
}

TEST(Preconditioners, ThatDoNotExistAreABreakdownStatusNamingTheRow) {
  // Indefinite 2 x 2 (diagonal positive): FSAI row 2, block-Jacobi's block, IC(0) with no
  // shift allowed. A non-positive diagonal: every one of them names A(2,2).
  const csr_matrix<double> indefinite(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 2, 1});
  precond_options no_shift;
  no_shift.max_shift = 0;
  for (auto [pc, words] : {std::pair{preconditioner::fsai, std::string("row 2")},
                           std::pair{preconditioner::block_jacobi, std::string("rows 1..2")},
                           std::pair{preconditioner::ic0, std::string("row 2")}}) {
    const auto r = host_pcg(indefinite, pc, no_shift);
    EXPECT_EQ(r.status, solve_status::breakdown) << to_string(pc);
    EXPECT_NE(r.message.find(words), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("not symmetric positive definite") + r.message.find("does not exist"), 2 * std::string::npos)
        << r.message;
  }
  const csr_matrix<double> negative(2, 2, {0, 1, 2}, {0, 1}, {1, -1});
  for (auto [pc, words] : {std::pair{preconditioner::fsai, std::string("row 2")},
                           std::pair{preconditioner::block_jacobi, std::string("rows 2..2")},
                           std::pair{preconditioner::ic0, std::string("A(2,2)")}}) {
    const auto r = host_pcg(negative, pc);
    EXPECT_EQ(r.status, solve_status::breakdown) << to_string(pc);
    EXPECT_NE(r.message.find(words), std::string::npos) << r.message;
  }
  // With shifts allowed, IC(0) of the indefinite matrix still fails: the message says which
  // range was tried.
  const auto r = host_pcg(indefinite, preconditioner::ic0);
  EXPECT_EQ(r.status, solve_status::breakdown);
  EXPECT_NE(r.message.find("every diagonal shift up to 1"), std::string::npos) << r.message;
}


TEST(Ilu0, LuMatchesAOnItsPatternAndIsExactWithoutFill) {
  // The defining property: (L U)_ij = A_ij for every stored (i, j), L unit lower. Checked on
  // random non-symmetric matrices and real ones; tolerance 1e-11 relative to the row's
  // largest |A_ij| (long double factors rounded to double, a double check of short sums).
  std::mt19937 g(3);
  for (const std::string name : {"random:1", "random:33", "random:500", "bcsstk09.mtx", "gr_30_30.mtx"}) {
    const csr_matrix<double> a = name.rfind("random:", 0) == 0 ? test::random_nonsymmetric<double>(std::stoi(name.substr(7)), 6, g)
                                                                : system(name);
    const auto lu = ilu0_factor(a);
    const auto& rp = lu.row_ptr();
    const auto& ci = lu.col_idx();
    const auto& v = lu.values();
    auto at = [&](index_t i, index_t j) {  // LU's stored entry (i, j), 0 when not stored
      for (index_t k = rp[i]; k < rp[i + 1]; ++k)
        if (ci[k] == j) return v[k];
      return 0.0;
    };
    int bad = 0;
    for (index_t i = 0; i < a.rows() && bad < 3; ++i) {
      double scale = 0;
      for (index_t k = rp[i]; k < rp[i + 1]; ++k) scale = std::max(scale, std::abs(a.values()[k]));
      for (index_t k = rp[i]; k < rp[i + 1]; ++k) {
        const index_t j = ci[k];
        double s = 0;  // sum over the stored m <= min(i, j) of L_im U_mj (L_ii = 1)
        for (index_t l = rp[i]; l < rp[i + 1]; ++l) {
          const index_t m = ci[l];
          if (m <= std::min(i, j)) s += (m == i ? 1.0 : v[l]) * at(m, j);
        }
        if (!(std::abs(s - a.values()[k]) <= 1e-11 * scale))
          ++bad, ADD_FAILURE() << name << ": (LU)(" << i << "," << j << ") = " << s << ", A = " << a.values()[k];
      }
    }
  }
  // Tridiagonal: no fill, so L U = A and one application solves A z = r exactly.
  const csr_matrix<double> t(3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {4, -1, -2, 5, -1, -3, 6});
  host_preconditioner<double> m(t, preconditioner::ilu0, {});
  const std::vector<double> r{1, 2, 3};
  std::vector<double> z(3), back(3);
  m.apply(r, z);
  reference::spmv(1.0, t, z, 0.0, back);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(back[i], r[i], 1e-14);
}

TEST(Ilu0, ZeroPivotsAndMissingDiagonalsAreRefused) {
  test::expect_throw_with<invalid_argument>(
      [] { ilu0_factor(csr_matrix<double>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {0, 1, 1, 0})); }, {"pivot of row 1", "does not exist"});
  test::expect_throw_with<invalid_argument>(
      [] { ilu0_factor(csr_matrix<double>(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 1, 1, 1})); }, {"pivot of row 2"});
  test::expect_throw_with<invalid_argument>([] { ilu0_factor(csr_matrix<double>(2, 2, {0, 1, 2}, {1, 0}, {1, 1})); },
                                            {"A(1,1) is not stored"});
}

}  // namespace
}  // namespace la

namespace la {
namespace {
// An SPD arrow matrix (diagonal n + 1, first row and column 1): tril(|A|^2) fills row i with
// every column up to i, so without a budget the setup costs about n^4 / 12 flops (53 s at
// n = 1000). The fill budget keeps every row of G at most max_row entries and the setup near
// tril(A)'s cost; the report says how many rows were cut.
TEST(FsaiBudget, ArrowMatrixSquaredPatternStaysCheap) {
  const index_t n = 2000;
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    if (i == 0)
      for (index_t j = 0; j < n; ++j) ci.push_back(j), v.push_back(j == 0 ? n + 1.0 : 1.0);
    else
      ci.push_back(0), v.push_back(1.0), ci.push_back(i), v.push_back(n + 1.0);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  const csr_matrix<double> a(n, n, rp, ci, v);
  fsai_options o;
  o.pattern = fsai_pattern::lower_squared;
  const auto t0 = std::chrono::steady_clock::now();
  index_t trimmed = 0;
  double flops = 0;
  const auto g = fsai_factor(a, o, &trimmed, &flops);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (index_t i = 0; i < n; ++i) EXPECT_LE(g.row_ptr()[i + 1] - g.row_ptr()[i], o.max_row) << "row " << i;
  EXPECT_GT(trimmed, n / 2);
  EXPECT_LE(flops, double(n) * o.max_row * o.max_row * o.max_row / 3 + 1);
  EXPECT_LT(secs, 20.0);  // about 0.4 s on the 2-core CI machine; uncapped it ran for minutes
  // The solve with it converges.
  std::vector<double> b(n, 1.0), x;
  cg_options co;
  co.precond = preconditioner::fsai;
  co.precond_opt.fsai = o;
  const auto r = cg_host(a, b, x, co);
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_NE(r.precond.detail.find("cut to the fill budget of 64"), std::string::npos) << r.precond.detail;
}

// A tril(A) row longer than the budget (a structural matrix's 599-entry row) keeps the
// diagonal and its largest scaled entries; 0 turns the budget off.
TEST(FsaiBudget, LongLowerRowKeepsItsLargestEntries) {
  const index_t n = 300;
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    if (i == n - 1)
      for (index_t j = 0; j < n; ++j) ci.push_back(j), v.push_back(j == i ? 4.0 * n : -(1.0 + j % 7));
    else if (i > 0)
      ci.push_back(i - 1), v.push_back(-1.0), ci.push_back(i), v.push_back(4.0 * n), ci.push_back(n - 1),
          v.push_back(-(1.0 + i % 7));
    else
      ci.push_back(0), v.push_back(4.0 * n), ci.push_back(n - 1), v.push_back(-1.0);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  const csr_matrix<double> a(n, n, rp, ci, v);
  fsai_options o;
  const auto g = fsai_factor(a, o);
  const index_t last = g.row_ptr()[n] - g.row_ptr()[n - 1];
  EXPECT_EQ(last, 64);
  // The kept entries are the heaviest: columns j with j % 7 == 6 (|a| = 7) first.
  for (index_t k = g.row_ptr()[n - 1]; k < g.row_ptr()[n] - 1; ++k) EXPECT_GE(g.col_idx()[k] % 7, 5) << g.col_idx()[k];
  o.max_row = 0;
  const auto full = fsai_factor(a, o);
  EXPECT_EQ(full.row_ptr()[n] - full.row_ptr()[n - 1], n);
}
}  // namespace
}  // namespace la
