#include <la/formats/device_convert.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <la/grid.cuh>
#include <la/detail/instantiate.hpp>

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

/// Row i's first `width` entries into its column-major ELL slots, padding after them.
template <typename T, typename O>
__device__ void write_ell_row(const O* ptr, const index_t* col, const T* val, index_t rows, index_t width,
                              long long i, index_t* ecol, T* eval) {
  const O b = ptr[i];
  const count_t len = ptr[i + 1] - b;
  for (index_t s = 0; s < width; ++s) {
    const std::size_t slot = static_cast<std::size_t>(s) * rows + i;  // column-major
    ecol[slot] = s < len ? col[b + s] : ell_padding;
    eval[slot] = s < len ? val[b + s] : T(0);
  }
}

template <typename T, typename O>
__global__ void fill_ell(const O* ptr, const index_t* col, const T* val, index_t rows, index_t width, index_t* ecol,
                         T* eval) {
  LA_GRID_STRIDE(i, rows) { write_ell_row(ptr, col, val, rows, width, i, ecol, eval); }
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

template <typename O>
__global__ void length_histogram(const O* ptr, index_t rows, unsigned long long* hist) {
  LA_GRID_STRIDE(i, rows) { atomicAdd(hist + (ptr[i + 1] - ptr[i]), 1ull); }
}

/// The rows' entries past `width`: a count per row (scanned into COO offsets by the caller).
template <typename O>
__global__ void overflow_counts(const O* ptr, index_t rows, index_t width, count_t* over) {
  LA_GRID_STRIDE(i, rows) {
    const count_t len = ptr[i + 1] - ptr[i];
    over[i] = len > width ? len - width : 0;
  }
}

template <typename T, typename O>
__global__ void fill_hyb(const O* ptr, const index_t* col, const T* val, index_t rows, index_t width,
                         const count_t* over_start, index_t* ecol, T* eval, index_t* crow, index_t* ccol, T* cval) {
  LA_GRID_STRIDE(i, rows) {
    write_ell_row(ptr, col, val, rows, width, i, ecol, eval);
    const O b = ptr[i];
    const count_t len = ptr[i + 1] - b;
    for (count_t d = width; d < len; ++d) {
      const count_t q = over_start[i] + d - width;
      crow[q] = static_cast<index_t>(i);
      ccol[q] = col[b + d];
      cval[q] = val[b + d];
    }
  }
}

/// Slots of each slice of C sorted rows (C times its longest row); perm == nullptr: identity.
__global__ void slice_slots(const index_t* len, const index_t* perm, index_t rows, index_t c, count_t slices,
                            count_t* slots) {
  LA_GRID_STRIDE(s, slices) {
    index_t w = 0;
    for (count_t k = s * c; k < s * c + c && k < rows; ++k) w = max(w, len[perm ? perm[k] : k]);
    slots[s] = static_cast<count_t>(w) * c;
  }
}

/// Sort keys for SELL: (window of sigma rows, longest - length), so a stable sort orders
/// rows by window, then longest first, ties in row order.
__global__ void window_keys(const index_t* len, index_t longest, index_t rows, index_t sigma, int length_bits,
                            unsigned long long* key) {
  LA_GRID_STRIDE(i, rows) {
    key[i] = (static_cast<unsigned long long>(i / sigma) << length_bits) |
             static_cast<unsigned long long>(longest - len[i]);
  }
}

template <typename O>
__global__ void narrow_offsets(const count_t* in, O* out, count_t n) {
  LA_GRID_STRIDE(k, n) { out[k] = static_cast<O>(in[k]); }
}

template <typename T, typename O>
__global__ void fill_sell(const O* ptr, const index_t* col, const T* val, const index_t* perm, index_t rows,
                          index_t c, count_t slices, const O* slice_ptr, index_t* scol, T* sval) {
  LA_GRID_STRIDE(k, slices * c) {
    const count_t s = k / c, r = k % c;
    const count_t width = (static_cast<count_t>(slice_ptr[s + 1]) - slice_ptr[s]) / c;
    count_t len = 0;
    O b = 0;
    if (k < rows) {
      b = ptr[perm[k]];
      len = ptr[perm[k] + 1] - b;
    }
    for (count_t d = 0; d < width; ++d) {
      const count_t slot = slice_ptr[s] + d * c + r;
      scol[slot] = d < len ? col[b + d] : ell_padding;
      sval[slot] = d < len ? val[b + d] : T(0);
    }
  }
}

/// Bits that hold values in [0, n): what the radix sort needs to look at.
int key_bits(long long n) {
  int b = 1;
  while (b < 62 && (1LL << b) < n) ++b;
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

/// Stable radix sort of (keys, values) pairs on the low `bits` bits of the keys.
template <typename K, typename V, typename N>
void stable_sort_pairs_bits(context& ctx, const K* keys_in, K* keys_out, const V* values_in, V* values_out, N n,
                            int bits) {
  if (n == 0) return;
  std::size_t bytes = 0;
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, 0, bits,
                                              ctx.stream()));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys_in, keys_out, values_in, values_out, n, 0, bits,
                                              ctx.stream()));
}

