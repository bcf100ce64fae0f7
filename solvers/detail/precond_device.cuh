// What the GPU preconditioner builders share (precond/device_precond.cu's dispatch and the families
// in solvers/precond/ and AMG in solvers/amg/, so it lives in the shared detail/): the implementation interface, the setup kernels, and the
// level-scheduled row runner IC(0) and ILU(0) use. Private to la's sources.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <la/error.hpp>
#include <la/grid.cuh>
#include <la/formats/device_convert.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/kernels/spmv/walks.cuh>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/precond.hpp>
#include <la/solvers/detail/precond_builders.hpp>
#include <la/detail/instantiate.hpp>
#include <la/solvers/detail/scan_counts.cuh>
#include <memory>

namespace la {

template <typename T>
struct device_precond_operator {
  virtual ~device_precond_operator() = default;
  virtual void apply(const T* r, T* z, cudaStream_t s) const = 0;
  virtual bool factors(matrix_view<T>&, matrix_view<T>&) const { return false; }
  precond_report rep;
};

namespace precond_detail {
template <typename T>
using impl_ptr = std::unique_ptr<device_precond_operator<T>>;

/// AMG's numeric setup rerun for new values on the same pattern (amg/amg.cu; false when p is
/// not AMG's).
template <typename T, typename O>
bool update_amg(typename device_preconditioner<T>::impl& p, const device_csr<T, O>& a);
/// The exact factorizations, level by level (ilu.cu). exact_ic0: l = tril(A) in, D^1/2 L out
/// (the shift used returned); exact_ilu0: lu = A in, L + U out (diag: its diagonal's positions).
template <typename T, typename O>
double exact_ic0(context& ctx, device_csr<T, O>& l, double max_shift, int* attempts);
template <typename T, typename O>
void exact_ilu0(context& ctx, device_csr<T, O>& lu, const O* diag);

using detail::block_threads;
using detail::grid_for;

constexpr unsigned long long no_row = ~0ull;

/// The sum over the warp, in every lane, in a fixed order.
__device__ __forceinline__ double warp_total(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// ---- shared setup ---------------------------------------------------------------------------

/// counts[i] = entries of row i at or left of the diagonal; the first row whose diagonal is
/// missing or not positive into *bad.
template <typename T, typename O>
__global__ void count_lower(csr_view<const T, O> a, O* counts, unsigned long long* bad) {
  LA_GRID_STRIDE(i, a.rows) {
    O c = 0;
    bool diag = false;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] <= i) {
        ++c;
        if (a.col_idx[k] == i) diag = a.values[k] > T(0);
      }
    counts[i] = c;
    if (!diag) atomicMin(bad, static_cast<unsigned long long>(i));
  }
}

/// tril(A) into l (its row pointers already set); values copied.
template <typename T, typename O>
__global__ void copy_lower(csr_view<const T, O> a, csr_view<T, O> l) {
  LA_GRID_STRIDE(i, a.rows) {
    O out = l.row_ptr[i];
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] <= i) l.col_idx[out] = a.col_idx[k], l.values[out++] = a.values[k];
  }
}

template <typename T, typename O>
__global__ void lower_diagonal(csr_view<const T, O> low, T* d) {
  LA_GRID_STRIDE(i, low.rows) d[i] = low.values[low.row_ptr[i + 1] - 1];
}

/// D^1/2 L into the factor's values (T), from L of the scaled matrix (v, double).
template <typename T, typename O>
__global__ void unscale_lower(csr_view<T, O> l, const T* d, const double* v) {
  LA_GRID_STRIDE(i, l.rows) {
    const double s = sqrt(static_cast<double>(d[i]));
    for (O k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k) l.values[k] = static_cast<T>(v[k] * s);
  }
}

template <typename T>
__global__ void widen(const T* in, long long n, double* out) {
  LA_GRID_STRIDE(i, n) out[i] = in[i];
}
template <typename T>
__global__ void narrow_to(const double* in, long long n, T* out) {
  LA_GRID_STRIDE(i, n) out[i] = static_cast<T>(in[i]);
}

