// Formats: validated construction, hand-checked layouts, and exact conversion in all 56
// directions on random matrices of awkward shapes.
#include <cstdlib>
#include <map>
#include <numeric>
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

TEST(Layout, HybSplitsRowsBetweenEllAndCoo) {
  const auto h = to_hyb(small(), 2);  // rows of length 2, 0, 3: row 2's third entry overflows
  EXPECT_EQ(h.width(), 2);
  EXPECT_EQ(h.ell().col_idx(), (std::vector<index_t>{0, -1, 0, 2, -1, 1}));
  EXPECT_EQ(h.ell().values(), (std::vector<double>{1, 0, 3, 2, 0, 4}));
  EXPECT_EQ(h.coo().row_idx(), (std::vector<index_t>{2}));
  EXPECT_EQ(h.coo().col_idx(), (std::vector<index_t>{3}));
  EXPECT_EQ(h.coo().values(), (std::vector<double>{5}));
  EXPECT_EQ(h.nnz(), 5);
  // The automatic split: 3 rows, so a slot is kept while one row reaches it: all ELL.
  EXPECT_EQ(to_hyb(small()).width(), 3);
  EXPECT_EQ(to_hyb(small()).coo().nnz(), 0);
}

TEST(Layout, HybWidthFromTheHistogram) {
  // 9 rows: 6 of length 1, 2 of length 4, 1 of length 10. Slot 0 is reached by 9 rows,
  // slot 1 by 3 (= 9/3, kept), slot 2 by 3 (kept), slot 4 by 1 (< 3): width 4.
  EXPECT_EQ(detail::hyb_width({0, 6, 0, 0, 2, 0, 0, 0, 0, 0, 1}, 9), 4);
  EXPECT_EQ(detail::hyb_width({5}, 5), 0);  // only empty rows
  EXPECT_EQ(detail::hyb_width({0, 0, 0, 3}, 3), 3);
}

