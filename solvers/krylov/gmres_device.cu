// GMRES(m) and flexible GMRES(m) on the GPU (gmres.hpp has the iteration; device_solve.hpp
// the design). A cycle of m iterations, its update and its restart are one CUDA graph; an
// iteration is four kernels of la's and a registry SpMV (and ILU(0)'s application):
//   normalize  v_j = w / ||w|| into the basis, and the SpMV's input (Jacobi's M^-1 v_j, or v_j
//              for ILU(0)'s solves, or v_j itself)
//   SpMV       w = A M^-1 v_j
//   dots       h = V'w over the basis so far (FGMRES: Z_j = M^-1 v_j kept)
//   reorth     w -= V h, then h2 = V'w
//   finish     w -= V h2, ||w||, H(:, j), the rotations, g, the decision (last block)
// Classical Gram-Schmidt with one reorthogonalization reads the basis three times an
// iteration; in each pass a thread keeps the partial dots of up to 32 basis columns in
// registers over its rows, the block adds them once, and the last block adds the blocks'
// partials in block order (fixed order: bit-identical reruns). The least-squares
// problem stays on the device: rotations in the last block of `finish`, the triangle
// solved by one thread at the end of the cycle.
#include <string>

#include <la/detail/instantiate.hpp>
#include <la/error.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/detail/krylov_device.cuh>

