// The GPU preconditioners of device_precond.hpp: setup kernels, the level-scheduled row
// runner both IC(0) steps use, and the apply paths.
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
#include <la/detail/instantiate.hpp>
#include "detail/scan_counts.cuh"

namespace la {
namespace {
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

/// Reads one flag back (the stream waits).
unsigned long long read_flag(context& ctx, const device_buffer<unsigned long long>& f) {
  unsigned long long h = no_row;
  f.copy_to_host_async(&h, 1);
  ctx.synchronize();
  return h;
}
device_buffer<unsigned long long> new_flag(context& ctx) {
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

// ---- IC(0) ---------------------------------------------------------------------------------

/// The scaled, shifted lower triangle: v_ij = a_ij / sqrt(d_i d_j), 1 + shift on the diagonal.
template <typename T, typename O>
__global__ void ic0_init(csr_view<const T, O> low, const T* d, double shift, double* v) {
  LA_GRID_STRIDE(i, low.rows) {
    const double di = d[i];
    for (O k = low.row_ptr[i]; k < low.row_ptr[i + 1]; ++k) {
      const index_t j = low.col_idx[k];
      v[k] = j == i ? 1 + shift : static_cast<double>(low.values[k]) / sqrt(di * static_cast<double>(d[j]));
    }
  }
}

/// Row i of the IC(0) factor in place (its dependencies are on earlier levels): the same
/// steps, in the same order, as ic0_attempt (precond.hpp), in double.
template <typename O>
struct ic0_row {
  const O* rp;
  const index_t* ci;
  double* v;
  unsigned long long* bad;
  __device__ void operator()(index_t i, int) const {
    if (i < 0) return;
    const O diag = rp[i + 1] - 1;
    for (O k = rp[i]; k < diag; ++k) {
      const index_t j = ci[k];
      double s = v[k];
      O a = rp[i], b = rp[j];
      const O bend = rp[j + 1] - 1;
      while (a < k && b < bend) {
        const index_t ca = ci[a], cb = ci[b];
        if (ca == cb) s -= v[a++] * v[b++];
        else if (ca < cb) ++a;
        else ++b;
      }
      v[k] = s / v[bend];
    }
    double s = v[diag];
    for (O k = rp[i]; k < diag; ++k) s -= v[k] * v[k];
    if (!(s > 0) || !isfinite(s)) atomicMin(bad, static_cast<unsigned long long>(i)), s = 1;  // keep going: a flag decides
    v[diag] = sqrt(s);
  }
};

/// D^1/2 L into the factor's values (T).
template <typename T, typename O>
__global__ void ic0_finish(csr_view<T, O> l, const T* d, const double* v) {
  LA_GRID_STRIDE(i, l.rows) {
    const double s = sqrt(static_cast<double>(d[i]));
    for (O k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k) l.values[k] = static_cast<T>(v[k] * s);
  }
}

template <typename T, typename O>
__global__ void lower_diagonal(csr_view<const T, O> low, T* d) {
  LA_GRID_STRIDE(i, low.rows) d[i] = low.values[low.row_ptr[i + 1] - 1];
}

/// One row of a triangular solve by a group of W lanes, the off-diagonal sum strided over
/// the lanes in a fixed order. The diagonal is last (L) or first (U = L^T) in the row, or at
/// diag[i] when the rows hold both triangles (ILU(0)'s L + U: the lower solve then has a unit
/// diagonal).
template <int W, typename T, typename O, bool Lower>
struct solve_row {
  csr_view<const T, O> m;
  const T* b;
  T* x;
  const O* diag = nullptr;
  bool unit = false;
  __device__ void operator()(index_t i, int lane) const {
    T s = T(0);
    O d = 0;
    if (i >= 0) {
      const O first = m.row_ptr[i], last = m.row_ptr[i + 1];
      d = diag ? diag[i] : Lower ? last - 1 : first;
      for (O k = (Lower ? first : d + 1) + lane; k < (Lower ? d : last); k += W) s += m.values[k] * x[m.col_idx[k]];
    }
    s = walk::group_sum<W>(s);
    if (i >= 0 && lane == 0) x[i] = unit ? b[i] - s : (b[i] - s) / m.values[d];
  }
};

/// The lanes a row of a triangular solve, by the mean off-diagonal entries of a triangle's
/// row: a thread for short rows (a level's rows then fit one round of the block), a group
/// when the row's loads are worth spreading.
inline int solve_lanes(double off) { return off <= 3 ? 1 : off <= 12 ? 8 : 32; }

/// The two solves of a factored preconditioner with `lanes` lanes a row.
template <typename Lo, typename Up>
void run_solves(int lanes, const level_plan& forward, const level_plan& backward, const Lo& lo, const Up& up,
                cudaStream_t s) {
  if (lanes <= 1) forward.run<1>(lo.template with<1>(), s), backward.run<1>(up.template with<1>(), s);
  else if (lanes <= 8) forward.run<8>(lo.template with<8>(), s), backward.run<8>(up.template with<8>(), s);
  else forward.run<32>(lo.template with<32>(), s), backward.run<32>(up.template with<32>(), s);
}

/// A solve's arguments, made into solve_row for a lane count.
template <typename T, typename O, bool Lower>
struct solve_args {
  csr_view<const T, O> m;
  const T* b;
  T* x;
  const O* diag;
  bool unit;
  template <int W>
  solve_row<W, T, O, Lower> with() const { return {m, b, x, diag, unit}; }
};

// ---- ILU(0) --------------------------------------------------------------------------------

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

template <typename T>
__global__ void widen(const T* in, long long n, double* out) {
  LA_GRID_STRIDE(i, n) out[i] = in[i];
}
template <typename T>
__global__ void narrow_to(const double* in, long long n, T* out) {
  LA_GRID_STRIDE(i, n) out[i] = static_cast<T>(in[i]);
}

/// Row i of ILU(0) in place (its dependencies are on earlier levels): ilu0_factor's steps
/// in double.
template <typename O>
struct ilu0_row {
  const O* rp;
  const index_t* ci;
  const O* diag;
  double* v;
  unsigned long long* bad;
  __device__ void operator()(index_t i, int) const {
    if (i < 0) return;
    const O end = rp[i + 1];
    for (O k = rp[i]; k < diag[i]; ++k) {
      const index_t j = ci[k];
      const double l = v[k] / v[diag[j]];
      v[k] = l;
      O a = k + 1, b = diag[j] + 1;
      const O bend = rp[j + 1];
      while (a < end && b < bend) {
        const index_t ca = ci[a], cb = ci[b];
        if (ca == cb) v[a++] -= l * v[b++];
        else if (ca < cb) ++a;
        else ++b;
      }
    }
    const double d = v[diag[i]];
    if (!(d != 0) || !isfinite(d)) atomicMin(bad, static_cast<unsigned long long>(i));
  }
};

// ---- FSAI ----------------------------------------------------------------------------------

/// Row r of the dense block A[P, P] into m[r * p ..]: row P[r] of A against the sorted
/// pattern P (a merge), zeros where A has no entry.
template <typename T, typename O>
__device__ __forceinline__ void pattern_row(const csr_view<const T, O>& a, const index_t* P, int p, int r, double* m) {
  int c = 0;
  for (O k = a.row_ptr[P[r]]; k < a.row_ptr[P[r] + 1] && c < p; ++k) {
    const index_t col = a.col_idx[k];
    while (c < p && P[c] < col) m[r * p + c++] = 0;
    if (c < p && P[c] == col) m[r * p + c++] = a.values[k];
  }
  while (c < p) m[r * p + c++] = 0;
}

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

/// Rows [r0, r1) of G: row i's dense block A[P, P] gathered into scratch at off[i] - base,
/// Cholesky, then M y = e_last and g = y / sqrt(y_last): fsai_factor's steps in double.
template <typename T, typename O>
__global__ void fsai_rows(csr_view<const T, O> a, csr_view<T, O> g, index_t r0, index_t r1, const long long* off,
                          long long base, double* scratch, unsigned long long* bad) {
  for (long long i = r0 + detail::global_thread(); i < r1; i += detail::grid_threads()) {
    const O g0 = g.row_ptr[i];
    const int p = static_cast<int>(g.row_ptr[i + 1] - g0);
    const index_t* P = g.col_idx + g0;
    double* m = scratch + (off[i] - base);
    for (int r = 0; r < p; ++r) {
      pattern_row(a, P, p, r, m);
    }
    if (!dense_cholesky(m, p)) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    // L^T y = e_last / L_ll: y_last = 1 / L_ll^2 (yl), and y_r for r < p - 1 kept in
    // double in the last column's upper part, m[r * p + (p - 1)], which L does not use.
    const double yl = 1 / (m[(p - 1) * p + (p - 1)] * m[(p - 1) * p + (p - 1)]);
    for (int r = p - 1; r-- > 0;) {
      double s = 0;
      for (int k = r + 1; k < p; ++k) s -= m[k * p + r] * (k == p - 1 ? yl : m[k * p + (p - 1)]);
      m[r * p + (p - 1)] = s / m[r * p + r];
    }
    const double scale = 1 / sqrt(yl);
    for (int r = 0; r < p; ++r) g.values[g0 + r] = static_cast<T>((r == p - 1 ? yl : m[r * p + (p - 1)]) * scale);
  }
}

/// fsai_rows with a warp a row, for long patterns: the gather spread over the block's
/// rows, each Cholesky column's updates over its rows, each dot over its terms (sums in a
/// fixed lane order, so reruns give the same bits). The steps and their order are those of
/// fsai_factor; only the summation order of the dots differs.
template <typename T, typename O>
__global__ void fsai_rows_warp(csr_view<const T, O> a, csr_view<T, O> g, index_t r0, index_t r1, const long long* off,
                               long long base, double* scratch, unsigned long long* bad) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  LA_WARP_STRIDE(w, r1 - r0) {
    const long long i = r0 + w;
    const O g0 = g.row_ptr[i];
    const int p = static_cast<int>(g.row_ptr[i + 1] - g0);
    const index_t* P = g.col_idx + g0;
    double* m = scratch + (off[i] - base);
    for (int r = lane; r < p; r += 32) {
      pattern_row(a, P, p, r, m);
    }
    __syncwarp();
    bool ok = true;
    for (int c = 0; c < p; ++c) {
      double d = 0;
      for (int k = lane; k < c; k += 32) d += m[c * p + k] * m[c * p + k];
      d = m[c * p + c] - warp_total(d);
      if (!(d > 0) || !isfinite(d)) {
        ok = false;
        break;
      }
      d = sqrt(d);
      for (int r = c + 1 + lane; r < p; r += 32) {
        double v = m[r * p + c];
        for (int k = 0; k < c; ++k) v -= m[r * p + k] * m[c * p + k];
        m[r * p + c] = v / d;
      }
      __syncwarp();
      if (lane == 0) m[c * p + c] = d;
      __syncwarp();
    }
    if (!ok) {
      if (lane == 0) atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    // L^T y = e_last / L_ll, y_r kept in m[r * p + (p - 1)] for r < p - 1 (as fsai_rows).
    const double yl = 1 / (m[(p - 1) * p + (p - 1)] * m[(p - 1) * p + (p - 1)]);
    for (int r = p - 1; r-- > 0;) {
      double v = 0;
      for (int k = r + 1 + lane; k < p; k += 32) v += m[k * p + r] * (k == p - 1 ? yl : m[k * p + (p - 1)]);
      v = warp_total(v);
      if (lane == 0) m[r * p + (p - 1)] = -v / m[r * p + r];
      __syncwarp();
    }
    const double scale = 1 / sqrt(yl);
    for (int r = lane; r < p; r += 32) g.values[g0 + r] = static_cast<T>((r == p - 1 ? yl : m[r * p + (p - 1)]) * scale);
    __syncwarp();
  }
}

template <typename O>
__global__ void square_lengths(const O* ptr, index_t n, long long* out) {
  LA_GRID_STRIDE(i, n) {
    const long long p = ptr[i + 1] - ptr[i];
    out[i] = p * p;
  }
}

// ---- block-Jacobi --------------------------------------------------------------------------

/// same[i] = 1 when row i has the same columns as row i - 1.
template <typename T, typename O>
__global__ void same_pattern(csr_view<const T, O> a, unsigned char* same) {
  LA_GRID_STRIDE(i, a.rows) {
    bool eq = i > 0 && a.row_ptr[i + 1] - a.row_ptr[i] == a.row_ptr[i] - a.row_ptr[i - 1];
    for (O k = 0; eq && k < a.row_ptr[i + 1] - a.row_ptr[i]; ++k)
      eq = a.col_idx[a.row_ptr[i] + k] == a.col_idx[a.row_ptr[i - 1] + k];
    same[i] = eq;
  }
}

/// Block b's inverse (row-major, at off[b]) by Cholesky in double, as spd_inverse.
template <typename T, typename O>
__global__ void invert_blocks(csr_view<const T, O> a, const index_t* starts, const long long* off, index_t blocks,
                              double* scratch, T* inv, unsigned long long* bad) {
  LA_GRID_STRIDE(b, blocks) {
    const index_t s0 = starts[b];
    const int s = starts[b + 1] - s0;
    double* l = scratch + off[b];
    T* out = inv + off[b];
    for (int r = 0; r < s * s; ++r) l[r] = 0;
    for (int r = 0; r < s; ++r)
      for (O k = a.row_ptr[s0 + r]; k < a.row_ptr[s0 + r + 1]; ++k) {
        const index_t c = a.col_idx[k] - s0;
        if (c >= 0 && c < s) l[r * s + c] = a.values[k];
      }
    if (!dense_cholesky(l, s)) {
      atomicMin(bad, static_cast<unsigned long long>(b));
      continue;
    }
    double y[32];
    for (int c = 0; c < s; ++c) {
      for (int r = 0; r < s; ++r) {
        double v = r == c ? 1 : 0;
        for (int k = 0; k < r; ++k) v -= l[r * s + k] * y[k];
        y[r] = v / l[r * s + r];
      }
      for (int r = s; r-- > 0;) {
        double v = y[r];
        for (int k = r + 1; k < s; ++k) v -= l[k * s + r] * y[k];
        y[r] = v / l[r * s + r];
      }
      for (int r = 0; r < s; ++r) out[r * s + c] = static_cast<T>(y[r]);
    }
  }
}

/// z_i = (block inverse row) . r over the block, a thread per row, summed in double.
template <typename T>
__global__ void apply_blocks(const index_t* row_block, const index_t* starts, const long long* off, const T* inv,
                             index_t n, const T* r, T* z) {
  LA_GRID_STRIDE(i, n) {
    const index_t b = row_block[i], s0 = starts[b];
    const int s = starts[b + 1] - s0;
    const T* row = inv + off[b] + static_cast<long long>(i - s0) * s;
    double v = 0;
    for (int j = 0; j < s; ++j) v += static_cast<double>(row[j]) * r[s0 + j];
    z[i] = static_cast<T>(v);
  }
}

}  // namespace

// ---- the implementations ---------------------------------------------------------------------

template <typename T>
struct device_preconditioner<T>::impl {
  virtual ~impl() = default;
  virtual void apply(const T* r, T* z, cudaStream_t s) const = 0;
  virtual bool factors(matrix_view<T>&, matrix_view<T>&) const { return false; }
  precond_report rep;
};

namespace {

template <typename T, typename O>
struct block_jacobi_impl final : device_preconditioner<T>::impl {
  device_buffer<index_t> starts, row_block;
  device_buffer<long long> off;
  device_buffer<T> inv;
  index_t n = 0;

