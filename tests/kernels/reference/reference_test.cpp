// Host references: tiny cases a person can check by hand, and SpMV of every format against
// the dense product on random matrices (real and complex values); the sparse product C = A B
// and the transpose against dense ones.
#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include <la/kernels/reference/blas1.hpp>
#include <la/kernels/reference/gemm.hpp>
#include <la/kernels/reference/spgemm.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/reference/transpose.hpp>
#include "test_util.hpp"

namespace la {
namespace {

//     [1 0 2 0]        x = [1 2 3 4]   A x = [7 0 31]
// A = [0 0 0 0]
//     [3 4 0 5]
csr_matrix<double> small() { return {3, 4, {0, 2, 2, 5}, {0, 2, 0, 1, 3}, {1, 2, 3, 4, 5}}; }

template <typename M>
void check_small(const M& a) {
  const std::vector<double> x{1, 2, 3, 4};
  std::vector<double> y(3, std::numeric_limits<double>::quiet_NaN());
  reference::spmv(1.0, a, x, 0.0, y);  // beta = 0 must not read the NaNs
  EXPECT_EQ(y, (std::vector<double>{7, 0, 31})) << typeid(M).name();
  y = {1, 1, 1};
  reference::spmv(2.0, a, x, -1.0, y);
  EXPECT_EQ(y, (std::vector<double>{13, -1, 61})) << typeid(M).name();
}

TEST(ReferenceSpmv, HandCheckedEveryFormat) {
  const auto a = small();
  check_small(a);
  check_small(to_coo(a));
  check_small(to_csc(a));
  check_small(to_ell(a));
  check_small(to_jds(a));
  check_small(to_hyb(a, 1));
  check_small(to_sell(a, {2, 4}));
  check_small(to_dense(a));
}

TEST(ReferenceSpmv, SizeMismatchIsAnError) {
  std::vector<double> x(3), y(3);
  EXPECT_THROW(reference::spmv(1.0, small(), x, 0.0, y), invalid_argument);
}

template <typename T>
class ReferenceSpmvRandom : public ::testing::Test {};
TYPED_TEST_SUITE(ReferenceSpmvRandom, test::value_types_with_complex);

// Every format's reference against the dense product. Tolerance per row, the project's rule
// for a sum of k products:
// (k+2) eps sum_j |a_ij x_j| for a row of k terms (both sides accumulate in a wider type,
// so in practice they differ by at most the final rounding).
TYPED_TEST(ReferenceSpmvRandom, EveryFormatMatchesDense) {
  using T = TypeParam;
  std::mt19937 g(11);
  for (auto shape : {test::sparse_shape{1, 1, 1.0, false, false}, test::sparse_shape{31, 33, 0.2, true, true, true},
                     test::sparse_shape{1000, 700, 0.01, true, true, true}, test::sparse_shape{33, 1, 0.5, false, false}}) {
    const auto a = test::random_csr<T>(shape, g);
    const auto d = to_dense(a);
    const auto x = test::random_vector<T>(a.cols(), g);
    const auto y0 = test::random_vector<T>(a.rows(), g);
    T alpha = T(1.5), beta = T(-0.75);
    if constexpr (is_complex_v<T>) alpha = T(1.5, -0.5), beta = T(-0.75, 0.25);  // complex values: complex scalars
    std::vector<T> want = y0;
    reference::spmv(alpha, d, x, beta, want);
    auto check = [&](const auto& m) {
      std::vector<T> y = y0;
      reference::spmv(alpha, m, x, beta, y);
      for (index_t i = 0; i < a.rows(); ++i) {
        double mag = double(std::abs(beta)) * double(std::abs(y0[i]));
        for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
          mag += double(std::abs(alpha)) * double(std::abs(a.values()[k])) * double(std::abs(x[a.col_idx()[k]]));
        const double k = a.row_ptr()[i + 1] - a.row_ptr()[i];
        const double tol = (k + 2) * std::numeric_limits<real_of_t<T>>::epsilon() * mag;
        ASSERT_LE(double(std::abs(y[i] - want[i])), tol) << typeid(m).name() << " row " << i;
      }
    };
    check(a);
    check(to_coo(a));
    check(to_csc(a));
    check(to_ell(a));
    check(to_jds(a));
    check(to_hyb(a, 1));
    check(to_sell(a, {3, 6}));
  }
}

TEST(ReferenceGemm, HandChecked) {
  dense_matrix<double> a(2, 3, 3, {1, 2, 3, 4, 5, 6});
  dense_matrix<double> b(3, 2, 2, {7, 8, 9, 10, 11, 12});
  dense_matrix<double> c(2, 2, 2, std::vector<double>(4, std::numeric_limits<double>::quiet_NaN()));
  reference::gemm(1.0, a, b, 0.0, c);  // beta = 0: C's NaNs are not read
  EXPECT_EQ(c.values(), (std::vector<double>{58, 64, 139, 154}));
  c = dense_matrix<double>(2, 2, 2, {1, 2, 3, 4});
  reference::gemm(2.0, a, b, -1.0, c);  // 2 AB - C: a GEMM that leaves C alone fails
  EXPECT_EQ(c.values(), (std::vector<double>{115, 126, 275, 304}));
  dense_matrix<double> bad(2, 2);
  EXPECT_THROW(reference::gemm(1.0, a, bad, 0.0, c), invalid_argument);
}

TEST(ReferenceGemm, LeadingDimensions) {
  dense_matrix<float> a(1, 2, 4, {1, 2, 99, 99});
  dense_matrix<float> b(2, 1, 3, {3, 99, 99, 4, 99, 99});
  dense_matrix<float> c(1, 1, 2, {0, 77});
  reference::gemm(1.0f, a, b, 0.0f, c);
  EXPECT_EQ(c.values(), (std::vector<float>{11, 77}));  // padding untouched
}

TEST(ReferenceBlas1, HandChecked) {
  std::vector<double> x{3, 4}, y{1, -1};
  EXPECT_EQ(reference::dot(x, y), -1.0);
  EXPECT_EQ(reference::nrm2(x), 5.0);
  reference::axpy(2.0, x, y);
  EXPECT_EQ(y, (std::vector<double>{7, 7}));
  std::vector<double> z(3);
  EXPECT_THROW(reference::dot(x, z), invalid_argument);
}

TEST(ReferenceBlas1, ComplexDotsConjugatedAndNot) {
  using z = std::complex<double>;
  const std::vector<z> x{{1, 2}, {3, -1}}, y{{2, -1}, {0, 1}};
  EXPECT_EQ(reference::dotu(x, y), z(5, 6));   // (1+2i)(2-i) + (3-i)i
  EXPECT_EQ(reference::dot(x, y), z(5, 6));    // dot is the bilinear form
  EXPECT_EQ(reference::dotc(x, y), z(-1, -2)); // (1-2i)(2-i) + (3+i)i
  EXPECT_EQ(reference::dotc(x, x), z(15, 0));  // ||x||^2, real
  EXPECT_DOUBLE_EQ(reference::nrm2(x), std::sqrt(15.0));
  static_assert(std::is_same_v<decltype(reference::nrm2(x)), double>, "a complex vector's norm is real");
  std::vector<z> w = y;
  reference::axpy(z(0, 1), x, w);  // w += i x
  EXPECT_EQ(w, (std::vector<z>{{0, 0}, {1, 4}}));
  // float parts accumulate in double: 1 + 1e4 products of 1e-8 i * i.
  std::vector<std::complex<float>> a(10001, {0, 1e-4f}), b(10001, {0, 1e-4f});
  a[0] = b[0] = {1, 0};
  EXPECT_NEAR(reference::dotu(a, b).real(), 1.0f - 1e-4f, 1e-7f);
  EXPECT_NEAR(reference::dotc(a, b).real(), 1.0f + 1e-4f, 1e-7f);
}

TEST(ReferenceBlas1, FloatAccumulatesWide) {
  // 1 + 1e-8 * 1e4 terms: a float accumulator would drop every small term.
  std::vector<float> x(10001, 1e-8f), y(10001, 1.0f);
  x[0] = 1.0f;
  EXPECT_NEAR(reference::dot(x, y), 1.0001f, 1e-7f);
}

// C = A B against the dense product in long double, on awkward shapes (1, 31, 33 rows and
// columns, rectangular, empty rows, one dense row); tolerance (k + 2) eps sum |a_ik b_kj|
// (here 1e-13 relative to the row's magnitude). Every stored entry of C is in the symbolic
// product and every nonzero of the dense product is stored; 64-bit offsets give the same C.
TEST(ReferenceSpgemm, MatchesTheDenseProductOnAwkwardShapes) {
  std::mt19937 g(7);
  for (index_t m : {1, 31, 33})
    for (index_t k : {1, 31, 33})
      for (index_t n : {1, 33}) {
        const auto a = test::random_shape(m, k, 4, m / 2, true, g);
        const auto b = test::random_shape(k, n, 3, k - 1, false, g);
        const auto c = reference::spgemm(a, b);
        ASSERT_EQ(c.rows(), m);
        ASSERT_EQ(c.cols(), n);
        std::vector<long double> dense(static_cast<std::size_t>(m) * n, 0), mag(static_cast<std::size_t>(m) * n, 0);
        for (index_t i = 0; i < m; ++i)
          for (index_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p)
            for (index_t q = b.row_ptr()[a.col_idx()[p]]; q < b.row_ptr()[a.col_idx()[p] + 1]; ++q) {
              const long double t = (long double)a.values()[p] * b.values()[q];
              dense[i * n + b.col_idx()[q]] += t, mag[i * n + b.col_idx()[q]] += std::fabs(t);
            }
        std::vector<char> stored(dense.size(), 0);
        for (index_t i = 0; i < m; ++i)
          for (count_t e = c.row_ptr()[i]; e < c.row_ptr()[i + 1]; ++e) {
            const std::size_t at = static_cast<std::size_t>(i) * n + c.col_idx()[e];
            stored[at] = 1;
            EXPECT_NEAR(c.values()[e], (double)dense[at], 1e-13 * (double)mag[at] + 1e-300) << m << " " << k << " " << n;
            EXPECT_GT(mag[at], 0) << "an entry outside the symbolic product";
          }
        for (std::size_t at = 0; at < dense.size(); ++at)
          if (dense[at] != 0) EXPECT_TRUE(stored[at]) << "a nonzero of A B not stored";
        const auto c64 = reference::spgemm<std::int64_t>(a, b);
        EXPECT_EQ(c64.values(), c.values());
        EXPECT_EQ(c64.col_idx(), c.col_idx());
      }
  test::expect_throw_with<invalid_argument>(
      [] { reference::spgemm(csr_matrix<double>(2, 3, {0, 0, 0}, {}, {}), csr_matrix<double>(2, 2, {0, 0, 0}, {}, {})); },
      {"A's columns must match B's rows"});
}

TEST(ReferenceSpgemm, TransposeIsExact) {
  std::mt19937 g(9);
  const auto a = test::random_shape(33, 31, 5, 3, true, g);
  const auto t = reference::transpose(a);
  const auto tt = reference::transpose(t);
  EXPECT_EQ(tt.row_ptr(), a.row_ptr());
  EXPECT_EQ(tt.col_idx(), a.col_idx());
  EXPECT_EQ(tt.values(), a.values());
}

}  // namespace
}  // namespace la
