// The maximum-product diagonal matching (solvers/matching/matching.hpp): against every
// permutation on small random matrices, and on the real non-symmetric matrices whose
// diagonals have zeros (a zero-free diagonal of magnitude 1 after scaling, every entry at
// most 1).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <la/solvers/matching/matching.hpp>
#include "test_util.hpp"

namespace la {
namespace {

double log_product(const csr_matrix<double>& a, const std::vector<index_t>& perm) {
  double s = 0;
  for (index_t j = 0; j < a.rows(); ++j) {
    const index_t i = perm[j];
    double v = 0;
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == j) v = std::abs(a.values()[k]);
    if (v == 0) return -HUGE_VAL;
    s += std::log(v);
  }
  return s;
}

TEST(Matching, MaximumProductAgainstEveryPermutation) {
  std::mt19937 g(11);
  for (int trial = 0; trial < 40; ++trial) {
    const index_t n = 1 + trial % 7;  // 1 to 7: every permutation is enumerable
    std::vector<index_t> hidden(static_cast<std::size_t>(n));
    std::iota(hidden.begin(), hidden.end(), 0);
    std::shuffle(hidden.begin(), hidden.end(), g);
    std::vector<index_t> rp{0}, ci;
    std::vector<double> v;
    std::bernoulli_distribution present(0.35);
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j)
        if (hidden[j] == i || present(g)) ci.push_back(j), v.push_back(test::random_value<double>(g) * (1 + 9 * (j % 3)));
      rp.push_back(static_cast<index_t>(ci.size()));
    }
    const csr_matrix<double> a(n, n, rp, ci, v);
    const auto m = max_product_matching(a);
    ASSERT_EQ(m.unmatched, 0);
    std::vector<index_t> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    double best = -HUGE_VAL;
    do best = std::max(best, log_product(a, p));
    while (std::next_permutation(p.begin(), p.end()));
    EXPECT_NEAR(log_product(a, m.perm), best, 1e-9 * (1 + std::abs(best))) << "n " << n << ", trial " << trial;
  }
}

class RealMatching : public ::testing::TestWithParam<std::string> {};

TEST_P(RealMatching, ZeroFreeUnitDiagonalAfterScaling) {
  const auto a = test::system_matrix(GetParam(), test::data_dir());
  const auto m = max_product_matching(a);
  ASSERT_EQ(m.unmatched, 0) << "first unmatched column " << m.first_unmatched;
  std::vector<index_t> row_at(static_cast<std::size_t>(a.rows()), -1);  // A's row i is row row_at[i] of P A
  for (index_t j = 0; j < a.rows(); ++j) {
    ASSERT_GE(m.perm[j], 0);
    row_at[m.perm[j]] = j;
  }
  for (index_t i = 0; i < a.rows(); ++i) {
    ASSERT_GE(row_at[i], 0) << "row " << i << " unused: perm is not a permutation";
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t j = a.col_idx()[k];
      const double s = std::abs(m.row_scale[i] * a.values()[k] * m.col_scale[j]);
      EXPECT_LE(s, 1 + 1e-10) << "A(" << i + 1 << "," << j + 1 << ")";
      if (row_at[i] == j) EXPECT_NEAR(s, 1.0, 1e-10) << "diagonal " << j + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, RealMatching,
                         ::testing::Values("west0479.mtx", "west2021.mtx", "impcol_a.mtx", "rajat19.mtx",
                                           "adder_dcop_05.mtx", "gr_30_30.mtx"),
                         [](const auto& info) { return test::test_name(info.param); });

TEST(Matching, StructurallySingularLeavesAColumnUnmatched) {
  // Column 2 (0-based 1) is empty.
  const csr_matrix<double> a(3, 3, {0, 1, 2, 4}, {0, 2, 0, 2}, {1, 2, 3, 4});
  const auto m = max_product_matching(a);
  EXPECT_EQ(m.unmatched, 1);
  EXPECT_EQ(m.first_unmatched, 1);
  EXPECT_EQ(m.perm[1], -1);
}

TEST(Matching, AHeavyDiagonalStaysInPlace) {
  const auto a = test::poisson_2d<double>(7);
  const auto m = max_product_matching(a);
  for (index_t j = 0; j < a.rows(); ++j) EXPECT_EQ(m.perm[j], j);
}

// The search is bounded: past its budget it stops with a message instead of running for
// minutes, and precond auto then takes Jacobi (a 1M-row random pattern ran 12 minutes).
TEST(Matching, TheSearchIsBoundedAndAutoFallsBackToJacobi) {
  std::mt19937 g(3);
  const index_t n = 300;
  std::vector<index_t> p{0}, c;
  std::vector<double> v;
  std::uniform_int_distribution<index_t> col(0, n - 1);
  for (index_t i = 0; i < n; ++i) {  // a random pattern with no diagonal
    std::vector<index_t> cols;
    while (cols.size() < 6) {
      const index_t j = col(g);
      if (j != i && std::find(cols.begin(), cols.end(), j) == cols.end()) cols.push_back(j);
    }
    std::sort(cols.begin(), cols.end());
    for (index_t j : cols) c.push_back(j), v.push_back(1.0 + (j % 7));
    p.push_back(static_cast<index_t>(c.size()));
  }
  const csr_matrix<double> a(n, n, p, c, v);
  EXPECT_NO_THROW(max_product_matching(a));  // the default budget: ample here
  try {
    max_product_matching(a, 50);
    ADD_FAILURE() << "no throw past the budget";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gave up"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace la