  block_jacobi_impl(context& ctx, const device_csr<T, O>& a, int max_block) : n(a.rows()) {
    cudaStream_t s = ctx.stream();
    auto same = ctx.allocate<unsigned char>(static_cast<std::size_t>(n));
    if (n > 0) {
      same_pattern<<<grid_for(n), block_threads, 0, s>>>(a.view(), same.data());
      LA_CHECK_LAUNCH(s);
    }
    std::vector<unsigned char> h(static_cast<std::size_t>(n));
    same.copy_to_host_async(h.data(), h.size());
    ctx.synchronize();
    const std::vector<index_t> st = blocks_from_flags(h, max_block);  // supervariable_blocks' rule
    std::vector<index_t> rb(static_cast<std::size_t>(n), 0);
    const index_t blocks = static_cast<index_t>(st.size()) - 1;
    std::vector<long long> of(st.size(), 0);
    index_t largest = 0;
    for (index_t b = 0; b < blocks; ++b) {
      const long long sz = st[b + 1] - st[b];
      largest = std::max<index_t>(largest, static_cast<index_t>(sz));
      of[b + 1] = of[b] + sz * sz;
      for (index_t i = st[b]; i < st[b + 1]; ++i) rb[i] = b;
    }
    starts = ctx.allocate<index_t>(st.size()), starts.copy_from_host_async(st.data(), st.size());
    row_block = ctx.allocate<index_t>(rb.size()), row_block.copy_from_host_async(rb.data(), rb.size());
    off = ctx.allocate<long long>(of.size()), off.copy_from_host_async(of.data(), of.size());
    inv = ctx.allocate<T>(static_cast<std::size_t>(of.back()));
    auto scratch = ctx.allocate<double>(static_cast<std::size_t>(of.back()));
    auto bad = new_flag(ctx);
    if (blocks > 0) {
      invert_blocks<<<grid_for(blocks), block_threads, 0, s>>>(a.view(), starts.data(), off.data(), blocks,
                                                               scratch.data(), inv.data(), bad.data());
      LA_CHECK_LAUNCH(s);
    }
    const unsigned long long b = read_flag(ctx, bad);
    if (b != no_row)
      throw invalid_argument(detail::block_not_spd_message(st[b], st[b + 1]));
    this->rep.kind = preconditioner::block_jacobi;
    this->rep.detail = std::to_string(blocks) + " blocks of up to " + std::to_string(largest) + " rows";
    this->rep.bytes = double(of.back()) * sizeof(T) + double(n + 2 * st.size()) * sizeof(index_t) + 8.0 * of.size();
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (n == 0) return;
    apply_blocks<<<grid_for(n), block_threads, 0, s>>>(row_block.data(), starts.data(), off.data(), inv.data(), n, r, z);
    LA_CHECK_LAUNCH(s);
  }
};

template <typename T, typename O>
struct fsai_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> g;
  device_csc<T, O> gt;  // G^T, read as CSR through transposed_view
  std::optional<spmv_plan<T>> g_plan, gt_plan;
  mutable device_buffer<T> t;  // G r

