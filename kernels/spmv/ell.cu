// ell: one thread per row over the column-major slots (consecutive rows read consecutive
// addresses), stopping at the row's first padding slot (ell_rows in common.cuh).
// Deterministic.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
template <typename T>
void launch_ell(const ell_view<const T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_rows(rows_of(a), x, y, alpha, beta, s);
}
template void launch_ell<float>(const ell_view<const float>&, const float*, float*, float, float, cudaStream_t);
template void launch_ell<double>(const ell_view<const double>&, const double*, double*, double, double, cudaStream_t);

template <typename T>
void run_ell(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_ell(a.ell, x, y, alpha, beta, s);
}
LA_SPMV_INSTANTIATE(run_ell)
}  // namespace la::spmv_detail
