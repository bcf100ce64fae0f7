// The fp64 GEMM rung (dgemm_variants(), kernels/gemm/dmma.cu) against a host reference in
// long double on random inputs of awkward shapes: alpha/beta, beta = 0 over a NaN-poisoned C,
// padded leading dimensions (the element-load path; the TMA forms' fallback), K = 0, the
// lower-only tiles (every form that has them), and bit-identical reruns. GPU tests skip without a GPU; the list's names are checked on the host.
#include <cmath>
#include <random>

#include <la/kernels/gemm/gemm.hpp>
#include "test_util.hpp"

namespace la {
namespace {

struct shape {
  index_t m, n, k;
};
// 300 x 132: three tile-rows, so the last 2-block cluster of dmma_tma_x2 has a block past M;
// K = 1000 and 17 end in a partial k-block of the TMA forms (16 deep), 16 is one whole.
const std::vector<shape> shapes = {{1, 1, 1},     {31, 33, 1000}, {33, 31, 17},   {1000, 31, 33}, {128, 128, 16},
                                   {129, 257, 65}, {300, 132, 200}, {1000, 1000, 64}, {17, 1, 1000}, {64, 63, 0},
                                   {384, 130, 130}, {1, 2, 2},     {31, 1000, 30}};

/// Host -> device and back on the context's stream (its buffers are allocated in its order).
void put(context& ctx, device_buffer<double>& d, const std::vector<double>& h) {
  LA_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), h.size() * 8, cudaMemcpyHostToDevice, ctx.stream()));
  ctx.synchronize();
}
std::vector<double> get(context& ctx, const device_buffer<double>& d) {
  std::vector<double> h(d.size());
  LA_CUDA_TRY(cudaMemcpyAsync(h.data(), d.data(), h.size() * 8, cudaMemcpyDeviceToHost, ctx.stream()));
  ctx.synchronize();
  return h;
}

std::vector<double> random_values(std::size_t n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(g);
  return v;
}

/// C = alpha A B + beta C on the host in long double; the tolerance's scale sum |a b| + |beta c|.
void reference(const shape& s, const std::vector<double>& a, index_t lda, const std::vector<double>& b, index_t ldb,
               std::vector<double>& c, index_t ldc, double alpha, double beta, std::vector<double>& mag) {
  mag.assign(c.size(), 0.0);
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = 0; j < s.n; ++j) {
      long double acc = 0, m = 0;
      for (index_t q = 0; q < s.k; ++q) {
        const long double p = static_cast<long double>(a[i * lda + q]) * b[q * ldb + j];
        acc += p, m += std::abs(p);
      }
      double& cv = c[static_cast<std::size_t>(i) * ldc + j];
      const long double old = beta == 0 ? 0.0L : static_cast<long double>(beta) * cv;
      mag[static_cast<std::size_t>(i) * ldc + j] = static_cast<double>(std::abs(alpha) * m + std::abs(old));
      cv = static_cast<double>(alpha * acc + old);
    }
}

TEST(Dgemm, ListsTheFp64Rungs) {
  ASSERT_EQ(dgemm_variants().size(), 6u);
  EXPECT_EQ(find_dgemm("dmma_m8n8k4").name, "dmma_m8n8k4");
  EXPECT_TRUE(find_dgemm("dmma_m8n8k4").teaching);
  EXPECT_FALSE(find_dgemm("dmma_m16n8k16").teaching);
  EXPECT_FALSE(find_dgemm("dmma_m16n8k8").teaching);
  EXPECT_FALSE(find_dgemm("dmma_tma").teaching);
  EXPECT_FALSE(find_dgemm("dmma_tma_x2").teaching);
  EXPECT_FALSE(find_dgemm("dmma_tma_x2_k32").teaching);
  EXPECT_THROW(find_dgemm("dgemm_nope"), invalid_argument);
}