  /// Scratch for the gathered blocks: a quarter of the free device memory, at most 2 GiB
  /// (one batch for a 16M-row 3D Laplacian's tril(A)); rows are batched past it.
  static double scratch_budget() {
    std::size_t free_bytes = 0, total_bytes = 0;
    LA_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    return std::max(64.0 * (1 << 20), std::min(2048.0 * (1 << 20), 0.25 * double(free_bytes)));
  }

  fsai_impl(context& ctx, const device_csr<T, O>& a, const fsai_options& opt, double scratch_bytes) {
    LA_EXPECTS(opt.drop >= 0 && std::isfinite(opt.drop), "fsai: drop must be finite and non-negative");
    const index_t n = a.rows();
    cudaStream_t s = ctx.stream();
    if (opt.pattern == fsai_pattern::lower) {
      g = device_lower(ctx, a, "fsai");
    } else {
      const fsai_sparsity<O> sp = fsai_pattern_of(to_host(ctx, a), opt);
      auto ptr = ctx.allocate<O>(sp.ptr.size());
      ptr.copy_from_host_async(sp.ptr.data(), sp.ptr.size());
      auto idx = ctx.allocate<index_t>(sp.idx.size());
      idx.copy_from_host_async(sp.idx.data(), sp.idx.size());
      g = device_csr<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), ctx.allocate<T>(sp.idx.size()));
      ctx.synchronize();
      (void)device_lower(ctx, a, "fsai");  // the diagonal check, with the words of the tril(A) path
    }
    // A thread a row for short patterns (2D and 3D Laplacians: 3 and 4 entries), a warp a
    // row when the dense solves are worth spreading.
    const bool warp_rows = n > 0 && double(g.nnz()) / n > 6;
    // Scratch offsets: p_i^2 doubles per row, prefix-summed.
    auto off = ctx.allocate<long long>(static_cast<std::size_t>(n) + 1);
    if (n > 0) {
      square_lengths<<<grid_for(n), block_threads, 0, s>>>(g.view().row_ptr, n, off.data() + 1);
      LA_CHECK_LAUNCH(s);
    }
    const long long total = detail::scan_counts(ctx, off.data(), n);
    // Batches of rows whose scratch fits the budget (one batch unless the patterns are long).
    std::vector<index_t> cuts{0};
    LA_EXPECTS(scratch_bytes >= 0 && std::isfinite(scratch_bytes), "fsai: the scratch size must be finite and non-negative");
    const double budget = scratch_bytes > 0 ? scratch_bytes : scratch_budget();
    if (double(total) * sizeof(double) > budget) {
      std::vector<long long> h(static_cast<std::size_t>(n) + 1);
      off.copy_to_host_async(h.data(), h.size());
      ctx.synchronize();
      const long long per = static_cast<long long>(budget / sizeof(double));
      for (index_t i = 0; i < n; ++i)
        if (h[i + 1] - h[cuts.back()] > per && i > cuts.back()) cuts.push_back(i);
    }
    cuts.push_back(n);
    long long most = 0;
    {
      std::vector<long long> at(cuts.size());
      for (std::size_t k = 0; k < cuts.size(); ++k)
        LA_CUDA_TRY(cudaMemcpyAsync(&at[k], off.data() + cuts[k], sizeof(long long), cudaMemcpyDeviceToHost, s));
      ctx.synchronize();
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) most = std::max(most, at[k + 1] - at[k]);
      auto scratch = ctx.allocate<double>(static_cast<std::size_t>(std::max<long long>(most, 1)));
      auto bad = new_flag(ctx);
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        if (cuts[k + 1] == cuts[k]) continue;
        if (warp_rows)
          fsai_rows_warp<<<grid_for(32LL * (cuts[k + 1] - cuts[k])), block_threads, 0, s>>>(
              a.view(), g.view(), cuts[k], cuts[k + 1], off.data(), at[k], scratch.data(), bad.data());
        else
          fsai_rows<<<grid_for(cuts[k + 1] - cuts[k]), block_threads, 0, s>>>(
              a.view(), g.view(), cuts[k], cuts[k + 1], off.data(), at[k], scratch.data(), bad.data());
        LA_CHECK_LAUNCH(s);
      }
      const unsigned long long row = read_flag(ctx, bad);
      if (row != no_row)
        throw invalid_argument("fsai: row " + std::to_string(row + 1) +
                               ": the block of A on its pattern is not positive definite, so the matrix is not "
                               "symmetric positive definite");
    }
    gt = to_csc(ctx, g);
    g_plan.emplace(ctx, spmv_view(g));
    gt_plan.emplace(ctx, transposed_view(gt));
    t = ctx.allocate<T>(static_cast<std::size_t>(n));
    this->rep.kind = preconditioner::fsai;
    this->rep.detail = std::string("pattern ") + to_string(opt.pattern) + ", " + std::to_string(g.nnz()) +
                       " nonzeros in G, " + std::to_string(cuts.size() - 1) + " setup batch" +
                       (cuts.size() > 2 ? "es" : "") + (warp_rows ? ", a warp a row" : ", a thread a row");
    this->rep.bytes = 2.0 * g.nnz() * (sizeof(T) + sizeof(index_t)) + 2.0 * (n + 1) * sizeof(O) + double(n) * sizeof(T);
  }
  bool factors(matrix_view<T>& gv, matrix_view<T>& gtv) const override {
    gv = spmv_view(g), gtv = transposed_view(gt);
    return true;
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (g.rows() == 0) return;
    g_plan->run(r, t.data(), T(1), T(0), s);
    gt_plan->run(t.data(), z, T(1), T(0), s);
  }
};

