// hyb: the ELL part with one thread per row (coalesced, writes every y_i with alpha and
// beta), then the COO overflow added by the segmented COO kernel (one atomic per run of a
// row per warp). Not deterministic: the overflow of a row split across warps is added in
// no fixed order.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {

template <typename T>
void run_hyb(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_ell(a.hyb.ell, x, y, alpha, beta, s);
  launch_coo_accumulate(a.hyb.coo, x, y, alpha, s);
}
LA_SPMV_INSTANTIATE(run_hyb)
}  // namespace la::spmv_detail
