// The sparse direct solver's symbolic analysis and host oracle (sparse_analysis.hpp) against
// a dense symbolic and numeric Cholesky of the same permuted matrix: the elimination tree
// (parent[j] = the first row below j in column j of L), the column counts, the supernodes'
// nesting, nnz(L) of the numeric factor equal to the prediction, the solution against Eigen;
// on awkward patterns (1x1, a diagonal, an arrow, disconnected blocks, empty off-diagonal
// rows, random), each ordering this build holds, a matrix that is not positive definite named
// by its column, and reruns bit-identical. Host only.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/sparse_analysis.hpp>

#include "test_util.hpp"

using namespace la;

namespace {
/// A sparse symmetric positive definite matrix from a pattern: |offdiag| random, the diagonal
/// dominant.
csr_matrix<double> spd_from(index_t n, const std::vector<std::pair<index_t, index_t>>& edges, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<std::pair<index_t, double>>> rows(static_cast<std::size_t>(n));
  std::vector<double> diag(static_cast<std::size_t>(n), 1.0);
  std::set<std::pair<index_t, index_t>> seen;
  for (auto [i, j] : edges) {
    if (i == j || !seen.insert({std::min(i, j), std::max(i, j)}).second) continue;
    const double v = u(g);
    rows[i].push_back({j, v}), rows[j].push_back({i, v});
    diag[i] += std::abs(v), diag[j] += std::abs(v);
  }
  std::vector<std::int32_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  for (index_t i = 0; i < n; ++i) {
    rows[i].push_back({i, diag[i]});
    std::sort(rows[i].begin(), rows[i].end());
    for (auto [j, v] : rows[i]) idx.push_back(j), val.push_back(v);
    ptr.push_back(static_cast<std::int32_t>(idx.size()));
  }
  return csr_matrix<double>(n, n, std::move(ptr), std::move(idx), std::move(val));
}

std::vector<std::pair<std::string, csr_matrix<double>>> cases() {
  std::mt19937 g(21);
  std::vector<std::pair<std::string, csr_matrix<double>>> c;
  c.push_back({"1x1", spd_from(1, {}, g)});
  c.push_back({"diagonal", spd_from(9, {}, g)});
  std::vector<std::pair<index_t, index_t>> arrow;
  for (index_t i = 1; i < 31; ++i) arrow.push_back({0, i});
  c.push_back({"arrow", spd_from(31, arrow, g)});
  std::vector<std::pair<index_t, index_t>> blocks;  // three disconnected paths and an isolated row
  for (index_t i = 0; i < 32; ++i)
    if (i % 11 != 10) blocks.push_back({i, i + 1});
  c.push_back({"blocks", spd_from(33, blocks, g)});
  std::vector<std::pair<index_t, index_t>> rnd;
  std::uniform_int_distribution<index_t> pick(0, 99);
  for (int e = 0; e < 250; ++e) rnd.push_back({pick(g), pick(g)});
  c.push_back({"random", spd_from(100, rnd, g)});
  c.push_back({"poisson2d 12", test::poisson_2d<double>(12)});
  return c;
}

/// The dense permuted matrix P A P^T.
Eigen::MatrixXd permuted_dense(const csr_matrix<double>& a, const sparse_analysis& s) {
  const index_t n = a.rows();
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
  for (index_t i = 0; i < n; ++i)
    for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) m(s.inverse[i], s.inverse[a.col_idx()[p]]) = a.values()[p];
  return m;
}

std::vector<fill_ordering> orderings() {
  std::vector<fill_ordering> o{fill_ordering::natural, fill_ordering::automatic};
  for (fill_ordering x : {fill_ordering::amd, fill_ordering::metis})
    if (ordering_available(x)) o.push_back(x);
  return o;
}
}  // namespace

