// Formats: validated construction, hand-checked layouts, and exact conversion in all 30
// directions on random matrices of awkward shapes.
#include <tuple>

#include "test_util.hpp"

namespace la {
namespace {

using test::expect_throw_with;

// ---- hand-checked layouts ----------------------------------------------------------------
//     [1 0 2 0]
// A = [0 0 0 0]
//     [3 4 0 5]
csr_matrix<double> small() { return {3, 4, {0, 2, 2, 5}, {0, 2, 0, 1, 3}, {1, 2, 3, 4, 5}}; }

TEST(Layout, CooFromCsr) {
  const auto c = to_coo(small());
  EXPECT_EQ(c.row_idx(), (std::vector<index_t>{0, 0, 2, 2, 2}));
  EXPECT_EQ(c.col_idx(), (std::vector<index_t>{0, 2, 0, 1, 3}));
  EXPECT_EQ(c.values(), (std::vector<double>{1, 2, 3, 4, 5}));
}

TEST(Layout, Csc) {
  const auto c = to_csc(small());
  EXPECT_EQ(c.col_ptr(), (std::vector<index_t>{0, 2, 3, 4, 5}));
  EXPECT_EQ(c.row_idx(), (std::vector<index_t>{0, 2, 2, 0, 2}));
  EXPECT_EQ(c.values(), (std::vector<double>{1, 3, 4, 2, 5}));
}

TEST(Layout, EllIsColumnMajorWithMarkedPadding) {
  const auto e = to_ell(small());
  EXPECT_EQ(e.width(), 3);
  EXPECT_EQ(e.col_idx(), (std::vector<index_t>{0, -1, 0, 2, -1, 1, -1, -1, 3}));
  EXPECT_EQ(e.values(), (std::vector<double>{1, 0, 3, 2, 0, 4, 0, 0, 5}));
  EXPECT_EQ(e.nnz(), 5);
}

TEST(Layout, JdsSortsRowsAndStoresDiagonals) {
  const auto j = to_jds(small());
  EXPECT_EQ(j.perm(), (std::vector<index_t>{2, 0, 1}));
  EXPECT_EQ(j.diag_ptr(), (std::vector<index_t>{0, 2, 4, 5}));
  EXPECT_EQ(j.col_idx(), (std::vector<index_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(j.values(), (std::vector<double>{3, 1, 4, 2, 5}));
}

TEST(Layout, DenseRowMajor) {
  const auto d = to_dense(small());
  EXPECT_EQ(d.values(), (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 0, 3, 4, 0, 5}));
}

TEST(Layout, CooDuplicatesAreSummedInInputOrder) {
  coo_matrix<double> c(2, 2, {1, 0, 1, 1}, {0, 1, 0, 0}, {1.0, 2.0, 1e-17, 1e-17});
  const auto r = to_csr(c);
  EXPECT_EQ(r.row_ptr(), (std::vector<index_t>{0, 1, 2}));
  EXPECT_EQ(r.col_idx(), (std::vector<index_t>{1, 0}));
  EXPECT_EQ(r.values()[1], (1.0 + 1e-17) + 1e-17);  // left to right, as given
}

TEST(Layout, DenseWithLeadingDimension) {
  dense_matrix<float> d(2, 2, 3, {1, 0, 99, 0, 2, 99});  // padding column holds junk
  const auto c = to_csr(d);
  EXPECT_EQ(c.col_idx(), (std::vector<index_t>{0, 1}));
  EXPECT_EQ(c.values(), (std::vector<float>{1, 2}));
}

// ---- validation --------------------------------------------------------------------------

TEST(Validate, Csr) {
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(3, 2, {0, 2, 1, 2}, {0, 1}, {1, 2}); },
                                    {"CSR", "not monotone", "row_ptr[1] = 2"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(2, 2, {0, 1, 2}, {0, 2}, {1, 2}); },
                                    {"CSR", "col_idx[1] = 2", "outside [0, 2)"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(1, 3, {0, 2}, {2, 1}, {1, 2}); },
                                    {"strictly increasing"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(1, 3, {0, 2}, {1, 1}, {1, 2}); },
                                    {"no duplicates"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(2, 2, {0, 1}, {0}, {1}); },
                                    {"row_ptr has 2 elements, expected 3"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(1, 2, {0, 1}, {0}, {1, 2}); },
                                    {"values has 2 elements, expected 1"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(1, 2, {1, 1}, {0}, {1}); },
                                    {"row_ptr[0] = 1, must be 0"});
  expect_throw_with<invalid_matrix>([] { csr_matrix<double>(-1, 2, {0}, {}, {}); }, {"non-negative"});
}

TEST(Validate, Csc) {
  expect_throw_with<invalid_matrix>([] { csc_matrix<double>(2, 2, {0, 1, 2}, {0, 5}, {1, 2}); },
                                    {"CSC", "row_idx[1] = 5"});
}

TEST(Validate, Coo) {
  expect_throw_with<invalid_matrix>([] { coo_matrix<double>(2, 2, {0, 2}, {0, 0}, {1, 2}); },
                                    {"COO", "row_idx[1] = 2"});
  expect_throw_with<invalid_matrix>([] { coo_matrix<double>(2, 2, {0, 1}, {0, -1}, {1, 2}); },
                                    {"col_idx[1] = -1"});
  expect_throw_with<invalid_matrix>([] { coo_matrix<double>(2, 2, {0, 1}, {0}, {1, 2}); },
                                    {"col_idx has 1 elements, expected 2"});
}

TEST(Validate, Ell) {
  expect_throw_with<invalid_matrix>([] { ell_matrix<double>(1, 3, 2, {-1, 1}, {0, 1}); },
                                    {"ELL", "after padding"});
  expect_throw_with<invalid_matrix>([] { ell_matrix<double>(1, 3, 2, {0, 3}, {1, 1}); },
                                    {"col_idx[1] = 3", "padding marker"});
  expect_throw_with<invalid_matrix>([] { ell_matrix<double>(2, 3, 2, {0, 0, 1}, {1, 1, 1}); },
                                    {"col_idx has 3 elements, expected 4"});
}

TEST(Validate, Jds) {
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 0}, {0, 1}, {0}, {1}); },
                                    {"JDS", "permutation"});
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 1}, {0, 1, 3}, {0, 1, 0}, {1, 1, 1}); },
                                    {"non-increasing"});
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 1}, {0, 1, 2}, {1, 0}, {1, 1}); },
                                    {"strictly increasing"});
}

