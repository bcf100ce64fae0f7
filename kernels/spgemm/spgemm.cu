// la's SpGEMM (spgemm.hpp): the row merges, their binning and the plan.
#include <limits>
#include <string>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <la/error.hpp>
#include <la/grid.cuh>
#include <la/detail/instantiate.hpp>
#include <la/kernels/spgemm/spgemm.hpp>

namespace la {
namespace {

constexpr int short_row = 32;  // A rows up to this long are merged a thread each
constexpr index_t done = std::numeric_limits<index_t>::max();  // an exhausted cursor

__device__ __forceinline__ index_t warp_min(index_t v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// Row i of C a thread each for A rows of at most short_row entries. Symbolic (Numeric
/// false): counts[i + 1] = the row's length. Numeric: its columns and values at ptr[i].
template <bool Numeric, typename T, typename O, typename OB, typename OC>
__global__ void __launch_bounds__(detail::block_threads)
    merge_short(csr_view<const T, O> a, csr_view<const T, OB> b, long long* counts, const OC* ptr, index_t* cols,
                T* vals) {
  LA_GRID_STRIDE(i, a.rows) {
    const O s = a.row_ptr[i];
    const int k = static_cast<int>(a.row_ptr[i + 1] - s);
    if (k > short_row) continue;
    OB pos[short_row], end[short_row];
    index_t cur[short_row];
    for (int t = 0; t < k; ++t) {
      const index_t j = a.col_idx[s + t];
      pos[t] = b.row_ptr[j], end[t] = b.row_ptr[j + 1];
      cur[t] = pos[t] < end[t] ? b.col_idx[pos[t]] : done;
    }
    long long out = Numeric ? static_cast<long long>(ptr[i]) : 0;
    for (;;) {
      index_t c = done;
      for (int t = 0; t < k; ++t) c = min(c, cur[t]);
      if (c == done) break;
      double acc = 0;
      for (int t = 0; t < k; ++t)
        if (cur[t] == c) {
          if constexpr (Numeric) acc += static_cast<double>(a.values[s + t]) * static_cast<double>(b.values[pos[t]]);
          ++pos[t];
          cur[t] = pos[t] < end[t] ? b.col_idx[pos[t]] : done;
        }
      if constexpr (Numeric) cols[out] = c, vals[out] = static_cast<T>(acc);
      ++out;
    }
    if constexpr (!Numeric) counts[i + 1] = out;
  }
}

/// The long rows (list `rows`, count *count) a warp each; the cursors live in `cursor`,
/// aligned with A's entries (each lane owns the entries p = lane mod 32 of the row).
template <bool Numeric, typename T, typename O, typename OB, typename OC>
__global__ void __launch_bounds__(detail::block_threads)
    merge_long(csr_view<const T, O> a, csr_view<const T, OB> b, const index_t* rows, const index_t* count, OB* cursor,
               long long* counts, const OC* ptr, index_t* cols, T* vals) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(w, *count) {
    const index_t i = rows[w];
    const O s = a.row_ptr[i], e = a.row_ptr[i + 1];
    for (O p = s + lane; p < e; p += 32) cursor[p] = b.row_ptr[a.col_idx[p]];
    long long out = Numeric ? static_cast<long long>(ptr[i]) : 0;
    for (;;) {
      index_t c = done;
      for (O p = s + lane; p < e; p += 32) {
        const OB q = cursor[p];
        if (q < b.row_ptr[a.col_idx[p] + 1]) c = min(c, b.col_idx[q]);
      }
      c = warp_min(c);
      if (c == done) break;
      double acc = 0;
      for (O p = s + lane; p < e; p += 32) {
        const OB q = cursor[p];
        if (q < b.row_ptr[a.col_idx[p] + 1] && b.col_idx[q] == c) {
          if constexpr (Numeric) acc += static_cast<double>(a.values[p]) * static_cast<double>(b.values[q]);
          cursor[p] = q + 1;
        }
      }
      if constexpr (Numeric) {
        acc = warp_sum(acc);
        if (lane == 0) cols[out] = c, vals[out] = static_cast<T>(acc);
      }
      ++out;
    }
    if (!Numeric && lane == 0) counts[i + 1] = out;
  }
}


constexpr int hash_slots = 512;   // a warp's table: rows of C up to hash_fill entries
constexpr int hash_fill = 384;    // past this a long row is merged instead (merge_long)
constexpr int hash_warps = 4;     // warps a block (6 KB of keys and values each)
constexpr int hash_row = 96;      // A rows up to this long are merged: measured faster (below)
constexpr index_t empty_key = -1;

__device__ __forceinline__ unsigned hash_of(index_t c) { return (static_cast<unsigned>(c) * 2654435761u) % hash_slots; }

/// The long rows a warp each, through a shared-memory hash of C's columns: the products of
/// each a_ik in A's column order (the warp's lanes over row k of B, whose columns are
/// distinct, so no two lanes add to one slot at once), so each sum runs in the merge's order.
/// Symbolic: counts[i + 1] = the row's length, or -1 when it passes hash_fill (merge_long
/// takes it). Numeric (rows whose count is not -1): the columns ranked into sorted order.
template <bool Numeric, typename T, typename O, typename OB, typename OC>
__global__ void __launch_bounds__(hash_warps * 32)
    hash_long(csr_view<const T, O> a, csr_view<const T, OB> b, const index_t* rows, const index_t* count,
              long long* counts, const OC* ptr, index_t* cols, T* vals) {
  __shared__ index_t keys[hash_warps][hash_slots];
  __shared__ double acc[hash_warps][hash_slots];
  __shared__ int used[hash_warps];
  const int lane = threadIdx.x % 32, wib = threadIdx.x / 32;
  index_t* key = keys[wib];
  double* val = acc[wib];
  const long long warps = static_cast<long long>(gridDim.x) * hash_warps;
  for (long long w = static_cast<long long>(blockIdx.x) * hash_warps + wib; w < *count; w += warps) {
    const index_t i = rows[w];
    const O s = a.row_ptr[i], e = a.row_ptr[i + 1];
    // Rows of A up to hash_row entries are merged (3D Poisson's R (A P) and coarse A P on an
    // H100: 38 and 33 entries merged in 3.3 and 2.5 ms, hashed in 4.8 and 3.6; 143 and 357
    // hashed in 1.2 ms each, merged in 3.7 and 3.2: bench/RESULTS.md, "Algebraic multigrid").
    if (!Numeric && e - s <= hash_row) {
      if (lane == 0) counts[i + 1] = -1;
      continue;
    }
    if (Numeric && (e - s <= hash_row || ptr[i + 1] - ptr[i] > hash_fill)) continue;  // merged instead
    for (int t = lane; t < hash_slots; t += 32) key[t] = empty_key, val[t] = 0;
    if (lane == 0) used[wib] = 0;
    __syncwarp();
    bool overflow = false;
    for (O p = s; p < e && !overflow; ++p) {
      const index_t k = a.col_idx[p];
      const double x = Numeric ? static_cast<double>(a.values[p]) : 0.0;
      for (OB q = b.row_ptr[k] + lane; q < b.row_ptr[k + 1]; q += 32) {
        const index_t c = b.col_idx[q];
        unsigned h = hash_of(c);
        int probes = 0;
        for (;;) {
          const index_t old = atomicCAS(&key[h], empty_key, c);
          if (old == empty_key) {
            if (!Numeric) atomicAdd(&used[wib], 1);
            break;
          }
          if (old == c) break;
          h = (h + 1) % hash_slots;
          if (++probes == hash_slots) {  // full (symbolic only: a numeric row fits by its count)
            atomicMax(&used[wib], hash_slots);
            break;
          }
        }
        if constexpr (Numeric) val[h] += x * static_cast<double>(b.values[q]);
      }
      __syncwarp();
      if (!Numeric) overflow = used[wib] > hash_fill;
    }
    if constexpr (!Numeric) {
      if (lane == 0) counts[i + 1] = overflow ? -1 : used[wib];
    } else {
      // Each occupied slot's rank among the row's columns is its place in C's row.
      const long long base = static_cast<long long>(ptr[i]);
      for (int t = lane; t < hash_slots; t += 32) {
        const index_t c = key[t];
        if (c == empty_key) continue;
        int rank = 0;
        for (int u = 0; u < hash_slots; ++u) rank += key[u] != empty_key && key[u] < c;
        cols[base + rank] = c, vals[base + rank] = static_cast<T>(val[t]);
      }
    }
    __syncwarp();
  }
}

/// Long rows the hash left (count -1) get their symbolic count from merge_long: marks them.
__global__ void overflowed_rows(const index_t* rows, const index_t* count, const long long* counts, index_t* out,
                                index_t* out_count) {
  LA_GRID_STRIDE(w, *count) {
    if (counts[rows[w] + 1] < 0) out[atomicAdd(out_count, 1)] = rows[w];
  }
}

template <typename O>
struct is_long {
  const O* row_ptr;
  __device__ bool operator()(index_t i) const { return row_ptr[i + 1] - row_ptr[i] > short_row; }
};

template <typename OC>
__global__ void narrow_offsets(const long long* in, OC* out, index_t n) {
  LA_GRID_STRIDE(i, static_cast<long long>(n) + 1) out[i] = static_cast<OC>(in[i]);
}

template <typename T, typename OA, typename OB>
void check_shapes(const device_csr<T, OA>& a, const device_csr<T, OB>& b) {
  LA_EXPECTS(a.cols() == b.rows(), "spgemm: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       " and B is " + std::to_string(b.rows()) + " x " + std::to_string(b.cols()) +
                                       "; A's columns must match B's rows");
}

}  // namespace

template <typename T, typename OA, typename OB, typename OC>
spgemm_plan<T, OA, OB, OC>::spgemm_plan(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b)
    : rows_(a.rows()), cols_(b.cols()), inner_(a.cols()), a_nnz_(a.nnz()), b_nnz_(b.nnz()) {
  check_shapes(a, b);
  cudaStream_t s = ctx.stream();
  const index_t n = rows_;
  // The long rows, in increasing order (a stable selection).
  long_ = ctx.allocate<index_t>(static_cast<std::size_t>(n) + 1);  // the last slot holds the count
  index_t* count = long_.data() + n;
  {
    thrust::counting_iterator<index_t> it(0);
    std::size_t bytes = 0;
    LA_CUDA_TRY(cub::DeviceSelect::If(nullptr, bytes, it, long_.data(), count, n, is_long<OA>{a.row_ptr().data()}, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    LA_CUDA_TRY(cub::DeviceSelect::If(temp.data(), bytes, it, long_.data(), count, n, is_long<OA>{a.row_ptr().data()}, s));
  }
  auto counts = ctx.allocate<long long>(static_cast<std::size_t>(n) + 1);
  LA_CUDA_TRY(cudaMemsetAsync(counts.data(), 0, sizeof(long long), s));
  merge_short<false, T, OA, OB, OC><<<detail::grid_for(n), detail::block_threads, 0, s>>>(
      a.view(), b.view(), counts.data(), nullptr, nullptr, nullptr);
  LA_CUDA_TRY(cudaGetLastError());
  LA_CUDA_TRY(cudaMemcpyAsync(&long_rows_, count, sizeof(index_t), cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  if (long_rows_ > 0) {
    // Hashed a warp each; the rows that pass the table merged instead.
    const unsigned hash_blocks = detail::grid_for(long_rows_, hash_warps);
    hash_long<false, T, OA, OB, OC><<<hash_blocks, hash_warps * 32, 0, s>>>(a.view(), b.view(), long_.data(), count,
                                                                           counts.data(), nullptr, nullptr, nullptr);
    LA_CUDA_TRY(cudaGetLastError());
    merged_ = ctx.allocate<index_t>(static_cast<std::size_t>(long_rows_) + 1);
    LA_CUDA_TRY(cudaMemsetAsync(merged_.data() + long_rows_, 0, sizeof(index_t), s));
    overflowed_rows<<<detail::grid_for(long_rows_), detail::block_threads, 0, s>>>(long_.data(), count, counts.data(),
                                                                                    merged_.data(), merged_.data() + long_rows_);
    LA_CUDA_TRY(cudaGetLastError());
    LA_CUDA_TRY(cudaMemcpyAsync(&merged_rows_, merged_.data() + long_rows_, sizeof(index_t), cudaMemcpyDeviceToHost, s));
    ctx.synchronize();
    if (merged_rows_ > 0) {
      auto cursor = ctx.allocate<OB>(static_cast<std::size_t>(a_nnz_));
      merge_long<false, T, OA, OB, OC><<<detail::grid_for(static_cast<long long>(merged_rows_) * 32), detail::block_threads, 0, s>>>(
          a.view(), b.view(), merged_.data(), merged_.data() + long_rows_, cursor.data(), counts.data(), nullptr, nullptr,
          nullptr);
      LA_CUDA_TRY(cudaGetLastError());
    }
  }
  if (n > 0) {
    std::size_t bytes = 0;
    LA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, counts.data() + 1, counts.data() + 1, n, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    LA_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.data(), bytes, counts.data() + 1, counts.data() + 1, n, s));
  }
  long long total = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&total, counts.data() + n, sizeof(long long), cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  if (total > static_cast<long long>(std::numeric_limits<OC>::max()))
    throw size_overflow("spgemm: C = A B has " + std::to_string(total) +
                        " nonzeros, more than 32-bit offsets hold; form it with 64-bit offsets (OC = std::int64_t)");
  nnz_ = static_cast<count_t>(total);
  row_ptr_ = ctx.allocate<OC>(static_cast<std::size_t>(n) + 1);
  narrow_offsets<<<detail::grid_for(static_cast<long long>(n) + 1), detail::block_threads, 0, s>>>(counts.data(),
                                                                                                   row_ptr_.data(), n);
  LA_CUDA_TRY(cudaGetLastError());
  ctx.synchronize();  // counts is freed on return
}

template <typename T, typename OA, typename OB, typename OC>
void spgemm_plan<T, OA, OB, OC>::run(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b,
                                     device_csr<T, OC>& c) const {
  check_shapes(a, b);
  LA_EXPECTS(a.rows() == rows_ && b.cols() == cols_ && a.cols() == inner_ && a.nnz() == a_nnz_ && b.nnz() == b_nnz_,
             "spgemm: run with matrices of other shapes or nonzero counts than the plan was made for; make a new plan");
  cudaStream_t s = ctx.stream();
  if (c.rows() != rows_ || c.cols() != cols_ || c.nnz() != nnz_ || c.row_ptr().size() != row_ptr_.size())
    c = device_csr<T, OC>::allocate(ctx, rows_, cols_, nnz_);
  LA_CUDA_TRY(cudaMemcpyAsync(c.view().row_ptr, row_ptr_.data(), row_ptr_.size() * sizeof(OC),
                              cudaMemcpyDeviceToDevice, s));
  auto v = c.view();
  merge_short<true, T, OA, OB, OC><<<detail::grid_for(rows_), detail::block_threads, 0, s>>>(
      a.view(), b.view(), nullptr, row_ptr_.data(), v.col_idx, v.values);
  LA_CUDA_TRY(cudaGetLastError());
  if (long_rows_ > 0) {
    hash_long<true, T, OA, OB, OC><<<detail::grid_for(long_rows_, hash_warps), hash_warps * 32, 0, s>>>(
        a.view(), b.view(), long_.data(), long_.data() + rows_, nullptr, row_ptr_.data(), v.col_idx, v.values);
    LA_CUDA_TRY(cudaGetLastError());
  }
  if (merged_rows_ > 0) {
    auto cursor = ctx.allocate<OB>(static_cast<std::size_t>(a_nnz_));
    merge_long<true, T, OA, OB, OC><<<detail::grid_for(static_cast<long long>(merged_rows_) * 32), detail::block_threads, 0, s>>>(
        a.view(), b.view(), merged_.data(), merged_.data() + long_rows_, cursor.data(), nullptr, row_ptr_.data(), v.col_idx,
        v.values);
    LA_CUDA_TRY(cudaGetLastError());
  }
}

template <typename T, typename OA, typename OB, typename OC>
device_csr<T, OC> spgemm(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b) {
  spgemm_plan<T, OA, OB, OC> plan(ctx, a, b);
  device_csr<T, OC> c;
  plan.run(ctx, a, b, c);
  return c;
}

#define LA_INSTANTIATE(T, OA, OB, OC)                                                              \
  template class spgemm_plan<T, OA, OB, OC>;                                                        \
  template device_csr<T, OC> spgemm<T, OA, OB, OC>(context&, const device_csr<T, OA>&, const device_csr<T, OB>&);
#define LA_INSTANTIATE_VALUE(T)                                                                         \
  LA_INSTANTIATE(T, std::int32_t, std::int32_t, std::int32_t)                                          \
  LA_INSTANTIATE(T, std::int32_t, std::int32_t, std::int64_t)                                          \
  LA_INSTANTIATE(T, std::int64_t, std::int64_t, std::int64_t)                                          \
  LA_INSTANTIATE(T, std::int32_t, std::int64_t, std::int64_t)
LA_FOR_EACH_VALUE(LA_INSTANTIATE_VALUE)
#undef LA_INSTANTIATE_VALUE
#undef LA_INSTANTIATE

}  // namespace la
