// la::sparse_direct_solver (the GPU's supernodal multifrontal LU, sparse_direct_solver.hpp)
// against the host oracle sparse_lu_host (the same matching, ordering and static pivots,
// factored up-looking): the factors entry by entry, on awkward matrices (1x1, 31, 33, 1000
// rows, an arrow, a band, disconnected blocks, a dense row, a zero-free diagonal hidden by a
// permutation, SPD and not), through the small-front kernel and the blocked path (big_front
// forced low); solutions with several right-hand sides to a residual recomputed on the host;
// the real systems the Krylov methods fail on; structurally singular and not positive definite
// matrices named by column; refactorization with new values; reruns bit-identical; bad input.
// GPU tests skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/kernels/reference/transpose.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

#include "test_util.hpp"

using namespace la;

namespace {
using csr = csr_matrix<double, count_t>;

/// A matrix from (row, col, value) triplets (duplicates summed), n x n.
csr from_triplets(index_t n, std::vector<std::tuple<index_t, index_t, double>> t) {
  std::sort(t.begin(), t.end(), [](const auto& x, const auto& y) {
    return std::get<0>(x) != std::get<0>(y) ? std::get<0>(x) < std::get<0>(y) : std::get<1>(x) < std::get<1>(y);
  });
  std::vector<count_t> ptr(static_cast<std::size_t>(n) + 1, 0);
  std::vector<index_t> idx;
  std::vector<double> val;
  for (std::size_t e = 0; e < t.size(); ++e) {
    const auto [i, j, v] = t[e];
    if (!idx.empty() && e > 0 && std::get<0>(t[e - 1]) == i && std::get<1>(t[e - 1]) == j) {
      val.back() += v;
      continue;
    }
    idx.push_back(j), val.push_back(v);
    ++ptr[static_cast<std::size_t>(i) + 1];
  }
  for (index_t i = 0; i < n; ++i) ptr[static_cast<std::size_t>(i) + 1] += ptr[static_cast<std::size_t>(i)];
  return csr(n, n, std::move(ptr), std::move(idx), std::move(val));
}

/// Non-symmetric, its heavy entries on a random permutation (A's own diagonal mostly zero), plus
/// `extra` random entries a row; the pattern families of the issue.
csr general(index_t n, int extra, std::mt19937& g, const std::string& shape = "random") {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<index_t> sigma(static_cast<std::size_t>(n));
  std::iota(sigma.begin(), sigma.end(), 0);
  std::shuffle(sigma.begin(), sigma.end(), g);
  std::vector<std::tuple<index_t, index_t, double>> t;
  for (index_t i = 0; i < n; ++i) t.emplace_back(sigma[static_cast<std::size_t>(i)], i, 4 + u(g));
  std::uniform_int_distribution<index_t> pick(0, n - 1);
  if (shape == "random")
    for (index_t e = 0; e < extra * n; ++e) t.emplace_back(pick(g), pick(g), u(g));
  if (shape == "arrow")
    for (index_t i = 1; i < n; ++i) t.emplace_back(0, i, u(g)), t.emplace_back(i, 0, u(g));
  if (shape == "band")
    for (index_t i = 0; i < n; ++i)
      for (index_t d = 1; d <= 3; ++d)
        if (i + d < n) t.emplace_back(i, i + d, u(g)), t.emplace_back(i + d, i, u(g));
  if (shape == "blocks")  // three disconnected chains
    for (index_t i = 0; i + 1 < n; ++i)
      if (i % (n / 3 + 1) != n / 3) t.emplace_back(i, i + 1, u(g)), t.emplace_back(i + 1, i, 0.5 * u(g));
  if (shape == "dense row")
    for (index_t j = 0; j < n; ++j) t.emplace_back(n / 2, j, u(g));
  return from_triplets(n, std::move(t));
}

/// Symmetric positive definite: a random symmetric pattern, the diagonal dominant.
csr spd(index_t n, int extra, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<index_t> pick(0, n - 1);
  std::vector<std::tuple<index_t, index_t, double>> t;
  std::vector<double> diag(static_cast<std::size_t>(n), 1.0);
  std::set<std::pair<index_t, index_t>> seen;
  for (index_t e = 0; e < extra * n; ++e) {
    const index_t i = pick(g), j = pick(g);
    if (i == j || !seen.insert({std::min(i, j), std::max(i, j)}).second) continue;
    const double v = u(g);
    t.emplace_back(i, j, v), t.emplace_back(j, i, v);
    diag[static_cast<std::size_t>(i)] += std::abs(v), diag[static_cast<std::size_t>(j)] += std::abs(v);
  }
  for (index_t i = 0; i < n; ++i) t.emplace_back(i, i, diag[static_cast<std::size_t>(i)]);
  return from_triplets(n, std::move(t));
}

/// ||b - A x||_2 / ||b||_2 in long double, column by column; the worst.
double relres(const csr& a, const std::vector<double>& b, const std::vector<double>& x, index_t k) {
  const index_t n = a.rows();
  double worst = 0;
  for (index_t c = 0; c < k; ++c) {
    long double r2 = 0, b2 = 0;
    for (index_t i = 0; i < n; ++i) {
      long double s = b[static_cast<std::size_t>(c * n + i)];
      for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
        s -= static_cast<long double>(a.values()[p]) * x[static_cast<std::size_t>(c * n + a.col_idx()[p])];
      r2 += s * s, b2 += static_cast<long double>(b[static_cast<std::size_t>(c * n + i)]) * b[static_cast<std::size_t>(c * n + i)];
    }
    worst = std::max(worst, static_cast<double>(std::sqrt(r2 / (b2 > 0 ? b2 : 1))));
  }
  return worst;
}

/// The GPU's factors against the oracle's, entry by entry (relative to the largest |entry|):
/// every entry of the oracle's structure, and the explicit zeros of the amalgamated fronts
/// zero (their structure holds the oracle's).
void expect_same_factors(const sparse_direct_solver::host_factors& h, const sparse_lu<double>& o, const std::string& what) {
  ASSERT_EQ(h.l_ptr.size(), o.l_ptr.size()) << what;
  double scale = 0;
  for (double v : o.u_diag) scale = std::max(scale, std::abs(v));
  for (double v : o.l_val) scale = std::max(scale, std::abs(v));
  for (double v : o.u_val) scale = std::max(scale, std::abs(v));
  double worst = 0;
  std::size_t missing = 0;
  const std::size_t n = o.u_diag.size();
  std::vector<double> lv(n, 0.0), uv(n, 0.0);
  std::vector<char> in(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    for (count_t p = h.l_ptr[j]; p < h.l_ptr[j + 1]; ++p) {
      const auto r = static_cast<std::size_t>(h.l_idx[static_cast<std::size_t>(p)]);
      lv[r] = h.l_val[static_cast<std::size_t>(p)], uv[r] = h.u_val[static_cast<std::size_t>(p)], in[r] = 1;
    }
    for (count_t p = o.l_ptr[j]; p < o.l_ptr[j + 1]; ++p) {
      const auto r = static_cast<std::size_t>(o.l_idx[static_cast<std::size_t>(p)]);
      if (!in[r]) ++missing;
      worst = std::max(worst, std::abs(lv[r] - o.l_val[static_cast<std::size_t>(p)]));
      worst = std::max(worst, std::abs(uv[r] - o.u_val[static_cast<std::size_t>(p)]));
      lv[r] = uv[r] = 0;  // compared
    }
    for (count_t p = h.l_ptr[j]; p < h.l_ptr[j + 1]; ++p) {  // the rest: explicit zeros
      const auto r = static_cast<std::size_t>(h.l_idx[static_cast<std::size_t>(p)]);
      worst = std::max(worst, std::max(std::abs(lv[r]), std::abs(uv[r])));
      lv[r] = uv[r] = 0, in[r] = 0;
    }
    worst = std::max(worst, std::abs(h.u_diag[j] - o.u_diag[j]));
  }
  EXPECT_EQ(missing, 0u) << what << ": entries of the oracle's structure missing from the fronts";
  EXPECT_LE(worst, 1e-11 * scale) << what;
}

std::vector<double> random_rhs(index_t n, index_t k, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> b(static_cast<std::size_t>(n * k));
  for (double& v : b) v = u(g);
  return b;
}
}  // namespace

