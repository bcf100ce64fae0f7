// The GPU CG kernels, in the order a solve runs them: the start step, then per iteration the
// direction step (fused with the SpMV where the variant has a row walk, or an update, the
// registry SpMV and a dot) and the residual step; the persistent kernel that runs both steps
// for many iterations; the setup kernels. Shared by CG on one GPU (solvers/cg/), on several
// (solvers/distributed/) and the Krylov methods' device backend. Private to la's sources.
#pragma once

#include <cooperative_groups.h>

#include <la/solvers/cg_control.hpp>
#include <la/solvers/detail/reduce.cuh>

namespace la::cg_detail {
namespace cgx = cooperative_groups;

// ---- step kernels (plain and graph paths) ---------------------------------------------------

/// The search direction p = z + beta p_old at column c, z = M^-1 r, computed where it is
/// needed: the direction step's SpMV gathers it on the fly (so p is never read back after being
/// written), and the thread that owns row c writes the same expression to the new
/// direction's buffer. One function for both, so the gathered and the stored value are the
/// same bits.
template <typename T>
struct direction {
  const T* r;
  const T* inv_d;  // null without a preconditioner
  const T* p_old;
  T beta;
  __device__ __forceinline__ T operator[](long long c) const {
    const T z = inv_d ? inv_d[c] * r[c] : r[c];
    return fma(beta, p_old[c], z);
  }
};

/// What the direction step needs: the direction it builds, the buffers it writes.
template <typename T>
struct direction_args {
  direction<T> dir;
  T* p_new;
  T* q;
  T* x;
  index_t n;
};

/// The direction step's work on the rows walk w visits, gathering the direction through
/// `gather` (the direction itself, or a view of it that also reads received halo values):
/// x += alpha p_old where owed, p_new = dir, q = A p_new, and this thread's share of p'q,
/// returned. One body for every kernel that fuses the direction step (the step kernel, both
/// persistent kernels, the distributed solver's), so each computes the same bits.
template <typename Walk, typename X, typename T>
__device__ __forceinline__ double direction_rows(const Walk& w, const X& gather, const direction<T>& dir, T* p_new, T* q,
                                                 T* x, T alpha, bool owe) {
  double v = 0;
  w.each(gather, [&](long long i, T qi) {
    const T pi = dir[i];
    if (owe) x[i] += alpha * dir.p_old[i];
    p_new[i] = pi;
    q[i] = qi;
    v += static_cast<double>(pi) * static_cast<double>(qi);
  });
  return v;
}

/// The direction step, fused: x += alpha p_old (owed by the residual step), p_new = z + beta p_old, q = A p_new
/// and the p'q partials; the last block stores p'q and clears the debt. Once stopped it
/// settles the debt and does nothing else.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) direction_step_fused(Walk w, direction_args<T> s, cg_control* c, double* partials,
                                                          unsigned* ticket) {
  const bool running = c->status == cg_running, owe = c->x_pending;
  if (!running && !owe) return;
  const T alpha = static_cast<T>(c->alpha);
  s.dir.beta = static_cast<T>(c->beta);
  double v[1] = {0}, total[1];
  if (running) {
    v[0] = direction_rows(w, s.dir, s.dir, s.p_new, s.q, s.x, alpha, owe);
  } else {
    LA_GRID_STRIDE(i, s.n) s.x[i] += alpha * s.dir.p_old[i];
  }
  if (last_block_sum<1>(v, partials, ticket, total)) {
    if (running) c->pq = total[0];
    c->x_pending = 0;
  }
}

/// The direction step for variants without a row walk, before the registry SpMV: x += alpha p_old,
/// p_new = z + beta p_old.
template <typename T>
__global__ void __launch_bounds__(block_threads) direction_update(direction_args<T> s, const cg_control* c) {
  const bool running = c->status == cg_running, owe = c->x_pending;
  if (!running && !owe) return;
  const T alpha = static_cast<T>(c->alpha);
  s.dir.beta = static_cast<T>(c->beta);
  LA_GRID_STRIDE(i, s.n) {
    if (owe) s.x[i] += alpha * s.dir.p_old[i];
    if (running) s.p_new[i] = s.dir[i];
  }
}