TEST(Dgemm, EveryVariantMatchesTheLongDoubleReference) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(5);
  for (const dgemm_variant& v : dgemm_variants())
    for (const shape& s : shapes)
      for (index_t pad : {0, 3}) {  // 3: odd leading dimensions, the element-load path
        if (!v.can_implement({s.m, s.n, s.k})) {
          std::printf("skipping %s: this device lacks its instruction\n", std::string(v.name).c_str());
          continue;
        }
        const index_t lda = s.k + pad, ldb = s.n + pad, ldc = s.n + pad;
        const auto a = random_values(static_cast<std::size_t>(s.m) * std::max<index_t>(lda, 1), g);
        const auto b = random_values(static_cast<std::size_t>(std::max<index_t>(s.k, 1)) * ldb, g);
        for (double beta : {0.0, -0.75}) {
          std::vector<double> c = random_values(static_cast<std::size_t>(s.m) * ldc, g);
          if (beta == 0)
            for (double& x : c) x = std::nan("");  // beta == 0 never reads C: NaN must not leak
          device_buffer<double> da(a.size(), ctx.stream()), db(b.size(), ctx.stream()), dc(c.size(), ctx.stream());
          put(ctx, da, a), put(ctx, db, b), put(ctx, dc, c);
          dgemm_args args;
          args.m = s.m, args.n = s.n, args.k = s.k, args.a = da.data(), args.lda = lda, args.b = db.data(), args.ldb = ldb;
          args.c = dc.data(), args.ldc = ldc, args.alpha = 1.25, args.beta = beta;
          dgemm(args, ctx.stream(), v.name);
          const std::vector<double> got = get(ctx, dc);
          std::vector<double> want = c, mag;
          reference(s, a, lda, b, ldb, want, ldc, 1.25, beta, mag);
          int bad = 0;
          for (index_t i = 0; i < s.m && bad < 3; ++i)
            for (index_t j = 0; j < s.n && bad < 3; ++j) {
              const std::size_t e = static_cast<std::size_t>(i) * ldc + j;
              const double tol = 4 * std::sqrt(double(std::max<index_t>(s.k, 1))) * 1.12e-16 * mag[e] + 1e-300;
              if (!(std::abs(got[e] - want[e]) <= tol)) {
                ++bad;
                ADD_FAILURE() << v.name << " " << s.m << "x" << s.n << "x" << s.k << " pad " << pad << " beta " << beta
                              << " C(" << i << "," << j << ") = " << got[e] << ", want " << want[e];
              }
            }
        }
      }
}

TEST(Dgemm, LowerOnlyLeavesTheTilesAboveTheDiagonalAndRerunsAreBitIdentical) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(9);
  // 300 rows: three tile-rows, so a 2-block cluster of dmma_tma_x2 pairs a tile wholly above
  // the diagonal (row tile 0, column tile 1) with one that is not (row tile 1).
  const index_t n = 300, k = 64;
  const auto a = random_values(static_cast<std::size_t>(n) * k, g), b = random_values(static_cast<std::size_t>(k) * n, g);
  std::vector<double> c(static_cast<std::size_t>(n) * n, 7.0);
  device_buffer<double> da(a.size(), ctx.stream()), db(b.size(), ctx.stream()), dc(c.size(), ctx.stream());
  put(ctx, da, a), put(ctx, db, b);
  std::vector<double> want = c, mag;
  reference({n, n, k}, a, k, b, n, want, n, -1, 1, mag);
  for (const std::string algo : {"auto", "dmma_m16n8k8", "dmma_tma", "dmma_tma_x2", "dmma_tma_x2_k32"}) {
    if (algo != "auto" && !find_dgemm(algo).can_implement({n, n, k})) continue;
    std::vector<std::vector<double>> runs;
    for (int run = 0; run < 2; ++run) {
      put(ctx, dc, c);
      dgemm_args args;
      args.m = n, args.n = n, args.k = k, args.a = da.data(), args.lda = k, args.b = db.data(), args.ldb = n;
      args.c = dc.data(), args.ldc = n, args.alpha = -1, args.beta = 1, args.lower_only = true;
      dgemm(args, ctx.stream(), algo);
      runs.push_back(get(ctx, dc));
    }
    EXPECT_EQ(runs[0], runs[1]) << algo;
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j <= i; ++j) {  // on and below the diagonal: computed
        const std::size_t e = static_cast<std::size_t>(i) * n + j;
        ASSERT_NEAR(runs[0][e], want[e], 1e-13 * (mag[e] + 1)) << algo << " " << i << "," << j;
      }
    // Tiles wholly above the diagonal (128-row tiles: row tile 0, columns from 128) kept C.
    EXPECT_EQ(runs[0][static_cast<std::size_t>(0) * n + 200], 7.0) << algo;
    EXPECT_EQ(runs[0][static_cast<std::size_t>(127) * n + 299], 7.0) << algo;
    EXPECT_EQ(runs[0][static_cast<std::size_t>(0) * n + 128], 7.0) << algo;
  }
}

}  // namespace
}  // namespace la
