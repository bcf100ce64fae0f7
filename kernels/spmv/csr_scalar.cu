// csr_scalar: one thread per row. Deterministic; suits short, even rows.
#include "common.cuh"
#include "variants.hpp"

namespace la::spmv_detail {
namespace {
template <typename T, typename O>
__global__ void csr_scalar_kernel(csr_view<const T, O> a, const T* x, T* y, T alpha, T beta) {
  LA_GRID_STRIDE(i, a.rows) {
    T acc = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) acc += a.values[k] * x[a.col_idx[k]];
    finish(y, i, acc, alpha, beta);
  }
}
}  // namespace

template <typename T>
void run_csr_scalar(const spmv_matrix<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  with_width(a.wide, a.csr32, a.csr64,
             [&](auto v) { csr_scalar_kernel<<<grid_for(a.rows), block_threads, 0, s>>>(v, x, y, alpha, beta); });
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_csr_scalar)
}  // namespace la::spmv_detail