/// ... and after it: the p'q partials; the last block stores p'q and clears the debt.
template <typename T>
__global__ void __launch_bounds__(block_threads) direction_dot(const T* p, const T* q, index_t n, cg_control* c,
                                                        double* partials, unsigned* ticket) {
  const bool running = c->status == cg_running;
  if (!running && !c->x_pending) return;
  double v[1] = {0}, total[1];
  if (running) LA_GRID_STRIDE(i, n) v[0] += static_cast<double>(p[i]) * static_cast<double>(q[i]);
  if (last_block_sum<1>(v, partials, ticket, total)) {
    if (running) c->pq = total[0];
    c->x_pending = 0;
  }
}

/// z_i = M^-1 r_i, rounded to T as the host backend rounds it.
template <typename T>
__device__ __forceinline__ T apply_precond(const T* inv_d, long long i, T ri) {
  return inv_d ? inv_d[i] * ri : ri;
}

/// The residual step's element loop: r -= alpha q, accumulating r'r and r'z. 16 bytes of each vector
/// per thread per step (4 floats, 2 doubles), all loaded before any is stored, so a thread
/// has that many loads in flight (one float at a time was slower: bench/history/tuning-notes-the-code-cites.md, note T7).
template <typename T>
__device__ __forceinline__ void residual_update(T* r, const T* q, const T* inv_d, index_t n, T alpha, double (&v)[2]) {
  constexpr int U = 16 / sizeof(T);
  const long long stride = detail::grid_threads();
  long long i = detail::global_thread();
  auto one = [&](long long j, T rj, T qj, T dj) {
    const T ri = rj - alpha * qj;
    r[j] = ri;
    v[0] += static_cast<double>(ri) * ri;
    v[1] += static_cast<double>(ri) * (inv_d ? dj * ri : ri);
  };
  for (; i + (U - 1) * stride < n; i += U * stride) {
    T rv[U], qv[U], dv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      rv[u] = r[i + u * stride];
      qv[u] = q[i + u * stride];
      dv[u] = inv_d ? inv_d[i + u * stride] : T(1);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) one(i + u * stride, rv[u], qv[u], dv[u]);
  }
  for (; i < n; i += stride) one(i, r[i], q[i], inv_d ? inv_d[i] : T(1));
}

/// The residual step: alpha = r'z / p'q, r -= alpha q, the r'r and r'z partials; the last block decides (cg_control.hpp)
/// and records the history.
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_step(T* r, const T* q, const T* inv_d, index_t n, cg_control* c,
                                                          cg_limits lim, double* partials, unsigned* ticket,
                                                          double* history, std::int64_t history_cap) {
  if (c->status != cg_running) return;
  double alpha = 0;
  const bool ok = cg_step_length(*c, alpha);
  double v[2] = {0, 0}, total[2];
  if (ok) residual_update(r, q, inv_d, n, static_cast<T>(alpha), v);
  if (last_block_sum<2>(v, partials, ticket, total)) {
    if (ok) cg_decide_step(*c, lim, alpha, total[0], total[1]);
    else cg_decide_bad_pq(*c);
    if (history) history[(c->iteration - 1) % history_cap] = cg_relative(*c, lim);
  }
}

/// The residual step with a preconditioner applied between kernels (precond.hpp's block-
/// Jacobi, FSAI, IC(0)): first r -= alpha q ...
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_only(T* r, const T* q, index_t n, const cg_control* c) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;
  const T a = static_cast<T>(alpha);
  LA_GRID_STRIDE(i, n) r[i] -= a * q[i];
}

