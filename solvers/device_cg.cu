// The GPU backend of the CG loop: step kernels, the graph and persistent paths, and
// cg_device. See device_cg.hpp for the design and cg.hpp for the step contract.
#include <cooperative_groups.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>
#include <la/error.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/detail/instantiate.hpp>

namespace la {

const char* to_string(cg_path p) noexcept {
  switch (p) {
    case cg_path::automatic: return "auto";
    case cg_path::plain: return "plain";
    case cg_path::graph: return "graph";
    case cg_path::persistent: return "persistent";
  }
  return "unknown";
}

spmv_choice cg_choice_for(const std::string& fmt, const spmv_stats& s) {
  if (fmt == "auto") return select_spmv(s);
  spmv_choice c;
  c.why = "format " + fmt + " asked for";
  if (fmt == "csr") {
    const spmv_choice rule = select_spmv(s);
    c.kernel = rule.fmt == format::csr && rule.kernel != "csr_balanced" ? rule.kernel : "csr_vector";
  } else if (fmt == "coo") c.fmt = format::coo, c.kernel = "coo_segmented";
  else if (fmt == "csc") c.fmt = format::csc, c.kernel = "csc_atomic";
  else if (fmt == "ell") c.fmt = format::ell, c.kernel = "ell";
  else if (fmt == "jds") c.fmt = format::jds, c.kernel = "jds";
  else if (fmt == "hyb") c.fmt = format::hyb, c.kernel = "hyb";
  else if (fmt == "sell") c.fmt = format::sell, c.kernel = "sell";
  else if (fmt == "dense") c.fmt = format::dense, c.kernel = "dense_gemv";
  else throw invalid_argument("unknown format '" + fmt + "' (auto, csr, coo, csc, ell, jds, hyb, sell, dense)");
  return c;
}

namespace cg_detail {
namespace {
namespace cgx = cooperative_groups;
using detail::block_threads;
using detail::grid_for;
constexpr int warps = block_threads / 32;

// ---- fixed-order reductions ---------------------------------------------------------------

/// Sums v[0..N) over the block; the result is valid in thread 0. A fixed shuffle tree in
/// each warp, then warp 0 over the warps' sums: the same order every run.
template <int N>
__device__ void block_sum(double (&v)[N]) {
  __shared__ double part[N][warps];
  for (int j = 0; j < N; ++j) v[j] = spmv_detail::group_sum<32>(v[j]);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    for (int j = 0; j < N; ++j) part[j][warp] = v[j];
  __syncthreads();
  if (warp == 0)
    for (int j = 0; j < N; ++j) v[j] = spmv_detail::group_sum<warps>(lane < warps ? part[j][lane] : 0.0);
  __syncthreads();  // part is reused by the next call
}

/// Sums partials[j*count + b] over b for each j, in the same order in every block that
/// calls it (thread t takes b = t, t + 256, ...; then block_sum); valid in thread 0.
template <int N>
__device__ void sum_partials(const double* partials, int count, double (&total)[N]) {
  for (int j = 0; j < N; ++j) {
    total[j] = 0;
    for (int b = threadIdx.x; b < count; b += blockDim.x) total[j] += __ldcg(partials + j * count + b);
  }
  block_sum(total);
}

/// Level one of a dot: each block writes its partial; the last block to finish (counted
/// with an atomic ticket, which orders nothing in the sum) adds all partials in block
/// order. Returns true in the last block's thread 0, with `total` set.
template <int N>
__device__ bool last_block_sum(double (&v)[N], double* partials, unsigned* ticket, double (&total)[N]) {
  __shared__ bool last;
  block_sum(v);
  if (threadIdx.x == 0) {
    for (int j = 0; j < N; ++j) partials[j * gridDim.x + blockIdx.x] = v[j];
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  __threadfence();
  sum_partials<N>(partials, gridDim.x, total);
  if (threadIdx.x == 0) *ticket = 0;  // ready for the next launch
  return threadIdx.x == 0;
}

// ---- how step 1 walks the rows ------------------------------------------------------------

/// A thread per stored row (csr_scalar, ell, jds, sell).
template <typename Rows>
struct thread_rows {
  Rows a;
  long long items() const { return a.count(); }
  template <typename X, typename F>
  __device__ void each(const X& x, F&& f) const {
    LA_GRID_STRIDE(k, a.count()) {
      long long i;
      const auto v = a.product(k, x, i);
      f(i, v);
    }
  }
};

/// csr_scalar's walk in float: two rows a thread in lock step (rows k and k + stride), so
/// the loads of both rows are in flight together. Faster in float, slower in double
/// (bench/RESULTS.md, tuning note T6), so double keeps one row a thread: 16 bytes of each
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

/// A group of W lanes per CSR row (csr_vector).
template <int W, typename T, typename O>
struct group_rows {
  csr_view<const T, O> a;
  long long items() const { return static_cast<long long>(a.rows) * W; }
  template <typename X, typename F>
  __device__ void each(const X& x, F&& f) const {
    constexpr int per_warp = 32 / W;
    const int group = (threadIdx.x % 32) / W, lane = threadIdx.x % W;
    LA_WARP_STRIDE(w, (a.rows + per_warp - 1) / per_warp) {
      const long long i = w * per_warp + group;
      const T v = spmv_detail::csr_group_product<W>(a, i, lane, x);
      if (i < a.rows && lane == 0) f(i, v);
    }
  }
};

// ---- step kernels (plain and graph paths) ---------------------------------------------------

/// The search direction p = z + beta p_old at column c, z = M^-1 r, computed where it is
/// needed: step 1's SpMV gathers it on the fly (so p is never read back after being
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

/// What step 1 needs: the direction it builds, the buffers it writes.
template <typename T>
struct step1_args {
  direction<T> dir;
  T* p_new;
  T* q;
  T* x;
  index_t n;
};

/// Step 1, fused: x += alpha p_old (owed by step 2), p_new = z + beta p_old, q = A p_new
/// and the p'q partials; the last block stores p'q and clears the debt. Once stopped it
/// settles the debt and does nothing else.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads) spmv_dot(Walk w, step1_args<T> s, cg_control* c, double* partials,
                                                          unsigned* ticket) {
  const bool running = c->status == cg_running, owe = c->x_pending;
  if (!running && !owe) return;
  const T alpha = static_cast<T>(c->alpha);
  s.dir.beta = static_cast<T>(c->beta);
  double v[1] = {0}, total[1];
  if (running) {
    w.each(s.dir, [&](long long i, T qi) {
      const T pi = s.dir[i];
      if (owe) s.x[i] += alpha * s.dir.p_old[i];
      s.p_new[i] = pi;
      s.q[i] = qi;
      v[0] += static_cast<double>(pi) * static_cast<double>(qi);
    });
  } else {
    LA_GRID_STRIDE(i, s.n) s.x[i] += alpha * s.dir.p_old[i];
  }
  if (last_block_sum<1>(v, partials, ticket, total)) {
    if (running) c->pq = total[0];
    c->x_pending = 0;
  }
}

/// Step 1 for kernels without a fused form, before the registry SpMV: x += alpha p_old,
/// p_new = z + beta p_old.
template <typename T>
__global__ void __launch_bounds__(block_threads) update_xp(step1_args<T> s, const cg_control* c) {
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
__global__ void __launch_bounds__(block_threads) dot_pq(const T* p, const T* q, index_t n, cg_control* c,
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

/// Step 2's element loop: r -= alpha q, accumulating r'r and r'z. 16 bytes of each vector
/// per thread per step (4 floats, 2 doubles), all loaded before any is stored, so a thread
/// has that many loads in flight (one float at a time was slower: bench/RESULTS.md, tuning
/// note T7).
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

/// Step 2: r -= alpha q, the r'r and r'z partials; the last block decides (cg_control.hpp)
/// and records the history.
template <typename T>
__global__ void __launch_bounds__(block_threads) update_r(T* r, const T* q, const T* inv_d, index_t n, cg_control* c,
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

/// After r = b - A x: r'r and r'z; the last block takes the start decision (alpha = beta =
/// 0, so the first step 1 makes p = z from the zeroed old direction).
template <typename T>
__global__ void __launch_bounds__(block_threads) start_r(const T* r, const T* inv_d, index_t n, cg_control* c,
                                                         cg_limits lim, double* partials, unsigned* ticket) {
  double v[2] = {0, 0}, total[2];
  LA_GRID_STRIDE(i, n) {
    const T ri = r[i];
    v[0] += static_cast<double>(ri) * ri;
    v[1] += static_cast<double>(ri) * apply_precond(inv_d, i, ri);
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
/// the unbounded three (bench/RESULTS.md, tuning note T8).
constexpr int persistent_min_blocks = 4;

/// Up to k iterations (step 2, step 1) in one cooperative launch. Every block keeps its own
/// copy of the control block and takes the same decisions from the same fixed-order sums
/// (each block adds all block partials in block order), so no block waits for another's
/// scalars. Two grid barriers per iteration: after step 2 (r and its partials complete) and
/// after step 1 (the new direction and p'q partials complete). The direction buffers
/// alternate: step 1 number s reads p[(s - 1) % 2] and writes p[s % 2]. Block 0 writes the
/// control block and the history.
template <typename Walk, typename T>
__global__ void __launch_bounds__(block_threads, persistent_min_blocks) persistent(Walk w, T* x, T* r, T* p0, T* p1, T* q, const T* inv_d,
                                                            index_t n, cg_control* global, cg_limits lim,
                                                            double* partials, double* history,
                                                            std::int64_t history_cap, std::int64_t k,
                                                            std::int64_t step1) {
  cgx::grid_group grid = cgx::this_grid();
  // One copy of the control block per block, in shared memory (in registers it cost ~20 a
  // thread): thread 0 updates it, every thread reads it after a barrier.
  __shared__ cg_control c;
  if (threadIdx.x == 0) c = *global;
  __syncthreads();
  const int G = gridDim.x;
  for (std::int64_t j = 0; j < k && c.status == cg_running; ++j, ++step1) {
    // Step 2.
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

    // Step 1.
    const bool running = c.status == cg_running, owe = c.x_pending;
    const T a = static_cast<T>(c.alpha);
    T* p_old = step1 % 2 ? p0 : p1;
    T* p_new = step1 % 2 ? p1 : p0;
    const direction<T> dir{r, inv_d, p_old, static_cast<T>(c.beta)};
    double v1[1] = {0};
    if (running) {
      w.each(dir, [&](long long i, T qi) {
        const T pi = dir[i];
        if (owe) x[i] += a * p_old[i];
        p_new[i] = pi;
        q[i] = qi;
        v1[0] += static_cast<double>(pi) * static_cast<double>(qi);
      });
    } else if (owe) {
      LA_GRID_STRIDE(i, n) x[i] += a * p_old[i];
    }
    __syncthreads();  // every thread has read c
    if (threadIdx.x == 0) c.x_pending = 0;
    if (!running) break;  // no block reads anything written after this point
    block_sum(v1);
    if (threadIdx.x == 0) partials[blockIdx.x] = v1[0];
    grid.sync();
    double t1[1];
    sum_partials<1>(partials, G, t1);
    if (threadIdx.x == 0) c.pq = t1[0];
    __syncthreads();
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

/// The first index of a non-finite value (atomicMin: the answer does not depend on order).
template <typename T, typename N>
__global__ void first_non_finite(const T* v, N n, unsigned long long* first) {
  LA_GRID_STRIDE(i, n) {
    if (!isfinite(v[i])) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

}  // namespace

/// Calls f(walk) with the fused step-1 walk for the operator's kernel; false when the
/// kernel has none (the registry SpMV then runs, followed by dot_pq).
template <typename T, typename F>
bool with_walk(const matrix_view<T>& m, const std::string& kernel, F&& f) {
  auto by_width = [&](auto v) {
    using O = std::remove_cv_t<std::remove_reference_t<decltype(v.row_ptr[0])>>;
    if (kernel == "csr_scalar") {
      if constexpr (sizeof(T) == 4) f(csr_pair_rows<T, O>{v});
      else f(thread_rows<spmv_detail::csr_rows<T, O>>{{v}});
      return true;
    }
    if (kernel != "csr_vector") return false;
    // The registry's lanes per row, rounded to the three widths instantiated here.
    const int W = spmv_detail::csr_vector_width(problem_of(m));
    if (W <= 4) f(group_rows<4, T, O>{v});
    else if (W <= 8) f(group_rows<8, T, O>{v});
    else f(group_rows<32, T, O>{v});
    return true;
  };
  switch (m.fmt) {
    case format::csr: return m.wide ? by_width(m.csr64) : by_width(m.csr32);
    case format::ell:
      if (kernel != "ell") return false;
      return f(thread_rows<spmv_detail::ell_rows<T>>{{m.ell}}), true;
    case format::jds:
      if (kernel != "jds") return false;
      return m.wide ? (f(thread_rows<spmv_detail::jds_rows<T, std::int64_t>>{{m.jds64}}), true)
                    : (f(thread_rows<spmv_detail::jds_rows<T, std::int32_t>>{{m.jds32}}), true);
    case format::sell:
      if (kernel != "sell") return false;
      return m.wide ? (f(thread_rows<spmv_detail::sell_rows<T, std::int64_t>>{{m.sell64}}), true)
                    : (f(thread_rows<spmv_detail::sell_rows<T, std::int32_t>>{{m.sell32}}), true);
    default: return false;
  }
}

/// Blocks for an elementwise or row walk over `items` threads: enough to fill the device
/// (8 blocks of 256 threads per SM), no more, so the partial arrays stay small.
unsigned blocks_for(long long items, int sm_count) {
  return std::min<unsigned>(grid_for(items), static_cast<unsigned>(8 * sm_count));
}

template <typename T>
class device_backend {
 public:
  using value_type = T;
  using vector = device_vector<T>;
  /// Chunks stay below the history ring's capacity, so a drain never misses an iteration.
  static constexpr std::int64_t largest_chunk = 4096;
  static constexpr std::int64_t history_cap = 2 * largest_chunk;

  /// `a` is the CSR matrix the operator was built from: check_values scans its values and
  /// check_preconditioner takes its diagonal.
  template <typename O>
  device_backend(context& ctx, const spmv_operator<T>& op, const device_csr<T, O>& a, preconditioner pc, cg_path path,
                 bool history)
      : ctx_(ctx), op_(op), kernel_(op.variant().name), pc_(pc), n_(op.matrix().rows), path_(path),
        a_values_(a.values().data()), a_nnz_(a.nnz()),
        prepare_preconditioner_([this, v = a.view()] { return prepare_preconditioner(v); }) {
    s_ = ctx.stream();
    const std::size_t n = static_cast<std::size_t>(n_);
    r_ = ctx.allocate<T>(n), q_ = ctx.allocate<T>(n);
    for (auto& p : p_) p = ctx.allocate<T>(n);
    if (pc == preconditioner::jacobi) inv_d_ = ctx.allocate<T>(n), d_ = ctx.allocate<T>(n);
    control_ = ctx.allocate<cg_control>(1);
    scalars_ = ctx.allocate<double>(1);
    flags_ = ctx.allocate<unsigned long long>(4);
    tickets_ = ctx.allocate<unsigned>(4);
    LA_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, 4 * sizeof(unsigned), s_));
    vector_blocks_ = blocks_for(n_, ctx.sm_count());
    fused_ = with_walk(op.matrix(), kernel_, [&](auto w) { walk_blocks_ = blocks_for(w.items(), ctx.sm_count()); });
    if (path_ == cg_path::persistent) setup_persistent();
    const unsigned most = std::max({vector_blocks_, walk_blocks_, persistent_blocks_});
    partials_ = ctx.allocate<double>(3 * static_cast<std::size_t>(most));
    if (history) history_ = ctx.allocate<double>(history_cap);
    LA_CUDA_TRY(cudaMallocHost(&host_control_, sizeof(cg_control)));
  }
  ~device_backend() {
    if (graph_) LA_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(graph_));
    if (host_control_) LA_CUDA_TRY_NO_THROW(cudaFreeHost(host_control_));
  }
  device_backend(const device_backend&) = delete;
  device_backend& operator=(const device_backend&) = delete;

  index_t size() const { return n_; }
  bool fused() const { return fused_; }

  /// Sizes of b and x (cg_device has refused a matrix that is not square).
  std::string check_input(const vector& b, const vector& x) const {
    if (b.size() != n_)
      return "right-hand side has " + std::to_string(b.size()) + " entries, matrix has " + std::to_string(n_) + " rows";
    if (x.size() != n_)
      return "initial guess has " + std::to_string(x.size()) + " entries, expected " + std::to_string(n_);
    return {};
  }

  /// Where the matrix values (the CSR input), b or x hold NaN/Inf ("" when nowhere): one
  /// scan kernel each and one read-back.
  std::string check_values(const vector& b, const vector& x) { return find_non_finite(b, x); }
  /// Computes the Jacobi inverse diagonal; "" or why it cannot be used.
  std::string check_preconditioner() { return prepare_preconditioner_(); }

 private:
  std::string find_non_finite(const vector& b, const vector& x) {
    const unsigned long long none = ~0ull;
    std::vector<unsigned long long> init(3, none);
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data(), init.data(), 3 * sizeof(none), cudaMemcpyHostToDevice, s_));
    auto scan = [&](const T* v, long long count, int slot) {
      if (count == 0) return;
      first_non_finite<<<blocks_for(count, ctx_.sm_count()), block_threads, 0, s_>>>(v, count, flags_.data() + slot);
      LA_CHECK_LAUNCH(s_);
    };
    scan(a_values_, static_cast<long long>(a_nnz_), 0);
    scan(b.data(), n_, 1);
    scan(x.data(), n_, 2);
    LA_CUDA_TRY(cudaMemcpyAsync(init.data(), flags_.data(), 3 * sizeof(none), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    const char* what[] = {"matrix", "right-hand side", "initial guess"};
    for (int j = 0; j < 3; ++j)
      if (init[j] != none)
        return std::string(what[j]) + " holds a non-finite value at " + (j == 0 ? "stored entry " : "entry ") +
               std::to_string(init[j] + 1) + " (1-based)";
    return {};
  }
  template <typename O>
  std::string prepare_preconditioner(csr_view<const T, O> a) {
    if (pc_ != preconditioner::jacobi || n_ == 0) return {};
    const unsigned long long none = ~0ull;
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data() + 3, &none, sizeof(none), cudaMemcpyHostToDevice, s_));
    csr_inverse_diagonal<<<blocks_for(n_, ctx_.sm_count()), block_threads, 0, s_>>>(a, inv_d_.data(), d_.data(),
                                                                                  flags_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    unsigned long long bad = none;
    LA_CUDA_TRY(cudaMemcpyAsync(&bad, flags_.data() + 3, sizeof(bad), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    if (bad == none) return {};
    T v;
    LA_CUDA_TRY(cudaMemcpyAsync(&v, d_.data() + bad, sizeof(T), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return "Jacobi preconditioner: diagonal entry A(" + std::to_string(bad + 1) + "," + std::to_string(bad + 1) +
           ") = " + std::to_string(static_cast<double>(v)) +
           " is not positive, so the matrix is not symmetric positive definite";
  }

 public:
  double nrm2(const vector& v) { return norm(v.data()); }
  void set_zero(vector& x) { LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), s_)); }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    LA_CUDA_TRY(cudaMemsetAsync(control_.data(), 0, sizeof(cg_control), s_));
    for (auto& p : p_) LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, p.size() * sizeof(T), s_));
    residual(b, x, r_.data());
    start_r<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), inv_d(), n_, control_.data(), lim_, partials_.data(),
                                                      tickets_.data());
    LA_CHECK_LAUNCH(s_);
    step1_ = 0;
    queue_step_1(x.data());
    // The graph is captured here, in setup, so the loop's time is replays only.
    if (path_ == cg_path::graph) capture(x.data());
  }

  void iterate(std::int64_t k, vector& x) {
    if (path_ == cg_path::persistent) return run_persistent(k, x);
    if (path_ == cg_path::plain) {
      for (std::int64_t j = 0; j < k; ++j) queue_iteration(x.data());
      return;
    }
    if (!graph_ || graph_x_ != x.data()) capture(x.data());
    for (std::int64_t j = 0; j < k; j += graph_iterations) {
      LA_CUDA_TRY(cudaGraphLaunch(graph_, s_));
      step1_ += graph_iterations;
    }
  }

  const cg_control& report() {
    LA_CUDA_TRY(cudaMemcpyAsync(host_control_, control_.data(), sizeof(cg_control), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return *host_control_;
  }

  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) {
    const std::size_t old = out.size();
    out.resize(old + static_cast<std::size_t>(last - first + 1));
    for (std::int64_t i = first; i <= last;) {  // at most two copies (the ring wraps once)
      const std::int64_t slot = (i - 1) % history_cap, count = std::min(last - i + 1, history_cap - slot);
      LA_CUDA_TRY(cudaMemcpyAsync(out.data() + old + (i - first), history_.data() + slot, count * sizeof(double),
                                  cudaMemcpyDeviceToHost, s_));
      i += count;
    }
    ctx_.synchronize();
  }

  double residual_norm(const vector& b, const vector& x) {
    residual(b, x, q_.data());
    return norm(q_.data());
  }

 private:
  static constexpr int graph_iterations = 8;

  const T* inv_d() const { return pc_ == preconditioner::jacobi ? inv_d_.data() : nullptr; }
  double* history_ptr() { return history_.empty() ? nullptr : history_.data(); }

  void residual(const vector& b, const vector& x, T* out) {
    LA_CUDA_TRY(cudaMemcpyAsync(out, b.data(), b.size() * sizeof(T), cudaMemcpyDeviceToDevice, s_));
    op_.apply(x.data(), out, T(-1), T(1), s_);
  }
  /// ||v||, read back (setup and the final check only, never inside the loop).
  double norm(const T* v) {
    dot_kernel<<<vector_blocks_, block_threads, 0, s_>>>(v, v, n_, scalars_.data(), partials_.data(), tickets_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    double s;
    LA_CUDA_TRY(cudaMemcpyAsync(&s, scalars_.data(), sizeof(s), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return std::sqrt(s);
  }

  /// Step 1 number step1_ + 1: reads the direction buffer the previous one wrote.
  void queue_step_1(T* x) {
    ++step1_;
    T* p_old = p_[(step1_ - 1) % 2].data();
    T* p_new = p_[step1_ % 2].data();
    // beta is left 0 here: the kernels read it from the control block.
    const step1_args<T> a{{r_.data(), inv_d(), p_old, T(0)}, p_new, q_.data(), x, n_};
    if (fused_) {
      with_walk(op_.matrix(), kernel_, [&](auto w) {
        spmv_dot<<<walk_blocks_, block_threads, 0, s_>>>(w, a, control_.data(), partials_.data(), tickets_.data());
      });
      LA_CHECK_LAUNCH(s_);
    } else {
      update_xp<<<vector_blocks_, block_threads, 0, s_>>>(a, control_.data());
      LA_CHECK_LAUNCH(s_);
      op_.apply(p_new, q_.data(), T(1), T(0), s_);
      dot_pq<<<vector_blocks_, block_threads, 0, s_>>>(p_new, q_.data(), n_, control_.data(), partials_.data(),
                                                       tickets_.data());
      LA_CHECK_LAUNCH(s_);
    }
  }
  void queue_iteration(T* x) {
    update_r<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), q_.data(), inv_d(), n_, control_.data(), lim_,
                                                       partials_.data(), tickets_.data() + 1, history_ptr(),
                                                       history_cap);
    LA_CHECK_LAUNCH(s_);
    queue_step_1(x);
  }

  void capture(T* x) {
    if (graph_) {
      LA_CUDA_TRY(cudaGraphExecDestroy(graph_));
      graph_ = nullptr;
    }
    cudaGraph_t g = nullptr;
    // An even number of iterations, so every replay starts with the same buffer roles.
    static_assert(graph_iterations % 2 == 0, "the direction buffers alternate: capture an even count");
    const std::int64_t step1 = step1_;
    LA_CUDA_TRY(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
    try {
      for (int j = 0; j < graph_iterations; ++j) queue_iteration(x);
      step1_ = step1;
    } catch (...) {
      cudaStreamEndCapture(s_, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    LA_CUDA_TRY(cudaStreamEndCapture(s_, &g));
    const cudaError_t e = cudaGraphInstantiate(&graph_, g, 0);
    LA_CUDA_TRY_NO_THROW(cudaGraphDestroy(g));
    LA_CUDA_TRY(e);
    graph_x_ = x;
  }

  void setup_persistent() {
    int coop = 0;
    LA_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx_.device()));
    if (!coop) throw not_supported("the persistent CG path needs cooperative launch, which this device lacks");
    const bool ok = with_walk(op_.matrix(), kernel_, [&](auto w) {
      int per_sm = 0;
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent<decltype(w), T>, block_threads, 0));
      const unsigned resident = static_cast<unsigned>(per_sm) * ctx_.sm_count();
      persistent_blocks_ = std::min(resident, std::max(grid_for(w.items()), grid_for(n_)));
    });
    if (!ok)
      throw not_supported("the persistent CG path runs csr_scalar, csr_vector, ell, jds and sell; kernel '" +
                          kernel_ + "' has no fused form: use the graph or plain path");
    if (persistent_blocks_ == 0) throw not_supported("the persistent CG kernel cannot be resident on this device");
  }

  void run_persistent(std::int64_t k, vector& x) {
    with_walk(op_.matrix(), kernel_, [&](auto w) {
      T *xp = x.data(), *r = r_.data(), *p0 = p_[0].data(), *p1 = p_[1].data(), *q = q_.data();
      const T* id = inv_d();
      index_t n = n_;
      cg_control* c = control_.data();
      double* partials = partials_.data();
      double* hist = history_ptr();
      std::int64_t cap = history_cap, next = step1_ + 1;
      void* args[] = {&w, &xp, &r, &p0, &p1, &q, &id, &n, &c, &lim_, &partials, &hist, &cap, &k, &next};
      LA_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent<decltype(w), T>),
                                              persistent_blocks_, block_threads, args, 0, s_));
    });
    step1_ += k;  // when it stops early, nothing reads the buffers again
  }