namespace la {
namespace cg_detail {

struct gmres_control {
  cg_control c;
  int j;        // iterations done in this cycle (the basis has j + 1 vectors)
  int m;        // the cycle length
  int end;      // the cycle ended (a status, or j == m): the update is owed
  int pending;  // the new basis vector w * inv is owed (normalize)
  double inv;   // 1 / ||w|| for the vector normalize writes
};

/// The largest basis (the last block's sums and the update's coefficients are in shared memory).
constexpr int gmres_max_restart = 500;

/// v_j = w * inv into the basis column j, and the SpMV's input: inv_d .* v_j (Jacobi), or
/// v_j (none, or ILU(0) whose solves read it).
template <typename T>
__global__ void __launch_bounds__(block_threads) gmres_normalize(T* V, const T* w, T* in, const T* inv_d, index_t n,
                                                                 gmres_control* c, double* partials, unsigned* ticket) {
  if (!c->pending) return;
  const T inv = static_cast<T>(c->inv);
  T* v = V + static_cast<std::size_t>(c->j) * n;
  double none[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) {
    const T vi = w[i] * inv;
    v[i] = vi;
    in[i] = inv_d ? inv_d[i] * vi : vi;
  }
  if (last_block_sum<1>(none, partials, ticket, total)) c->pending = 0;
}

/// Columns a thread accumulates in registers at once: a GMRES(m) basis up to m = 31 is one
/// group, so each pass reads every basis value once; larger bases take ceil((j + 1) / 32)
/// groups, re-reading w (from L2) per group.
constexpr int gmres_group = 32;
/// Resident blocks an SM the passes are compiled for: at one (8 warps an SM), the passes
/// reached 46-62% of the DRAM bandwidth (ncu, convdiff2d:1024, H100: bench/RESULTS.md,
/// "Non-symmetric systems"); two keep 16 warps' loads in flight.
constexpr int gmres_pass_min_blocks = 2;

/// Adds each of acc[0..cnt) over the block into partials[(first + q) * G + blockIdx.x]
/// (fixed order: shuffles within a warp, then the warps in order).
__device__ __forceinline__ void block_partials(double (&acc)[gmres_group], int cnt, int first, double* partials) {
  __shared__ double part[gmres_group][warps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int q = 0; q < gmres_group; ++q)
    if (q < cnt) {
      const double v = walk::group_sum<32>(acc[q]);
      if (lane == 0) part[q][warp] = v;
    }
  __syncthreads();
  if (threadIdx.x < cnt) {
    double s = 0;
    for (int u = 0; u < warps; ++u) s += part[threadIdx.x][u];
    partials[static_cast<std::size_t>(first + threadIdx.x) * gridDim.x + blockIdx.x] = s;
  }
  __syncthreads();
}

/// The block's partials of V_q'w for q < cols, a group of 32 columns at a time (w re-read
/// per group, from L2).
template <typename T>
__device__ __forceinline__ void basis_dots(const T* V, const T* w, index_t n, int cols, double* partials) {
  const long long stride = detail::grid_threads();
  double acc[gmres_group];
  for (int g0 = 0; g0 < cols; g0 += gmres_group) {
    const int cnt = min(gmres_group, cols - g0);
#pragma unroll
    for (int q = 0; q < gmres_group; ++q) acc[q] = 0;
    for (long long i = detail::global_thread(); i < n; i += stride) {
      const double wi = static_cast<double>(w[i]);
#pragma unroll
      for (int q = 0; q < gmres_group; ++q)
        if (q < cnt) acc[q] += static_cast<double>(V[static_cast<std::size_t>(g0 + q) * n + i]) * wi;
    }
    block_partials(acc, cnt, g0, partials);
  }
}

/// The basis passes. Stage 0 (dots): h1 = V'w, and FGMRES's Z_j = z. Stage 1 (reorth):
/// w -= V h1, h2 = V'w. Stage 2 (finish): w -= V h2, ||w||^2, and the last block's
/// decision. Columns 0..j of V (column-major, n rows). Partials: (m + 1) x gridDim.x. Each
/// thread keeps a group's partial dots in registers over its rows; the block adds them once.
template <typename T, int Stage>
__global__ void __launch_bounds__(block_threads, Stage == 1 ? 1 : gmres_pass_min_blocks) gmres_pass(const T* V, T* w, index_t n, gmres_control* c, double* h,
                                                              const T* z, T* Zj_base, double* partials, unsigned* ticket,
                                                              cg_limits lim, double* history, std::int64_t cap) {
  if (c->c.status != cg_running) return;
  const int j = c->j, m = c->m, cols = j + 1, ld = m + 1;
  const long long stride = detail::grid_threads();
  const long long first_row = detail::global_thread();
  __shared__ double coef[gmres_group];  // the group's h1 or h2
  const double* sub = Stage == 1 ? h : h + ld;
  double acc[gmres_group];
  if (Stage == 0) {
    T* Zj = Zj_base ? Zj_base + static_cast<std::size_t>(j) * n : nullptr;
    if (Zj)
      for (long long i = first_row; i < n; i += stride) Zj[i] = z[i];
    basis_dots(V, w, n, cols, partials);
  } else if (Stage == 1 && cols <= gmres_group) {
    // One group: the row's basis values stay in registers for the update and the dots (one
    // block an SM: re-reading them for the dots instead, at two blocks an SM, took 135 us
    // where this takes 95 at convdiff2d:1024, ncu on an H100).
    if (threadIdx.x < cols) coef[threadIdx.x] = sub[threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int q = 0; q < gmres_group; ++q) acc[q] = 0;
    for (long long i = first_row; i < n; i += stride) {
      double vv[gmres_group];
      double s = static_cast<double>(w[i]);
#pragma unroll
      for (int q = 0; q < gmres_group; ++q)
        if (q < cols) {
          vv[q] = static_cast<double>(V[static_cast<std::size_t>(q) * n + i]);
          s -= coef[q] * vv[q];
        }
      const T wi = static_cast<T>(s);
      w[i] = wi;
#pragma unroll
      for (int q = 0; q < gmres_group; ++q)
        if (q < cols) acc[q] += vv[q] * static_cast<double>(wi);
    }
    block_partials(acc, cols, 0, partials);
  } else {
    // w -= V coef over every group (the update), then stage 1's dots group by group or
    // stage 2's ||w||^2.
    __shared__ double all[gmres_max_restart + 1];
    for (int q = threadIdx.x; q < cols; q += blockDim.x) all[q] = sub[q];
    __syncthreads();
    double ww = 0;
    for (long long i = first_row; i < n; i += stride) {
      double s = static_cast<double>(w[i]);
      for (int q = 0; q < cols; ++q) s -= all[q] * static_cast<double>(V[static_cast<std::size_t>(q) * n + i]);
      const T wi = static_cast<T>(s);
      w[i] = wi;
      ww += static_cast<double>(wi) * wi;
    }
    if (Stage == 2) {
#pragma unroll
      for (int q = 0; q < gmres_group; ++q) acc[q] = 0;
      acc[0] = ww;
      block_partials(acc, 1, 0, partials);
    } else {
      basis_dots(V, w, n, cols, partials);
    }
  }
  const int ndots = Stage == 2 ? 1 : cols;
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The last block sums each column's partials in block order: a warp a column, lanes
  // striding the blocks, then a fixed shuffle tree.
  __shared__ double sums[gmres_max_restart + 1];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int q = warp; q < ndots; q += warps) {
    double s = 0;
    for (unsigned b = lane; b < gridDim.x; b += 32) s += __ldcg(partials + static_cast<std::size_t>(q) * gridDim.x + b);
    s = walk::group_sum<32>(s);
    if (lane == 0) sums[q] = s;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  *ticket = 0;
  if (Stage == 0) {
    for (int q = 0; q < cols; ++q) h[q] = sums[q];
    return;
  }
  if (Stage == 1) {
    for (int q = 0; q < cols; ++q) h[ld + q] = sums[q];
    return;
  }
  // Stage 2: H(:, j) = h1 + h2 and ||w||, the rotations, g, the decision.
  double* H = h + 2 * ld;               // (m + 1) x m, column-major
  double* cs = H + static_cast<std::size_t>(ld) * m;
  double* sn = cs + m;
  double* g = sn + m;                   // m + 1
  double* col = H + static_cast<std::size_t>(j) * ld;
  double col2 = 0;  // ||A M^-1 v_j||^2, which the rotations keep
  for (int q = 0; q < cols; ++q) col[q] = h[q] + h[ld + q], col2 += col[q] * col[q];
  const double hn = sqrt(sums[0]);
  col[j + 1] = hn;
  col2 += hn * hn;
  for (int q = 0; q < j; ++q) {
    const double a = col[q], b = col[q + 1];
    col[q] = cs[q] * a + sn[q] * b;
    col[q + 1] = -sn[q] * a + cs[q] * b;
  }
  const double d = hypot(col[j], col[j + 1]);
  cs[j] = d > 0 ? col[j] / d : 1;
  sn[j] = d > 0 ? col[j + 1] / d : 0;
  col[j] = d;
  col[j + 1] = 0;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
  gmres_control& k = *c;
  k.c.iteration += 1;
  k.j = j + 1;
  krylov_decide(k.c, lim, g[j + 1] * g[j + 1]);
  if (gmres_column_singular(d, col2)) {
    gmres_singular_column(k.c, lim, g[j]);
    if (k.c.status == cg_breakdown) k.j = j;  // the update leaves the singular column out
  }
  if (history) history[(k.c.iteration - 1) % cap] = cg_relative(k.c, lim);
  k.end = k.c.status != cg_running || k.j == m;
  if (!k.end) k.pending = 1, k.inv = 1 / hn;
}

/// End of a cycle: y from the triangle of H against g (one thread), into h's first k slots.
__global__ void gmres_solve_small(gmres_control* c, double* h) {
  if (!c->end || threadIdx.x != 0) return;
  const int k = c->j, m = c->m, ld = m + 1;
  const double* H = h + 2 * ld;
  const double* g = H + static_cast<std::size_t>(ld) * m + 2 * m;
  double* y = h;
  for (int i = k; i-- > 0;) {
    double s = g[i];
    for (int l = i + 1; l < k; ++l) s -= H[i + static_cast<std::size_t>(l) * ld] * y[l];
    const double dii = H[i + static_cast<std::size_t>(i) * ld];
    y[i] = dii != 0 ? s / dii : 0;
  }
}

/// u = basis y (V, or FGMRES's Z); then x += inv_d .* u (none, Jacobi, FGMRES: inv_d null
/// adds u) or, for ILU(0), u is stored for its solve and gmres_add adds the result.
template <typename T>
__global__ void __launch_bounds__(block_threads) gmres_combine(const T* basis, const double* y, const gmres_control* c,
                                                               index_t n, const T* inv_d, T* x, T* u) {
  if (!c->end) return;
  const int k = c->j;
  LA_GRID_STRIDE(i, n) {
    double s = 0;
    for (int q = 0; q < k; ++q) s += y[q] * static_cast<double>(basis[static_cast<std::size_t>(q) * n + i]);
    const T ui = static_cast<T>(s);
    if (u) u[i] = ui;
    else x[i] += inv_d ? inv_d[i] * ui : ui;
  }
}
template <typename T>
__global__ void __launch_bounds__(block_threads) gmres_add(const T* z, const gmres_control* c, index_t n, T* x) {
  if (!c->end) return;
  LA_GRID_STRIDE(i, n) x[i] += z[i];
}

/// After r = b - A x (in w): ||r||, the decision (the start's, or the restart's on the
/// explicit residual), g = ||r|| e_1, v_0 owed. A restart runs only after a cycle that ended
/// running (j == m); otherwise it clears `end`.
template <typename T>
__global__ void __launch_bounds__(block_threads) gmres_restart(const T* w, index_t n, gmres_control* c, double* h,
                                                               cg_limits lim, double* partials, unsigned* ticket,
                                                               bool first) {
  if (!first && !c->end) return;
  const bool go = first || c->c.status == cg_running;
  double v[1] = {0}, total[1];
  if (go) LA_GRID_STRIDE(i, n) v[0] += static_cast<double>(w[i]) * w[i];
  if (!last_block_sum<1>(v, partials, ticket, total)) return;
  gmres_control& k = *c;
  k.end = 0;
  if (!go) return;
  if (first) krylov_decide_start(k.c, lim, total[0]);
  else krylov_decide(k.c, lim, total[0]);
  k.j = 0;
  if (k.c.status != cg_running) return;
  const int ld = k.m + 1;
  double* g = h + 2 * ld + static_cast<std::size_t>(ld) * k.m + 2 * k.m;
  for (int q = 0; q <= k.m; ++q) g[q] = 0;
  g[0] = sqrt(total[0]);
  k.pending = 1;
  k.inv = 1 / g[0];
}

template <typename T>
class gmres_backend : public krylov_device_base<T> {
  using base = krylov_device_base<T>;
  using base::s_, base::n_, base::ctx_, base::op_, base::pre_, base::lim_, base::vector_blocks_, base::partials_,
      base::tickets_;

