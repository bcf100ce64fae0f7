// Device-side foundation: context, buffers, vendor handles, and device matrices: uploaded,
// downloaded (synchronously and in stream order), and built from device buffers, in every
// format and both offset widths. Each test skips, saying why, when no GPU is present.
#include <la/formats/device_convert.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

#include "test_util.hpp"

namespace la {
namespace {

/// The memory a pointer refers to is device memory of `device`.
void expect_device_pointer(const void* p, int device) {
  if (!p) return;  // empty arrays allocate nothing
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, device);
}

TEST(Gpu, StatusSaysWhyThereIsNoGpuInTheLibrarysTerms) {
  const std::string s = cuda_status();
  if (cuda_available()) {
    EXPECT_NE(s.find("(sm_"), std::string::npos) << s;  // the device and its architecture
    return;
  }
  // Without a driver the runtime says "driver version is insufficient", which reads as
  // "upgrade your driver"; la says what is missing, and names no command-line flag.
  EXPECT_TRUE(test::says_why_no_gpu(s)) << s;
  EXPECT_EQ(s.find("--"), std::string::npos) << s;
  try {
    context ctx;
    ADD_FAILURE() << "a context without a GPU";
  } catch (const cuda_error& e) {  // a clear error, not a crash
    EXPECT_EQ(std::string(e.what()), s.substr(0, std::string(e.what()).size())) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    EXPECT_FALSE(e.where().empty());  // the call and line are kept apart from the message
  }
}

TEST(Gpu, ContextOwnsStreamAndScratch) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  EXPECT_NE(ctx.stream(), nullptr);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device()), cudaSuccess);
  EXPECT_EQ(ctx.sm_count(), sms);
  void* a = ctx.scratch(1000);
  expect_device_pointer(a, ctx.device());
  EXPECT_EQ(ctx.scratch(10), a);  // big enough: reused
  EXPECT_GE(ctx.scratch_bytes(), 1000u);
  ctx.scratch(1 << 20);
  EXPECT_GE(ctx.scratch_bytes(), std::size_t(1) << 20);
  EXPECT_THROW(context bad(1 << 20), invalid_argument);
}

TEST(Gpu, PoolReleaseThresholdIsSetAndRestored) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const std::uint64_t was = pool_release_threshold(ctx.device());
  set_pool_release_threshold(ctx.device(), 123u << 20);
  EXPECT_EQ(pool_release_threshold(ctx.device()), std::uint64_t(123u) << 20);
  set_pool_release_threshold(ctx.device(), was);
  EXPECT_EQ(pool_release_threshold(ctx.device()), was);
  EXPECT_THROW(set_pool_release_threshold(1 << 20, 0), invalid_argument);  // no such device
}

TEST(Gpu, VendorHandlesAreCreatedOnce) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  vendor_handles h(ctx);
  EXPECT_NE(h.cublas(), nullptr);
  EXPECT_EQ(h.cublas(), h.cublas());
  EXPECT_NE(h.cusparse(), nullptr);
  EXPECT_EQ(h.cusparse(), h.cusparse());
}

TEST(Gpu, VendorFailuresAreDeviceErrors) {
  // The CLI maps device_error to exit status 3; cuBLAS/cuSPARSE failures must be among them.
  try {
    LA_CUBLAS_TRY(CUBLAS_STATUS_EXECUTION_FAILED);
    FAIL() << "no exception";
  } catch (const device_error& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_EXECUTION_FAILED"), std::string::npos);
  }
  EXPECT_THROW(LA_CUSPARSE_TRY(CUSPARSE_STATUS_INTERNAL_ERROR), device_error);
}

TEST(Gpu, OutOfMemoryIsAnException) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  EXPECT_THROW(ctx.allocate<double>(std::size_t(1) << 50), out_of_memory);
  auto ok = ctx.allocate<double>(16);  // the context still works afterwards
  ctx.synchronize();
}

