// coo_segmented: a warp takes 32 consecutive entries, computes alpha*a*x in each lane, and
// sums runs of equal rows with a segmented scan over shuffles (head flags, so any entry
// order is right); the last lane of each run adds its run's sum to y with one atomic. On
// row-sorted input that is one atomic per row per warp instead of one per entry. Not
// deterministic (atomics across warps).
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
template <typename T>
__global__ void coo_segmented_kernel(coo_view<const T> a, const T* x, T* y, T alpha) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(w, (a.nnz + 31) / 32) {
    const long long k = w * 32 + lane;
    const bool live = k < a.nnz;
    const index_t row = live ? a.row_idx[k] : -1;
    T v = live ? alpha * a.values[k] * x[a.col_idx[k]] : T(0);
    const index_t prev = __shfl_up_sync(0xffffffffu, row, 1);
    const index_t next = __shfl_down_sync(0xffffffffu, row, 1);
    bool head = lane == 0 || prev != row;  // a run of equal rows starts here
    for (int off = 1; off < 32; off *= 2) {  // inclusive segmented scan (Hillis-Steele)
      const T up_v = __shfl_up_sync(0xffffffffu, v, off);
      const bool up_head = __shfl_up_sync(0xffffffffu, head, off);
      if (lane >= off) {
        if (!head) v += up_v;
        head = head || up_head;
      }
    }
    const bool last = lane == 31 || next != row;  // the run ends here: its sum is in v
    if (live && last) atomicAdd(y + row, v);
  }
}
}  // namespace

template <typename T>
void launch_coo_accumulate(const coo_view<const T>& a, const T* x, T* y, T alpha, cudaStream_t s) {
  if (a.nnz == 0) return;
  coo_segmented_kernel<<<grid_for(a.nnz), block_threads, 0, s>>>(a, x, y, alpha);
  LA_CHECK_LAUNCH(s);
}
#define LA_INSTANTIATE_ACCUMULATE(T) \
  template void launch_coo_accumulate<T>(const coo_view<const T>&, const T*, T*, T, cudaStream_t);
LA_SPMV_FOR_EACH_DEVICE_VALUE(LA_INSTANTIATE_ACCUMULATE)
#undef LA_INSTANTIATE_ACCUMULATE

template <typename T>
void run_coo_segmented(const matrix_view<T>& a, void*, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  launch_scale_y(y, a.rows, beta, s);
  launch_coo_accumulate(a.coo, x, y, alpha, s);
}
LA_SPMV_INSTANTIATE(run_coo_segmented)
}  // namespace la::spmv_detail