/// The awkward matrices of the issue: random non-symmetric (1, 31, 33, 1000 rows), arrow, band,
/// disconnected blocks, a dense row, SPD.
std::vector<std::pair<std::string, csr>> awkward(bool small) {
  std::mt19937 g(57);
  std::vector<std::pair<std::string, csr>> cases;
  for (index_t n : {1, 31, 33, small ? 120 : 1000}) cases.push_back({"random " + std::to_string(n), general(n, 3, g)});
  for (const char* shape : {"arrow", "band", "blocks", "dense row"}) cases.push_back({shape, general(small ? 40 : 300, 0, g, shape)});
  for (index_t n : {1, 33, small ? 150 : 1000}) cases.push_back({"spd " + std::to_string(n), spd(n, 4, g)});
  return cases;
}

// Host: the fronts' symbols (row structures, maps, levels, A's entries' places) factored by the
// sequential multifrontal oracle give sparse_lu_host's factors: the symbols the GPU reads are
// checked without a GPU.
TEST(SparseDirectFronts, TheHostMultifrontalFactorsAreTheUpLookingOracles) {
  for (const auto& [name, a] : awkward(false)) {
    for (bool matched : {true, false}) {
      if (!matched && name.rfind("spd", 0) != 0) continue;
      const sparse_detail::front_symbols f = sparse_detail::build_fronts(a, matched, fill_ordering::automatic);
      ASSERT_EQ(f.singular, 0) << name;
      index_t perturbed = 0, bad = 0;
      const std::vector<double> F = sparse_detail::factor_fronts_host(f, a.values(), perturbed, bad);
      EXPECT_EQ(bad, 0) << name;
      const sparse_lu<double> oracle = sparse_lu_host(a, fill_ordering::automatic, matched);
      ASSERT_TRUE(oracle.ok()) << name;
      EXPECT_EQ(perturbed, oracle.perturbed) << name;
      expect_same_factors(sparse_detail::fronts_to_factors(f, F), oracle, name + (matched ? "" : " (unmatched)"));
      // The blocked, threaded factorization the host's direct method runs: bit for bit the same.
      for (int threads : {1, 2, 3}) {
        index_t p2 = 0, b2 = 0;
        EXPECT_EQ(sparse_detail::factor_fronts_threaded(f, a.values(), threads, p2, b2), F) << name << " " << threads;
        EXPECT_EQ(p2, perturbed);
        EXPECT_EQ(b2, bad);
      }
      // Its solve, and the transposed one (the condition estimate's).
      std::mt19937 g(5);
      std::vector<double> b = random_rhs(a.rows(), 1, g), x = b;
      sparse_detail::solve_fronts_host(f, F, x.data());
      EXPECT_LT(relres(a, b, x, 1), 1e-11) << name;
      x = b;
      sparse_detail::solve_fronts_host(f, F, x.data(), true);
      EXPECT_LT(relres(reference::transpose(a), b, x, 1), 1e-11) << name << " (transposed)";
      // Every level's fronts have their children in lower levels; every item's child is a
      // front of a lower level than its parent's.
      std::vector<std::size_t> level_of(f.f_m.size());
      for (std::size_t l = 0; l < f.levels(); ++l)
        for (std::size_t e = f.level_ptr[l]; e < f.level_ptr[l + 1]; ++e) level_of[static_cast<std::size_t>(f.level_list[e])] = l;
      for (std::size_t i = 0; i < f.item_front.size(); ++i)
        for (long q = f.item_ptr[i]; q < f.item_ptr[i + 1]; ++q)
          EXPECT_LT(level_of[static_cast<std::size_t>(f.con_child[static_cast<std::size_t>(q)])],
                    level_of[static_cast<std::size_t>(f.item_front[i])]);
    }
  }
  {  // fronts wide enough for the rows shared among threads inside a front (m - 32 > 128)
    std::mt19937 g(61);
    const csr a = general(600, 6, g);
    const sparse_detail::front_symbols f = sparse_detail::build_fronts(a, true, fill_ordering::automatic);
    EXPECT_GT(*std::max_element(f.f_m.begin(), f.f_m.end()), 300);  // (m - 32)^2 32 > 2e6: two threads inside
    index_t p1 = 0, b1 = 0, p2 = 0, b2 = 0;
    const std::vector<double> F = sparse_detail::factor_fronts_host(f, a.values(), p1, b1);
    EXPECT_EQ(sparse_detail::factor_fronts_threaded(f, a.values(), 3, p2, b2), F);
  }
  {  // levels of many fronts and over 2e6 multiply-adds: the level's fronts shared among threads
    const csr a = to_csr<count_t>(test::poisson_2d<double>(150));
    const sparse_detail::front_symbols f = sparse_detail::build_fronts(a, false, fill_ordering::automatic);
    bool shared = false;  // a level of 6 fronts or more and over 2e6 multiply-adds
    for (std::size_t l = 0; l < f.levels(); ++l) {
      double work = 0;
      for (std::size_t e = f.level_ptr[l]; e < f.level_ptr[l + 1]; ++e) {
        const auto q = static_cast<std::size_t>(f.level_list[e]);
        work += double(f.f_m[q]) * f.f_m[q] * f.f_nc[q];
      }
      shared = shared || (f.level_ptr[l + 1] - f.level_ptr[l] >= 6 && work > 2e6);
    }
    EXPECT_TRUE(shared);
    index_t p1 = 0, b1 = 0, p2 = 0, b2 = 0;
    const std::vector<double> F = sparse_detail::factor_fronts_host(f, a.values(), p1, b1);
    EXPECT_EQ(sparse_detail::factor_fronts_threaded(f, a.values(), 3, p2, b2), F);
  }
  // Structurally singular: the matching names the column, nothing else is built.
  const csr s(5, 5, std::vector<count_t>{0, 1, 2, 3, 4, 5}, std::vector<index_t>{0, 1, 1, 2, 1}, std::vector<double>{1, 2, 3, 4, 5});
  EXPECT_GT(sparse_detail::build_fronts(s, true, fill_ordering::automatic).singular, 0);
  // Not positive definite taken as SPD: the first column without a positive pivot.
  const csr ind(2, 2, std::vector<count_t>{0, 2, 4}, std::vector<index_t>{0, 1, 0, 1}, std::vector<double>{1, 2, 2, 1});
  const sparse_detail::front_symbols f = sparse_detail::build_fronts(ind, false, fill_ordering::natural);
  index_t perturbed = 0, bad = 0;
  sparse_detail::factor_fronts_host(f, ind.values(), perturbed, bad);
  EXPECT_EQ(bad, 2);
}