TEST(Gpu, OversizedMatricesAreRefusedBeforeAllocating) {
  // A request beyond the GPU says how much it needs and how much there is, allocates
  // nothing and leaves nothing behind.
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  ctx.synchronize();
  // This process's stream-ordered allocations (device-wide free memory would also move with
  // the other test processes that ctest runs on the same GPU).
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, ctx.device()), cudaSuccess);
  auto used = [&] {
    std::uint64_t bytes = 0;
    EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &bytes), cudaSuccess);
    return bytes;
  };
  const std::uint64_t used_before = used();
  test::expect_throw_with<out_of_memory>(
      [&] { device_csr<double, std::int64_t>::allocate(ctx, 1000, 1000, std::int64_t(1) << 40); },
      {"needs", "TB of GPU memory", "free of"});
  test::expect_throw_with<out_of_memory>([&] { device_dense<float>(ctx, 2000000000, 2000000000); },
                                         {"2000000000 x 2000000000 dense matrix needs"});
  EXPECT_THROW((device_ell<float>::allocate(ctx, 2000000000, 10, 100000)), out_of_memory);
  ctx.synchronize();
  EXPECT_EQ(used(), used_before) << "memory allocated or leaked by a refused request";
  auto ok = device_csr<double>::allocate(ctx, 10, 10, 20);  // the context still works
  ctx.synchronize();
}

TEST(Gpu, VectorRoundTrip) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(1);
  const auto v = test::random_vector<float>(1000, g);
  const auto d = to_device(ctx, v);
  expect_device_pointer(d.data(), ctx.device());
  EXPECT_EQ(to_host(ctx, d), v);
  EXPECT_EQ(to_host(ctx, to_device_async(ctx, v)), v);
  EXPECT_TRUE(to_host(ctx, to_device(ctx, std::vector<double>{})).empty());
}

template <typename T>
class GpuRoundTrip : public ::testing::Test {};
TYPED_TEST_SUITE(GpuRoundTrip, test::value_types);

/// Host -> device -> host, synchronously and in stream order; the device arrays are device
/// memory on the context's device, and the data comes back unchanged.
template <typename M>
void round_trip(context& ctx, const M& h) {
  const auto d = to_device(ctx, h);
  std::apply([&](const auto&... a) { (expect_device_pointer(a.data(), ctx.device()), ...); }, d.arrays());
  EXPECT_EQ(to_host(ctx, d), h);
  auto pending = to_host_async(ctx, to_device_async(ctx, h));
  EXPECT_EQ(pending.wait(), h);
}

TYPED_TEST(GpuRoundTrip, EveryFormatBothOffsetWidths) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(2);
  for (auto shape : {test::sparse_shape{1, 1, 1.0, false, false}, test::sparse_shape{0, 3, 0, false, false},
                     test::sparse_shape{5, 4, 0.0, false, false}, test::sparse_shape{1000, 33, 0.1, true, true, true}}) {
    const auto a = test::random_csr<T>(shape, g);
    round_trip(ctx, a);
    round_trip(ctx, to_csr<std::int64_t>(a));
    round_trip(ctx, to_coo(a));
    round_trip(ctx, to_csc(a));
    round_trip(ctx, to_csc<std::int64_t>(a));
    round_trip(ctx, to_ell(a));
    round_trip(ctx, to_jds(a));
    round_trip(ctx, to_jds<std::int64_t>(a));
    round_trip(ctx, to_hyb(a, 2));
    round_trip(ctx, to_sell(a, {4, 8}));
    round_trip(ctx, to_sell<std::int64_t>(a));
    round_trip(ctx, to_dense(a));
  }
}

