// Row walks: how the SpMV kernels visit a matrix's rows, as device-side building blocks for
// kernels that fuse their own work into a product (the CG solver's direction step, or an
// embedder's). Public and installed; a CUDA header (include it from .cu files).
//
// A row product `rows_of(view)` gives the dot of one stored row with x: product(k, x, row)
// for stored row k < count(), setting `row`, the matrix row it belongs to (JDS and SELL
// store rows permuted). x is an array or anything indexable by column, so a fused kernel
// can compute the vector it multiplies on the fly.
//
// A walk calls f(row, value) once for every row of the matrix, over the whole grid:
//   thread_rows  a thread per stored row (CSR, ELL, JDS, SELL): row_walk::thread
//   group_rows   a group of W lanes per CSR row, W = csr_group_width (a power of two
//                from 2 to 32): row_walk::group; f is called in the group's first lane
// Every thread of the grid must call each() (group_rows shuffles within warps). The
// registry's kernels of those walks run exactly these loops with the epilogue
// y = alpha*value + beta*y, so a fused kernel computes the same bits for A*x.
#pragma once

#include <cuda_runtime.h>

#include <la/grid.cuh>
#include <la/kernels/spmv/spmv.hpp>

namespace la::walk {

/// Sum over groups of W lanes (W a power of two up to 32), complete in each group's first
/// lane; a fixed order, so the result is the same run to run. Every lane of the warp must
/// call it.
template <int W, typename T>
__device__ __forceinline__ T group_sum(T v) {
  for (int off = W / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off, W);
  return v;
}

/// x[c] through the read-only cache for a plain array; any other x is indexed as it is.
template <typename T>
__device__ __forceinline__ T gather(const T* x, long long c) {
  return __ldg(x + c);
}
template <typename X>
__device__ __forceinline__ auto gather(const X& x, long long c) {
  return x[c];
}

template <typename T, typename O>
struct csr_rows {
  csr_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long i, const X& x, long long& row) const {
    T acc = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) acc += a.values[k] * x[a.col_idx[k]];
    row = i;
    return acc;
  }
};
template <typename T>
struct ell_rows {
  ell_view<const T> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long i, const X& x, long long& row) const {
    T acc = T(0);
    for (index_t s = 0; s < a.width; ++s) {
      const long long slot = static_cast<long long>(s) * a.rows + i;
      const index_t c = a.col_idx[slot];
      if (c == ell_padding) break;  // padding always follows a row's entries
      acc += a.values[slot] * x[c];
    }
    row = i;
    return acc;
  }
};
template <typename T, typename O>
struct jds_rows {
  jds_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long k, const X& x, long long& row) const {
    T acc = T(0);
    for (index_t d = 0; d < a.num_diagonals; ++d) {
      const O pos = a.diag_ptr[d] + static_cast<O>(k);
      if (pos >= a.diag_ptr[d + 1]) break;  // diagonals only get shorter
      acc += a.values[pos] * x[a.col_idx[pos]];
    }
    row = a.perm[k];
    return acc;
  }
};
/// SELL-C-sigma, a thread per sorted row: the C threads of a slice read its column-major
/// slots coalesced. The slot loop runs to the slice's width with a guard on padding rather
/// than a break, so several slots' loads are in flight (unrolled by 4); padding is never
/// multiplied (x may hold Inf). perm is not read when sigma = 1 (the identity).
template <typename T, typename O>
struct sell_rows {
  sell_view<const T, O> a;
  __host__ __device__ long long count() const { return a.rows; }
  template <typename X>
  __device__ __forceinline__ T product(long long k, const X& x, long long& row) const {
    const long long C = a.slice_height;
    const long long s = k / C, r = k - s * C;
    const O base = a.slice_ptr[s];
    const long long width = (static_cast<long long>(a.slice_ptr[s + 1]) - base) / C;
    T acc = T(0);
#pragma unroll 4
    for (long long d = 0; d < width; ++d) {
      const long long slot = base + d * C + r;
      const index_t c = __ldg(a.col_idx + slot);
      const T v = __ldg(a.values + slot);
      if (c != ell_padding) acc += v * gather(x, c);
    }
    row = a.sigma == 1 ? k : a.perm[k];
    return acc;
  }
};

