// Every SpMV registry entry on complex values (issue 69) against the host reference
// (accumulated in complex<long double> for complex<double>): std::complex<float> and
// std::complex<double>, 32- and 64-bit offsets, every format, matrices of awkward sizes
// (1, 31, 33, 1000, 100003 rows, rectangular, no entries, one long row), complex alpha and
// beta, beta = 0 over a y of NaN. Tolerance per row i of k_i terms:
// (k_i + 4) eps (|alpha| sum_j |a_ij| |x_j| + |beta| |y_i|), which bounds any order of the sum
// (the atomic kernels add in no fixed order) and the complex products' rounding.
#include <cmath>
#include <cstring>

#include <la/formats/generate.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/spmv/select.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include "test_util.hpp"

namespace la {
namespace {

using complex_types = ::testing::Types<std::complex<float>, std::complex<double>>;
template <typename T>
class ComplexSpmv : public ::testing::Test {};
TYPED_TEST_SUITE(ComplexSpmv, complex_types);

template <typename T>
std::vector<csr_matrix<T>> cases(std::mt19937& g) {
  std::vector<csr_matrix<T>> c = {
      test::random_csr<T>({1, 1, 1.0, false, false}, g),
      test::random_csr<T>({31, 33, 0.3, true, true}, g),
      test::random_csr<T>({33, 31, 0.5, false, false, true}, g),
      test::random_csr<T>({1000, 1000, 0.01, true, true, true}, g),
      test::random_csr<T>({40, 7, 0.0, false, false}, g),             // no entries at all
      test::random_csr<T>({50, 20000, 0.001, false, false, true}, g),  // one row of 20000 entries
  };
  if (!test::under_sanitizer()) c.push_back(test::random_csr<T>({100003, 1000, 0.003, true, true}, g));
  return c;
}

template <typename T>
void expect_rows(const csr_matrix<T>& a, const std::vector<T>& x, const std::vector<T>& y0, T alpha, T beta,
                 const std::vector<T>& got, const std::string& what) {
  using R = real_of_t<T>;
  std::vector<T> want = y0;
  reference::spmv(alpha, a, x, beta, want);
  const double eps = std::numeric_limits<R>::epsilon();
  int bad = 0;
  for (index_t i = 0; i < a.rows() && bad < 3; ++i) {
    double mag = 0;
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      mag += std::abs(std::complex<double>(a.values()[k])) * std::abs(std::complex<double>(x[a.col_idx()[k]]));
    mag *= std::abs(std::complex<double>(alpha));
    if (beta != T(0)) mag += std::abs(std::complex<double>(beta)) * std::abs(std::complex<double>(y0[i]));
    const double k = static_cast<double>(a.row_ptr()[i + 1] - a.row_ptr()[i]);
    const double tol = (k + 4) * eps * mag;
    const double err = std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    if (!(err <= tol)) {  // NaN fails: an unwritten y keeps its NaN
      ++bad;
      ADD_FAILURE() << what << " " << a.rows() << "x" << a.cols() << ": y[" << i << "] = " << got[i] << ", reference "
                    << want[i] << ", |err| " << err << " > " << tol;
    }
  }
}

template <typename T, typename M>
void check(context& ctx, const spmv_variant<T>& v, const csr_matrix<T>& a, const M& m, T alpha, T beta, std::mt19937& g,
           const std::string& what) {
  using R = real_of_t<T>;
  const auto x = test::random_vector<T>(static_cast<std::size_t>(a.cols()), g);
  auto y0 = test::random_vector<T>(static_cast<std::size_t>(a.rows()), g);
  if (beta == T(0)) std::fill(y0.begin(), y0.end(), T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN()));
  const auto dx = to_device(ctx, x);
  auto dy = to_device(ctx, y0);
  const matrix_view<T> view = spmv_view(m);
  if (!v.can_implement(problem_of(view))) {
    EXPECT_THROW(spmv_plan<T>(ctx, view, v), invalid_argument) << v.name << " " << what;
    return;
  }
  const spmv_plan<T> plan(ctx, view, v);
  plan.run(dx.data(), dy.data(), alpha, beta, ctx.stream());
  expect_rows(a, x, y0, alpha, beta, to_host(ctx, dy), std::string(v.name) + " " + what);
}

TYPED_TEST(ComplexSpmv, EveryEntryMatchesTheReference) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(29);
  int run = 0;
  for (const auto& a : cases<T>(g)) {
    for (const auto& v : spmv_variants<T>()) {
      for (auto [alpha, beta] : {std::pair<T, T>{T(1), T(0)}, std::pair<T, T>{T(-0.5, 0.25), T(2, -1)},
                                 std::pair<T, T>{T(0, 1.5), T(1)}}) {
        ++run;
        switch (v.fmt) {
          case format::csr:
            check(ctx, v, a, to_device(ctx, a), alpha, beta, g, "csr32");
            check(ctx, v, a, to_device(ctx, to_csr<std::int64_t>(a)), alpha, beta, g, "csr64");
            break;
          case format::csc:
            check(ctx, v, a, to_device(ctx, to_csc(a)), alpha, beta, g, "csc32");
            check(ctx, v, a, to_device(ctx, to_csc<std::int64_t>(a)), alpha, beta, g, "csc64");
            break;
          case format::jds:
            check(ctx, v, a, to_device(ctx, to_jds(a)), alpha, beta, g, "jds32");
            check(ctx, v, a, to_device(ctx, to_jds<std::int64_t>(a)), alpha, beta, g, "jds64");
            break;
          case format::coo: check(ctx, v, a, to_device(ctx, to_coo(a)), alpha, beta, g, "coo"); break;
          case format::ell:
            if (double(a.rows()) * a.cols() < 5e7 || a.rows() < 5000) check(ctx, v, a, to_device(ctx, to_ell(a)), alpha, beta, g, "ell");
            break;
          case format::dense:
            if (double(a.rows()) * a.cols() <= 5e6) check(ctx, v, a, to_device(ctx, to_dense(a)), alpha, beta, g, "dense");
            break;
          case format::hyb:
            check(ctx, v, a, to_device(ctx, to_hyb(a)), alpha, beta, g, "hyb");
            check(ctx, v, a, to_device(ctx, to_hyb(a, 1)), alpha, beta, g, "hyb, width 1");
            break;
          case format::sell:
            check(ctx, v, a, to_device(ctx, to_sell(a)), alpha, beta, g, "sell32");
            check(ctx, v, a, to_device(ctx, to_sell<std::int64_t>(a, {32, 1})), alpha, beta, g, "sell64, sigma 1");
            check(ctx, v, a, to_device(ctx, to_sell(a, {3, 12})), alpha, beta, g, "sell, C 3, sigma 12");
            break;
        }
      }
    }
  }
  EXPECT_GT(run, 0);
}