// to_device over arrays another owner keeps (the Python binding's numpy arrays): the same
// device matrix as the host container's upload, and the host constructor's refusals.
TYPED_TEST(GpuRoundTrip, CsrFromBorrowedHostArrays) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(3);
  for (auto shape : {test::sparse_shape{1, 1, 1.0, false, false}, test::sparse_shape{0, 3, 0, false, false},
                     test::sparse_shape{31, 33, 0.2, false, false}, test::sparse_shape{1000, 33, 0.1, true, true, true}}) {
    const auto a = test::random_csr<T>(shape, g);
    const auto d = to_device(ctx, csr_view<const T, index_t>(a.view()));
    std::apply([&](const auto&... x) { (expect_device_pointer(x.data(), ctx.device()), ...); }, d.arrays());
    EXPECT_EQ(to_host(ctx, d), a);
    const auto w = to_csr<std::int64_t>(a);
    EXPECT_EQ(to_host(ctx, to_device(ctx, csr_view<const T, std::int64_t>(w.view()))), w);
  }
  const std::vector<index_t> ptr{0, 2, 3}, idx{1, 0, 2};  // row 0 unsorted
  const std::vector<T> v{1, 2, 3};
  test::expect_throw_with<invalid_matrix>(
      [&] { to_device(ctx, csr_view<const T, index_t>{2, 3, 3, ptr.data(), idx.data(), v.data()}); },
      {"CSR", "strictly increasing", "row 0"});
  const std::vector<index_t> out{0, 1, 3};
  test::expect_throw_with<invalid_matrix>(
      [&] { to_device(ctx, csr_view<const T, index_t>{2, 3, 3, ptr.data(), out.data(), v.data()}); },
      {"col_idx[2] = 3", "row 1", "outside [0, 3)"});
}

TYPED_TEST(GpuRoundTrip, BuiltFromDeviceBuffers) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(3);
  const auto a = test::random_csr<T>({33, 31, 0.2, true, true, true}, g);
  // From buffers that already hold the data (as a device-side conversion produces them).
  device_csr<T> d(a.rows(), a.cols(), upload_async(ctx, a.row_ptr()), upload_async(ctx, a.col_idx()),
                  upload_async(ctx, a.values()));
  EXPECT_EQ(to_host(ctx, d), a);
  // Allocated, then filled through the mutable view (as a kernel that builds a matrix does).
  auto e = device_csr<T, std::int64_t>::allocate(ctx, a.rows(), a.cols(), a.nnz());
  const auto a64 = to_csr<std::int64_t>(a);
  csr_view<T, std::int64_t> v = e.view();
  ASSERT_EQ(v.nnz, a.nnz());
  ASSERT_EQ(cudaMemcpyAsync(v.row_ptr, a64.row_ptr().data(), a64.row_ptr().size() * 8, cudaMemcpyHostToDevice, ctx.stream()), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(v.col_idx, a.col_idx().data(), a.col_idx().size() * 4, cudaMemcpyHostToDevice, ctx.stream()), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(v.values, a.values().data(), a.values().size() * sizeof(T), cudaMemcpyHostToDevice, ctx.stream()), cudaSuccess);
  EXPECT_EQ(to_host(ctx, e), a64);
  // Wrong array sizes are refused at construction; wrong contents when they come back.
  EXPECT_THROW(device_csr<T>(a.rows(), a.cols(), ctx.allocate<index_t>(3), ctx.allocate<index_t>(0),
                             ctx.allocate<T>(0)),
               invalid_matrix);
  std::vector<index_t> bad_ptr = a.row_ptr();
  bad_ptr[1] = bad_ptr.back() + 1;  // not monotone / out of range
  device_csr<T> bad(a.rows(), a.cols(), upload_async(ctx, bad_ptr), upload_async(ctx, a.col_idx()),
                    upload_async(ctx, a.values()));
  EXPECT_THROW(to_host(ctx, bad), invalid_matrix);
}