TEST(SparseDirect, FactorsMatchTheHostOracleOnAwkwardMatrices) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(56);
  for (const auto& [name, a] : awkward(test::under_sanitizer())) {
    for (index_t big : {index_t(192), index_t(8)}) {  // the small-front kernel, then the blocked path
      const std::string what = name + (big == 8 ? " (blocked)" : "");
      sparse_direct_options o;
      o.big_front = big;
      sparse_direct_solver s(ctx, a, o);
      s.factor();
      ASSERT_TRUE(s.ok()) << what;
      const sparse_lu<double> oracle = sparse_lu_host(a, fill_ordering::automatic, s.matched());
      ASSERT_TRUE(oracle.ok()) << what;
      EXPECT_EQ(s.perturbed(), oracle.perturbed) << what;
      expect_same_factors(s.download_factors(), oracle, what);
      const index_t k = 3;
      const std::vector<double> b = random_rhs(a.rows(), k, g);
      std::vector<double> x = b;
      const sparse_direct_report r = s.solve(x, k);
      EXPECT_LT(relres(a, b, x, k), 1e-13) << what << ": " << r.message;
      EXPECT_LT(r.relative_residual, 1e-13) << what;
    }
  }
}

// The GPU's solve without refinement against the host's solve of the host oracle's fronts (the
// same symbols): each front's triangles by column tiles of 32, and with a big_front of 8 the
// off-diagonal products of most fronts on their own launch (split fronts); several
// right-hand sides. Refinement would hide a wrong solve, so it is off.
TEST(SparseDirect, SolvesWithoutRefinementAsTheHostFrontsDo) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(58);
  bool reached_split = false, reached_tiles = false;  // the split fronts' kernels, tiles after the first
  for (const auto& [name, a] : awkward(test::under_sanitizer())) {
    for (index_t big : {index_t(192), index_t(8)}) {
      const std::string what = name + " big_front " + std::to_string(big);
      sparse_direct_options o;
      o.big_front = big, o.max_refinement = 0, o.refinement = refinement_kind::classical;
      sparse_direct_solver s(ctx, a, o);
      s.factor();
      ASSERT_TRUE(s.ok()) << what;
      const sparse_detail::front_symbols f = sparse_detail::build_fronts(a, s.matched(), fill_ordering::automatic);
      index_t perturbed = 0, bad = 0;
      const std::vector<double> F = sparse_detail::factor_fronts_host(f, a.values(), perturbed, bad);
      ASSERT_EQ(bad, 0) << what;
      for (std::size_t q = 0; q < f.f_m.size(); ++q) {
        reached_split = reached_split || sparse_detail::split_solve(f.f_m[q], f.f_nc[q], long(big) * big);
        reached_tiles = reached_tiles || f.f_nc[q] > 32;
      }
      const index_t k = 3, n = a.rows();
      const std::vector<double> b = random_rhs(n, k, g);
      std::vector<double> x = b;
      const sparse_direct_report r = s.solve(x, k);
      EXPECT_EQ(r.refinement_steps, 0) << what;
      for (index_t c = 0; c < k; ++c) {
        std::vector<double> h(b.begin() + c * n, b.begin() + (c + 1) * n);
        sparse_detail::solve_fronts_host(f, F, h.data());
        double diff = 0, scale = 0;
        for (index_t i = 0; i < n; ++i) {
          diff = std::max(diff, std::abs(x[static_cast<std::size_t>(c * n + i)] - h[static_cast<std::size_t>(i)]));
          scale = std::max(scale, std::abs(h[static_cast<std::size_t>(i)]));
        }
        EXPECT_LE(diff, 1e-10 * scale) << what << ", right-hand side " << c;
      }
      std::vector<double> again = b;
      s.solve(again, k);
      EXPECT_EQ(again, x) << what << ": reruns bit-identical";
      // Fewer right-hand sides (another graph), then more (the kept buffers made again): each
      // column's solution the same bits.
      std::vector<double> one(b.begin(), b.begin() + n);
      s.solve(one, 1);
      EXPECT_TRUE(std::equal(one.begin(), one.end(), x.begin())) << what << ": one right-hand side";
      std::vector<double> four = b;
      four.insert(four.end(), b.begin(), b.begin() + n);
      s.solve(four, k + 1);
      EXPECT_TRUE(std::equal(x.begin(), x.end(), four.begin())) << what << ": four right-hand sides";
      EXPECT_TRUE(std::equal(one.begin(), one.end(), four.begin() + k * n)) << what << ": four right-hand sides";
    }
  }
  EXPECT_TRUE(reached_split);
  EXPECT_TRUE(reached_tiles);
}