/// Stable radix sort of (keys, values) pairs with keys in [0, key_limit).
template <typename K, typename V, typename N>
void stable_sort_pairs(context& ctx, const K* keys_in, K* keys_out, const V* values_in, V* values_out, N n,
                       index_t key_limit) {
  stable_sort_pairs_bits(ctx, keys_in, keys_out, values_in, values_out, n, key_bits(key_limit));
}

/// out[0..n] = exclusive sum of in[0..n] after setting in[n] = 0 (both hold n + 1
/// elements), so out[n] is the total. In stream order; no wait.
template <typename C>
void exclusive_sum(context& ctx, C* in, C* out, count_t n) {
  cudaStream_t s = ctx.stream();
  LA_CUDA_TRY(cudaMemsetAsync(in + n, 0, sizeof(C), s));
  std::size_t bytes = 0;
  LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n + 1, s));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, in, out, n + 1, s));
}

/// exclusive_sum, then waits for the total and returns it.
count_t exclusive_sum_total(context& ctx, count_t* in, count_t* out, count_t n) {
  cudaStream_t s = ctx.stream();
  exclusive_sum(ctx, in, out, n);
  count_t total = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&total, out + n, sizeof(count_t), cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  return total;
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
  exclusive_sum(ctx, count.data(), v.diag_ptr, longest);
  if (rows > 0 && longest > 0) {
    fill_jds<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, a.view().col_idx, a.view().values, v.perm,
                                                           v.diag_ptr, rows, v.col_idx, v.values);
    LA_CHECK_LAUNCH(s);
  }
  return out;
}

template <typename T, typename O>
device_hyb<T> to_hyb(context& ctx, const device_csr<T, O>& a, index_t width) {
  const index_t rows = a.rows();
  cudaStream_t s = ctx.stream();
  auto len = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
  const index_t longest = lengths_and_longest(ctx, a, len);
  // Histogram of row lengths: the split and the overflow count, as the host computes them.
  auto hist_d = ctx.allocate<unsigned long long>(static_cast<std::size_t>(longest) + 1);
  LA_CUDA_TRY(cudaMemsetAsync(hist_d.data(), 0, hist_d.size() * sizeof(unsigned long long), s));
  if (rows > 0) {
    length_histogram<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, rows, hist_d.data());
    LA_CHECK_LAUNCH(s);
  }
  std::vector<count_t> hist(hist_d.size());
  LA_CUDA_TRY(cudaMemcpyAsync(hist.data(), hist_d.data(), hist.size() * sizeof(count_t), cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  if (width < 0) width = detail::hyb_width(hist, rows);
  count_t overflow = 0;
  for (std::size_t L = 0; L < hist.size(); ++L)
    if (static_cast<index_t>(L) > width) overflow += hist[L] * (static_cast<count_t>(L) - width);
  auto out = device_hyb<T>::allocate(ctx, rows, a.cols(), width, overflow);
  if (rows > 0) {
    auto over = ctx.allocate<count_t>(static_cast<std::size_t>(rows) + 1);
    auto start = ctx.allocate<count_t>(static_cast<std::size_t>(rows) + 1);
    overflow_counts<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, rows, width, over.data());
    LA_CHECK_LAUNCH(s);
    exclusive_sum(ctx, over.data(), start.data(), rows);  // the total is known from the histogram
    auto v = out.view();
    fill_hyb<<<grid_for(rows), threads_per_block, 0, s>>>(a.view().row_ptr, a.view().col_idx, a.view().values, rows,
                                                           width, start.data(), v.ell.col_idx, v.ell.values,
                                                           v.coo.row_idx, v.coo.col_idx, v.coo.values);
    LA_CHECK_LAUNCH(s);
  }
  return out;
}