TEST(Layout, SellSortsInWindowsAndPadsEachSlice) {
  // Row lengths 1, 3, 0, 3, 1 (as in the JDS test), C = 2, sigma = 4: window rows 0-3 sort
  // to 1, 3, 0, 2 (ties keep row order); row 4 is a window alone. Slices {1, 3} (width 3),
  // {0, 2} (width 1), {4, phantom} (width 1).
  coo_matrix<float> c(5, 4, {0, 1, 1, 1, 3, 3, 3, 4}, {0, 0, 1, 2, 1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto s = to_sell(c, {2, 4});
  EXPECT_EQ(s.perm(), (std::vector<index_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(s.slice_ptr(), (std::vector<index_t>{0, 6, 8, 10}));
  EXPECT_EQ(s.col_idx(), (std::vector<index_t>{0, 1, 1, 2, 2, 3, 0, -1, 3, -1}));
  EXPECT_EQ(s.values(), (std::vector<float>{2, 5, 3, 6, 4, 7, 1, 0, 8, 0}));
  EXPECT_EQ(s.nnz(), 8);
  EXPECT_EQ(s.slots(), 10);
  // sigma = 1: no sorting, perm is the identity.
  const auto u = to_sell(c, {2, 1});
  EXPECT_EQ(u.perm(), (std::vector<index_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(u.slice_ptr(), (std::vector<index_t>{0, 6, 12, 14}));
}

TEST(Layout, SellAutoSigmaSortsOnlyUnevenRows) {
  const auto poisson = test::poisson_2d<double>(20);  // lengths 3..5: slices pad little
  EXPECT_EQ(to_sell(poisson).sigma(), 1);
  std::mt19937 g(5);
  const auto uneven = test::random_csr<double>({3000, 3000, 0.002, true, true, true}, g);
  EXPECT_EQ(to_sell(uneven).sigma(), 1024);
  EXPECT_EQ(to_sell(uneven, {33, 0}).sigma(), 1056);  // rounded up to a multiple of C
  EXPECT_LT(to_sell(uneven).slots(), to_sell(uneven, {32, 1}).slots());
}

TEST(Layout, DenseRowMajor) {
  const auto d = to_dense(small());
  EXPECT_EQ(d.values(), (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 0, 3, 4, 0, 5}));
}

TEST(Layout, CooDuplicatesAreSummedInInputOrder) {
  // 1 + 1e16 rounds to 1e16, so in input order (1 + 1e16) - 1e16 = 0; reversed, or pairing
  // the large terms first, gives 1. A short row, a row of 40 and one of 300 entries (the
  // tidy step sorts short and long rows differently), and the threaded build (2^20 entries).
  for (index_t others : {0, 40, 300, 1 << 20}) {
    std::vector<index_t> r, c;
    std::vector<double> v;
    auto add = [&](index_t i, index_t j, double x) { r.push_back(i), c.push_back(j), v.push_back(x); };
    const index_t cols = std::max<index_t>(others + 2, 4);
    add(0, 0, 1.0);  // first in the input (the first thread's part), the rest last
    for (index_t k = 0; k < others; ++k) add(k % 2 ? 0 : 1 + k % 3, static_cast<index_t>(1 + (std::int64_t(k) * 7919) % (cols - 1)), 0.5);
    add(0, 0, 1e16);
    add(0, 0, -1e16);
    const auto m = to_csr(coo_matrix<double>(4, cols, std::move(r), std::move(c), std::move(v)));
    ASSERT_GT(m.row_ptr()[1], 0);
    ASSERT_EQ(m.col_idx()[0], 0);
    EXPECT_EQ(m.values()[0], 0.0) << others << " other entries: summed out of input order";
  }
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

// Large matrices are validated on several threads; the message names the first defect
// whatever the thread count (3M entries: three slices on three threads).
TEST(Validate, LargeCsrOnThreadsNamesTheFirstDefect) {
  const index_t rows = 1000000, cols = 1000000;
  std::vector<index_t> ptr(rows + 1), idx;
  idx.reserve(3 * std::size_t(rows));
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j : {i - 1, i, i + 1})
      if (j >= 0 && j < cols) idx.push_back(j);
    ptr[i + 1] = static_cast<index_t>(idx.size());
  }
  const std::vector<double> v(idx.size(), 1.0);
  auto message = [&](const std::vector<index_t>& p, const std::vector<index_t>& c, const char* threads) {
    ::setenv("LA_THREADS", threads, 1);
    std::string what = "no error";
    try {
      csr_matrix<double>(rows, cols, p, c, v);
    } catch (const invalid_matrix& e) {
      what = e.what();
    }
    ::unsetenv("LA_THREADS");
    return what;
  };
  EXPECT_EQ(message(ptr, idx, "4"), "no error");
  auto bad = idx;
  bad[ptr[900000]] = cols;      // out of range in the last slice
  bad[ptr[700001] + 1] = 700000;  // a duplicate in an earlier one: the one named
  const std::string one = message(ptr, bad, "1");
  EXPECT_NE(one.find("row 700001"), std::string::npos) << one;
  EXPECT_EQ(message(ptr, bad, "4"), one);
  EXPECT_EQ(message(ptr, bad, "3"), one);
  auto p = ptr;
  p[800000] = p[800001] + 1;  // not monotone, after the column defects: checked first
  EXPECT_NE(message(p, bad, "4").find("not monotone"), std::string::npos);
  EXPECT_EQ(message(p, bad, "4"), message(p, bad, "1"));
}

TEST(Validate, Jds) {
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 0}, {0, 1}, {0}, {1}); },
                                    {"JDS", "permutation"});
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 1}, {0, 1, 3}, {0, 1, 0}, {1, 1, 1}); },
                                    {"non-increasing"});
  expect_throw_with<invalid_matrix>([] { jds_matrix<double>(2, 2, {0, 1}, {0, 1, 2}, {1, 0}, {1, 1}); },
                                    {"strictly increasing"});
}

