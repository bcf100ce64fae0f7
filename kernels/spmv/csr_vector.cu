// csr_vector: a group of W lanes (W = 2..32, the power of two nearest above the mean row
// length: walk::csr_group_width) per row, lanes striding the row, a shuffle reduction in
// the group (walk::group_rows, walks.cuh). Deterministic (a fixed reduction order for a
// given W).
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <int W, typename T>
void launch(const matrix_view<T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  with_width(a.wide, a.csr32, a.csr64, [&](auto v) {
    using O = std::remove_cv_t<std::remove_reference_t<decltype(v.row_ptr[0])>>;
    launch_walk(walk::group_rows<W, T, O>{v}, x, y, alpha, beta, s);
  });
}
}  // namespace

template <typename T>
void run_csr_vector(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  switch (walk::csr_group_width(problem_of(a))) {
    case 2: return launch<2>(a, x, y, alpha, beta, s);
    case 4: return launch<4>(a, x, y, alpha, beta, s);
    case 8: return launch<8>(a, x, y, alpha, beta, s);
    case 16: return launch<16>(a, x, y, alpha, beta, s);
    default: return launch<32>(a, x, y, alpha, beta, s);
  }
}
LA_SPMV_INSTANTIATE(run_csr_vector)
}  // namespace la::spmv_detail