/// ... then, after z = M^-1 r, the r'r and r'z partials; the last block decides and records
/// the history, as residual_step does.
template <typename T>
__global__ void __launch_bounds__(block_threads) residual_decide(const T* r, const T* z, index_t n, cg_control* c,
                                                            cg_limits lim, double* partials, unsigned* ticket,
                                                            double* history, std::int64_t history_cap) {
  if (c->status != cg_running) return;
  double alpha = 0;
  const bool ok = cg_step_length(*c, alpha);
  double v[2] = {0, 0}, total[2];
  if (ok)
    LA_GRID_STRIDE(i, n) {
      const T ri = r[i];
      v[0] += static_cast<double>(ri) * ri;
      v[1] += static_cast<double>(ri) * z[i];
    }
  if (last_block_sum<2>(v, partials, ticket, total)) {
    if (ok) cg_decide_step(*c, lim, alpha, total[0], total[1]);
    else cg_decide_bad_pq(*c);
    if (history) history[(c->iteration - 1) % history_cap] = cg_relative(*c, lim);
  }
}

/// FSAI (M^-1 = G^T G) fused into two kernels. The first walks G's rows: its product
/// gathers the updated residual r_old - alpha q on the fly while each row's thread stores
/// it into the other residual buffer (the buffers alternate, so no gather reads a value
/// already updated), giving t = G r and the r'r partials ...
template <typename T>
struct updated_residual {
  const T* r;
  const T* q;
  T alpha;
  __device__ __forceinline__ T operator[](long long c) const { return r[c] - alpha * q[c]; }
};
template <typename GWalk, typename T>
__global__ void __launch_bounds__(block_threads) fsai_residual(GWalk g, const T* r_old, const T* q, T* r_new, T* t,
                                                          cg_control* c, double* partials, unsigned* ticket,
                                                          double* rr) {
  if (c->status != cg_running) return;
  double alpha = 0;
  if (!cg_step_length(*c, alpha)) return;  // fsai_decide records the breakdown
  const updated_residual<T> u{r_old, q, static_cast<T>(alpha)};
  double v[1] = {0}, total[1];
  g.each(u, [&](long long i, T ti) {
    const T ri = u[i];
    r_new[i] = ri;
    t[i] = ti;
    v[0] += static_cast<double>(ri) * ri;
  });
  if (last_block_sum<1>(v, partials, ticket, total)) *rr = total[0];
}

/// ... the second walks G^T's rows: z = G^T t and the r'z partials; the last block decides
/// (with the first kernel's r'r) and records the history, as residual_step does.
template <typename GWalk, typename T>
__global__ void __launch_bounds__(block_threads) fsai_decide(GWalk gt, const T* t, const T* r, T* z, cg_control* c,
                                                        cg_limits lim, double* partials, unsigned* ticket,
                                                        const double* rr, double* history, std::int64_t history_cap) {
  if (c->status != cg_running) return;
  double alpha = 0;
  const bool ok = cg_step_length(*c, alpha);
  double v[1] = {0}, total[1];
  if (ok)
    gt.each(t, [&](long long i, T zi) {
      z[i] = zi;
      v[0] += static_cast<double>(r[i]) * zi;
    });
  if (last_block_sum<1>(v, partials, ticket, total)) {
    if (ok) cg_decide_step(*c, lim, alpha, *rr, total[0]);
    else cg_decide_bad_pq(*c);
    if (history) history[(c->iteration - 1) % history_cap] = cg_relative(*c, lim);
  }
}

/// After r = b - A x (and z = M^-1 r, when z is given): r'r and r'z; the last block takes the start decision (alpha = beta =
/// 0, so the first direction step makes p = z from the zeroed old direction).
template <typename T>
__global__ void __launch_bounds__(block_threads) start_step(const T* r, const T* inv_d, const T* z, index_t n,
                                                         cg_control* c, cg_limits lim, double* partials,
                                                         unsigned* ticket) {
  double v[2] = {0, 0}, total[2];
  LA_GRID_STRIDE(i, n) {
    const T ri = r[i];
    v[0] += static_cast<double>(ri) * ri;
    v[1] += static_cast<double>(ri) * (z ? z[i] : apply_precond(inv_d, i, ri));
  }
  if (last_block_sum<2>(v, partials, ticket, total)) cg_decide_start(*c, lim, total[0], total[1]);
}