TEST(Validate, Hyb) {
  // Row 0 has a COO entry but an ELL slot left empty.
  expect_throw_with<invalid_matrix>([] { hyb_matrix<double>(2, 3, 1, {-1, 0}, {0, 1}, {0}, {1}, {1}); },
                                    {"HYB", "row 0 has COO entries but does not fill"});
  expect_throw_with<invalid_matrix>([] { hyb_matrix<double>(1, 3, 1, {2}, {1}, {0}, {1}, {1}); },
                                    {"COO column 1 does not follow the row's last ELL column 2"});
  expect_throw_with<invalid_matrix>([] { hyb_matrix<double>(2, 3, 0, {}, {}, {1, 0}, {0, 0}, {1, 1}); },
                                    {"sorted by row"});
  expect_throw_with<invalid_matrix>([] { hyb_matrix<double>(2, 3, 0, {}, {}, {0}, {3}, {1}); }, {"COO", "col_idx[0] = 3"});
}

TEST(Validate, Sell) {
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(2, 2, 0, 1, {0, 1}, {0}, {}, {}); },
                                    {"SELL", "slice height C must be in [1, 1024]"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(2, 2, 2, 3, {0, 1}, {0, 0}, {}, {}); },
                                    {"sigma must be 1 or a positive multiple of C = 2"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(2, 2, 2, 1, {1, 0}, {0, 0}, {}, {}); },
                                    {"perm must be the identity"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(3, 2, 1, 2, {0, 2, 1}, {0, 0, 0, 0}, {}, {}); },
                                    {"perm[1] = 2 moves a row out of its sorting window"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(2, 2, 2, 1, {0, 1}, {0, 3}, {0, 1, 0}, {1, 1, 1}); },
                                    {"slice 0 holds 3 slots"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(2, 2, 2, 1, {0, 1}, {0, 4}, {-1, 1, 0, 0}, {0, 1, 1, 1}); },
                                    {"follows padding"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(1, 2, 2, 1, {0}, {0, 2}, {0, 1}, {1, 1}); },
                                    {"past the last row"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(1, 2, 1, 1, {0}, {0, 2}, {1, 1}, {1, 1}); },
                                    {"strictly increasing"});
  expect_throw_with<invalid_matrix>([] { sell_matrix<double>(1, 2, 1, 1, {0}, {0, 1}, {2}, {1}); },
                                    {"col_idx[0] = 2 is outside [0, 2)"});
}

TEST(Validate, Dense) {
  expect_throw_with<invalid_matrix>([] { dense_matrix<double>(2, 3, 2, std::vector<double>(6)); },
                                    {"leading dimension 2 < cols 3"});
}

// ---- every conversion direction, exact ---------------------------------------------------

template <typename T>
using all_formats = std::tuple<dense_matrix<T>, coo_matrix<T>, csr_matrix<T>, csc_matrix<T>, ell_matrix<T>, jds_matrix<T>,
                               hyb_matrix<T>, sell_matrix<T>>;

// The entries of each format, read straight from its storage as the format's comment
// defines it (written here, independently of the conversions under test): a map from
// (row, col) to value.
template <typename T>
using entry_map = std::map<std::pair<index_t, index_t>, T>;