 public:
  using typename base::vector;
  template <typename O>
  gmres_backend(context& ctx, const spmv_operator<T>& op, const device_csr<T, O>& a, preconditioner pc,
                const precond_options& popt, bool history, int m, bool flexible, bool graph)
      : base(ctx, op, a, pc, popt, history), m_(m), flexible_(flexible), graph_on_(graph) {
    const std::size_t n = static_cast<std::size_t>(n_);
    V_ = ctx.allocate<T>(n * (m + 1));
    if (flexible) Z_ = ctx.allocate<T>(n * m);
    w_ = ctx.allocate<T>(n), in_ = ctx.allocate<T>(n);
    if (built_apart(pc)) z_ = ctx.allocate<T>(n), u_ = ctx.allocate<T>(n);  // ILU(0)'s output, GMRES's V y
    // h1, h2 (m + 1 each), H ((m + 1) x m), cs, sn (m each), g (m + 1)
    small_ = ctx.allocate<double>(static_cast<std::size_t>(m + 1) * (m + 3) + 2 * m + 1);
    // The passes run the blocks that are resident at once (their registers hold a group of
    // 32 partial dots): every block's loads in flight, and few partials for the last block.
    auto resident = [&](auto kernel) {
      int per_sm = 1;
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
      return std::max(1u, std::min(vector_blocks_, static_cast<unsigned>(std::max(per_sm, 1) * ctx.sm_count())));
    };
    pass_blocks_ = resident(gmres_pass<T, 0>);
    reorth_blocks_ = resident(gmres_pass<T, 1>);
    partials_ = ctx.allocate<double>(std::max<std::size_t>(partials_.size(), static_cast<std::size_t>(m + 1) * std::max(pass_blocks_, reorth_blocks_)));
    control_ = ctx.allocate<gmres_control>(1);
  }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    b_ = b.data();
    gmres_control init{};
    init.m = m_;
    LA_CUDA_TRY(cudaMemcpyAsync(control_.data(), &init, sizeof init, cudaMemcpyHostToDevice, s_));
    LA_CUDA_TRY(cudaMemsetAsync(small_.data(), 0, small_.size() * sizeof(double), s_));
    this->residual(b_, x.data(), w_.data());
    gmres_restart<<<vector_blocks_, block_threads, 0, s_>>>(w_.data(), n_, control_.data(), small_.data(), lim_,
                                                            partials_.data(), tickets_.data(), true);
    LA_CHECK_LAUNCH(s_);
    if (graph_on_) capture(x.data());
  }
  void iterate(std::int64_t k, vector& x) {
    const std::int64_t cycles = (k + m_ - 1) / m_;
    if (!graph_on_) {
      for (std::int64_t j = 0; j < cycles; ++j) queue_cycle(x.data());
      return;
    }
    if (!this->graph_ || this->graph_x_ != x.data()) capture(x.data());
    for (std::int64_t j = 0; j < cycles; ++j) LA_CUDA_TRY(cudaGraphLaunch(this->graph_, s_));
  }
  const cg_control& report() { return this->read_control(control_.data()); }

