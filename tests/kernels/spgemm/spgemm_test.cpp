// la's GPU SpGEMM (kernels/spgemm/spgemm.hpp) against the host oracle reference::spgemm, on
// awkward shapes (1, 31, 33, 1000 rows; rectangular; empty rows; one dense row, which takes
// the warp-a-row path), in float and double, 32- and 64-bit offsets: the same pattern
// exactly, values within (k + 2) eps sum |a_ik b_kj| (the GPU sums in double in A's column
// order, the oracle in long double); C's arrays poisoned first; reruns bit-identical; a plan
// rerun on new values; the refusals.
#include <cmath>
#include <limits>
#include <random>

#include <la/formats/convert.hpp>
#include <la/kernels/reference/spgemm.hpp>
#include <la/kernels/spgemm/spgemm.hpp>
#include "test_util.hpp"

namespace la {
namespace {

template <typename T, typename O>
csr_matrix<T, O> cast(const csr_matrix<double>& a) {
  std::vector<O> p(a.row_ptr().begin(), a.row_ptr().end());
  std::vector<T> v(a.values().begin(), a.values().end());
  return csr_matrix<T, O>(a.rows(), a.cols(), std::move(p), a.col_idx(), std::move(v));
}

/// The GPU's C against the oracle's: the same pattern, values within the bound.
template <typename T, typename OA, typename OB, typename OC>
void expect_product(context& ctx, const csr_matrix<double>& ha, const csr_matrix<double>& hb, const char* what) {
  const auto a = to_device(ctx, cast<T, OA>(ha));
  const auto b = to_device(ctx, cast<T, OB>(hb));
  spgemm_plan<T, OA, OB, OC> plan(ctx, a, b);
  // C poisoned (NaN values, out-of-range columns), so an unwritten entry fails.
  device_csr<T, OC> c = device_csr<T, OC>::allocate(ctx, plan.rows(), plan.cols(), plan.nnz());
  {
    std::vector<T> nan(static_cast<std::size_t>(plan.nnz()), std::numeric_limits<T>::quiet_NaN());
    std::vector<index_t> bad(static_cast<std::size_t>(plan.nnz()), -7);
    auto v = c.view();
    // On the context's stream and waited for: a cudaMemcpy from pageable memory may return
    // before its DMA lands, and the legacy stream it runs on does not order the context's
    // non-blocking stream, so the poison could land over the product (seen once in ctest).
    ASSERT_EQ(cudaMemcpyAsync(v.values, nan.data(), nan.size() * sizeof(T), cudaMemcpyHostToDevice, ctx.stream()), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(v.col_idx, bad.data(), bad.size() * sizeof(index_t), cudaMemcpyHostToDevice, ctx.stream()),
              cudaSuccess);
    ctx.synchronize();
  }
  plan.run(ctx, a, b, c);
  const auto hc = to_host(ctx, c);  // validates the structure (sorted, in range)
  const auto ref = reference::spgemm(ha, hb);
  ASSERT_EQ(hc.nnz(), ref.nnz()) << what;
  for (index_t i = 0; i <= ref.rows(); ++i) ASSERT_EQ(static_cast<count_t>(hc.row_ptr()[i]), ref.row_ptr()[i]) << what;
  ASSERT_EQ(hc.col_idx(), ref.col_idx()) << what;
  const double eps = std::numeric_limits<T>::epsilon();
  for (index_t i = 0; i < ref.rows(); ++i) {
    // |a_i| |b| bounds each entry's rounding: (k + 2) eps sum_k |a_ik| max |b_k.|.
    double mag = 0;
    index_t k = 0;
    for (index_t p = ha.row_ptr()[i]; p < ha.row_ptr()[i + 1]; ++p, ++k)
      for (index_t q = hb.row_ptr()[ha.col_idx()[p]]; q < hb.row_ptr()[ha.col_idx()[p] + 1]; ++q)
        mag = std::max(mag, std::fabs(ha.values()[p] * hb.values()[q]));
    for (index_t e = ref.row_ptr()[i]; e < ref.row_ptr()[i + 1]; ++e)
      ASSERT_NEAR(static_cast<double>(hc.values()[e]), ref.values()[e], (k + 2) * eps * k * mag + 1e-300)
          << what << " row " << i;
  }
  // A rerun is bit-identical; a second plan gives the same C.
  device_csr<T, OC> c2 = spgemm<T, OA, OB, OC>(ctx, a, b);
  const auto hc2 = to_host(ctx, c2);
  EXPECT_EQ(hc2.values(), hc.values()) << what;
  EXPECT_EQ(hc2.col_idx(), hc.col_idx()) << what;
}

TEST(GpuSpgemm, MatchesTheOracleOnAwkwardShapes) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(11);
  // Under a sanitizer A has 1 or 33 rows (its row m/2 still reaches every path: k past 96 the hash).
  const std::vector<index_t> ms = test::under_sanitizer() ? std::vector<index_t>{1, 33} : std::vector<index_t>{1, 31, 33, 1000};
  for (index_t m : ms)
    for (index_t k : {1, 33, 1000})
      for (index_t n : {1, 31, 1000}) {
        // A's row m/2 dense (k entries: past 32 the warp path), every third row empty.
        const auto ha = test::random_shape(m, k, 4, m / 2, true, g);
        const auto hb = test::random_shape(k, n, 3, k - 1, false, g);
        const std::string what = std::to_string(m) + "x" + std::to_string(k) + " * " + std::to_string(k) + "x" + std::to_string(n);
        expect_product<double, std::int32_t, std::int32_t, std::int32_t>(ctx, ha, hb, what.c_str());
        if (test::under_sanitizer() && m == 1) continue;  // every index and value type on the 33-row A
        expect_product<float, std::int32_t, std::int32_t, std::int32_t>(ctx, ha, hb, what.c_str());
        expect_product<double, std::int64_t, std::int64_t, std::int64_t>(ctx, ha, hb, what.c_str());
        expect_product<double, std::int32_t, std::int32_t, std::int64_t>(ctx, ha, hb, what.c_str());
        expect_product<float, std::int32_t, std::int64_t, std::int64_t>(ctx, ha, hb, what.c_str());
      }
}

// AMG's products: A A, and R (A P) for a 2D Poisson operator and an aggregation-like P.
TEST(GpuSpgemm, PoissonProducts) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const auto a = poisson_2d<double>(37);
  expect_product<double, std::int32_t, std::int32_t, std::int32_t>(ctx, a, a, "A A");
  std::vector<index_t> pp{0}, pi;
  std::vector<double> pv;
  for (index_t i = 0; i < a.rows(); ++i) {
    for (index_t c = std::max<index_t>(0, i / 9 - 1); c <= std::min<index_t>(a.rows() / 9, i / 9 + 1); ++c)
      pi.push_back(c), pv.push_back(1.0 / (1 + std::abs(i / 9 - c)));
    pp.push_back(static_cast<index_t>(pi.size()));
  }
  const csr_matrix<double> p(a.rows(), a.rows() / 9 + 1, std::move(pp), std::move(pi), std::move(pv));
  const auto ap = reference::spgemm<index_t>(a, p);
  expect_product<double, std::int32_t, std::int32_t, std::int32_t>(ctx, reference::transpose(p), ap, "R (A P)");
}