// The GPU solve's norms are scaled sums (dnrm2's): b of 1e200 (whose squares overflow) and
// 1e-200 (whose squares underflow) give the backward error and relative residual of b of 1,
// and a NaN in b is a non-finite residual, not a converged one.
TEST(SparseDirect, TheGpuNormsNeitherOverflowNorUnderflow) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(61);
  const csr_matrix<double, count_t> a = to_csr<count_t>(test::random_nonsymmetric<double>(33, 4, g));
  sparse_direct_solver s(ctx, a, {});
  s.factor();
  ASSERT_TRUE(s.ok());
  const index_t n = a.rows(), k = 2;
  const std::vector<double> b = random_rhs(n, k, g);
  std::vector<double> x = b;
  const sparse_direct_report base = s.solve(x, k);
  ASSERT_LE(base.backward_error, 1e-15);
  for (double scale : {1e200, 1e-200}) {
    std::vector<double> y = b;
    for (double& v : y) v *= scale;
    const sparse_direct_report r = s.solve(y, k);
    EXPECT_TRUE(std::isfinite(r.backward_error) && std::isfinite(r.relative_residual)) << scale;
    EXPECT_LE(r.backward_error, 1e-15) << scale;
    EXPECT_LE(r.relative_residual, 1e-12) << scale;
    EXPECT_GT(r.relative_residual, 0.0) << scale << ": a residual that underflowed to 0";
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i] / scale, x[i], 1e-10 * (1 + std::abs(x[i]))) << scale;
  }
  std::vector<double> bad = b;
  bad[5] = NAN;
  const sparse_direct_report r = s.solve(bad, k);
  EXPECT_FALSE(r.backward_error <= 1e-15) << "a NaN in b reads as a backward error of " << r.backward_error;
  EXPECT_FALSE(r.relative_residual <= 1e-12);
}