template <typename T, typename O>
struct ic0_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> l;
  device_csc<T, O> lt;  // L^T, read as CSR: the diagonal first in each row
  level_plan forward, backward;
  mutable device_buffer<T> y;  // L^-1 r
  int lanes = 1;               // per row in the solves

  ic0_impl(context& ctx, const device_csr<T, O>& a, double max_shift) {
    LA_EXPECTS(max_shift >= 0 && std::isfinite(max_shift), "ic0: the largest shift must be finite and non-negative");
    const index_t n = a.rows();
    cudaStream_t s = ctx.stream();
    l = device_lower(ctx, a, "ic0");
    {
      // Levels from L's pattern (on the host: one copy of the pattern).
      std::vector<O> rp(static_cast<std::size_t>(n) + 1);
      std::vector<index_t> ci(static_cast<std::size_t>(l.nnz()));
      l.row_ptr().copy_to_host_async(rp.data(), rp.size());
      l.col_idx().copy_to_host_async(ci.data(), ci.size());
      ctx.synchronize();
      forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), true));
      backward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), false));
    }
    auto d = ctx.allocate<T>(static_cast<std::size_t>(n));
    auto v = ctx.allocate<double>(static_cast<std::size_t>(l.nnz()));
    if (n > 0) {
      lower_diagonal<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data());
      LA_CHECK_LAUNCH(s);
    }
    int attempts = 0;
    double used = -1;
    unsigned long long row = no_row;
    for (double shift : ic0_shifts(max_shift)) {
      ++attempts;
      if (n == 0) {
        used = shift;
        break;
      }
      ic0_init<<<grid_for(n), block_threads, 0, s>>>(std::as_const(l).view(), d.data(), shift, v.data());
      LA_CHECK_LAUNCH(s);
      auto bad = new_flag(ctx);
      forward.run<1>(ic0_row<O>{l.view().row_ptr, l.view().col_idx, v.data(), bad.data()}, s);
      row = read_flag(ctx, bad);
      if (row == no_row) {
        used = shift;
        break;
      }
    }
    if (used < 0)
      throw invalid_argument(detail::ic0_no_shift_message(static_cast<long long>(row), max_shift));
    if (n > 0) {
      ic0_finish<<<grid_for(n), block_threads, 0, s>>>(l.view(), d.data(), v.data());
      LA_CHECK_LAUNCH(s);
    }
    lt = to_csc(ctx, l);
    y = ctx.allocate<T>(static_cast<std::size_t>(n));
    const double off = n ? double(l.nnz()) / n - 1 : 0;  // off-diagonal entries a row
    lanes = solve_lanes(off);
    ctx.synchronize();
    this->rep.kind = preconditioner::ic0;
    this->rep.shift = used;
    this->rep.detail = "shift " + short_number(used) + " (attempt " + std::to_string(attempts) + "), " +
                       std::to_string(l.nnz()) + " nonzeros in L, " + std::to_string(forward.levels()) + " + " +
                       std::to_string(backward.levels()) + " levels in " +
                       std::to_string(forward.launches() + backward.launches()) + " launches a solve pair, " +
                       std::to_string(lanes) + (lanes == 1 ? " lane" : " lanes") + " a row";
    this->rep.bytes = 2.0 * l.nnz() * (sizeof(T) + sizeof(index_t)) + 2.0 * (n + 1) * sizeof(O) +
                      4.0 * n * sizeof(index_t) + double(n) * sizeof(T);
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (l.rows() == 0) return;
    T* yp = y.data();
    const auto v = lt.view();
    const csr_view<const T, O> u{lt.cols(), lt.rows(), v.nnz, v.col_ptr, v.row_idx, v.values};
    run_solves(lanes, forward, backward, solve_args<T, O, true>{l.view(), r, yp, nullptr, false},
               solve_args<T, O, false>{u, yp, z, nullptr, false}, s);
  }
};