template <typename T, typename O>
device_sell<T, O> to_sell(context& ctx, const device_csr<T, O>& a, sell_options opt) {
  const index_t rows = a.rows(), C = opt.slice_height;
  detail::check_sell_shape(rows, a.cols(), C, opt.sigma == 0 ? 1 : opt.sigma);
  cudaStream_t s = ctx.stream();
  auto len = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
  const index_t longest = lengths_and_longest(ctx, a, len);
  const count_t slices = (static_cast<count_t>(rows) + C - 1) / C;
  auto slots = ctx.allocate<count_t>(static_cast<std::size_t>(slices) + 1);
  auto slot_start = ctx.allocate<count_t>(static_cast<std::size_t>(slices) + 1);
  index_t sigma = opt.sigma;
  if (sigma == 0) {  // the slots of unsorted slices decide, as on the host
    if (slices > 0) {
      slice_slots<<<grid_for(slices), threads_per_block, 0, s>>>(len.data(), nullptr, rows, C, slices, slots.data());
      LA_CHECK_LAUNCH(s);
    }
    sigma = detail::sell_auto_sigma(a.nnz(), exclusive_sum_total(ctx, slots.data(), slot_start.data(), slices), C);
  }
  auto perm = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
  if (rows > 0) {
    if (sigma == 1) {
      iota<<<grid_for(rows), threads_per_block, 0, s>>>(perm.data(), rows);
      LA_CHECK_LAUNCH(s);
    } else {
      const int length_bits = key_bits(longest + 1);
      auto key = ctx.allocate<unsigned long long>(static_cast<std::size_t>(rows));
      auto key_sorted = ctx.allocate<unsigned long long>(static_cast<std::size_t>(rows));
      auto ids = ctx.allocate<index_t>(static_cast<std::size_t>(rows));
      window_keys<<<grid_for(rows), threads_per_block, 0, s>>>(len.data(), longest, rows, sigma, length_bits,
                                                               key.data());
      LA_CHECK_LAUNCH(s);
      iota<<<grid_for(rows), threads_per_block, 0, s>>>(ids.data(), rows);
      LA_CHECK_LAUNCH(s);
      stable_sort_pairs_bits(ctx, key.data(), key_sorted.data(), ids.data(), perm.data(), rows,
                             length_bits + key_bits((rows - 1) / sigma + 1));
    }
    slice_slots<<<grid_for(slices), threads_per_block, 0, s>>>(len.data(), perm.data(), rows, C, slices, slots.data());
    LA_CHECK_LAUNCH(s);
  }
  const count_t total = exclusive_sum_total(ctx, slots.data(), slot_start.data(), slices);
  auto out = device_sell<T, O>::allocate(ctx, rows, a.cols(), C, sigma, total);
  auto v = out.view();
  if (rows > 0) LA_CUDA_TRY(cudaMemcpyAsync(v.perm, perm.data(), rows * sizeof(index_t), cudaMemcpyDeviceToDevice, s));
  narrow_offsets<<<grid_for(slices + 1), threads_per_block, 0, s>>>(slot_start.data(), v.slice_ptr, slices + 1);
  LA_CHECK_LAUNCH(s);
  if (rows > 0 && total > 0) {
    fill_sell<<<grid_for(slices * C), threads_per_block, 0, s>>>(a.view().row_ptr, a.view().col_idx, a.view().values,
                                                                 v.perm, rows, C, slices, v.slice_ptr, v.col_idx,
                                                                 v.values);
    LA_CHECK_LAUNCH(s);
  }
  return out;
}

/// Each row's thread scatters its entries into the zeroed row.
template <typename T, typename O>
__global__ void scatter_dense(csr_view<const T, O> a, T* values, index_t ld) {
  LA_GRID_STRIDE(i, a.rows) {
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) values[i * static_cast<long long>(ld) + a.col_idx[k]] = a.values[k];
  }
}

template <typename T, typename O>
device_dense<T> to_dense(context& ctx, const device_csr<T, O>& a) {
  device_dense<T> out(ctx, a.rows(), a.cols());
  auto v = out.view();
  const std::size_t n = static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(v.ld);
  if (n > 0) {
    LA_CUDA_TRY(cudaMemsetAsync(v.values, 0, n * sizeof(T), ctx.stream()));
    scatter_dense<<<grid_for(a.rows()), threads_per_block, 0, ctx.stream()>>>(a.view(), v.values, v.ld);
    LA_CHECK_LAUNCH(ctx.stream());
  }
  return out;
}

#define LA_INSTANTIATE(T, O)                                                      \
  template device_dense<T> to_dense<T, O>(context&, const device_csr<T, O>&);     \
  template device_coo<T> to_coo<T, O>(context&, const device_csr<T, O>&);         \
  template device_csc<T, O> to_csc<T, O>(context&, const device_csr<T, O>&);      \
  template device_ell<T> to_ell<T, O>(context&, const device_csr<T, O>&);         \
  template device_jds<T, O> to_jds<T, O>(context&, const device_csr<T, O>&);     \
  template device_hyb<T> to_hyb<T, O>(context&, const device_csr<T, O>&, index_t); \
  template device_sell<T, O> to_sell<T, O>(context&, const device_csr<T, O>&, sell_options);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
LA_FOR_EACH_COMPLEX_AND_OFFSET(LA_INSTANTIATE)  // the complex SpMV's formats (issue 69)
#undef LA_INSTANTIATE

}  // namespace la