TYPED_TEST(ComplexSpmv, DeterministicEntriesAreBitIdenticalRunToRun) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(31);
  const auto a = test::random_csr<T>({3000, 2000, 0.01, true, true, true}, g);
  const auto d = to_device(ctx, a);
  const auto sell = to_device(ctx, to_sell(a));
  const auto ell = to_device(ctx, to_ell(a));
  const auto jds = to_device(ctx, to_jds(a));
  const auto x = to_device(ctx, test::random_vector<T>(2000, g));
  int checked = 0;
  for (const auto& v : spmv_variants<T>()) {
    if (!v.deterministic || v.fmt == format::dense) continue;
    ++checked;
    const auto view = v.fmt == format::sell ? spmv_view(sell)
                      : v.fmt == format::ell ? spmv_view(ell)
                      : v.fmt == format::jds ? spmv_view(jds)
                                             : spmv_view(d);
    ASSERT_TRUE(v.fmt == format::csr || v.fmt == format::sell || v.fmt == format::ell || v.fmt == format::jds) << v.name;
    std::vector<std::vector<T>> runs;
    for (int r = 0; r < 2; ++r) {
      device_vector<T> y(ctx, a.rows());
      spmv_plan<T>(ctx, view, v).run(ctx, x, y, T(1, -1), T(0));
      runs.push_back(to_host(ctx, y));
    }
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(T)), 0) << v.name;
  }
  EXPECT_GE(checked, 4);
}

