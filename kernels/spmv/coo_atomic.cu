// coo_atomic: one thread per stored entry, atomicAdd of alpha*a*x into y (after y = beta*y).
// The baseline COO kernel; not deterministic (the order of the additions varies).
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <typename T>
__global__ void coo_atomic_kernel(coo_view<const T> a, const T* x, T* y, T alpha) {
  LA_GRID_STRIDE(k, a.nnz)
    atomicAdd(y + a.row_idx[k], alpha * a.values[k] * x[a.col_idx[k]]);
}
}  // namespace

template <typename T>
void run_coo_atomic(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_scale_y(y, a.rows, beta, s);
  if (a.coo.nnz == 0) return;
  coo_atomic_kernel<<<grid_for(a.coo.nnz), block_threads, 0, s>>>(a.coo, x, y, alpha);
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_coo_atomic)
}  // namespace la::spmv_detail
