// Device-side foundation: context, buffers, and the host -> device -> host round trip of
// every format. Each test skips, saying why, when no GPU is present.
#include "test_util.hpp"

namespace la {
namespace {

TEST(Gpu, CudaAvailableNeverThrows) {
  bool a = false;
  EXPECT_NO_THROW(a = cuda_available());
  EXPECT_FALSE(cuda_status().empty());
  if (!a) {
    EXPECT_THROW(context ctx, cuda_error);  // a clear error, not a crash
  }
}

TEST(Gpu, ContextOwnsStreamAndHandles) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  EXPECT_NE(ctx.stream(), nullptr);
  EXPECT_NE(ctx.cublas(), nullptr);
  EXPECT_EQ(ctx.cublas(), ctx.cublas());  // created once
  EXPECT_NE(ctx.cusparse(), nullptr);
  EXPECT_GT(ctx.properties().multiProcessorCount, 0);
  EXPECT_THROW(context bad(1 << 20), invalid_argument);
}

TEST(Gpu, OutOfMemoryIsAnException) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  EXPECT_THROW(device_buffer<double>(std::size_t(1) << 50, ctx.stream()), out_of_memory);
  device_buffer<double> ok(16, ctx.stream());  // the context still works afterwards
  ctx.synchronize();
}

TEST(Gpu, VectorRoundTrip) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(1);
  const auto v = test::random_vector<float>(1000, g);
  EXPECT_EQ(to_host(ctx, to_device(ctx, v)), v);
  EXPECT_TRUE(to_host(ctx, to_device(ctx, std::vector<double>{})).empty());
}

template <typename T>
class GpuRoundTrip : public ::testing::Test {};
TYPED_TEST_SUITE(GpuRoundTrip, test::value_types);

TYPED_TEST(GpuRoundTrip, EveryFormat) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(2);
  for (auto shape : {test::sparse_shape{1, 1, 1.0, false, false}, test::sparse_shape{0, 3, 0, false, false},
                     test::sparse_shape{5, 4, 0.0, false, false}, test::sparse_shape{1000, 33, 0.1, true, true, true}}) {
    const auto a = test::random_csr<T>(shape, g);
    EXPECT_EQ(to_host(ctx, to_device(ctx, a)), a);
    EXPECT_EQ(to_host(ctx, to_device(ctx, to_coo(a))), to_coo(a));
    EXPECT_EQ(to_host(ctx, to_device(ctx, to_csc(a))), to_csc(a));
    EXPECT_EQ(to_host(ctx, to_device(ctx, to_ell(a))), to_ell(a));
    EXPECT_EQ(to_host(ctx, to_device(ctx, to_jds(a))), to_jds(a));
    EXPECT_EQ(to_host(ctx, to_device(ctx, to_dense(a))), to_dense(a));
    const auto d = to_device(ctx, a);
    EXPECT_EQ(d.view().nnz, a.nnz());
    EXPECT_EQ(d.view().rows, a.rows());
  }
}

}  // namespace
}  // namespace la