TEST(ComplexSpmvRegistry, TheSameEntriesAsTheRealOnes) {  // host-only
  ASSERT_FALSE(spmv_variants<std::complex<double>>().empty());
  for (const auto& v : spmv_variants<std::complex<double>>()) {
    const auto& r = find_spmv<double>(v.name);
    EXPECT_EQ(r.fmt, v.fmt) << v.name;
    EXPECT_EQ(r.deterministic, v.deterministic) << v.name;
  }
  EXPECT_EQ(default_spmv<std::complex<float>>({format::csr, false, 10, 10, 300}).name, "csr_vector");
}

TEST(ComplexSpmvSelect, TheComplexRule) {  // host-only
  using z = std::complex<double>;
  // A large stencil: the real rule's thread-per-row CSR, SELL-32 unsorted for complex values.
  const auto stencil = row_stats(helmholtz<z>(2, 400, helmholtz_kappa(400, 10), 0.5));
  EXPECT_EQ(select_spmv(stencil).kernel, "csr_scalar");
  const spmv_choice c = select_spmv_complex(stencil);
  EXPECT_EQ(c.fmt, format::sell) << c.why;
  EXPECT_EQ(c.sell.slice_height, 32);
  EXPECT_EQ(c.sell.sigma, 1) << c.why;
  EXPECT_NE(c.why.find("complex values"), std::string::npos) << c.why;
  // A few very long rows: csr_balanced (deterministic), where the real rule takes HYB.
  const auto power = row_stats(dense_rows<double>(100000, 4, 2, 20000));
  ASSERT_EQ(select_spmv(power).kernel, "hyb");
  const spmv_choice b = select_spmv_complex(power);
  EXPECT_EQ(b.kernel, "csr_balanced") << b.why;
  EXPECT_TRUE(find_spmv<z>(b.kernel).deterministic);
  // Small systems keep the real rule's choice.
  EXPECT_EQ(select_spmv_complex(row_stats(helmholtz<z>(2, 20, 1.0, 0.5))).kernel, "csr_vector");
}

TYPED_TEST(ComplexSpmv, TheChosenOperatorOnConvertedStorage) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(41);
  // A stencil large enough for SELL (a device conversion of complex values), and a matrix
  // with long rows (csr_balanced), each against the reference with y poisoned.
  std::vector<csr_matrix<T>> ms = {helmholtz<T>(2, 330, helmholtz_kappa(330, 10), 0.5),
                                   test::random_csr<T>({1000, 1000, 0.01, true, true, true}, g)};
  for (const auto& a : ms) {
    const auto d = to_device(ctx, a);
    const auto x = test::random_vector<T>(static_cast<std::size_t>(a.cols()), g);
    const auto dx = to_device(ctx, x);
    std::vector<spmv_choice> choices = {select_spmv_complex(row_stats(ctx, d))};
    for (format f : {format::sell, format::ell, format::jds, format::coo, format::csc, format::hyb}) {
      spmv_choice c;
      c.fmt = f;
      choices.push_back(c);
    }
    for (const auto& c : choices) {
      const spmv_operator<T> op(ctx, d, c);
      const std::vector<T> nan(static_cast<std::size_t>(a.rows()), T(std::numeric_limits<real_of_t<T>>::quiet_NaN(), 0));
      auto y = to_device(ctx, nan);
      op.apply(dx.data(), y.data(), T(1, -1), T(0), ctx.stream());
      expect_rows(a, x, nan, T(1, -1), T(0), to_host(ctx, y), std::string(to_string(c.fmt)) + " " + std::string(op.variant().name));
    }
  }
  EXPECT_EQ(select_spmv_complex(row_stats(ms[0])).fmt, format::sell);  // 108,900 rows: the first choice was SELL's
}

}  // namespace
}  // namespace la