TEST(SparseDirect, TakesASymmetricPositiveDiagonalMatrixWithoutPivotingAndFallsBackWhereItIsIndefinite) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(58);
  const csr a = to_csr<count_t>(test::poisson_2d<double>(test::under_sanitizer() ? 12 : 60));
  sparse_direct_solver s(ctx, a);
  s.factor();
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s.matched());
  EXPECT_EQ(s.perturbed(), 0);
  std::vector<double> b = random_rhs(a.rows(), 1, g), x = b;
  s.solve(x);
  EXPECT_LT(relres(a, b, x, 1), 1e-14);
  // Symmetric with a positive diagonal but indefinite: auto falls back to the matched LU;
  // "spd" says which column has no positive pivot.
  csr ind = a;
  for (index_t i = 0; i < ind.rows(); ++i)
    for (count_t p = ind.row_ptr()[i]; p < ind.row_ptr()[i + 1]; ++p)
      if (ind.col_idx()[p] != i) ind.values()[p] *= 1.9;  // -1.9 off the diagonal of 4: not diagonally dominant
  sparse_direct_solver si(ctx, ind);
  si.factor();
  ASSERT_TRUE(si.ok());
  EXPECT_TRUE(si.matched());
  x = b;
  si.solve(x);
  EXPECT_LT(relres(ind, b, x, 1), 1e-12);
  sparse_direct_options o;
  o.factorization = sparse_factorization::spd;
  sparse_direct_solver sp(ctx, ind, o);
  sp.factor();
  EXPECT_FALSE(sp.ok());
  EXPECT_GT(sp.singular_column(), 0);
  EXPECT_THROW(sp.solve(x), invalid_argument);
}

