// The row walks the GPU CG solver fuses its direction step into: the registry variant's
// walk (row_walk, <la/kernels/spmv/walks.cuh>), with the solver's own tuning of it. Private
// to solvers/cg/device_cg.cu.
#pragma once

#include <type_traits>

#include <la/kernels/spmv/walks.cuh>

namespace la::cg_detail {

/// csr_scalar's walk in float: two rows a thread in lock step (rows k and k + stride), so
/// the loads of both rows are in flight together. Faster in float, slower in double
/// (bench/history/tuning-notes-the-code-cites.md, note T6), so double keeps one row a thread: 16 bytes of each
/// array a thread either way.
template <typename T, typename O>
struct csr_pair_rows {
  csr_view<const T, O> a;
  long long items() const { return a.rows; }
  template <typename X, typename F>
  __device__ void each(const X& x, F&& f) const {
    const long long n = a.rows, stride = detail::grid_threads();
    long long i = detail::global_thread();
    for (; i + stride < n; i += 2 * stride) {
      O b0 = a.row_ptr[i], b1 = a.row_ptr[i + stride];
      const O e0 = a.row_ptr[i + 1], e1 = a.row_ptr[i + stride + 1];
      T acc0 = T(0), acc1 = T(0);
      for (; b0 < e0 && b1 < e1; ++b0, ++b1) {
        const index_t c0 = a.col_idx[b0], c1 = a.col_idx[b1];
        const T v0 = a.values[b0], v1 = a.values[b1];
        acc0 += v0 * x[c0];
        acc1 += v1 * x[c1];
      }
      for (; b0 < e0; ++b0) acc0 += a.values[b0] * x[a.col_idx[b0]];
      for (; b1 < e1; ++b1) acc1 += a.values[b1] * x[a.col_idx[b1]];
      f(i, acc0);
      f(i + stride, acc1);
    }
    if (i < n) {
      T acc = T(0);
      for (O b = a.row_ptr[i]; b < a.row_ptr[i + 1]; ++b) acc += a.values[b] * x[a.col_idx[b]];
      f(i, acc);
    }
  }
};


/// Calls f(walk) with a group-per-row walk over CSR matrix m: groups of 4, 8 or 32 lanes
/// by the mean row length, so a long row's loads are in flight together. False when m is
/// not CSR.
template <typename T, typename F>
bool with_group_walk(const matrix_view<T>& m, F&& f) {
  if (m.fmt != format::csr) return false;
  const int W = walk::csr_group_width(problem_of(m));
  walk::with_width(m.wide, m.csr32, m.csr64, [&](auto v) {
    using O = std::remove_cv_t<std::remove_reference_t<decltype(v.row_ptr[0])>>;
    if (W <= 4) f(walk::group_rows<4, T, O>{v});
    else if (W <= 8) f(walk::group_rows<8, T, O>{v});
    else f(walk::group_rows<32, T, O>{v});
  });
  return true;
}

/// The walk over a preconditioner's CSR factor (FSAI's G and G^T): a thread a row for rows
/// of at most 4 entries on average (the Laplacians' factors, where 4 lanes a row left the
/// fused FSAI step 1.5x slower at 1M rows than the registry SpMVs: bench/RESULTS.md,
/// preconditioners), else a group of 8 or 32 lanes.
template <typename T, typename F>
void with_factor_walk(const matrix_view<T>& m, F&& f) {
  const double mean = m.rows ? double(m.nnz) / m.rows : 0;
  if (mean <= 4) {
    walk::with_width(m.wide, m.csr32, m.csr64, [&](auto v) { f(walk::by_thread(walk::rows_of(v))); });
    return;
  }
  walk::with_width(m.wide, m.csr32, m.csr64, [&](auto v) {
    using O = std::remove_cv_t<std::remove_reference_t<decltype(v.row_ptr[0])>>;
    if (mean <= 12) f(walk::group_rows<8, T, O>{v});
    else f(walk::group_rows<32, T, O>{v});
  });
}

/// Calls f(walk) with the fused walk for a variant that walks the rows as `w` on matrix m;
/// false when there is none (row_walk::none: the registry SpMV then runs, then a dot).
/// The solver's tuning of the variant's walk: a thread-per-row CSR walk in float takes two
/// rows a thread (csr_pair_rows); group widths are rounded up to 4, 8 or 32 lanes (three
/// instantiations of each CG kernel instead of five).
template <typename T, typename F>
bool with_fused_walk(const matrix_view<T>& m, row_walk w, F&& f) {
  if (w == row_walk::group) return with_group_walk(m, f);
  if (w != row_walk::thread) return false;
  if constexpr (sizeof(T) == 4) {
    if (m.fmt == format::csr) {
      walk::with_width(m.wide, m.csr32, m.csr64, [&](auto v) {
        using O = std::remove_cv_t<std::remove_reference_t<decltype(v.row_ptr[0])>>;
        f(csr_pair_rows<T, O>{v});
      });
      return true;
    }
  }
  return walk::with_rows(m, [&](auto rows) { f(walk::by_thread(rows)); });
}

}  // namespace la::cg_detail
