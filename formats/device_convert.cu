#include "device_convert.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "../la/grid.cuh"

namespace la {
namespace {

using detail::grid_for;
constexpr int threads_per_block = detail::block_threads;

template <typename O>
__global__ void expand_rows(const O* ptr, index_t rows, index_t* row_of) {
  LA_GRID_STRIDE(i, rows) {
    for (O k = ptr[i]; k < ptr[i + 1]; ++k) row_of[k] = static_cast<index_t>(i);
  }
}

template <typename O>
__global__ void row_lengths(const O* ptr, index_t rows, index_t* len) {
  LA_GRID_STRIDE(i, rows) { len[i] = static_cast<index_t>(ptr[i + 1] - ptr[i]); }
}

template <typename O>
__global__ void iota(O* p, O n) {
  LA_GRID_STRIDE(i, n) { p[i] = static_cast<O>(i); }
}

template <typename T, typename O>
__global__ void gather(const O* perm, const index_t* rows_in, const T* val_in, index_t* rows_out, T* val_out, O n) {
  LA_GRID_STRIDE(k, n) {
    rows_out[k] = rows_in[perm[k]];
    val_out[k] = val_in[perm[k]];
  }
}

/// ptr[j] = first position in the sorted keys with key >= j (j = 0..n).
template <typename O>
__global__ void lower_bounds(const index_t* sorted, O count, O* ptr, index_t n) {
  LA_GRID_STRIDE(j, static_cast<long long>(n) + 1) {
    O lo = 0, hi = count;
    while (lo < hi) {
      const O mid = lo + (hi - lo) / 2;
      if (sorted[mid] < j) lo = mid + 1;
      else hi = mid;
    }
    ptr[j] = lo;
  }
}

template <typename T, typename O>
__global__ void fill_ell(const O* ptr, const index_t* col, const T* val, index_t rows, index_t width, index_t* ecol,
                         T* eval) {
  LA_GRID_STRIDE(i, rows) {
    const O b = ptr[i];
    const index_t len = static_cast<index_t>(ptr[i + 1] - b);
    for (index_t s = 0; s < width; ++s) {
      const std::size_t slot = static_cast<std::size_t>(s) * rows + i;  // column-major
      ecol[slot] = s < len ? col[b + s] : ell_padding;
      eval[slot] = s < len ? val[b + s] : T(0);
    }
  }
}

__global__ void sort_keys(const index_t* len, index_t longest, index_t rows, index_t* key) {
  LA_GRID_STRIDE(i, rows) { key[i] = longest - len[i]; }
}

/// count[d] = sorted rows longer than d (lengths are non-increasing along perm).
template <typename O>
__global__ void rows_longer_than(const index_t* len, const index_t* perm, index_t rows, index_t diagonals, O* count) {
  LA_GRID_STRIDE(d, diagonals) {
    index_t lo = 0, hi = rows;  // first sorted row whose length is <= d
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (len[perm[mid]] > d) lo = mid + 1;
      else hi = mid;
    }
    count[d] = lo;
  }
}

template <typename T, typename O>
__global__ void fill_jds(const O* ptr, const index_t* col, const T* val, const index_t* perm, const O* diag_ptr,
                         index_t rows, index_t* jcol, T* jval) {
  LA_GRID_STRIDE(k, rows) {
    const index_t i = perm[k];
    const O b = ptr[i];
    const index_t len = static_cast<index_t>(ptr[i + 1] - b);
    for (index_t d = 0; d < len; ++d) {
      const O pos = diag_ptr[d] + static_cast<O>(k);
      jcol[pos] = col[b + d];
      jval[pos] = val[b + d];
    }
  }
}

/// Bits that hold values in [0, n): what the radix sort needs to look at.
int key_bits(index_t n) {
  int b = 1;
  while (b < 31 && (index_t(1) << b) < n) ++b;
  return b;
}

/// Row lengths into `len` (rows elements) and the longest one, which the caller waits for.
template <typename T, typename O>
index_t lengths_and_longest(context& ctx, const device_csr<T, O>& a, device_buffer<index_t>& len) {
  const index_t rows = a.rows();
  if (rows == 0) return 0;
  cudaStream_t s = ctx.stream();
  row_lengths<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, rows, len.data());
  LA_CHECK_LAUNCH(s);
  auto longest = ctx.allocate<index_t>(1);
  std::size_t bytes = 0;
  LA_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, len.data(), longest.data(), rows, s));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, len.data(), longest.data(), rows, s));
  index_t h = 0;
  longest.copy_to_host_async(&h, 1);
  ctx.synchronize();
  return h;
}

/// Stable radix sort of (keys, values) pairs with keys in [0, key_limit).
template <typename K, typename V, typename N>
void stable_sort_pairs(context& ctx, const K* keys_in, K* keys_out, const V* values_in, V* values_out, N n,
                       index_t key_limit) {
  if (n == 0) return;
  std::size_t bytes = 0;
  const int bits = key_bits(key_limit);
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, 0, bits,
                                              ctx.stream()));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys_in, keys_out, values_in, values_out, n, 0, bits,
                                              ctx.stream()));
}

}  // namespace