/// x'y into *out (fixed order).
template <typename T>
__global__ void __launch_bounds__(block_threads) dot_kernel(const T* x, const T* y, index_t n, double* out,
                                                            double* partials, unsigned* ticket) {
  double v[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) v[0] += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  if (last_block_sum<1>(v, partials, ticket, total)) *out = total[0];
}

// ---- the persistent path ------------------------------------------------------------------

/// Resident blocks per SM the persistent kernel is compiled for (64 registers a thread); the
/// grid is every resident block. Four was faster than six or eight (which spill) and than
/// the unbounded three (bench/history/tuning-notes-the-code-cites.md, note T8).
constexpr int persistent_min_blocks = 4;

/// The persistent kernels' direction step, after the residual step's decision (in c, each
/// block's shared copy): the rows, then the p'q partials, summed by every block after a grid
/// barrier. The direction buffers alternate: direction step number `step` reads
/// p[(step - 1) % 2] and writes p[step % 2]. Returns false once stopped (x settled): the
/// caller leaves its loop, and no block reads anything written after that point.
template <typename Walk, typename T>
__device__ __forceinline__ bool persistent_direction(cgx::grid_group& grid, const Walk& w, cg_control& c, const T* z,
                                                     const T* inv_d, T* p0, T* p1, T* q, T* x, index_t n,
                                                     std::int64_t step, double* partials) {
  const bool running = c.status == cg_running, owe = c.x_pending;
  const T a = static_cast<T>(c.alpha);
  T* p_old = step % 2 ? p0 : p1;
  T* p_new = step % 2 ? p1 : p0;
  const direction<T> dir{z, inv_d, p_old, static_cast<T>(c.beta)};
  double v1[1] = {0};
  if (running) {
    v1[0] = direction_rows(w, dir, dir, p_new, q, x, a, owe);
  } else if (owe) {
    LA_GRID_STRIDE(i, n) x[i] += a * p_old[i];
  }
  __syncthreads();  // every thread has read c
  if (threadIdx.x == 0) c.x_pending = 0;
  if (!running) return false;
  block_sum(v1);
  if (threadIdx.x == 0) partials[blockIdx.x] = v1[0];
  grid.sync();
  double t1[1];
  sum_partials<1>(partials, gridDim.x, t1);
  if (threadIdx.x == 0) c.pq = t1[0];
  __syncthreads();
  return true;
}