 private:
  void capture(T* x) {
    capture_graph(s_, this->graph_, [&] { queue_cycle(x); });
    this->graph_x_ = x;
  }
  void queue_cycle(T* x) {
    const bool apart = pre_.has_value();
    const T* id = this->inv_d();
    T* spmv_in = apart ? z_.data() : in_.data();  // ILU(0): in_ holds v_j, z_ its solve
    double* hist = this->history_ptr();
    const std::int64_t cap = base::history_cap;
    for (int j = 0; j < m_; ++j) {
      gmres_normalize<<<vector_blocks_, block_threads, 0, s_>>>(V_.data(), w_.data(), in_.data(), apart ? nullptr : id,
                                                                n_, control_.data(), partials_.data(), tickets_.data());
      LA_CHECK_LAUNCH(s_);
      if (apart) pre_->apply(in_.data(), z_.data(), s_);
      op_.apply(spmv_in, w_.data(), T(1), T(0), s_);
      gmres_pass<T, 0><<<pass_blocks_, block_threads, 0, s_>>>(V_.data(), w_.data(), n_, control_.data(),
                                                                 small_.data(), spmv_in, flexible_ ? Z_.data() : nullptr,
                                                                 partials_.data(), tickets_.data(), lim_, hist, cap);
      LA_CHECK_LAUNCH(s_);
      gmres_pass<T, 1><<<reorth_blocks_, block_threads, 0, s_>>>(V_.data(), w_.data(), n_, control_.data(),
                                                                 small_.data(), nullptr, nullptr, partials_.data(),
                                                                 tickets_.data(), lim_, hist, cap);
      LA_CHECK_LAUNCH(s_);
      gmres_pass<T, 2><<<pass_blocks_, block_threads, 0, s_>>>(V_.data(), w_.data(), n_, control_.data(),
                                                                 small_.data(), nullptr, nullptr, partials_.data(),
                                                                 tickets_.data(), lim_, hist, cap);
      LA_CHECK_LAUNCH(s_);
    }
    gmres_solve_small<<<1, 32, 0, s_>>>(control_.data(), small_.data());
    LA_CHECK_LAUNCH(s_);
    const T* basis = flexible_ ? Z_.data() : V_.data();
    const bool via_solve = apart && !flexible_;  // GMRES with ILU(0): x += M^-1 (V y)
    gmres_combine<<<vector_blocks_, block_threads, 0, s_>>>(basis, small_.data(), control_.data(), n_,
                                                            flexible_ ? nullptr : id, x, via_solve ? u_.data() : nullptr);
    LA_CHECK_LAUNCH(s_);
    if (via_solve) {
      pre_->apply(u_.data(), z_.data(), s_);
      gmres_add<<<vector_blocks_, block_threads, 0, s_>>>(z_.data(), control_.data(), n_, x);
      LA_CHECK_LAUNCH(s_);
    }
    this->residual(b_, x, w_.data());
    gmres_restart<<<vector_blocks_, block_threads, 0, s_>>>(w_.data(), n_, control_.data(), small_.data(), lim_,
                                                            partials_.data(), tickets_.data(), false);
    LA_CHECK_LAUNCH(s_);
  }