/// Position of each row's diagonal; the first row without one into *bad.
template <typename T, typename O>
__global__ void find_diagonal(csr_view<const T, O> a, O* diag, unsigned long long* bad) {
  LA_GRID_STRIDE(i, a.rows) {
    O d = -1;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) d = k;
    diag[i] = d;
    if (d < 0) atomicMin(bad, static_cast<unsigned long long>(i));
  }
}

/// Reads one flag back (the stream waits).
inline unsigned long long read_flag(context& ctx, const device_buffer<unsigned long long>& f) {
  unsigned long long h = no_row;
  f.copy_to_host_async(&h, 1);
  ctx.synchronize();
  return h;
}
inline device_buffer<unsigned long long> new_flag(context& ctx) {
  auto f = ctx.allocate<unsigned long long>(1);
  f.copy_from_host_async(&no_row, 1);
  return f;
}

/// tril(A) on the device, or la::invalid_argument naming the first row whose diagonal is
/// missing or not positive (`who` starts the message, as the host builders' do).
template <typename T, typename O>
device_csr<T, O> device_lower(context& ctx, const device_csr<T, O>& a, const char* who) {
  const index_t n = a.rows();
  auto ptr = ctx.allocate<O>(static_cast<std::size_t>(n) + 1);
  auto bad = new_flag(ctx);
  if (n > 0) {
    count_lower<<<grid_for(n), block_threads, 0, ctx.stream()>>>(a.view(), ptr.data() + 1, bad.data());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  const O nnz = detail::scan_counts(ctx, ptr.data(), n);
  const unsigned long long row = read_flag(ctx, bad);
  if (row != no_row)
    throw invalid_argument(detail::bad_diagonal_message(who, static_cast<long long>(row)));
  device_csr<T, O> l(detail::trusted, n, n, std::move(ptr), ctx.allocate<index_t>(static_cast<std::size_t>(nnz)),
                     ctx.allocate<T>(static_cast<std::size_t>(nnz)));
  if (n > 0) {
    copy_lower<<<grid_for(n), block_threads, 0, ctx.stream()>>>(a.view(), l.view());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  return l;
}

/// The positions of A's diagonal, or la::invalid_argument naming the first row without one.
template <typename T, typename O>
device_buffer<O> device_diagonal_positions(context& ctx, const device_csr<T, O>& a) {
  auto diag = ctx.allocate<O>(static_cast<std::size_t>(a.rows()));
  auto bad = new_flag(ctx);
  if (a.rows() > 0) {
    find_diagonal<<<grid_for(a.rows()), block_threads, 0, ctx.stream()>>>(a.view(), diag.data(), bad.data());
    LA_CHECK_LAUNCH(ctx.stream());
  }
  if (const unsigned long long row = read_flag(ctx, bad); row != no_row)
    throw invalid_argument(detail::ilu0_missing_message(static_cast<long long>(row)));
  return diag;
}

/// A copy of a device array, in ctx's stream order.
template <typename T>
device_buffer<T> copy_of(context& ctx, const device_buffer<T>& b) {
  auto c = ctx.allocate<T>(b.size());
  if (b.size()) LA_CUDA_TRY(cudaMemcpyAsync(c.data(), b.data(), b.size() * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream()));
  return c;
}

/// M^T as CSR: the device CSR->CSC conversion, its arrays read as the transpose's.
template <typename T, typename O>
device_csr<T, O> transposed(context& ctx, const device_csr<T, O>& m) {
  device_csc<T, O> c = to_csc(ctx, m);
  auto [p, i, v] = std::move(c).release();
  return device_csr<T, O>(detail::trusted, m.cols(), m.rows(), std::move(p), std::move(i), std::move(v));
}

/// The CSR view of M^T from M's CSC form (the same arrays read the other way).
template <typename T, typename O>
matrix_view<T> transposed_view(const device_csc<T, O>& c) {
  matrix_view<T> m;
  m.fmt = format::csr;
  m.rows = c.cols(), m.cols = c.rows(), m.nnz = c.nnz();
  const auto v = c.view();
  const csr_view<const T, O> t{c.cols(), c.rows(), v.nnz, v.col_ptr, v.row_idx, v.values};
  if constexpr (sizeof(O) == 8) m.wide = true, m.csr64 = t;
  else m.csr32 = t;
  return m;
}

// ---- level-scheduled rows ------------------------------------------------------------------

/// Rows run level by level: levels [l0, l1) in one launch, a group of W lanes a row. A
/// launch of one block runs several narrow levels with a barrier between them
/// (__syncthreads makes a level's global writes visible to the block); a wide level gets a
/// launch of its own, and the stream orders the launches. The loop over a level's rows has
/// the same trip count in every lane (a group past the level's end gets row -1), so the
/// ops' shuffles see the whole warp.
template <int W, typename Op>
__global__ void run_levels(Op op, const index_t* order, const index_t* ptr, index_t l0, index_t l1) {
  const long long groups = detail::grid_threads() / W, g = detail::global_thread() / W;
  const int lane = static_cast<int>(threadIdx.x % W);
  for (index_t l = l0; l < l1; ++l) {
    const long long e = ptr[l + 1];
    for (long long k0 = ptr[l]; k0 < e; k0 += groups) {
      const long long k = k0 + g;
      op(k < e ? order[k] : index_t(-1), lane);
    }
    if (l + 1 < l1) __syncthreads();
  }
}

/// The launches of one level schedule: a run of levels narrower than `narrow` rows goes to
/// one block of narrow_threads threads; a wider level to a full grid.
class level_plan {
 public:
  static constexpr index_t narrow = 4096;
  static constexpr int narrow_threads = 1024;

  level_plan() = default;
  level_plan(context& ctx, const level_schedule& s) : levels_(s.levels()) {
    order_ = ctx.allocate<index_t>(s.order.size());
    order_.copy_from_host_async(s.order.data(), s.order.size());
    ptr_ = ctx.allocate<index_t>(s.ptr.size());
    ptr_.copy_from_host_async(s.ptr.data(), s.ptr.size());
    for (index_t l = 0; l < levels_;) {
      const index_t width = s.ptr[l + 1] - s.ptr[l];
      if (width >= narrow) {
        runs_.push_back({l, l + 1, width});
        ++l;
        continue;
      }
      index_t e = l;
      while (e < levels_ && s.ptr[e + 1] - s.ptr[e] < narrow) ++e;
      runs_.push_back({l, e, 0});
      l = e;
    }
    ctx.synchronize();  // the host vectors may go once the copies are done
  }
  /// op(row, lane) for every row, W lanes a row.
  template <int W, typename Op>
  void run(const Op& op, cudaStream_t s) const {
    for (const run_t& r : runs_) {
      if (r.width == 0) run_levels<W><<<1, narrow_threads, 0, s>>>(op, order_.data(), ptr_.data(), r.l0, r.l1);
      else run_levels<W><<<grid_for(static_cast<long long>(r.width) * W), block_threads, 0, s>>>(op, order_.data(), ptr_.data(), r.l0, r.l1);
      LA_CHECK_LAUNCH(s);
    }
  }
  index_t levels() const { return levels_; }
  std::size_t launches() const { return runs_.size(); }

 private:
  struct run_t {
    index_t l0, l1;
    index_t width;  // of a wide level; 0: a run of narrow ones in one block
  };
  index_t levels_ = 0;
  device_buffer<index_t> order_, ptr_;
  std::vector<run_t> runs_;
};


/// In place, the Cholesky factor L of the p x p SPD matrix m (row-major; the lower triangle
/// read and written): false at the first pivot that is not positive and finite (m is then
/// partly factored). The dense factorization of FSAI's rows and block-Jacobi's blocks.
__device__ __forceinline__ bool dense_cholesky(double* m, int p) {
  for (int c = 0; c < p; ++c) {
    double d = m[c * p + c];
    for (int k = 0; k < c; ++k) d -= m[c * p + k] * m[c * p + k];
    if (!(d > 0) || !isfinite(d)) return false;
    d = sqrt(d);
    m[c * p + c] = d;
    for (int r = c + 1; r < p; ++r) {
      double s = m[r * p + c];
      for (int k = 0; k < c; ++k) s -= m[r * p + k] * m[c * p + k];
      m[r * p + c] = s / d;
    }
  }
  return true;
}

}  // namespace precond_detail
}  // namespace la