TEST(SparseDirect, SolvesTheRealSystemsAndNamesAStructurallySingularColumn) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(59);
  const std::vector<const char*> names = test::under_sanitizer()
                                             ? std::vector<const char*>{"west0479.mtx", "bcsstk01.mtx"}
                                             : std::vector<const char*>{"west0479.mtx", "rajat19.mtx", "west2021.mtx", "impcol_a.mtx",
                                                                        "adder_dcop_05.mtx", "bcsstk09.mtx", "gr_30_30.mtx",
                                                                        "1138_bus.mtx", "Trefethen_2000.mtx"};
  for (const char* name : names) {
    const csr a = to_csr<count_t>(test::system_matrix(name, test::data_dir()));
    sparse_direct_solver s(ctx, a);
    s.factor();
    ASSERT_TRUE(s.ok()) << name;
    // b = A x for x = ones and x random in [-1, 1] (a solution of moderate size: random b's
    // solution is as large as the condition number, and the exactly rounded x's residual with it).
    const index_t n = a.rows();
    std::vector<double> xt = random_rhs(n, 2, g), b(xt.size(), 0.0);
    std::fill(xt.begin(), xt.begin() + n, 1.0);
    for (index_t c = 0; c < 2; ++c)
      for (index_t i = 0; i < n; ++i)
        for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
          b[static_cast<std::size_t>(c * n + i)] += a.values()[p] * xt[static_cast<std::size_t>(c * n + a.col_idx()[p])];
    std::vector<double> x = b;
    const sparse_direct_report r = s.solve(x, 2);
    EXPECT_LT(relres(a, b, x, 2), 1e-12) << name << ": " << r.message;
  }
  // ca-GrQc: the matching's search gives up on its pattern and its diagonal is zero, so the
  // sparse LU refuses, saying why (the direct method falls back to the dense LU, which names
  // the column); a small structurally singular matrix is named by its column.
  const csr gq = to_csr<count_t>(test::system_matrix("ca-GrQc.mtx", test::data_dir()));
  EXPECT_THROW(sparse_direct_solver(ctx, gq), invalid_argument);
  const csr sing(5, 5, std::vector<count_t>{0, 1, 2, 3, 4, 5}, std::vector<index_t>{0, 1, 1, 2, 1}, std::vector<double>{1, 2, 3, 4, 5});
  sparse_direct_solver s(ctx, sing);
  s.factor();
  EXPECT_FALSE(s.ok());
  EXPECT_GT(s.singular_column(), 0);
  std::vector<double> b(5, 1.0);
  EXPECT_THROW(s.solve(b), invalid_argument);
}

TEST(SparseDirect, RefactorsNewValuesAndRerunsBitIdentically) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(60);
  const csr a = general(test::under_sanitizer() ? 80 : 700, 3, g);
  sparse_direct_options o;
  o.big_front = 16;  // both paths in one factorization
  sparse_direct_solver s(ctx, a, o);
  s.factor();
  ASSERT_TRUE(s.ok());
  const auto f1 = s.download_factors();
  const std::vector<double> b = random_rhs(a.rows(), 1, g);
  std::vector<double> x1 = b;
  s.solve(x1);
  s.factor();
  const auto f2 = s.download_factors();
  std::vector<double> x2 = b;
  s.solve(x2);
  EXPECT_EQ(f1.l_val, f2.l_val);
  EXPECT_EQ(f1.u_val, f2.u_val);
  EXPECT_EQ(x1, x2);
  // New values, the same pattern: the analysis reused, the answer that of the new matrix.
  csr a2 = a;
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (double& v : a2.values()) v *= u(g);
  s.refactor(a2);
  ASSERT_TRUE(s.ok());
  std::vector<double> x3 = b;
  s.solve(x3);
  EXPECT_LT(relres(a2, b, x3, 1), 1e-12);
  // Bad input.
  EXPECT_THROW(sparse_direct_solver(ctx, csr(2, 3, std::vector<count_t>{0, 0, 0}, {}, {})), invalid_argument);
  csr nan = a;
  nan.values()[0] = std::nan("");
  EXPECT_THROW(sparse_direct_solver(ctx, nan), invalid_argument);
  EXPECT_THROW(s.refactor(spd(a.rows(), 2, g)), invalid_argument);
  std::vector<double> short_b(3);
  EXPECT_THROW(s.solve(short_b), invalid_argument);
  o.big_front = 0;
  EXPECT_THROW(sparse_direct_solver(ctx, a, o), invalid_argument);
}