/// Up to k iterations (the residual step, then the direction step) in one cooperative launch. Every block keeps its own
/// copy of the control block and takes the same decisions from the same fixed-order sums
/// (each block adds all block partials in block order), so no block waits for another's
/// scalars. Two grid barriers per iteration: after the residual step (r and its partials complete)
/// and after the direction step (the new direction and p'q partials complete). The direction buffers
/// alternate: direction step number s reads p[(s - 1) % 2] and writes p[s % 2]. Block 0 writes the
/// control block and the history.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads, persistent_min_blocks) persistent(Walk w, T* x, T* r, T* p0, T* p1, T* q, const T* inv_d,
                                                            index_t n, cg_control* global, cg_limits lim,
                                                            double* partials, double* history,
                                                            std::int64_t history_cap, std::int64_t k,
                                                            std::int64_t step) {
  cgx::grid_group grid = cgx::this_grid();
  // One copy of the control block per block, in shared memory (in registers it cost ~20 a
  // thread): thread 0 updates it, every thread reads it after a barrier.
  __shared__ cg_control c;
  if (threadIdx.x == 0) c = *global;
  __syncthreads();
  const int G = gridDim.x;
  for (std::int64_t j = 0; j < k && c.status == cg_running; ++j, ++step) {
    // The residual step.
    double alpha = 0;
    const bool ok = cg_step_length(c, alpha);
    double v2[2] = {0, 0};
    if (ok) residual_update(r, q, inv_d, n, static_cast<T>(alpha), v2);
    block_sum(v2);
    if (threadIdx.x == 0) partials[G + blockIdx.x] = v2[0], partials[2 * G + blockIdx.x] = v2[1];
    grid.sync();
    double t2[2] = {0, 0};
    if (ok) sum_partials<2>(partials + G, G, t2);
    if (threadIdx.x == 0) {
      if (ok) cg_decide_step(c, lim, alpha, t2[0], t2[1]);
      else cg_decide_bad_pq(c);
      if (history && blockIdx.x == 0) history[(c.iteration - 1) % history_cap] = cg_relative(c, lim);
    }
    __syncthreads();

    // The direction step.
    if (!persistent_direction(grid, w, c, static_cast<const T*>(r), inv_d, p0, p1, q, x, n, step, partials)) break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *global = c;
}

/// The persistent path with FSAI (M^-1 = G^T G): per iteration the residual step is two
/// walks, G's (t = G r_new, gathering r_old - alpha q and storing r_new, the r'r
/// partials) and G^T's (z = G^T t, the r'z partials), with a grid barrier after each;
/// then the direction step as in `persistent`, reading z. Three barriers an iteration
/// instead of two. The residual buffers alternate: residual step number s reads
/// r[(s - 1) % 2] and writes r[s % 2] (r0 is the start's residual).
template <typename Walk, typename FWalk, typename T>
__global__ void __launch_bounds__(block_threads, persistent_min_blocks)
    persistent_fsai(Walk w, FWalk g, FWalk gt, T* x, T* r0, T* r1, T* t, T* z, T* p0, T* p1, T* q, index_t n,
                    cg_control* global, cg_limits lim, double* partials, double* history, std::int64_t history_cap,
                    std::int64_t k, std::int64_t step, std::int64_t rstep) {
  cgx::grid_group grid = cgx::this_grid();
  __shared__ cg_control c;
  if (threadIdx.x == 0) c = *global;
  __syncthreads();
  const int G = gridDim.x;
  for (std::int64_t j = 0; j < k && c.status == cg_running; ++j, ++step, ++rstep) {
    // The residual step: t = G r_new ...
    double alpha = 0;
    const bool ok = cg_step_length(c, alpha);
    const T* r_old = rstep % 2 ? r0 : r1;
    T* r_new = rstep % 2 ? r1 : r0;
    const updated_residual<T> u{r_old, q, static_cast<T>(alpha)};
    double v2[2] = {0, 0};
    if (ok)
      g.each(u, [&](long long i, T ti) {
        const T ri = u[i];
        r_new[i] = ri;
        t[i] = ti;
        v2[0] += static_cast<double>(ri) * ri;
      });
    grid.sync();
    // ... z = G^T t and r'z.
    if (ok)
      gt.each(t, [&](long long i, T zi) {
        z[i] = zi;
        v2[1] += static_cast<double>(r_new[i]) * zi;
      });
    block_sum(v2);
    if (threadIdx.x == 0) partials[G + blockIdx.x] = v2[0], partials[2 * G + blockIdx.x] = v2[1];
    grid.sync();
    double t2[2] = {0, 0};
    if (ok) sum_partials<2>(partials + G, G, t2);
    if (threadIdx.x == 0) {
      if (ok) cg_decide_step(c, lim, alpha, t2[0], t2[1]);
      else cg_decide_bad_pq(c);
      if (history && blockIdx.x == 0) history[(c.iteration - 1) % history_cap] = cg_relative(c, lim);
    }
    __syncthreads();

    // The direction step, as in `persistent`, with z for M^-1 r.
    if (!persistent_direction(grid, w, c, static_cast<const T*>(z), static_cast<const T*>(nullptr), p0, p1, q, x, n,
                              step, partials))
      break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *global = c;
}

// ---- setup kernels ------------------------------------------------------------------------

/// 1 / A(i,i) of a CSR matrix (0 where the diagonal is missing), and the first row whose
/// diagonal is not positive.
template <typename T, typename O>
__global__ void csr_inverse_diagonal(csr_view<const T, O> a, T* inv_d, T* d, unsigned long long* first_bad) {
  LA_GRID_STRIDE(i, a.rows) {
    T v = T(0);
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) v = a.values[k];
    d[i] = v;
    inv_d[i] = T(1) / v;
    if (!(v > T(0))) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace la::cg_detail
