// dense_gemv: one warp per row of the row-major matrix, lanes striding the row (coalesced),
// a shuffle reduction. Deterministic. So that every format has a kernel.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <typename T>
__global__ void gemv_kernel(dense_view<const T> a, const T* x, T* y, T alpha, T beta) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(i, a.rows) {
    const T* row = a.values + i * a.ld;
    T acc = T(0);
    for (index_t j = lane; j < a.cols; j += 32) acc += row[j] * x[j];
    acc = group_sum<32>(acc);
    if (lane == 0) finish(y, i, acc, alpha, beta);
  }
}
}  // namespace

template <typename T>
void run_dense_gemv(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  gemv_kernel<<<grid_for(static_cast<long long>(a.rows) * 32), block_threads, 0, s>>>(a.dense, x, y, alpha, beta);
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_dense_gemv)
}  // namespace la::spmv_detail