// The same solver on the host's threads (no context): the oracle's factors, the solutions, the
// real systems, refactorization, the SPD path's fall back, reruns and bad input. Host only.
TEST(SparseDirectHost, FactorsAndSolvesAsTheOracleOnTheHostsThreads) {
  std::mt19937 g(62);
  for (const auto& [name, a] : awkward(false)) {
    for (int threads : {1, 3}) {
      sparse_direct_solver s(a, {}, threads);
      s.factor();
      ASSERT_TRUE(s.ok()) << name;
      const sparse_lu<double> oracle = sparse_lu_host(a, fill_ordering::automatic, s.matched());
      EXPECT_EQ(s.perturbed(), oracle.perturbed) << name;
      expect_same_factors(s.download_factors(), oracle, name + " (host)");
      const index_t k = 3;
      const std::vector<double> b = random_rhs(a.rows(), k, g);
      std::vector<double> x = b;
      const sparse_direct_report r = s.solve(x, k);
      EXPECT_LT(relres(a, b, x, k), 1e-13) << name << ": " << r.message;
      EXPECT_NE(r.message.find("host thread"), std::string::npos) << r.message;
    }
  }
  for (const char* name : {"west0479.mtx", "rajat19.mtx", "west2021.mtx", "adder_dcop_05.mtx", "bcsstk09.mtx", "1138_bus.mtx"}) {
    const csr a = to_csr<count_t>(test::system_matrix(name, test::data_dir()));
    const index_t n = a.rows();
    std::vector<double> b(static_cast<std::size_t>(n), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) b[static_cast<std::size_t>(i)] += a.values()[p];
    sparse_direct_solver s(a);
    s.factor();
    ASSERT_TRUE(s.ok()) << name;
    std::vector<double> x = b;
    const sparse_direct_report r = s.solve(x);
    EXPECT_LT(relres(a, b, x, 1), 1e-12) << name << ": " << r.message;
  }
  EXPECT_THROW(sparse_direct_solver(to_csr<count_t>(test::system_matrix("ca-GrQc.mtx", test::data_dir()))), invalid_argument);
  // Refactorization, reruns, the SPD path's fall back and bad input.
  const csr a = general(300, 3, g);
  sparse_direct_solver s(a, {}, 2);
  s.factor();
  const auto f1 = s.download_factors();
  s.factor();
  EXPECT_EQ(f1.l_val, s.download_factors().l_val);
  csr a2 = a;
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (double& v : a2.values()) v *= u(g);
  s.refactor(a2);
  const std::vector<double> b = random_rhs(a.rows(), 1, g);
  std::vector<double> x = b;
  s.solve(x);
  EXPECT_LT(relres(a2, b, x, 1), 1e-12);
  device_vector<double> dv;
  EXPECT_THROW(s.solve(dv), invalid_argument);
  csr ind = to_csr<count_t>(test::poisson_2d<double>(20));
  for (index_t i = 0; i < ind.rows(); ++i)
    for (count_t p = ind.row_ptr()[i]; p < ind.row_ptr()[i + 1]; ++p)
      if (ind.col_idx()[p] != i) ind.values()[p] *= 1.9;
  sparse_direct_solver si(ind);
  si.factor();
  ASSERT_TRUE(si.ok());
  EXPECT_TRUE(si.matched());
  std::vector<double> bi = random_rhs(ind.rows(), 1, g), xi = bi;
  si.solve(xi);
  EXPECT_LT(relres(ind, bi, xi, 1), 1e-12);
  sparse_direct_options spd_only;
  spd_only.factorization = sparse_factorization::spd;
  sparse_direct_solver sp(ind, spd_only);
  sp.factor();
  EXPECT_FALSE(sp.ok());
  EXPECT_THROW(sp.solve(xi), invalid_argument);
  sparse_direct_solver unfactored(a);
  EXPECT_THROW(unfactored.solve(x), invalid_argument);
}