// New values on the same patterns: the plan's run gives what a fresh product gives.
TEST(GpuSpgemm, PlanRerunsOnNewValues) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(5);
  const auto ha = test::random_shape(200, 150, 6, 7, true, g), hb = test::random_shape(150, 90, 5, 3, false, g);
  const auto a = to_device(ctx, ha);
  const auto b = to_device(ctx, hb);
  spgemm_plan<double, index_t> plan(ctx, a, b);
  device_csr<double, index_t> c;
  plan.run(ctx, a, b, c);
  auto ha2 = ha;
  for (double& v : ha2.values()) v = -2 * v + 0.25;
  const auto a2 = to_device(ctx, ha2);
  plan.run(ctx, a2, b, c);
  const auto fresh = to_host(ctx, spgemm(ctx, a2, b));
  EXPECT_EQ(to_host(ctx, c).values(), fresh.values());
  // Refusals: shapes that do not chain, and a run on other matrices than the plan's.
  test::expect_throw_with<invalid_argument>([&] { spgemm(ctx, b, b); }, {"A's columns must match B's rows"});
  const auto other = to_device(ctx, test::random_shape(200, 150, 2, 7, true, g));
  test::expect_throw_with<invalid_argument>([&] { plan.run(ctx, other, b, c); }, {"make a new plan"});
}

}  // namespace
}  // namespace la