  int m_;
  bool flexible_, graph_on_;
  unsigned pass_blocks_ = 1, reorth_blocks_ = 1;  // the dots' and finish's grid; the reorthogonalization's
  const T* b_ = nullptr;
  device_buffer<T> V_, Z_, w_, in_, z_, u_;
  device_buffer<double> small_;
  device_buffer<gmres_control> control_;
};

}  // namespace cg_detail

template <typename T, typename O>
solve_result gmres_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          const cg_options& opt, const device_cg_options& dopt, bool flexible) {
  const krylov_method method = flexible ? krylov_method::fgmres : krylov_method::gmres;
  const std::string refusal =
      opt.restart < 1 || opt.restart > cg_detail::gmres_max_restart
          ? "restart = " + std::to_string(opt.restart) + ": the GPU GMRES basis size must be 1 to " +
                std::to_string(cg_detail::gmres_max_restart)
          : std::string();
  return cg_detail::run_device_method(
      ctx, a, b, x, opt, dopt, method, "GMRES", std::string(to_string(method)) + "(" + std::to_string(opt.restart) + ")",
      refusal, [&](const spmv_operator<T>& op, bool graph) {
        return cg_detail::gmres_backend<T>(ctx, op, a, opt.precond, opt.precond_opt, opt.record_history, opt.restart,
                                           flexible, graph);
      });
}

#define LA_INSTANTIATE(T, O)                                                                                     \
  template solve_result gmres_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,          \
                                           device_vector<T>&, const cg_options&, const device_cg_options&, bool);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
