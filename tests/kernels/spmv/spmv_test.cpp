// Every SpMV registry entry against the host reference (accumulated in a wider type), float
// and double, 32- and 64-bit offsets, on matrices of awkward sizes and structure: uniform
// random rows, power-law row lengths, empty rows, one row with half the columns, n = 1, 31,
// 33, 1000, 100003, rectangular shapes; alpha/beta combinations; beta = 0 over a y filled
// with NaN. Tolerance per row i of k_i terms: (k_i + 2) eps (|alpha| sum_j |a_ij x_j| + |beta y_i|),
// which bounds any summation order (the atomic kernels add in no fixed order).
#include <cmath>
#include <cstring>
#include <algorithm>
#include <numeric>

#include <la/kernels/reference/spmv.hpp>
#include <la/kernels/spmv/select.hpp>
#include <la/solvers/device_cg.hpp>
#include "extra_spmv_variant.hpp"
#include "test_util.hpp"

namespace la {
namespace {

// The test's own variants join the registry before any test runs, so every test below that
// iterates the registry meets them too.
const bool extras_added = test::add_extra_spmv_variants();

/// Rows whose lengths follow a power law (many short rows, a few very long ones).
template <typename T>
csr_matrix<T> power_law(index_t rows, index_t cols, std::mt19937& g) {
  std::vector<index_t> rp{0}, ci;
  std::vector<T> v;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (index_t i = 0; i < rows; ++i) {
    const index_t len = std::min<index_t>(cols, static_cast<index_t>(std::pow(u(g), -1.5)) - 1);
    std::vector<index_t> c(static_cast<std::size_t>(cols));
    std::iota(c.begin(), c.end(), 0);
    std::shuffle(c.begin(), c.end(), g);
    c.resize(static_cast<std::size_t>(std::max<index_t>(len, 0)));
    std::sort(c.begin(), c.end());
    for (index_t j : c) ci.push_back(j), v.push_back(test::random_value<T>(g));
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<T>(rows, cols, std::move(rp), std::move(ci), std::move(v));
}

/// A sparse matrix with one row holding half of the columns.
template <typename T>
csr_matrix<T> half_row(index_t rows, index_t cols, std::mt19937& g) {
  auto d = to_dense(test::random_csr<T>({rows, cols, 0.01, true, false}, g));
  for (index_t j = 0; j < cols; j += 2) d(rows / 3, j) = test::random_value<T>(g);
  return to_csr(d);
}

/// The same matrix as COO with its entries in random order (runs of equal rows broken up).
template <typename T>
coo_matrix<T> shuffled_coo(const csr_matrix<T>& a, std::mt19937& g) {
  const auto c = to_coo(a);
  std::vector<std::size_t> order(c.values().size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::shuffle(order.begin(), order.end(), g);
  std::vector<index_t> r, k;
  std::vector<T> v;
  for (std::size_t q : order) r.push_back(c.row_idx()[q]), k.push_back(c.col_idx()[q]), v.push_back(c.values()[q]);
  return coo_matrix<T>(a.rows(), a.cols(), std::move(r), std::move(k), std::move(v));
}

template <typename T>
std::vector<csr_matrix<T>> cases(std::mt19937& g) {
  return {
      test::random_csr<T>({1, 1, 1.0, false, false}, g),
      test::random_csr<T>({31, 33, 0.3, true, true}, g),
      test::random_csr<T>({33, 31, 0.5, false, false, true}, g),
      test::random_csr<T>({1000, 1000, 0.01, true, true, true}, g),
      test::random_csr<T>({100003, 1000, 0.003, true, true}, g),
      test::random_csr<T>({40, 7, 0.0, false, false}, g),  // no entries at all
      power_law<T>(1000, 2000, g),
      half_row<T>(300, 5000, g),
      test::random_csr<T>({7, 300, 0.2, false, false}, g),  // wide
      test::random_csr<T>({50, 20000, 0.001, false, false, true}, g),  // one row of 20000 entries (78 chunks of 256)
  };
}

template <typename T>
class SpmvVariants : public ::testing::Test {};
TYPED_TEST_SUITE(SpmvVariants, test::value_types);

/// Checks every row of got = alpha*A*x + beta*y0 against the reference (at most 3 failures
/// reported, each naming `what`).
template <typename T>
void expect_rows(const csr_matrix<T>& a, const std::vector<T>& x, const std::vector<T>& y0, T alpha, T beta,
                 const std::vector<T>& got, const std::string& what) {
  std::vector<T> want = y0;
  reference::spmv(alpha, a, x, beta, want);
  std::vector<T> mag(y0.size(), T(0));  // |alpha| sum |a x| + |beta y|, and row lengths
  {
    std::vector<T> ax(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) ax[j] = std::abs(x[j]);
    auto abs_a = a;
    for (T& e : abs_a.values()) e = std::abs(e);
    reference::spmv(std::abs(alpha), abs_a, ax, T(0), mag);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  int bad = 0;
  for (index_t i = 0; i < a.rows() && bad < 3; ++i) {
    const double k = static_cast<double>(a.row_ptr()[i + 1] - a.row_ptr()[i]);
    const double scale = double(mag[i]) + (beta == T(0) ? 0.0 : std::abs(double(beta) * y0[i]));
    const double tol = (k + 2) * eps * scale;
    const double err = std::abs(double(got[i]) - double(want[i]));
    if (!(err <= tol)) {  // NaN fails: an unwritten y keeps its NaN
      ++bad;
      ADD_FAILURE() << what << " " << a.rows() << "x" << a.cols() << " alpha " << alpha << " beta "
                    << beta << ": y[" << i << "] = " << got[i] << ", reference " << want[i] << ", |err| " << err
                    << " > " << tol;
    }
  }
}

/// Runs `v` on device matrix m (the device copy of host matrix `a`) and checks every row.
template <typename T, typename M>
void check(context& ctx, const spmv_variant<T>& v, const csr_matrix<T>& a, const M& m, T alpha, T beta,
           std::mt19937& g, const std::string& what) {
  const auto x = test::random_vector<T>(static_cast<std::size_t>(a.cols()), g);
  auto y0 = test::random_vector<T>(static_cast<std::size_t>(a.rows()), g);
  if (beta == T(0)) std::fill(y0.begin(), y0.end(), std::numeric_limits<T>::quiet_NaN());
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

TYPED_TEST(SpmvVariants, EveryEntryMatchesTheReference) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(17);
  for (const auto& a : cases<T>(g)) {
    for (const auto& v : spmv_variants<T>()) {
      for (auto [alpha, beta] : {std::pair<T, T>{1, 0}, std::pair<T, T>{T(-0.5), T(2)}, std::pair<T, T>{T(1.5), 1}}) {
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
          case format::coo: {
            check(ctx, v, a, to_device(ctx, to_coo(a)), alpha, beta, g, "coo");
            check(ctx, v, a, to_device(ctx, shuffled_coo(a, g)), alpha, beta, g, "coo, entries shuffled");
            break;
          }
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
}

TYPED_TEST(SpmvVariants, DeterministicEntriesAreBitIdenticalRunToRun) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(23);
  const auto a = power_law<T>(5000, 3000, g);
  const auto d = to_device(ctx, a);
  const auto x = to_device(ctx, test::random_vector<T>(3000, g));
  const auto sell = to_device(ctx, to_sell(a));
  const auto ell = to_device(ctx, to_ell(a));
  const auto jds = to_device(ctx, to_jds(a));
  // Every variant the registry calls deterministic is held to it.
  int checked = 0;
  for (const auto& v : spmv_variants<T>()) {
    if (!v.deterministic || v.fmt == format::dense) continue;
    const std::string name(v.name);
    if (v.fmt != format::csr && v.fmt != format::sell && v.fmt != format::ell && v.fmt != format::jds)
      FAIL() << name << " is called deterministic; add its format to this test";
    ++checked;
    std::vector<std::vector<T>> runs;
    for (int r = 0; r < 3; ++r) {
      device_vector<T> y(ctx, a.rows());
      const auto view = v.fmt == format::sell  ? spmv_view(sell)
                        : v.fmt == format::ell ? spmv_view(ell)
                        : v.fmt == format::jds ? spmv_view(jds)
                                               : spmv_view(d);
      spmv_plan<T>(ctx, view, v).run(ctx, x, y, T(1), T(0));
      runs.push_back(to_host(ctx, y));
    }
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(T)), 0) << name;
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[2].data(), runs[0].size() * sizeof(T)), 0) << name;
  }
  EXPECT_GE(checked, 4);
}

TEST(Spmv, RegistryAndArguments) {  // host-only parts run without a GPU too
  EXPECT_EQ(find_spmv<double>("csr_vector").fmt, format::csr);
  test::expect_throw_with<invalid_argument>([] { find_spmv<float>("nope"); }, {"unknown SpMV kernel 'nope'", "csr_scalar"});
  for (format f : all_formats) EXPECT_EQ(default_spmv<float>({f, false, 10, 10, 30}).fmt, f) << to_string(f);
  EXPECT_EQ(default_spmv<float>({format::csr, false, 10, 10, 30}).name, "csr_scalar");
  EXPECT_EQ(default_spmv<float>({format::csr, false, 10, 10, 300}).name, "csr_vector");
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(3);
  const auto d = to_device(ctx, test::random_csr<double>({10, 12, 0.5, false, false}, g));
  device_vector<double> x(ctx, 11), y(ctx, 10);
  test::expect_throw_with<invalid_argument>([&] { spmv(ctx, spmv_view(d), x, y, 1.0, 0.0); }, {"x has 11 elements"});
  device_vector<double> x12(ctx, 12);
  test::expect_throw_with<invalid_argument>([&] { spmv(ctx, spmv_view(d), x12, y, 1.0, 0.0, "ell"); },
                                            {"runs on ell, not on this csr matrix"});
  // A variant with a workspace is refused by the one-call form (it would prepare the
  // workspace on every call) and runs through a plan made once.
  test::expect_throw_with<invalid_argument>([&] { spmv(ctx, spmv_view(d), x12, y, 1.0, 0.0, "csr_balanced"); },
                                            {"csr_balanced", "la::spmv_plan"});
  const spmv_plan<double> plan(ctx, spmv_view(d), "csr_balanced");
  EXPECT_GT(plan.workspace_bytes(), 0u);
  plan.run(ctx, x12, y, 1.0, 0.0);
  plan.run(ctx, x12, y, 1.0, 0.0);
  test::expect_throw_with<invalid_argument>([&] { plan.run(ctx, x, y, 1.0, 0.0); }, {"x has 11 elements"});
}

TEST(Spmv, AnAddedVariantIsListedSelectedAndSolvedWith) {
  // Host-only: the registry, the CLI's kernel list, the selector's candidates, the format
  // defaults and the solver's choice see the variants added in extra_spmv_variant.cu, which
  // no library code names. The GPU tests (every entry above, cg_gpu_test) run them.
  ASSERT_TRUE(extras_added);
  const std::string fused(test::extra_fused), plain(test::extra_plain);
  EXPECT_EQ(find_spmv<float>(fused).walk, row_walk::thread);
  EXPECT_EQ(find_spmv<double>(plain).walk, row_walk::none);
  const std::string names = spmv_variant_names(true);  // what `la spmv --kernel` lists
  EXPECT_NE(names.find(fused), std::string::npos) << names;
  EXPECT_NE(names.find(plain), std::string::npos) << names;
  // The selector times every candidate the registry offers: the plain one says it is one.
  const spmv_stats s = row_stats(poisson_2d<double>(30));
  bool timed_plain = false, timed_fused = false;
  for (const auto& c : spmv_candidates(s)) timed_plain |= c.kernel == plain, timed_fused |= c.kernel == fused;
  EXPECT_TRUE(timed_plain);
  EXPECT_FALSE(timed_fused);
  // Neither is a format default, and la's own come first for a format and walk.
  EXPECT_NE(default_spmv<float>({format::csr, false, 10, 10, 30}).name, fused);
  EXPECT_EQ(find_spmv<float>(format::csr, row_walk::thread).name, "csr_scalar");
  // can_implement is more than the format: the plain one refuses large matrices.
  EXPECT_TRUE(find_spmv<float>(plain).can_implement({format::csr, false, 1000, 1000, 5000}));
  EXPECT_FALSE(find_spmv<float>(plain).can_implement({format::csr, false, 1000000, 1000, 5000}));
  // Adding is checked: names are unique, the float and double forms agree, walks fit formats.
  spmv_variant<float> f = find_spmv<float>(plain);
  spmv_variant<double> d = find_spmv<double>(plain);
  test::expect_throw_with<invalid_argument>([&] { add_spmv_variant(f, d); }, {"exists"});
  f.name = d.name = "test_mismatch";
  d.deterministic = false;
  test::expect_throw_with<invalid_argument>([&] { add_spmv_variant(f, d); }, {"differ"});
  d.deterministic = true;
  f.fmt = d.fmt = format::coo;
  f.walk = d.walk = row_walk::group;
  test::expect_throw_with<invalid_argument>([&] { add_spmv_variant(f, d); }, {"runs on CSR only"});
  f.name = d.name = "auto";
  test::expect_throw_with<invalid_argument>([&] { add_spmv_variant(f, d); }, {"not a kernel name"});
  EXPECT_THROW(find_spmv<float>("test_mismatch"), invalid_argument);  // nothing half-added
}

}  // namespace
}  // namespace la

namespace la {
namespace {

TEST(SpmvSelect, RowStatisticsAndTheRule) {
  // Host statistics (no GPU): the rule of select.cu on matrices of each kind.
  const auto p = row_stats(poisson_2d<double>(100));
  EXPECT_EQ(p.rows, 10000);
  EXPECT_EQ(p.nnz, 5 * 10000 - 4 * 100);
  EXPECT_EQ(p.longest, 5);
  EXPECT_EQ(p.empty_rows, 0);
  EXPECT_NEAR(p.mean, 4.96, 1e-12);
  EXPECT_LE(p.padding(), 1.01 + 0.02);
  EXPECT_EQ(select_spmv(p).kernel, "csr_vector");  // small
  const spmv_choice c = select_spmv(row_stats(poisson_2d<double>(400)));
  EXPECT_EQ(c.kernel, "csr_scalar");
  EXPECT_NE(c.why.find("short even rows"), std::string::npos) << c.why;
  EXPECT_EQ(select_spmv(row_stats(rmat<double>(17, 16))).kernel, "hyb");
  EXPECT_EQ(select_spmv(row_stats(dense_rows<double>(100000, 4, 2, 20000))).kernel, "hyb");
  EXPECT_EQ(select_spmv(row_stats(random_rows<float>(200000, 200000, 12))).fmt, format::ell);  // equal rows
  std::vector<index_t> rp{0}, ci;  // 150000 rows of 1..30 entries, lengths scattered
  for (index_t i = 0; i < 150000; ++i) {
    for (index_t j = 0; j <= (i * 7919) % 30; ++j) ci.push_back(j);
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  const csr_matrix<float> uneven(150000, 30, rp, ci, std::vector<float>(ci.size(), 1.0f));
  const spmv_choice u = select_spmv(row_stats(uneven));
  EXPECT_EQ(u.fmt, format::sell) << u.why;
  EXPECT_EQ(u.sell.sigma, 0) << u.why;  // sorted windows
  EXPECT_EQ(select_spmv(row_stats(csr_matrix<float>(0, 5, {0}, {}, {}))).kernel, "csr_scalar");
  // Every candidate names a registered kernel of its format.
  for (const auto& k : spmv_candidates(row_stats(uneven))) EXPECT_EQ(find_spmv<float>(k.kernel).fmt, k.fmt);
}

TEST(SpmvSelect, Generators) {
  const auto a = poisson_3d<float>(4);
  EXPECT_EQ(a.rows(), 64);
  EXPECT_EQ(a.nnz(), 7 * 64 - 6 * 16);
  EXPECT_EQ(detail::row_length(a, 21), 7);  // an interior point
  const auto r = random_rows<double>(100, 50, 7, 3);
  for (index_t i = 0; i < 100; ++i) EXPECT_EQ(detail::row_length(r, i), 7);
  EXPECT_EQ(random_rows<double>(100, 50, 7, 3), r);  // the seed fixes the matrix
  const auto d = dense_rows<float>(1000, 3, 2, 900);
  EXPECT_EQ(row_stats(d).longest, 900);
  EXPECT_EQ(d.nnz(), 998 * 3 + 2 * 900);
  EXPECT_GT(row_stats(rmat<float>(12, 8)).longest, 50);
}

template <typename T>
class SpmvOperator : public ::testing::Test {};
TYPED_TEST_SUITE(SpmvOperator, test::value_types);

TYPED_TEST(SpmvOperator, EveryChoiceAndTheTunedOneMatchTheReference) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(31);
  for (const auto& a : {poisson_2d<T>(33), power_law<T>(1000, 2000, g), dense_rows<T>(3001, 3, 3, 2500),
                        test::random_csr<T>({1, 1, 1.0, false, false}, g)}) {
    const auto d = to_device(ctx, a);
    const spmv_stats host = row_stats(a), dev = row_stats(ctx, d);
    EXPECT_EQ(dev.longest, host.longest);
    EXPECT_EQ(dev.empty_rows, host.empty_rows);
    EXPECT_EQ(dev.sell_slots, host.sell_slots);
    EXPECT_NEAR(dev.stddev, host.stddev, 1e-9 * (1 + host.stddev));
    std::vector<spmv_choice> choices = spmv_candidates(host);
    choices.push_back(select_spmv(host));
    choices.push_back(tune_spmv(ctx, d, 2));
    const auto x = test::random_vector<T>(static_cast<std::size_t>(a.cols()), g);
    const std::vector<T> nan(static_cast<std::size_t>(a.rows()), std::numeric_limits<T>::quiet_NaN());
    const auto dx = to_device(ctx, x);
    for (const auto& c : choices) {
      const spmv_operator<T> op(ctx, d, c);
      auto y = to_device(ctx, nan);  // poisoned: an unwritten row fails
      op.apply(dx.data(), y.data(), T(1), T(0), ctx.stream());
      expect_rows(a, x, nan, T(1), T(0), to_host(ctx, y), c.kernel + " (" + c.why + ")");
    }
  }
}

}  // namespace
}  // namespace la
