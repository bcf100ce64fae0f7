// csr_vector: a group of W lanes (W = 2..32, a power of two near the mean row length) per
// row, lanes striding the row, a shuffle reduction in the group. Deterministic (a fixed
// reduction order for a given W).
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <int W, typename T, typename O>
__global__ void csr_vector_kernel(csr_view<const T, O> a, const T* x, T* y, T alpha, T beta) {
  // The loop runs per warp (base is the same in all 32 lanes), so every lane reaches the
  // full-warp shuffles even when some of the warp's groups have no row left.
  constexpr int groups_per_warp = 32 / W;
  const int group = (threadIdx.x % 32) / W, lane = threadIdx.x % W;
  LA_WARP_STRIDE(w, (a.rows + groups_per_warp - 1) / groups_per_warp) {
    const long long i = w * groups_per_warp + group;
    const T acc = csr_group_product<W>(a, i, lane, x);
    if (i < a.rows && lane == 0) finish(y, i, acc, alpha, beta);
  }
}

template <int W, typename T>
void launch(const matrix_view<T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  with_width(a.wide, a.csr32, a.csr64, [&](auto v) {
    csr_vector_kernel<W><<<grid_for(static_cast<long long>(a.rows) * W), block_threads, 0, s>>>(v, x, y, alpha, beta);
  });
  LA_CHECK_LAUNCH(s);
}
}  // namespace

int csr_vector_width(const spmv_problem& p) {
  const double mean = p.rows ? static_cast<double>(p.nnz) / p.rows : 0;
  int w = 2;
  while (w < 32 && w < mean) w *= 2;
  return w;
}

template <typename T>
void run_csr_vector(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  switch (csr_vector_width(problem_of(a))) {
    case 2: return launch<2>(a, x, y, alpha, beta, s);
    case 4: return launch<4>(a, x, y, alpha, beta, s);
    case 8: return launch<8>(a, x, y, alpha, beta, s);
    case 16: return launch<16>(a, x, y, alpha, beta, s);
    default: return launch<32>(a, x, y, alpha, beta, s);
  }
}
LA_SPMV_INSTANTIATE(run_csr_vector)
}  // namespace la::spmv_detail