/// The device conversions give exactly the host conversions' arrays.
template <typename T, typename O>
void device_conversions_match(context& ctx, const csr_matrix<T>& a32) {
  const csr_matrix<T, O> a = to_csr<O>(a32);
  const auto d = to_device(ctx, a);
  EXPECT_EQ(to_host(ctx, to_coo(ctx, d)), to_coo(a));
  EXPECT_EQ(to_host(ctx, to_csc(ctx, d)), to_csc<O>(a));
  EXPECT_EQ(to_host(ctx, to_ell(ctx, d)), to_ell(a));
  EXPECT_EQ(to_host(ctx, to_dense(ctx, d)), to_dense(a));
  EXPECT_EQ(to_host(ctx, to_jds(ctx, d)), to_jds<O>(a));
  EXPECT_EQ(to_host(ctx, to_hyb(ctx, d)), to_hyb(a));
  EXPECT_EQ(to_host(ctx, to_hyb(ctx, d, 1)), to_hyb(a, 1));
  EXPECT_EQ(to_host(ctx, to_hyb(ctx, d, 0)), to_hyb(a, 0));
  for (sell_options o : {sell_options{}, sell_options{32, 1}, sell_options{4, 8}, sell_options{3, 12},
                         sell_options{32, 64}, sell_options{1, 1}})
    EXPECT_EQ(to_host(ctx, to_sell(ctx, d, o)), to_sell<O>(a, o)) << o.slice_height << "/" << o.sigma;
}

TYPED_TEST(GpuRoundTrip, DeviceConversionsEqualHostConversions) {
  LA_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  context ctx;
  std::mt19937 g(5);
  for (auto shape : {test::sparse_shape{1, 1, 1.0, false, false}, test::sparse_shape{0, 3, 0, false, false},
                     test::sparse_shape{5, 4, 0.0, false, false}, test::sparse_shape{31, 33, 0.3, true, true, true},
                     test::sparse_shape{1000, 33, 0.1, true, true, true},
                     test::sparse_shape{100003, 700, 0.002, true, true, true}}) {
    const auto a = test::random_csr<T>(shape, g);
    SCOPED_TRACE(std::to_string(shape.rows) + "x" + std::to_string(shape.cols));
    device_conversions_match<T, std::int32_t>(ctx, a);
    device_conversions_match<T, std::int64_t>(ctx, a);
  }
}

TEST(Gpu, OtherFormatsAllocateForKernels) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  // Each array is written to its full extent and read back: an allocation that is too small
  // fails here (and under compute-sanitizer), whatever size() says.
  auto fill_and_check = [&](void* p, std::size_t bytes, const char* what) {
    expect_device_pointer(p, ctx.device());
    std::vector<unsigned char> in(bytes), out(bytes, 0);
    for (std::size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
    ASSERT_EQ(cudaMemcpy(p, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess) << what;
    ASSERT_EQ(cudaMemcpy(out.data(), p, bytes, cudaMemcpyDeviceToHost), cudaSuccess) << what;
    EXPECT_EQ(in, out) << what;
  };
  auto coo = device_coo<float>::allocate(ctx, 10, 20, 7);
  fill_and_check(coo.view().row_idx, 7 * sizeof(index_t), "coo rows");
  fill_and_check(coo.view().col_idx, 7 * sizeof(index_t), "coo cols");
  fill_and_check(coo.view().values, 7 * sizeof(float), "coo values");
  auto ell = device_ell<double>::allocate(ctx, 10, 20, 3);
  fill_and_check(ell.view().col_idx, 30 * sizeof(index_t), "ell cols");
  fill_and_check(ell.view().values, 30 * sizeof(double), "ell values");
  auto jds = device_jds<float, std::int64_t>::allocate(ctx, 10, 20, 12, 4);
  fill_and_check(jds.view().diag_ptr, 5 * sizeof(std::int64_t), "jds diagonal pointers");
  fill_and_check(jds.view().col_idx, 12 * sizeof(index_t), "jds cols");
  fill_and_check(jds.view().perm, 10 * sizeof(index_t), "jds permutation");
  device_dense<float> dn(ctx, 3, 4);
  fill_and_check(dn.view().values, 12 * sizeof(float), "dense values");
}

}  // namespace
}  // namespace la
