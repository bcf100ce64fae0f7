// sell: SELL-C-sigma with one thread per sorted row; the C threads of a slice read its
// column-major slots coalesced (C = 32: a warp reads 128 contiguous bytes of indices per
// slot). The slot loop runs to the slice's width with a guard on padding rather than a
// break, so the loads of several slots are in flight at once (unrolled by 4); padding is
// never multiplied (x may hold Inf). y is written through perm, which is not read when
// sigma = 1 (the identity). Deterministic.
#include "common.cuh"
#include "variants.hpp"

namespace la::spmv_detail {
namespace {
template <typename T, typename O>
__global__ void sell_kernel(sell_view<const T, O> a, const T* x, T* y, T alpha, T beta) {
  const long long C = a.slice_height;
  LA_GRID_STRIDE(k, a.rows) {
    const long long s = k / C, r = k - s * C;
    const O base = a.slice_ptr[s];
    const long long width = (static_cast<long long>(a.slice_ptr[s + 1]) - base) / C;
    T acc = T(0);
#pragma unroll 4
    for (long long d = 0; d < width; ++d) {
      const long long slot = base + d * C + r;
      const index_t c = __ldg(a.col_idx + slot);
      const T v = __ldg(a.values + slot);
      if (c != ell_padding) acc += v * __ldg(x + c);
    }
    finish(y, a.sigma == 1 ? k : a.perm[k], acc, alpha, beta);
  }
}
}  // namespace

template <typename T>
void run_sell(const spmv_matrix<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  with_width(a.wide, a.sell32, a.sell64,
             [&](auto v) { sell_kernel<<<grid_for(a.rows), block_threads, 0, s>>>(v, x, y, alpha, beta); });
  LA_CHECK_LAUNCH(s);
}
LA_SPMV_INSTANTIATE(run_sell)
}  // namespace la::spmv_detail
