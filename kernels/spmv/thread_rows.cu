// The thread-per-row kernels: csr_scalar, ell, jds and sell are one loop (walk::thread_rows
// over the format's row product, walks.cuh) with the y = alpha*Ax + beta*y epilogue.
// Deterministic. How each format's row is read:
//   csr_scalar  a thread walks its row's entries; suits short, even rows
//   ell         column-major slots (consecutive rows read consecutive addresses), stopping
//               at the row's first padding slot
//   jds         the jagged diagonals (diagonal d holds the first len(d) sorted rows
//               contiguously); y written through the permutation
//   sell        SELL-C-sigma: a slice's C rows read its column-major slots coalesced, an
//               unrolled slot loop skips padding; y through perm unless sigma = 1
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
template <typename T>
void run_thread_rows(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  const bool has_rows = walk::with_rows(a, [&](auto rows) { launch_walk(walk::by_thread(rows), x, y, alpha, beta, s); });
  LA_EXPECTS(has_rows, std::string("a thread-per-row SpMV kernel cannot run on ") + to_string(a.fmt));
}
LA_SPMV_INSTANTIATE(run_thread_rows)

template <typename T>
void launch_ell(const ell_view<const T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_walk(walk::by_thread(walk::rows_of(a)), x, y, alpha, beta, s);
}
#define LA_INSTANTIATE_ELL(T) template void launch_ell<T>(const ell_view<const T>&, const T*, T*, T, T, cudaStream_t);
LA_SPMV_FOR_EACH_DEVICE_VALUE(LA_INSTANTIATE_ELL)
#undef LA_INSTANTIATE_ELL
}  // namespace la::spmv_detail
