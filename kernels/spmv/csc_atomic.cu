// csc_atomic: one thread per column scatters alpha*a*x[j] into y with atomics (after
// y = beta*y). Not deterministic.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <typename T, typename O>
__global__ void csc_atomic_kernel(csc_view<const T, O> a, const T* x, T* y, T alpha) {
  LA_GRID_STRIDE(j, a.cols) {
    const T xj = alpha * x[j];
    for (O k = a.col_ptr[j]; k < a.col_ptr[j + 1]; ++k) atomicAdd(y + a.row_idx[k], a.values[k] * xj);
  }
}
}  // namespace

template <typename T>
void run_csc_atomic(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_scale_y(y, a.rows, beta, s);
  if (a.cols == 0) return;
  with_width(a.wide, a.csc32, a.csc64,
             [&](auto v) { csc_atomic_kernel<<<grid_for(a.cols), block_threads, 0, s>>>(v, x, y, alpha); });
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_csc_atomic)
}  // namespace la::spmv_detail
