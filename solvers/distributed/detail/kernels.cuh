// The kernels of the distributed CG iteration (row walks over listed rows, the halo's
// packing, the fused steps, the device-generated Laplacian part). Private to the multi-GPU
// solver's sources; built only with NCCL.
#pragma once

#include <la/solvers/distributed/distributed.hpp>

#include <la/solvers/detail/backend_util.cuh>
#include <la/solvers/detail/cg_kernels.cuh>
#include <la/solvers/detail/scan_counts.cuh>

namespace la {
// ---- kernels ---------------------------------------------------------------------------------

namespace dist_detail {
// Internal linkage: each of the solver's sources that includes this gets its own copies.
namespace {
using cg_detail::last_block_sum;
using detail::block_threads;

/// A row walk over a list of local rows, or over the rows first .. first + count - 1 in
/// `order` (a plane_sweep; natural unless the class is swept): a thread a row for W = 1,
/// else W lanes a row (walks.cuh's group walk with a row list). Slot k holds row(k), or -1
/// for a slot of the sweep past the range's end.
template <int W, typename T, typename O>
struct listed_rows {
  const O* rp;
  const index_t* ci;
  const T* v;
  const index_t* list;  // null: the rows first, first + 1, ... in `order`
  index_t first;
  long long count;
  plane_sweep order;  // used when list is null
  __host__ __device__ long long slots() const { return list ? count : order.slots(); }
  __host__ __device__ long long items() const { return slots() * W; }
  __device__ __forceinline__ long long row(long long k) const {
    if (list) return list[k];
    const long long r = order.row(k);
    return r < 0 ? -1 : first + r;
  }
  template <typename X, typename F>
  __device__ __forceinline__ void each(const X& x, F&& f) const {
    if constexpr (W == 1) {
      LA_GRID_STRIDE(k, slots()) {
        const long long i = row(k);
        if (i < 0) continue;
        T acc = T(0);
        for (O j = rp[i]; j < rp[i + 1]; ++j) acc += v[j] * walk::gather(x, ci[j]);
        f(i, acc);
      }
    } else {
      constexpr int per_warp = 32 / W;
      const int group = (threadIdx.x % 32) / W, lane = threadIdx.x % W;
      const long long n = slots();
      LA_WARP_STRIDE(w, (n + per_warp - 1) / per_warp) {
        const long long k = w * per_warp + group;
        const long long i = k < n ? row(k) : -1;
        T acc = T(0);
        if (i >= 0)
          for (O j = rp[i] + lane; j < rp[i + 1]; j += W) acc += v[j] * walk::gather(x, ci[j]);
        acc = walk::group_sum<W>(acc);
        if (i >= 0 && lane == 0) f(i, acc);
      }
    }
  }
};

/// The direction where the boundary rows gather it: owned columns computed on the fly
/// (z + beta p_old, as the interior rows do), halo columns as received into p_new.
template <typename T>
struct halo_direction {
  cg_detail::direction<T> dir;
  const T* p_new;
  index_t rows;
  __device__ __forceinline__ T operator[](long long c) const { return c < rows ? dir[c] : p_new[c]; }
};
template <typename T>
__device__ __forceinline__ void set_beta(cg_detail::direction<T>& d, T beta) { d.beta = beta; }
template <typename T>
__device__ __forceinline__ void set_beta(halo_direction<T>& h, T beta) { h.dir.beta = beta; }

/// The direction step over one class of rows (interior or boundary): x += alpha p_old where
/// owed, p_new = z + beta p_old, q = A p_new and the p'q partial of these rows into *out.
/// The step's decision waits for every rank's partials (direction_decide).
template <typename Walk, typename X, typename T>
__global__ void __launch_bounds__(block_threads)
    direction_part(Walk w, X gather, cg_detail::direction<T> dir, T* p_new, T* q, T* x, const cg_control* c,
                   double* partials, unsigned* ticket, double* out) {
  const bool running = c->status == cg_running, owe = c->x_pending;
  if (!running && !owe) return;
  const T alpha = static_cast<T>(c->alpha);
  dir.beta = static_cast<T>(c->beta);
  set_beta(gather, dir.beta);
  double v[1] = {0}, total[1];
  if (running) {
    v[0] = cg_detail::direction_rows(w, gather, dir, p_new, q, x, alpha, owe);
  } else {
    // Settle the debt on these rows only: each row is in one class.
    LA_GRID_STRIDE(k, w.slots()) {
      const long long i = w.row(k);
      if (i >= 0) x[i] += alpha * dir.p_old[i];
    }
  }
  if (last_block_sum<1>(v, partials, ticket, total)) *out = total[0];
}

/// The values other ranks need, packed: buf[k] = v[send_idx[k]] (a vector's, for r = b - A x),
/// or the new direction's, computed on the fly while running.
template <typename T>
__global__ void __launch_bounds__(block_threads) pack(const T* v, const index_t* send_idx, index_t count, T* buf) {
  LA_GRID_STRIDE(k, count) buf[k] = v[send_idx[k]];
}
template <typename T>
__global__ void __launch_bounds__(block_threads) pack_direction(cg_detail::direction<T> dir, const index_t* send_idx,
                                                                index_t count, T* buf, const cg_control* c) {
  if (c->status != cg_running) return;
  dir.beta = static_cast<T>(c->beta);
  LA_GRID_STRIDE(k, count) buf[k] = dir[send_idx[k]];
}

/// Every rank's p'q partials (interior, boundary) summed in rank order: p'q, and the debt
/// x += alpha p settled.
__global__ void direction_decide(cg_control* c, const double* all, int ranks) {
  if (threadIdx.x != 0) return;
  const bool running = c->status == cg_running;
  if (!running && !c->x_pending) return;
  if (running) {
    double pq = 0;
    for (int r = 0; r < ranks; ++r) pq += all[2 * r] + all[2 * r + 1];
    c->pq = pq;
  }
  c->x_pending = 0;
}

/// The residual step's local part: r -= alpha q with the r'r and r'z partials into out[0..2).
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_rows(T* r, const T* q, const T* inv_d, index_t n,
                                                               const cg_control* c, double* partials, unsigned* ticket,
                                                               double* out) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;  // residual_decide records the breakdown
  double v[2] = {0, 0}, total[2];
  cg_detail::residual_update(r, q, inv_d, n, static_cast<T>(alpha), v);
  if (last_block_sum<2>(v, partials, ticket, total)) out[0] = total[0], out[1] = total[1];
}

/// ... and the decision from every rank's r'r and r'z, summed in rank order.
__global__ void residual_decide(cg_control* c, cg_limits lim, const double* all, int ranks, double* history,
                                std::int64_t history_cap) {
  if (threadIdx.x != 0 || c->status != cg_running) return;
  double alpha = 0;
  if (cg_step_length(*c, alpha)) {
    double rr = 0, rz = 0;
    for (int r = 0; r < ranks; ++r) rr += all[2 * r], rz += all[2 * r + 1];
    cg_decide_step(*c, lim, alpha, rr, rz);
  } else {
    cg_decide_bad_pq(*c);
  }
  if (history) history[(c->iteration - 1) % history_cap] = cg_relative(*c, lim);
}

/// r'r and r'z with z = M^-1 r given (z), or Jacobi's or none's from r (z null): local
/// partials into out[0..2).
template <typename T>
__device__ __forceinline__ void rr_rz(const T* r, const T* inv_d, const T* z, index_t n, double* partials,
                                      unsigned* ticket, double* out) {
  double v[2] = {0, 0}, total[2];
  LA_GRID_STRIDE(i, n) {
    const T ri = r[i];
    v[0] += static_cast<double>(ri) * ri;
    v[1] += static_cast<double>(ri) * (z ? z[i] : cg_detail::apply_precond(inv_d, i, ri));
  }
  if (last_block_sum<2>(v, partials, ticket, total)) out[0] = total[0], out[1] = total[1];
}

/// With a preconditioner built on the part's rows (device_preconditioner): after r -= alpha q
/// (cg_detail::residual_only) and z = M^-1 r, the r'r and r'z partials.
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_dots(const T* r, const T* z, index_t n, const cg_control* c,
                                                               double* partials, unsigned* ticket, double* out) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;  // residual_decide records the breakdown
  rr_rz(r, static_cast<const T*>(nullptr), z, n, partials, ticket, out);
}

/// The start: r'r and r'z of the first residual (local partials into out) ...
template <typename T>
__global__ void __launch_bounds__(block_threads) start_rows(const T* r, const T* inv_d, const T* z, index_t n,
                                                            double* partials, unsigned* ticket, double* out) {
  rr_rz(r, inv_d, z, n, partials, ticket, out);
}
/// ... and the start decision from every rank's.
__global__ void start_decide(cg_control* c, cg_limits lim, const double* all, int ranks) {
  if (threadIdx.x != 0) return;
  double rr = 0, rz = 0;
  for (int r = 0; r < ranks; ++r) rr += all[2 * r], rz += all[2 * r + 1];
  cg_decide_start(*c, lim, rr, rz);
}

/// The part's diagonal block (its rows, its owned columns: local columns below n, which
/// come first in each row): a row's count into counts[i] ...
template <typename O>
__global__ void owned_counts(const O* rp, const index_t* col, index_t n, O* counts) {
  LA_GRID_STRIDE(i, n) {
    O c = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k) c += col[k] < n ? 1 : 0;
    counts[i] = c;
  }
}
/// ... and, after a scan into block.ptr, its entries.
template <typename T, typename O>
__global__ void owned_copy(const O* rp, const index_t* col, const T* val, index_t n, csr_view<T, O> block) {
  LA_GRID_STRIDE(i, n) {
    O at = block.row_ptr[i];
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (col[k] < n) block.col_idx[at] = col[k], block.values[at] = val[k], ++at;
  }
}