template <typename T, typename O>
struct ilu0_impl final : device_preconditioner<T>::impl {
  device_csr<T, O> lu;  // L (unit diagonal, not stored) and U on A's pattern
  device_buffer<O> diag;
  level_plan forward, backward;
  mutable device_buffer<T> y;  // L^-1 r
  int lanes = 1;

  ilu0_impl(context& ctx, const device_csr<T, O>& a) {
    const index_t n = a.rows();
    const count_t nnz = a.nnz();
    cudaStream_t s = ctx.stream();
    diag = ctx.allocate<O>(static_cast<std::size_t>(n));
    auto bad = new_flag(ctx);
    if (n > 0) {
      find_diagonal<<<grid_for(n), block_threads, 0, s>>>(a.view(), diag.data(), bad.data());
      LA_CHECK_LAUNCH(s);
    }
    if (const unsigned long long row = read_flag(ctx, bad); row != no_row)
      throw invalid_argument("ilu0: A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) +
                             ") is not stored, so ILU(0) has no pivot there");
    {
      std::vector<O> rp(static_cast<std::size_t>(n) + 1);
      std::vector<index_t> ci(static_cast<std::size_t>(nnz));
      a.row_ptr().copy_to_host_async(rp.data(), rp.size());
      a.col_idx().copy_to_host_async(ci.data(), ci.size());
      ctx.synchronize();
      forward = level_plan(ctx, levels_of_lower(n, rp.data(), ci.data(), true));
      backward = level_plan(ctx, levels_of_upper(n, rp.data(), ci.data()));
    }
    auto v = ctx.allocate<double>(static_cast<std::size_t>(nnz));
    auto ptr = ctx.allocate<O>(static_cast<std::size_t>(n) + 1);
    auto idx = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
    LA_CUDA_TRY(cudaMemcpyAsync(ptr.data(), a.row_ptr().data(), ptr.size() * sizeof(O), cudaMemcpyDeviceToDevice, s));
    LA_CUDA_TRY(cudaMemcpyAsync(idx.data(), a.col_idx().data(), idx.size() * sizeof(index_t), cudaMemcpyDeviceToDevice, s));
    auto vals = ctx.allocate<T>(static_cast<std::size_t>(nnz));
    if (nnz > 0) {
      widen<<<grid_for(nnz), block_threads, 0, s>>>(a.values().data(), nnz, v.data());
      LA_CHECK_LAUNCH(s);
      auto bad2 = new_flag(ctx);
      forward.run<1>(ilu0_row<O>{a.view().row_ptr, a.view().col_idx, diag.data(), v.data(), bad2.data()}, s);
      if (const unsigned long long row = read_flag(ctx, bad2); row != no_row)
        throw invalid_argument("ilu0: the pivot of row " + std::to_string(row + 1) +
                               " is zero or not finite, so ILU(0) does not exist for this matrix");
      narrow_to<<<grid_for(nnz), block_threads, 0, s>>>(v.data(), nnz, vals.data());
      LA_CHECK_LAUNCH(s);
    }
    lu = device_csr<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), std::move(vals));
    y = ctx.allocate<T>(static_cast<std::size_t>(n));
    lanes = solve_lanes(n ? (double(nnz) / n - 1) / 2 : 0);
    ctx.synchronize();
    this->rep.kind = preconditioner::ilu0;
    this->rep.detail = std::to_string(nnz) + " nonzeros in L + U, " + std::to_string(forward.levels()) + " + " +
                       std::to_string(backward.levels()) + " levels";
    this->rep.bytes = double(nnz) * (sizeof(T) + sizeof(index_t)) + (n + 1.0) * sizeof(O) + double(n) * (sizeof(O) + sizeof(T)) +
                      4.0 * n * sizeof(index_t);
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (lu.rows() == 0) return;
    T* yp = y.data();
    run_solves(lanes, forward, backward, solve_args<T, O, true>{lu.view(), r, yp, diag.data(), true},
               solve_args<T, O, false>{lu.view(), yp, z, diag.data(), false}, s);
  }
};

}  // namespace