template <typename T, typename O>
csr_rows<T, O> rows_of(csr_view<const T, O> v) { return {v}; }
template <typename T>
ell_rows<T> rows_of(ell_view<const T> v) { return {v}; }
template <typename T, typename O>
jds_rows<T, O> rows_of(jds_view<const T, O> v) { return {v}; }
template <typename T, typename O>
sell_rows<T, O> rows_of(sell_view<const T, O> v) { return {v}; }

/// Row i of a CSR matrix summed by a group of W lanes striding the row, complete in the
/// group's first lane. Every lane of the warp must call it; a group whose i is past the
/// last row contributes zero.
template <int W, typename T, typename O, typename X>
__device__ __forceinline__ T csr_group_product(const csr_view<const T, O>& a, long long i, int lane, const X& x) {
  T acc = T(0);
  if (i < a.rows)
    for (O k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += W) acc += a.values[k] * x[a.col_idx[k]];
  return group_sum<W>(acc);
}

/// row_walk::thread: a thread per stored row of a row product.
template <typename Rows>
struct thread_rows {
  Rows a;
  /// Threads the walk can use (a grid larger than this idles).
  __host__ __device__ long long items() const { return a.count(); }
  template <typename X, typename F>
  __device__ __forceinline__ void each(const X& x, F&& f) const {
    LA_GRID_STRIDE(k, a.count()) {
      long long i;
      const auto v = a.product(k, x, i);
      f(i, v);
    }
  }
};
template <typename Rows>
thread_rows<Rows> by_thread(Rows r) { return {r}; }

/// row_walk::group: a group of W lanes per CSR row.
template <int W, typename T, typename O>
struct group_rows {
  static_assert(W >= 2 && W <= 32 && (W & (W - 1)) == 0, "group_rows: W is a power of two from 2 to 32");
  csr_view<const T, O> a;
  __host__ __device__ long long items() const { return static_cast<long long>(a.rows) * W; }
  template <typename X, typename F>
  __device__ __forceinline__ void each(const X& x, F&& f) const {
    // The loop runs per warp (the same trip count in all 32 lanes), so every lane reaches
    // the full-warp shuffles even when some of the warp's groups have no row left.
    constexpr int per_warp = 32 / W;
    const int group = (threadIdx.x % 32) / W, lane = threadIdx.x % W;
    LA_WARP_STRIDE(w, (a.rows + per_warp - 1) / per_warp) {
      const long long i = w * per_warp + group;
      const T v = csr_group_product<W>(a, i, lane, x);
      if (i < a.rows && lane == 0) f(i, v);
    }
  }
};

/// The group width of row_walk::group for a CSR matrix: the power of two (2..32) nearest
/// above the mean row length.
inline int csr_group_width(const spmv_problem& p) {
  const double mean = p.rows ? static_cast<double>(p.nnz) / p.rows : 0;
  int w = 2;
  while (w < 32 && w < mean) w *= 2;
  return w;
}

/// f(view) with the view of the matrix's offset width (CSR, CSC, JDS, SELL).
template <typename V32, typename V64, typename F>
decltype(auto) with_width(bool wide, const V32& v32, const V64& v64, F&& f) {
  return wide ? f(v64) : f(v32);
}

/// f(rows_of(view)) for a matrix of a format with a thread-per-row product (CSR, ELL, JDS,
/// SELL); false for the others.
template <typename T, typename F>
bool with_rows(const matrix_view<T>& m, F&& f) {
  switch (m.fmt) {
    case format::csr: return with_width(m.wide, m.csr32, m.csr64, [&](auto v) { f(rows_of(v)); }), true;
    case format::ell: return f(rows_of(m.ell)), true;
    case format::jds: return with_width(m.wide, m.jds32, m.jds64, [&](auto v) { f(rows_of(v)); }), true;
    case format::sell: return with_width(m.wide, m.sell32, m.sell64, [&](auto v) { f(rows_of(v)); }), true;
    default: return false;
  }
}

}  // namespace la::walk