template <typename T, typename O>
device_coo<T> to_coo(context& ctx, const device_csr<T, O>& a) {
  auto c = device_coo<T>::allocate(ctx, a.rows(), a.cols(), a.nnz());
  auto v = c.view();
  cudaStream_t s = ctx.stream();
  if (a.rows() > 0) {
    expand_rows<<<grid_for(a.rows()), threads_per_block, 0, s>>>(a.view().row_ptr, a.rows(), v.row_idx);
    LA_CHECK_LAUNCH(s);
  }
  if (a.nnz() > 0) {
    LA_CUDA_TRY(cudaMemcpyAsync(v.col_idx, a.view().col_idx, a.nnz() * sizeof(index_t), cudaMemcpyDeviceToDevice, s));
    LA_CUDA_TRY(cudaMemcpyAsync(v.values, a.view().values, a.nnz() * sizeof(T), cudaMemcpyDeviceToDevice, s));
  }
  return c;
}

template <typename T, typename O>
device_csc<T, O> to_csc(context& ctx, const device_csr<T, O>& a) {
  const O nnz = static_cast<O>(a.nnz());
  auto out = device_csc<T, O>::allocate(ctx, a.rows(), a.cols(), nnz);
  auto ov = out.view();
  cudaStream_t s = ctx.stream();
  auto rows_of = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
  auto cols_sorted = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
  auto order = ctx.allocate<O>(static_cast<std::size_t>(nnz));
  auto perm = ctx.allocate<O>(static_cast<std::size_t>(nnz));
  if (a.rows() > 0) {
    expand_rows<<<grid_for(a.rows()), threads_per_block, 0, s>>>(a.view().row_ptr, a.rows(), rows_of.data());
    LA_CHECK_LAUNCH(s);
  }
  if (nnz > 0) {
    iota<<<grid_for(nnz), threads_per_block, 0, s>>>(order.data(), nnz);
    LA_CHECK_LAUNCH(s);
    // Stable: entries of one column keep their row-major order, i.e. increasing rows.
    stable_sort_pairs(ctx, a.view().col_idx, cols_sorted.data(), order.data(), perm.data(), nnz, a.cols());
    gather<<<grid_for(nnz), threads_per_block, 0, s>>>(perm.data(), rows_of.data(), a.view().values, ov.row_idx,
                                                         ov.values, nnz);
    LA_CHECK_LAUNCH(s);
  }
  lower_bounds<<<grid_for(static_cast<long long>(a.cols()) + 1), threads_per_block, 0, s>>>(cols_sorted.data(), nnz,
                                                                                             ov.col_ptr, a.cols());
  LA_CHECK_LAUNCH(s);
  return out;
}

template <typename T, typename O>
device_ell<T> to_ell(context& ctx, const device_csr<T, O>& a) {
  auto len = ctx.allocate<index_t>(static_cast<std::size_t>(a.rows()));
  const index_t width = lengths_and_longest(ctx, a, len);
  auto out = device_ell<T>::allocate(ctx, a.rows(), a.cols(), width);
  if (a.rows() > 0 && width > 0) {
    auto v = out.view();
    fill_ell<<<grid_for(a.rows()), threads_per_block, 0, ctx.stream()>>>(
        a.view().row_ptr, a.view().col_idx, a.view().values, a.rows(), width, v.col_idx, v.values);
    LA_CHECK_LAUNCH(ctx.stream());
  }
  return out;
}

template <typename T, typename O>
device_jds<T, O> to_jds(context& ctx, const device_csr<T, O>& a) {
  const index_t rows = a.rows();
  auto len = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
  const index_t longest = lengths_and_longest(ctx, a, len);
  auto out = device_jds<T, O>::allocate(ctx, rows, a.cols(), a.nnz(), longest);
  auto v = out.view();
  cudaStream_t s = ctx.stream();
  if (rows > 0) {
    // Sorted by (longest - length), stably: longest first, ties in row order.
    auto key = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
    auto key_sorted = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
    auto ids = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
    sort_keys<<<grid_for(rows), threads_per_block, 0, s>>>(len.data(), longest, rows, key.data());
    LA_CHECK_LAUNCH(s);
    iota<<<grid_for(rows), threads_per_block, 0, s>>>(ids.data(), rows);
    LA_CHECK_LAUNCH(s);
    stable_sort_pairs(ctx, key.data(), key_sorted.data(), ids.data(), v.perm, rows, longest + 1);
  }
  // diag_ptr = exclusive scan of the rows each diagonal holds.
  auto count = ctx.allocate<O>(static_cast<std::size_t>(longest) + 1);
  if (longest > 0) {
    rows_longer_than<<<grid_for(longest), threads_per_block, 0, s>>>(len.data(), v.perm, rows, longest, count.data());
    LA_CHECK_LAUNCH(s);
  }
  LA_CUDA_TRY(cudaMemsetAsync(count.data() + longest, 0, sizeof(O), s));
  std::size_t bytes = 0;
  LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, count.data(), v.diag_ptr, longest + 1, s));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, count.data(), v.diag_ptr, longest + 1, s));
  if (rows > 0 && longest > 0) {
    fill_jds<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, a.view().col_idx, a.view().values, v.perm,
                                                           v.diag_ptr, rows, v.col_idx, v.values);
    LA_CHECK_LAUNCH(s);
  }
  return out;
}

#define LA_INSTANTIATE(T, O)                                                      \
  template device_coo<T> to_coo<T, O>(context&, const device_csr<T, O>&);         \
  template device_csc<T, O> to_csc<T, O>(context&, const device_csr<T, O>&);      \
  template device_ell<T> to_ell<T, O>(context&, const device_csr<T, O>&);         \
  template device_jds<T, O> to_jds<T, O>(context&, const device_csr<T, O>&);
LA_INSTANTIATE(float, std::int32_t)
LA_INSTANTIATE(float, std::int64_t)
LA_INSTANTIATE(double, std::int32_t)
LA_INSTANTIATE(double, std::int64_t)
#undef LA_INSTANTIATE

}  // namespace la
