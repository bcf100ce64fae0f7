// sell: SELL-C-sigma with one thread per sorted row (sell_rows in common.cuh: coalesced
// column-major slots, an unrolled slot loop that skips padding, y written through perm,
// which is not read when sigma = 1). Deterministic.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
template <typename T>
void run_sell(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  with_width(a.wide, a.sell32, a.sell64, [&](auto v) { launch_rows(rows_of(v), x, y, alpha, beta, s); });
}
LA_SPMV_INSTANTIATE(run_sell)
}  // namespace la::spmv_detail