TEST(SparseAnalysis, TreeCountsAndSupernodesMatchADenseSymbolicFactorization) {
  for (const auto& [name, a] : cases())
    for (fill_ordering o : orderings()) {
      const sparse_analysis s = analyze_pattern(a, o);
      const index_t n = a.rows();
      ASSERT_EQ(static_cast<index_t>(s.perm.size()), n);
      std::vector<index_t> sorted = s.perm;
      std::sort(sorted.begin(), sorted.end());
      for (index_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << name << ": not a permutation";
      // Dense symbolic elimination of the permuted pattern: L's structure by columns.
      const Eigen::MatrixXd m = permuted_dense(a, s);
      std::vector<std::vector<bool>> nz(static_cast<std::size_t>(n), std::vector<bool>(static_cast<std::size_t>(n), false));
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j <= i; ++j) nz[i][j] = m(i, j) != 0 || i == j;
      for (index_t k = 0; k < n; ++k)
        for (index_t i = k + 1; i < n; ++i)
          if (nz[i][k])
            for (index_t j = k + 1; j <= i; ++j)
              if (nz[j][k]) nz[i][j] = true;
      count_t total = 0;
      for (index_t j = 0; j < n; ++j) {
        count_t c = 0;
        index_t first_below = -1;
        for (index_t i = j; i < n; ++i)
          if (nz[i][j]) {
            ++c;
            if (i > j && first_below == -1) first_below = i;
          }
        EXPECT_EQ(s.col_count[j], c) << name << " " << to_string(o) << " column " << j;
        EXPECT_EQ(s.parent[j], first_below) << name << " " << to_string(o) << " column " << j;
        if (s.parent[j] != -1) EXPECT_GT(s.parent[j], j) << "postordered: parents after children";
        total += c;
      }
      EXPECT_EQ(s.factor_nnz, total) << name;
      // Supernodes: a partition into runs whose columns nest (each the previous less its diagonal).
      ASSERT_GE(s.super_begin.size(), 2u);
      EXPECT_EQ(s.super_begin.front(), 0);
      EXPECT_EQ(s.super_begin.back(), n);
      for (std::size_t b = 0; b + 1 < s.super_begin.size(); ++b)
        for (index_t j = s.super_begin[b] + 1; j < s.super_begin[b + 1]; ++j) {
          EXPECT_EQ(s.parent[j - 1], j) << name;
          EXPECT_EQ(s.col_count[j - 1], s.col_count[j] + 1) << name;
          for (index_t i = j + 1; i < n; ++i) EXPECT_EQ(nz[i][j - 1], nz[i][j]) << name << " column " << j;
        }
      EXPECT_FALSE(s.summary().empty());
    }
}

TEST(SparseAnalysis, TheHostFactorSolvesAsEigenAndRerunsBitIdentically) {
  std::mt19937 g(22);
  for (const auto& [name, a] : cases())
    for (fill_ordering o : orderings()) {
      const sparse_analysis s = analyze_pattern(a, o);
      const sparse_cholesky<double> l = sparse_cholesky_host(a, s);
      ASSERT_TRUE(l.ok()) << name;
      EXPECT_EQ(static_cast<count_t>(l.values.size()), s.factor_nnz);
      // L against Eigen's dense LLT of the permuted matrix.
      const Eigen::MatrixXd m = permuted_dense(a, s);
      const Eigen::MatrixXd want = m.llt().matrixL();
      for (index_t j = 0; j < a.rows(); ++j)
        for (count_t p = l.col_ptr[j]; p < l.col_ptr[j + 1]; ++p)
          EXPECT_NEAR(l.values[p], want(l.row_idx[p], j), 1e-12 * (1 + std::abs(want(l.row_idx[p], j)))) << name;
      std::vector<double> b = test::random_vector<double>(static_cast<std::size_t>(a.rows()), g), x = b;
      l.solve(x.data());
      EXPECT_LT(test::true_relres(a, b, x), 1e-13) << name << " " << to_string(o);
      const sparse_cholesky<double> again = sparse_cholesky_host(a, analyze_pattern(a, o));
      EXPECT_EQ(again.values, l.values) << name;
    }
}

TEST(SparseAnalysis, OrderingsCutTheFillOfAGrid) {
  const csr_matrix<double> a = test::poisson_2d<double>(30);
  const count_t natural = analyze_pattern(a, fill_ordering::natural).factor_nnz;
  for (fill_ordering o : {fill_ordering::amd, fill_ordering::metis}) {
    if (!ordering_available(o)) {
      EXPECT_THROW(analyze_pattern(a, o), not_supported) << to_string(o);
      continue;
    }
    const count_t f = analyze_pattern(a, o).factor_nnz;
    EXPECT_LT(f, natural * 3 / 4) << to_string(o) << ": " << f << " against natural " << natural;
  }
  const sparse_analysis best = analyze_pattern(a);
  for (fill_ordering o : {fill_ordering::amd, fill_ordering::metis})
    if (ordering_available(o)) EXPECT_LE(best.factor_nnz, analyze_pattern(a, o).factor_nnz);
}

