// ell: one thread per row over the column-major slots (consecutive rows read consecutive
// addresses), stopping at the row's first padding slot. Deterministic.
#include "common.cuh"
#include "variants.hpp"

namespace la::spmv_detail {
namespace {
template <typename T>
__global__ void ell_kernel(ell_view<const T> a, const T* x, T* y, T alpha, T beta) {
  LA_GRID_STRIDE(i, a.rows) {
    T acc = T(0);
    for (index_t s = 0; s < a.width; ++s) {
      const long long slot = static_cast<long long>(s) * a.rows + i;
      const index_t c = a.col_idx[slot];
      if (c == ell_padding) break;  // padding always follows a row's entries
      acc += a.values[slot] * x[c];
    }
    finish(y, i, acc, alpha, beta);
  }
}
}  // namespace

template <typename T>
void launch_ell(const ell_view<const T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  ell_kernel<<<grid_for(a.rows), block_threads, 0, s>>>(a, x, y, alpha, beta);
  LA_CHECK_LAUNCH(s);
}
template void launch_ell<float>(const ell_view<const float>&, const float*, float*, float, float, cudaStream_t);
template void launch_ell<double>(const ell_view<const double>&, const double*, double*, double, double, cudaStream_t);

template <typename T>
void run_ell(const spmv_matrix<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_ell(a.ell, x, y, alpha, beta, s);
}
LA_SPMV_INSTANTIATE(run_ell)
}  // namespace la::spmv_detail