template <typename T>
entry_map<T> entries_of(const dense_matrix<T>& a) {
  entry_map<T> m;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t j = 0; j < a.cols(); ++j)
      if (a.values()[static_cast<std::size_t>(i) * a.ld() + j] != T(0)) m[{i, j}] = a.values()[i * a.ld() + j];
  return m;
}
template <typename T>
entry_map<T> entries_of(const coo_matrix<T>& a) {
  entry_map<T> m;
  for (std::size_t k = 0; k < a.values().size(); ++k) m[{a.row_idx()[k], a.col_idx()[k]}] += a.values()[k];
  return m;
}
template <typename T, typename O>
entry_map<T> entries_of(const csr_matrix<T, O>& a) {
  entry_map<T> m;
  for (index_t i = 0; i < a.rows(); ++i)
    for (auto k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) m[{i, a.col_idx()[k]}] = a.values()[k];
  return m;
}
template <typename T, typename O>
entry_map<T> entries_of(const csc_matrix<T, O>& a) {
  entry_map<T> m;
  for (index_t j = 0; j < a.cols(); ++j)
    for (auto k = a.col_ptr()[j]; k < a.col_ptr()[j + 1]; ++k) m[{a.row_idx()[k], j}] = a.values()[k];
  return m;
}
template <typename T>
entry_map<T> entries_of(const ell_matrix<T>& a) {
  entry_map<T> m;
  for (index_t k = 0; k < a.width(); ++k)
    for (index_t i = 0; i < a.rows(); ++i) {
      const std::size_t s = static_cast<std::size_t>(k) * a.rows() + i;
      if (a.col_idx()[s] != -1) m[{i, a.col_idx()[s]}] = a.values()[s];
    }
  return m;
}
template <typename T, typename O>
entry_map<T> entries_of(const jds_matrix<T, O>& a) {
  entry_map<T> m;
  for (std::size_t d = 0; d + 1 < a.diag_ptr().size(); ++d)
    for (auto k = a.diag_ptr()[d]; k < a.diag_ptr()[d + 1]; ++k)
      m[{a.perm()[k - a.diag_ptr()[d]], a.col_idx()[k]}] = a.values()[k];
  return m;
}

template <typename T>
entry_map<T> entries_of(const hyb_matrix<T>& a) {
  entry_map<T> m = entries_of(a.ell());
  for (std::size_t k = 0; k < a.coo().values().size(); ++k) {
    const std::pair<index_t, index_t> at{a.coo().row_idx()[k], a.coo().col_idx()[k]};
    EXPECT_EQ(m.count(at), 0u) << "HYB stores an entry twice";
    m[at] = a.coo().values()[k];
  }
  return m;
}
template <typename T, typename O>
entry_map<T> entries_of(const sell_matrix<T, O>& a) {
  entry_map<T> m;
  const std::int64_t C = a.slice_height();
  for (std::int64_t s = 0; s + 1 < static_cast<std::int64_t>(a.slice_ptr().size()); ++s)
    for (auto q = a.slice_ptr()[s]; q < a.slice_ptr()[s + 1]; ++q)
      if (a.col_idx()[q] != -1) m[{a.perm()[s * C + (q - a.slice_ptr()[s]) % C], a.col_idx()[q]}] = a.values()[q];
  return m;
}

template <typename Tuple, typename F>
void for_each_format(F&& f) {
  std::apply([&](auto... x) { (f(x), ...); }, Tuple{});
}

template <typename T>
class Convert : public ::testing::Test {};
TYPED_TEST_SUITE(Convert, test::value_types_with_complex);

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
  for (const auto& a : cases) {
    const entry_map<T> want = entries_of(a);
    for_each_format<all_formats<T>>([&](auto src_tag) {
      using Src = decltype(src_tag);
      const Src src = convert<Src>(a);
      ASSERT_EQ(to_csr(src), a) << "to and from " << typeid(Src).name();
      ASSERT_EQ(entries_of(src), want) << typeid(Src).name() << " holds other entries";
      for_each_format<all_formats<T>>([&](auto dst_tag) {
        using Dst = decltype(dst_tag);
        if constexpr (!std::is_same_v<Src, Dst>) {
          // entries_of walks each format's own storage, independently of the conversions.
          const Dst dst = convert<Dst>(src);
          EXPECT_EQ(to_csr(dst), a) << typeid(Src).name() << " -> " << typeid(Dst).name();
          EXPECT_EQ(entries_of(dst), want) << typeid(Src).name() << " -> " << typeid(Dst).name();
        }
      });
    });
  }
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
  EXPECT_EQ(to_dense(to_hyb(coo, 1)), expect);
  EXPECT_EQ(to_dense(to_sell(coo, {4, 8})), expect);
}