template <typename T>
template <typename O>
device_preconditioner<T>::device_preconditioner(context& ctx, const device_csr<T, O>& a, preconditioner kind,
                                                const precond_options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  LA_EXPECTS(a.rows() == a.cols(), "preconditioner: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; it must be square");
  if (kind == preconditioner::automatic) kind = select_preconditioner();
  switch (kind) {
    case preconditioner::block_jacobi: impl_ = std::make_unique<block_jacobi_impl<T, O>>(ctx, a, opt.max_block); break;
    case preconditioner::fsai: impl_ = std::make_unique<fsai_impl<T, O>>(ctx, a, opt.fsai, opt.fsai_scratch_bytes); break;
    case preconditioner::ic0: impl_ = std::make_unique<ic0_impl<T, O>>(ctx, a, opt.max_shift); break;
    case preconditioner::ilu0: impl_ = std::make_unique<ilu0_impl<T, O>>(ctx, a); break;
    default:
      throw invalid_argument(std::string("device_preconditioner: ") + to_string(kind) +
                             " is not built here (none and jacobi are the solver's own)");
  }
  ctx.synchronize();
  impl_->rep.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename T>
device_preconditioner<T>::~device_preconditioner() = default;
template <typename T>
device_preconditioner<T>::device_preconditioner(device_preconditioner&&) noexcept = default;
template <typename T>
device_preconditioner<T>& device_preconditioner<T>::operator=(device_preconditioner&&) noexcept = default;

template <typename T>
void device_preconditioner<T>::apply(const T* r, T* z, cudaStream_t s) const {
  impl_->apply(r, z, s);
}
template <typename T>
const precond_report& device_preconditioner<T>::report() const {
  return impl_->rep;
}
template <typename T>
bool device_preconditioner<T>::factors(matrix_view<T>& g, matrix_view<T>& gt) const {
  return impl_->factors(g, gt);
}

template class device_preconditioner<float>;
template class device_preconditioner<double>;
#define LA_INSTANTIATE(T, O)                                                                               \
  template device_preconditioner<T>::device_preconditioner(context&, const device_csr<T, O>&, preconditioner, \
                                                           const precond_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