namespace {
/// 2 x 2 blocks [[1, 2], [0.5, 1 + 1e-11]] (not symmetric): each block's second pivot (1e-11)
/// is below the static pivot threshold (sqrt(eps) max|M|), so it is perturbed to about 1.5e-8
/// and the factors' M^-1 A has eigenvalues near 7e-4: classical refinement contracts the error
/// by about 0.9993 a step (it stalls), GMRES-based refinement resolves them in a few
/// iterations. b = A x for a random x.
std::pair<csr, std::vector<double>> stalling_system(index_t blocks, std::mt19937& g) {
  std::vector<std::tuple<index_t, index_t, double>> t;
  for (index_t q = 0; q < blocks; ++q) {
    const index_t i = 2 * q;
    t.emplace_back(i, i, 1.0), t.emplace_back(i, i + 1, 2.0), t.emplace_back(i + 1, i, 0.5), t.emplace_back(i + 1, i + 1, 1.0 + 1e-11);
  }
  const csr a = from_triplets(2 * blocks, t);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> xt(static_cast<std::size_t>(a.rows())), b(xt.size(), 0.0);
  for (double& v : xt) v = u(g);
  for (index_t i = 0; i < a.rows(); ++i)
    for (count_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
      b[static_cast<std::size_t>(i)] += a.values()[p] * xt[static_cast<std::size_t>(a.col_idx()[p])];
  return {a, b};
}

/// Classical refinement stalls on stalling_system; "auto" turns to GMRES-based refinement and
/// meets the targets, as "gmres" does from the first step. solve(x) runs the solver's solve.
template <class Make>
void expect_gmres_refinement(Make make, const std::string& where) {
  std::mt19937 g(57);
  const auto [a, b] = stalling_system(40, g);
  for (const std::string how : {"classical", "auto", "gmres"}) {
    sparse_direct_options o;
    o.refinement = *parse_refinement(how);
    o.factorization = sparse_factorization::lu;
    sparse_direct_solver s = make(a, o);
    s.factor();
    ASSERT_TRUE(s.ok()) << where << " " << how;
    EXPECT_GT(s.perturbed(), 0) << where << " " << how << ": the case needs perturbed pivots";
    std::vector<double> x = b;
    const sparse_direct_report r = s.solve(x);
    const double res = relres(a, b, x, 1);
    if (how == "classical") {
      EXPECT_GT(res, 1e-13) << where << ": classical refinement was to stall here: " << r.message;
      EXPECT_EQ(r.gmres_iterations, 0) << where;
    } else {
      EXPECT_LT(res, 1e-14) << where << " " << how << ": " << r.message;
      EXPECT_GT(r.gmres_iterations, 0) << where << " " << how;
      EXPECT_NE(r.message.find("GMRES-based"), std::string::npos) << r.message;
    }
    std::vector<double> x2 = b;
    s.solve(x2);
    EXPECT_EQ(x, x2) << where << " " << how << ": a rerun differs";
  }
  EXPECT_FALSE(parse_refinement("newton").has_value());
}
}  // namespace

TEST(SparseDirectHost, TurnsToGmresBasedRefinementWhereClassicalStalls) {
  expect_gmres_refinement([](const csr& a, const sparse_direct_options& o) { return sparse_direct_solver(a, o, 2); }, "host");
  // The host's --method direct refines its fronts the same way.
  std::mt19937 g(58);
  const auto [a, b] = stalling_system(40, g);
  cg_options o;
  o.method = krylov_method::direct;
  o.rtol = 1e-14;
  o.direct.host_factor = host_factorization::la;  // la's fronts (SuiteSparse's LU pivots: nothing stalls)
  std::vector<double> x;
  const solve_result r = solve_host(a, b, x, o);
  EXPECT_EQ(r.status, solve_status::converged) << r.message;
  EXPECT_LT(relres(a, b, x, 1), 1e-14) << r.message;
  EXPECT_NE(r.message.find("GMRES-based"), std::string::npos) << r.message;
}

TEST(SparseDirect, TurnsToGmresBasedRefinementWhereClassicalStallsOnTheGpu) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  expect_gmres_refinement([&](const csr& a, const sparse_direct_options& o) { return sparse_direct_solver(ctx, a, o); }, "GPU");
}