TYPED_TEST(Convert, HybAndSellEveryParameter) {
  // Every HYB split and several SELL shapes (C not a power of two, sigma = 1, windows
  // smaller and larger than the matrix) hold the same entries and convert back exactly.
  using T = TypeParam;
  std::mt19937 g(13);
  for (const auto& a : {test::random_csr<T>({37, 41, 0.15, true, true, true}, g), test::random_csr<T>({1, 5, 1.0, false, false}, g),
                        test::random_csr<T>({0, 3, 0.0, false, false}, g)}) {
    const auto want = entries_of(a);
    for (index_t w = 0; w <= 42; w += 3) {
      const auto h = to_hyb(a, w);
      EXPECT_EQ(entries_of(h), want) << "width " << w;
      EXPECT_EQ(to_csr(h), a) << "width " << w;
    }
    for (sell_options o : {sell_options{1, 1}, sell_options{3, 1}, sell_options{3, 6}, sell_options{4, 8},
                           sell_options{32, 64}, sell_options{5, 1000}, sell_options{1024, 1024}}) {
      const auto s = to_sell(a, o);
      EXPECT_EQ(entries_of(s), want) << o.slice_height << "/" << o.sigma;
      EXPECT_EQ(to_csr(s), a) << o.slice_height << "/" << o.sigma;
      EXPECT_EQ(to_csr(to_sell<std::int64_t>(a, o)), a);
    }
  }
}


// ---- 64-bit offsets ----------------------------------------------------------------------

TYPED_TEST(Convert, SixtyFourBitOffsetsEveryPair) {
  // The 64-bit path, forced on small matrices: every conversion into and out of the
  // formats with offsets gives the same matrix as the 32-bit one.
  using T = TypeParam;
  std::mt19937 g(11);
  for (const auto& a : {test::random_csr<T>({33, 17, 0.3, true, true}, g), test::random_csr<T>({100, 100, 0.05, true, true, true}, g),
                        test::random_csr<T>({0, 7, 0.0, false, false}, g)}) {
    const auto a64 = to_csr<std::int64_t>(a);
    static_assert(std::is_same_v<decltype(a64.row_ptr()[0]), const std::int64_t&>);
    EXPECT_EQ(entries_of(a64), entries_of(a));
    EXPECT_EQ(to_csr(a64), a);  // back to 32-bit
    EXPECT_EQ(to_coo(a64), to_coo(a));
    EXPECT_EQ(to_ell(a64), to_ell(a));
    EXPECT_EQ(to_dense(a64), to_dense(a));
    EXPECT_EQ(to_csc(to_csc<std::int64_t>(a64)), to_csc(a));
    EXPECT_EQ(to_jds(to_jds<std::int64_t>(a64)), to_jds(a));
    EXPECT_EQ(to_csr<std::int64_t>(to_coo(a)), a64);
    EXPECT_EQ(to_csr<std::int64_t>(to_jds<std::int64_t>(a)), a64);
    EXPECT_EQ(to_csr<std::int64_t>(to_csc<std::int64_t>(a)), a64);
    EXPECT_EQ(to_csr<std::int64_t>(to_ell(a)), a64);
    EXPECT_EQ(to_csr<std::int64_t>(to_dense(a)), a64);
    EXPECT_EQ((convert<csc_matrix<T, std::int64_t>>(to_coo(a))), to_csc<std::int64_t>(a));
    EXPECT_EQ(to_sell(to_sell<std::int64_t>(a64)), to_sell(a));
    EXPECT_EQ(to_csr<std::int64_t>(to_sell<std::int64_t>(a)), a64);
    EXPECT_EQ(to_hyb(a64), to_hyb(a));
  }
}

TEST(Offsets, BoundaryAtTwoToTheThirtyOne) {
  // Counts just past 2^31 - 1, checked without allocating them.
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(checked_offset<std::int32_t>(limit, "nnz"), limit);
  expect_throw_with<size_overflow>([&] { checked_offset<std::int32_t>(limit + 1, "CSR nonzeros"); },
                                   {"CSR nonzeros (2147483648)", "64-bit offsets"});
  EXPECT_EQ(checked_offset<std::int64_t>(limit + 1, "nnz"), limit + 1);
  EXPECT_FALSE(needs_64bit_offsets(limit));
  EXPECT_TRUE(needs_64bit_offsets(limit + 1));
  auto width = [](std::int64_t n, offset_width w) { return with_offsets(n, w, [](auto o) { return int(sizeof(o)); }); };
  EXPECT_EQ(width(limit, offset_width::automatic), 4);
  EXPECT_EQ(width(limit + 1, offset_width::automatic), 8);
  EXPECT_EQ(width(5, offset_width::b64), 8);
  EXPECT_THROW(width(limit + 1, offset_width::b32), size_overflow);  // never truncated
}