TEST(Validate, Dense) {
  expect_throw_with<invalid_matrix>([] { dense_matrix<double>(2, 3, 2, std::vector<double>(6)); },
                                    {"leading dimension 2 < cols 3"});
}

TEST(Validate, EllThatNeedsMoreThan32BitSlotsIsRejected) {
  // One full row of 50000 in a 50000 x 50000 matrix: 2.5e9 ELL slots.
  const index_t n = 50000;
  std::vector<index_t> rp(n + 1, 0), ci(n);
  for (index_t j = 0; j < n; ++j) ci[j] = j;
  for (index_t i = 1; i <= n; ++i) rp[i] = n;
  csr_matrix<float> a(n, n, std::move(rp), std::move(ci), std::vector<float>(n, 1.0f));
  expect_throw_with<size_overflow>([&] { to_ell(a); }, {"ELL slots", "2500000000", "32-bit"});
}

// ---- every conversion direction, exact ---------------------------------------------------

template <typename T>
using all_formats = std::tuple<dense_matrix<T>, coo_matrix<T>, csr_matrix<T>, csc_matrix<T>, ell_matrix<T>, jds_matrix<T>>;

template <typename Tuple, typename F>
void for_each_format(F&& f) {
  std::apply([&](auto... x) { (f(x), ...); }, Tuple{});
}

template <typename T>
class Convert : public ::testing::Test {};
TYPED_TEST_SUITE(Convert, test::value_types);

TYPED_TEST(Convert, EveryPairRoundTripsExactly) {
  using T = TypeParam;
  std::mt19937 g(42);
  std::vector<csr_matrix<T>> cases = {
      test::random_csr<T>({1, 1, 1.0, false, false}, g),                // 1x1
      test::random_csr<T>({5, 4, 0.0, false, false}, g),                // no nonzeros
      test::random_csr<T>({0, 0, 0.0, false, false}, g),                // 0x0
      test::random_csr<T>({0, 7, 0.0, false, false}, g),                // no rows
      test::random_csr<T>({33, 17, 0.3, true, true}, g),                // tall, empty rows/cols
      test::random_csr<T>({17, 40, 0.2, true, true, true}, g),          // wide, one dense row
      test::random_csr<T>({100, 100, 0.05, true, true, true}, g),       // square, long row
      test::random_csr<T>({31, 33, 0.9, false, false}, g),              // nearly dense
  };
  int directions = 0;
  for (const auto& a : cases) {
    for_each_format<all_formats<T>>([&](auto src_tag) {
      using Src = decltype(src_tag);
      const Src src = convert<Src>(a);
      ASSERT_EQ(to_csr(src), a) << "to and from " << typeid(Src).name();
      for_each_format<all_formats<T>>([&](auto dst_tag) {
        using Dst = decltype(dst_tag);
        if constexpr (!std::is_same_v<Src, Dst>) {
          const Dst dst = convert<Dst>(src);
          EXPECT_EQ(dst, convert<Dst>(a)) << typeid(Src).name() << " -> " << typeid(Dst).name();
          EXPECT_EQ(to_csr(dst), a) << typeid(Src).name() << " -> " << typeid(Dst).name();
          if (&a == &cases[0]) ++directions;
        }
      });
    });
  }
  EXPECT_EQ(directions, 30);
}

TYPED_TEST(Convert, UnsortedCooWithDuplicatesMatchesDense) {
  using T = TypeParam;
  std::mt19937 g(7);
  std::uniform_int_distribution<index_t> ri(0, 30), ci(0, 32);
  std::vector<index_t> r, c;
  std::vector<T> v;
  for (int k = 0; k < 400; ++k) {  // ~40% of positions hit, many twice
    r.push_back(ri(g));
    c.push_back(ci(g));
    v.push_back(static_cast<T>(std::uniform_int_distribution<int>(1, 9)(g)));  // exact sums
  }
  coo_matrix<T> coo(31, 33, r, c, v);
  dense_matrix<T> expect(31, 33);
  for (std::size_t k = 0; k < r.size(); ++k) expect(r[k], c[k]) += v[k];
  EXPECT_EQ(to_dense(coo), expect);
  EXPECT_EQ(to_dense(to_jds(coo)), expect);
  EXPECT_EQ(to_dense(to_ell(coo)), expect);
  EXPECT_EQ(to_dense(to_csc(coo)), expect);
}

}  // namespace
}  // namespace la