/// out = b - A v (v with its halo filled), or A * ones when b is null and v is null.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) residual_of(Walk w, const T* v, const T* b, T* out) {
  w.each(v, [&](long long i, T av) { out[i] = b[i] - av; });
}
template <typename T>
struct ones {
  __device__ __forceinline__ T operator[](long long) const { return T(1); }
};
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) row_sums(Walk w, T* out) {
  w.each(ones<T>{}, [&](long long i, T s) { out[i] = s; });
}

// ---- the Laplacian generated on the device ------------------------------------------------

struct poisson_part {
  int dims;
  global_index n, first;
  index_t rows;
  const global_index* halo;  // sorted
  index_t halo_size;
  __device__ index_t local(global_index c) const {
    if (c >= first && c < first + rows) return static_cast<index_t>(c - first);
    index_t lo = 0, hi = halo_size;  // lower_bound
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (halo[mid] < c) lo = mid + 1;
      else hi = mid;
    }
    return rows + lo;
  }
};

__global__ void poisson_counts(poisson_part p, std::int64_t* counts) {
  LA_GRID_STRIDE(i, p.rows) {
    global_index c[7];
    float v[7];
    counts[i] = poisson_row(p.dims, p.n, p.first + i, c, v);
  }
}

/// Row i's entries with local columns, sorted by local column as make_part sorts them.
template <typename T, typename O>
__global__ void poisson_fill(poisson_part p, const std::int64_t* rp64, O* rp, index_t* ci, T* v) {
  LA_GRID_STRIDE(i, p.rows) {
    global_index c[7];
    T val[7];
    const int m = poisson_row(p.dims, p.n, p.first + i, c, val);
    index_t loc[7];
    for (int k = 0; k < m; ++k) loc[k] = p.local(c[k]);
    for (int k = 1; k < m; ++k)  // insertion sort of at most 7
      for (int j = k; j > 0 && loc[j - 1] > loc[j]; --j) {
        const index_t tl = loc[j];
        loc[j] = loc[j - 1], loc[j - 1] = tl;
        const T tv = val[j];
        val[j] = val[j - 1], val[j - 1] = tv;
      }
    const std::int64_t at = rp64[i];
    for (int k = 0; k < m; ++k) ci[at + k] = loc[k], v[at + k] = val[k];
    if (rp) rp[i + 1] = static_cast<O>(rp64[i + 1]);
  }
}
}  // namespace
}  // namespace dist_detail

}  // namespace la