TEST(SparseAnalysis, NamesTheColumnWhereAPivotIsNotPositiveAndRefusesNonSquare) {
  csr_matrix<double> a = test::poisson_2d<double>(5);
  // Make row 7's diagonal negative: A is no longer positive definite there.
  for (auto p = a.row_ptr()[7]; p < a.row_ptr()[8]; ++p)
    if (a.col_idx()[p] == 7) a.values()[p] = -4;
  const sparse_analysis s = analyze_pattern(a, fill_ordering::natural);
  const sparse_cholesky<double> l = sparse_cholesky_host(a, s);
  EXPECT_FALSE(l.ok());
  EXPECT_EQ(l.bad_column, 8);  // natural order: A's own column, 1-based
  const csr_matrix<double> wide(2, 3, std::vector<std::int32_t>{0, 1, 2}, std::vector<index_t>{0, 1}, std::vector<double>{1, 1});
  EXPECT_THROW(analyze_pattern(wide), invalid_argument);
  const csr_matrix<double> empty(0, 0, std::vector<std::int32_t>{0}, std::vector<index_t>{}, std::vector<double>{});
  const sparse_analysis e = analyze_pattern(empty);
  EXPECT_EQ(e.factor_nnz, 0);
}

// LU with static pivoting (the matching, the analysis of the matched matrix, the up-looking
// factorization): against Eigen's partial-pivoting LU on random non-symmetric matrices with
// zero diagonals, on real systems the Krylov methods fail on (to 1e-12 after a few steps of
// refinement), and a structurally singular matrix named by its column.
namespace {
template <typename F>
double refined_relres(const csr_matrix<double>& a, const std::vector<double>& b, F&& solve, std::vector<double>& x) {
  x = b;
  solve(x.data());
  for (int step = 0; step < 5; ++step) {
    std::vector<double> r(b.size());
    for (index_t i = 0; i < a.rows(); ++i) {
      long double s = b[i];
      for (auto p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) s -= static_cast<long double>(a.values()[p]) * x[a.col_idx()[p]];
      r[i] = static_cast<double>(s);
    }
    solve(r.data());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += r[i];
  }
  return test::true_relres(a, b, x);
}
}  // namespace

TEST(SparseLu, SolvesRandomNonSymmetricMatricesAsEigen) {
  std::mt19937 g(23);
  std::uniform_real_distribution<double> u(-1, 1);
  for (index_t n : {1, 31, 33, 200}) {
    // A random permutation of a matrix with a strong diagonal: A's own diagonal is mostly zero.
    std::vector<index_t> sigma(static_cast<std::size_t>(n));
    std::iota(sigma.begin(), sigma.end(), 0);
    std::shuffle(sigma.begin(), sigma.end(), g);
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n, n);
    std::uniform_int_distribution<index_t> pick(0, n - 1);
    for (index_t i = 0; i < n; ++i) d(sigma[i], i) = 4 + u(g);
    for (index_t e = 0; e < 3 * n; ++e) d(pick(g), pick(g)) += u(g);
    std::vector<std::int32_t> ptr{0};
    std::vector<index_t> idx;
    std::vector<double> val;
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j)
        if (d(i, j) != 0) idx.push_back(j), val.push_back(d(i, j));
      ptr.push_back(static_cast<std::int32_t>(idx.size()));
    }
    const csr_matrix<double> a(n, n, std::move(ptr), std::move(idx), std::move(val));
    for (fill_ordering o : orderings()) {
      const sparse_lu<double> f = sparse_lu_host(a, o);
      ASSERT_TRUE(f.ok()) << n;
      const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
      std::vector<double> x(b.data(), b.data() + n);
      f.solve(x.data());
      const Eigen::VectorXd want = d.partialPivLu().solve(b);
      const double cond = d.norm() * d.inverse().norm();
      for (index_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], want(i), 1e-12 * cond * (1 + std::abs(want(i)))) << n << " " << to_string(o);
    }
  }
}

TEST(SparseLu, SolvesTheRealSystemsTheKrylovMethodsFailOnAndNamesAStructurallySingularColumn) {
  for (const char* name : {"west0479.mtx", "rajat19.mtx", "west2021.mtx", "impcol_a.mtx", "adder_dcop_05.mtx"}) {
    const csr_matrix<double> a = test::system_matrix(name, test::data_dir());
    std::vector<double> ones(static_cast<std::size_t>(a.cols()), 1.0), b(ones.size()), x;
    reference::spmv(1.0, a, ones, 0.0, b);
    const sparse_lu<double> f = sparse_lu_host(a);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_LT(refined_relres(a, b, [&](double* v) { f.solve(v); }, x), 1e-12) << name << " (" << f.perturbed << " pivots perturbed)";
  }
  // Row 3 and row 5 hold entries in column 2 only, column 4 none: no matching covers column 4.
  const csr_matrix<double> s(5, 5, std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}, std::vector<index_t>{0, 1, 1, 2, 1},
                             std::vector<double>{1, 2, 3, 4, 5});
  const sparse_lu<double> f = sparse_lu_host(s);
  EXPECT_FALSE(f.ok());
  EXPECT_GT(f.singular_column, 0);
}
