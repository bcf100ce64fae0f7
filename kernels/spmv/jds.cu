// jds: one thread per sorted row walks the jagged diagonals (coalesced: diagonal d holds
// the first len(d) sorted rows contiguously) and writes y through the permutation.
// Deterministic.
#include "common.cuh"
#include "variants.hpp"

namespace la::spmv_detail {
namespace {
template <typename T, typename O>
__global__ void jds_kernel(jds_view<const T, O> a, const T* x, T* y, T alpha, T beta) {
  LA_GRID_STRIDE(k, a.rows) {
    T acc = T(0);
    for (index_t d = 0; d < a.num_diagonals; ++d) {
      const O pos = a.diag_ptr[d] + static_cast<O>(k);
      if (pos >= a.diag_ptr[d + 1]) break;  // diagonals only get shorter
      acc += a.values[pos] * x[a.col_idx[pos]];
    }
    finish(y, a.perm[k], acc, alpha, beta);
  }
}
}  // namespace

template <typename T>
void run_jds(const spmv_matrix<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  with_width(a.wide, a.jds32, a.jds64,
             [&](auto v) { jds_kernel<<<grid_for(a.rows), block_threads, 0, s>>>(v, x, y, alpha, beta); });
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_jds)
}  // namespace la::spmv_detail