TEST(Offsets, WithCsrPicksTheWidthBySize) {
  const auto a = small();
  EXPECT_EQ(with_csr(to_coo(a), [](const auto& m) { return int(sizeof(m.row_ptr()[0])); }), 4);
  EXPECT_EQ(with_csr(to_coo(a), [](const auto& m) { return int(sizeof(m.row_ptr()[0])); }, offset_width::b64), 8);
  EXPECT_TRUE(with_csr(to_ell(a), [&](const auto& m) { return entries_of(m) == entries_of(a); }, offset_width::b64));
}

TEST(Convert, UnsortedRowsAreSortedOnlyWhereNeeded) {
  // Row 0 arrives sorted, row 1 reversed with a duplicate, row 2 empty.
  coo_matrix<double> c(3, 5, {0, 0, 1, 1, 1, 0, 1}, {0, 3, 4, 2, 1, 4, 2}, {1, 2, 3, 4, 5, 6, 7});
  const auto r = to_csr(c);
  EXPECT_EQ(r.row_ptr(), (std::vector<index_t>{0, 3, 6, 6}));
  EXPECT_EQ(r.col_idx(), (std::vector<index_t>{0, 3, 4, 1, 2, 4}));
  EXPECT_EQ(r.values(), (std::vector<double>{1, 2, 6, 5, 4 + 7, 3}));
}

