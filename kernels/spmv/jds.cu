// jds: one thread per sorted row walks the jagged diagonals (coalesced: diagonal d holds
// the first len(d) sorted rows contiguously) and writes y through the permutation
// (jds_rows in common.cuh). Deterministic.
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
template <typename T>
void run_jds(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  with_width(a.wide, a.jds32, a.jds64, [&](auto v) { launch_rows(rows_of(v), x, y, alpha, beta, s); });
}
LA_SPMV_INSTANTIATE(run_jds)
}  // namespace la::spmv_detail
