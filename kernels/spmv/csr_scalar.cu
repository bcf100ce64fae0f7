// csr_scalar: one thread per row. Deterministic; suits short, even rows.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
template <typename T>
void run_csr_scalar(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  with_width(a.wide, a.csr32, a.csr64, [&](auto v) { launch_rows(rows_of(v), x, y, alpha, beta, s); });
}
LA_SPMV_INSTANTIATE(run_csr_scalar)
}  // namespace la::spmv_detail