TEST(Convert, JdsOrdersByLengthKeepingRowOrderOnTies) {
  // Row lengths 1, 3, 0, 3, 1: sorted rows 1, 3 (length 3), 0, 4 (length 1), 2.
  coo_matrix<float> c(5, 4, {0, 1, 1, 1, 3, 3, 3, 4}, {0, 0, 1, 2, 1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto j = to_jds(c);
  EXPECT_EQ(j.perm(), (std::vector<index_t>{1, 3, 0, 4, 2}));
  EXPECT_EQ(j.diag_ptr(), (std::vector<index_t>{0, 4, 6, 8}));
}


// spans_to_csr's threads each count only the rows their entries reach and scan in blocks of
// rows: every arrangement of entries over parts (row order, column order, random with
// duplicates, one row, empty parts, empty rows at both ends) against a map reference.
TEST(Convert, SpansToCsrEveryArrangementAndPartCount) {
  std::mt19937 g(7);
  auto check = [&](const char* what, index_t rows, index_t cols, const std::vector<index_t>& r,
                   const std::vector<index_t>& c, const std::vector<double>& v) {
    std::map<std::pair<index_t, index_t>, double> want;
    for (std::size_t k = 0; k < r.size(); ++k) want[{r[k], c[k]}] += v[k];
    std::vector<index_t> rp(rows + 1, 0), wc;
    std::vector<double> wv;
    for (const auto& [rc, x] : want) ++rp[rc.first + 1], wc.push_back(rc.second), wv.push_back(x);
    std::partial_sum(rp.begin(), rp.end(), rp.begin());
    const csr_matrix<double> expected(rows, cols, rp, wc, wv);
    for (std::size_t parts : {1, 2, 3, 5, 16}) {
      std::vector<detail::coo_span<double>> spans;
      for (std::size_t p = 0; p < parts; ++p) {
        // Uneven parts, the middle one empty where there are three or more.
        std::size_t b = r.size() * p * p / (parts * parts), e = r.size() * (p + 1) * (p + 1) / (parts * parts);
        if (parts >= 3 && p == parts / 2) e = b;
        if (parts >= 3 && p == parts / 2 + 1) b = r.size() * (p - 1) * (p - 1) / (parts * parts);
        spans.push_back({r.data() + b, c.data() + b, v.data() + b, e - b});
      }
      EXPECT_EQ((detail::spans_to_csr<index_t, double>(rows, cols, spans)), expected) << what << ", " << parts << " parts";
      EXPECT_EQ((detail::spans_to_csr<std::int64_t, double>(rows, cols, spans)), to_csr<std::int64_t>(expected))
          << what << ", " << parts << " parts, 64-bit offsets";
    }
  };
  const index_t rows = 300, cols = 200;
  std::vector<index_t> r, c;
  std::vector<double> v;
  auto add = [&](index_t i, index_t j) { r.push_back(i), c.push_back(j), v.push_back(double(r.size() % 5 + 1)); };
  for (index_t i = 10; i < rows - 10; ++i)  // row order, rows 0-9 and 290-299 empty
    for (index_t j = 0; j < cols; j += 1 + (i % 7)) add(i, j);
  check("row order", rows, cols, r, c, v);
  r.clear(), c.clear(), v.clear();
  for (index_t j = 0; j < cols; ++j)  // column order: every part reaches every row
    for (index_t i = j % 3; i < rows; i += 3) add(i, j);
  check("column order", rows, cols, r, c, v);
  r.clear(), c.clear(), v.clear();
  std::uniform_int_distribution<index_t> ri(0, rows - 1), ci(0, 9);
  for (int k = 0; k < 5000; ++k) add(ri(g), ci(g));  // many duplicates, unsorted
  check("random with duplicates", rows, cols, r, c, v);
  r.clear(), c.clear(), v.clear();
  for (int k = 0; k < 500; ++k) add(150, (k * 37) % cols);  // one row, then two: each part reaches one or two
  for (int k = 0; k < 500; ++k) add(150 + k % 2, k % cols);
  check("one or two rows", rows, cols, r, c, v);
  check("empty", rows, cols, {}, {}, {});
  check("one row matrix", 1, cols, std::vector<index_t>(400, 0), std::vector<index_t>(400, 3), std::vector<double>(400, 1.0));
}

TEST(Convert, LargeCooOnSeveralThreadsMatchesASortedReference) {
  // 1.5M entries (the threaded path starts at 2^20) with duplicates and unsorted rows,
  // against a plain sort-and-sum reference; and the same on one thread.
  std::mt19937 g(41);
  const index_t rows = 30000, cols = 20000;
  const std::size_t n = 1'500'000;
  std::uniform_int_distribution<index_t> ri(0, rows - 1), ci(0, cols - 1);
  std::vector<index_t> r(n), c(n);
  std::vector<double> v(n);
  for (std::size_t k = 0; k < n; ++k) r[k] = ri(g), c[k] = ci(g), v[k] = static_cast<double>(k % 7 + 1);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return r[x] != r[y] ? r[x] < r[y] : c[x] < c[y];
  });
  std::vector<index_t> rp(rows + 1, 0), want_c;
  std::vector<double> want_v;
  for (std::size_t q = 0; q < n; ++q) {
    const std::size_t k = order[q];
    if (q > 0 && r[order[q - 1]] == r[k] && c[order[q - 1]] == c[k]) {
      want_v.back() += v[k];
    } else {
      want_c.push_back(c[k]);
      want_v.push_back(v[k]);
      ++rp[r[k] + 1];
    }
  }
  std::partial_sum(rp.begin(), rp.end(), rp.begin());
  const csr_matrix<double> want(rows, cols, rp, want_c, want_v);
  const coo_matrix<double> coo(rows, cols, r, c, v);
  ::setenv("LA_THREADS", "3", 1);
  const auto three = to_csr(coo);
  ::setenv("LA_THREADS", "1", 1);
  const auto one = to_csr(coo);
  ::unsetenv("LA_THREADS");
  EXPECT_EQ(three, want);
  EXPECT_EQ(one, want);
  EXPECT_EQ(to_csr<std::int64_t>(coo), to_csr<std::int64_t>(want));
}

}  // namespace
}  // namespace la