  context& ctx_;
  const spmv_operator<T>& op_;
  const std::string kernel_;  // the operator's variant (compared by with_walk at each launch)
  preconditioner pc_;
  index_t n_;
  cg_path path_;
  const T* a_values_;
  count_t a_nnz_;
  std::function<std::string()> prepare_preconditioner_;  // bound to the CSR input's offset type
  cudaStream_t s_;
  device_buffer<T> r_, q_, inv_d_, d_;
  device_buffer<T> p_[2];     // the search direction, old and new (they alternate)
  std::int64_t step1_ = 0;    // step 1 launches queued so far (which buffer is which)
  device_buffer<cg_control> control_;
  device_buffer<double> scalars_, partials_, history_;
  device_buffer<unsigned long long> flags_;
  device_buffer<unsigned> tickets_;
  cg_limits lim_;
  cg_control* host_control_ = nullptr;
  unsigned vector_blocks_ = 1, walk_blocks_ = 1, persistent_blocks_ = 0;
  bool fused_ = false;
  cudaGraphExec_t graph_ = nullptr;
  const T* graph_x_ = nullptr;
};

}  // namespace cg_detail

template <typename T, typename O>
solve_result cg_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                       const cg_options& opt, const device_cg_options& dopt) {
  using namespace cg_detail;
  const auto t0 = std::chrono::steady_clock::now();
  solve_result early;
  early.method = "gpu";
  if (a.rows() != a.cols()) {
    early.message = "matrix is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + "; CG needs a square matrix";
    return early;
  }
  if (x.size() == 0 && a.rows() > 0) {
    x = device_vector<T>(ctx, a.rows());
    LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), ctx.stream()));
  }
  const spmv_stats stats = row_stats(ctx, a);
  spmv_choice choice = dopt.choice ? *dopt.choice : select_spmv(stats);
  std::optional<spmv_operator<T>> op;
  op.emplace(ctx, a, choice);

  cg_path path = dopt.path;
  std::string why_path = "forced";
  if (path == cg_path::automatic) {
    const bool fusable = with_walk(op->matrix(), choice.kernel, [](auto) {});
    if (fusable) path = cg_path::persistent, why_path = "the kernel has a fused form";
    else path = cg_path::graph, why_path = "the kernel has no fused form";
  }
  // Inside one kernel the grid is only what is resident, so a thread per short row beats a
  // group of lanes per row (bench/RESULTS.md, tuning note T9).
  if (path == cg_path::persistent && !dopt.choice && choice.kernel == "csr_vector" && stats.mean <= 16) {
    choice.kernel = "csr_scalar";
    choice.why += "; a thread per row on the persistent path";
    op.emplace(ctx, a, choice);
  }
  device_backend<T> be(ctx, *op, a, opt.precond, path, opt.record_history);
  solve_result r = cg(be, b, x, opt);
  r.method = std::string("gpu ") + ctx.properties().name + ", " + to_string(choice.fmt) + "/" + choice.kernel +
             (be.fused() ? " fused with p'Ap" : " then p'Ap") + ", " + to_string(path) + " path (" + why_path + ")" +
             (find_spmv<T>(choice.kernel).deterministic ? "" : "; the SpMV uses atomics, so runs are not bit-identical");
  // Setup is everything outside the loop: statistics, conversion, workspace, checks.
  r.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - r.iterate_seconds;
  return r;
}

#define LA_INSTANTIATE(T, O)                                                                                 \
  template solve_result cg_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,         \
                                        device_vector<T>&, const cg_options&, const device_cg_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
