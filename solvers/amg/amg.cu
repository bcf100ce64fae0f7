// Smoothed-aggregation AMG on the GPU: the whole setup on the device, mirroring the host
// oracle (hierarchy.hpp) phase by phase, and the cycle as kernels only (capturable).
//
// Setup, a level at a time: the inverse diagonal and Gershgorin's bound (one kernel), the
// power estimate of lambda_max(D^-1 A) (a fused product and fixed-order dots a step); the
// strength graph (count, scan, fill); the distance-2 MIS in rounds (three kernels a round,
// one flag read), the joins and the numbering by a scan; the tentative prolongator (nodes
// sorted by aggregate, stably, so each aggregate's norm is summed in node order); S = I -
// omega D^-1 A on A's pattern and P = S T, R = P^T (the device CSR->CSC conversion), A P
// and R (A P) by la's SpGEMM; the coarsest operator inverted densely on the device (one
// block, Gauss-Jordan with partial pivoting in double). The aggregates and the SpGEMM plans
// are kept, so update_values reruns only the numeric phases.
//
// The cycle: a level's Chebyshev steps, residual, restriction and correction are each one
// product kernel with its element-wise work fused in (sub-warp rows, fixed shuffle sums);
// the coarsest level is one dense product. No atomics in any value, so reruns are
// bit-identical.
#include <cub/device/device_radix_sort.cuh>

#include <la/kernels/spgemm/spgemm.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/detail/cg_reduce.cuh>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail {
namespace {

using W = count_t;  // the offsets of every level below the finest, and of P and R
using clock = std::chrono::steady_clock;
double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

// ---- products with fused element-wise work ---------------------------------------------------

/// s = sum_k a_ik x_k over G lanes a row (a fixed shuffle tree), then op(i, s) in lane 0.
template <int G, typename T, typename O, typename X, typename Op>
__global__ void __launch_bounds__(block_threads) row_product(csr_view<const T, O> a, const X* x, Op op) {
  const long long t = detail::global_thread();
  const long long i = t / G;
  const int lane = static_cast<int>(t % G);
  const bool live = i < a.rows;
  double s = 0;
  if (live)
    for (O k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += G)
      s += static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_idx[k]]);
  for (int o = G / 2; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o, G);
  if (live && lane == 0) op(static_cast<index_t>(i), s);
}

template <typename T>
struct op_assign {  // y = A x
  T* y;
  __device__ void operator()(index_t i, double s) const { y[i] = static_cast<T>(s); }
};
template <typename T>
struct op_add {  // x += A e
  T* x;
  __device__ void operator()(index_t i, double s) const { x[i] = static_cast<T>(x[i] + s); }
};
template <typename T>
struct op_residual {  // r = b - A x
  const T* b;
  T* r;
  __device__ void operator()(index_t i, double s) const { r[i] = static_cast<T>(b[i] - s); }
};
template <typename T>
struct op_cheb_start {  // r = b - A x, d = D^-1 r / theta (x += d is left to the next step: x is being read)
  const T* b;
  const T* dinv;
  T *r, *d;
  double inv_theta;
  __device__ void operator()(index_t i, double s) const {
    const double ri = b[i] - s;
    r[i] = static_cast<T>(ri), d[i] = static_cast<T>(static_cast<double>(dinv[i]) * ri * inv_theta);
  }
};
template <typename T>
struct op_cheb_step {  // r -= A d, e = c1 d + c2 D^-1 r, x += e (and the start's pending d): the
                       // product reads d, so e goes to its own buffer (the next step's d)
  const T* dinv;
  const T* d;
  T *r, *e, *x;
  double c1, c2;
  bool pending;
  __device__ void operator()(index_t i, double s) const {
    const double ri = r[i] - s, ei = c1 * d[i] + c2 * static_cast<double>(dinv[i]) * ri;
    r[i] = static_cast<T>(ri), e[i] = static_cast<T>(ei);
    x[i] = static_cast<T>(x[i] + (pending ? static_cast<double>(d[i]) : 0.0) + ei);
  }
};
template <typename T>
struct op_power {  // w = D^-1 A v (double)
  const T* dinv;
  double* w;
  __device__ void operator()(index_t i, double s) const { w[i] = static_cast<double>(dinv[i]) * s; }
};

/// The Chebyshev step from x = 0: r = b, d = D^-1 b / theta, x = d.
template <typename T>
__global__ void cheb_zero_start(const T* b, const T* dinv, T* r, T* d, T* x, index_t n, double inv_theta) {
  LA_GRID_STRIDE(i, n) {
    const double di = static_cast<double>(dinv[i]) * b[i] * inv_theta;
    r[i] = b[i], d[i] = static_cast<T>(di), x[i] = static_cast<T>(di);
  }
}

template <typename T>
__global__ void add_into(T* x, const T* d, index_t n) {
  LA_GRID_STRIDE(i, n) x[i] = static_cast<T>(x[i] + static_cast<double>(d[i]));
}

/// Lanes a row for a matrix with this mean row length.
int lanes_for(double mean) { return mean <= 8 ? 4 : mean <= 24 ? 8 : 32; }

template <typename T, typename O, typename X, typename Op>
void launch_product(int lanes, csr_view<const T, O> a, const X* x, Op op, cudaStream_t s) {
  if (a.rows == 0) return;
  const long long threads = static_cast<long long>(a.rows) * lanes;
  switch (lanes) {
    case 4: row_product<4><<<grid_for(threads), block_threads, 0, s>>>(a, x, op); break;
    case 8: row_product<8><<<grid_for(threads), block_threads, 0, s>>>(a, x, op); break;
    default: row_product<32><<<grid_for(threads), block_threads, 0, s>>>(a, x, op); break;
  }
  LA_CUDA_TRY(cudaGetLastError());
}

// ---- setup kernels ---------------------------------------------------------------------------

/// dinv = 1 / a_ii, dabs = |a_ii|, the first row with a zero or missing diagonal into *bad,
/// and Gershgorin's max_i sum_j |a_ij| / |a_ii| into *gersh (a max of non-negative doubles
/// as their bits: the same whatever the order).
template <typename T, typename O>
__global__ void diagonal_info(csr_view<const T, O> a, T* dinv, double* dabs, unsigned long long* bad,
                              unsigned long long* gersh) {
  LA_GRID_STRIDE(i, a.rows) {
    double d = 0, sum = 0;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const double v = a.values[k];
      sum += fabs(v);
      if (a.col_idx[k] == i) d = v;
    }
    const double inv = 1 / d;
    if (d == 0 || !isfinite(inv)) atomicMin(bad, static_cast<unsigned long long>(i));
    dinv[i] = static_cast<T>(d != 0 ? inv : 0);
    dabs[i] = fabs(d);
    if (d != 0) atomicMax(gersh, static_cast<unsigned long long>(__double_as_longlong(sum * fabs(inv))));
  }
}

__global__ void hash_start(double* v, index_t n) {
  LA_GRID_STRIDE(i, n) v[i] = amg::node_hash(static_cast<index_t>(i)) / 2147483648.0 - 1;
}

/// partials[j * gridDim + block] of v.v, v.w and w.w (fixed order), then finish_dots.
__global__ void __launch_bounds__(block_threads) dots3(const double* v, const double* w, index_t n, double* partials) {
  double s[3] = {0, 0, 0};
  LA_GRID_STRIDE(i, n) s[0] += v[i] * v[i], s[1] += v[i] * w[i], s[2] += w[i] * w[i];
  cg_detail::block_sum(s);
  if (threadIdx.x == 0)
    for (int j = 0; j < 3; ++j) partials[j * gridDim.x + blockIdx.x] = s[j];
}
__global__ void __launch_bounds__(block_threads) finish_dots(const double* partials, int count, double* out) {
  double t[3];
  cg_detail::sum_partials(partials, count, t);
  if (threadIdx.x == 0)
    for (int j = 0; j < 3; ++j) out[j] = t[j];
}
__global__ void scale_into(const double* w, double* v, index_t n, double s) {
  LA_GRID_STRIDE(i, n) v[i] = w[i] * s;
}

/// Strong neighbours: j != i with |a_ij| >= theta sqrt(|a_ii a_jj|). Counts, then the fill.
template <typename T, typename O>
__global__ void count_strong(csr_view<const T, O> a, const double* dabs, double theta, W* counts) {
  LA_GRID_STRIDE(i, a.rows) {
    W c = 0;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      c += j != i && fabs(static_cast<double>(a.values[k])) >= theta * sqrt(dabs[i] * dabs[j]);
    }
    counts[i + 1] = c;
  }
}
template <typename T, typename O>
__global__ void fill_strong(csr_view<const T, O> a, const double* dabs, double theta, const W* gp, index_t* gi) {
  LA_GRID_STRIDE(i, a.rows) {
    W at = gp[i];
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      if (j != i && fabs(static_cast<double>(a.values[k])) >= theta * sqrt(dabs[i] * dabs[j])) gi[at++] = j;
    }
  }
}

struct graph_view {
  index_t n;
  const W* ptr;
  const index_t* idx;
};

__device__ __forceinline__ std::uint64_t key_of(int state, index_t i) { return amg::node_key(state, i); }

/// One MIS round (aggregation.hpp's): k1 = the largest key within distance 1, k2 within 2,
/// then the states.
__global__ void mis_k1(graph_view g, const int* state, std::uint64_t* k1) {
  LA_GRID_STRIDE(i, g.n) {
    std::uint64_t m = key_of(state[i], static_cast<index_t>(i));
    for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = max(m, key_of(state[g.idx[k]], g.idx[k]));
    k1[i] = m;
  }
}
__global__ void mis_k2(graph_view g, const std::uint64_t* k1, std::uint64_t* k2, int distance) {
  LA_GRID_STRIDE(i, g.n) {
    std::uint64_t m = k1[i];
    if (distance > 1)
      for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = max(m, k1[g.idx[k]]);
    k2[i] = m;
  }
}
__global__ void mis_states(index_t n, const std::uint64_t* k2, int* state, int* undecided) {
  LA_GRID_STRIDE(i, n) {
    if (state[i] != 1) continue;
    if (k2[i] == key_of(1, static_cast<index_t>(i))) state[i] = 2;
    else if ((k2[i] >> 62) == 2) state[i] = 0;
    else *undecided = 1;
  }
}
/// Each node's root: a root itself; else the root of largest key among its neighbours.
__global__ void join_roots(graph_view g, const int* state, index_t* first) {
  LA_GRID_STRIDE(i, g.n) {
    if (state[i] == 2) {
      first[i] = static_cast<index_t>(i);
      continue;
    }
    std::uint64_t best = 0;
    index_t f = -1;
    for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
      const index_t j = g.idx[k];
      if (state[j] == 2 && key_of(2, j) > best) best = key_of(2, j), f = j;
    }
    first[i] = f;
  }
}
/// Else the root of its neighbour of largest key that has one; else itself. roots[i + 1] =
/// whether i is a root (for the numbering scan).
__global__ void join_neighbours(graph_view g, const index_t* first, index_t* root, index_t* is_root) {
  LA_GRID_STRIDE(i, g.n) {
    index_t r = first[i];
    if (r < 0) {
      std::uint64_t best = 0;
      for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
        const index_t j = g.idx[k];
        if (first[j] >= 0 && key_of(1, j) > best) best = key_of(1, j), r = first[j];
      }
      if (r < 0) r = static_cast<index_t>(i);
    }
    root[i] = r;
    is_root[i + 1] = r == i;
  }
}
__global__ void number_aggregates(index_t n, const index_t* root, const index_t* id, index_t* of) {
  LA_GRID_STRIDE(i, n) of[i] = id[root[i]];
}
__global__ void iota_kernel(index_t* v, index_t n) {
  LA_GRID_STRIDE(i, n) v[i] = static_cast<index_t>(i);
}
__global__ void fill_value(double* v, index_t n, double x) {
  LA_GRID_STRIDE(i, n) v[i] = x;
}
template <typename O>
__global__ void widen_offsets(const O* in, W* out, long long n) {
  LA_GRID_STRIDE(i, n) out[i] = in[i];
}
/// An order-free fingerprint of a pattern (a sum of a hash per entry, in 64-bit integers).
template <typename T, typename O>
__global__ void pattern_fingerprint(csr_view<const T, O> a, unsigned long long* out) {
  LA_GRID_STRIDE(i, a.rows) {
    unsigned long long h = 0;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      h += (static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull) ^ (static_cast<unsigned long long>(a.col_idx[k]) * 0xC2B2AE3D27D4EB4Full + k);
    if (h) atomicAdd(out, h);
  }
}

/// Aggregate starts in the sorted node list; the norms of B over each aggregate (node order).
__global__ void aggregate_starts(index_t n, const index_t* sorted_of, W* start, index_t count) {
  LA_GRID_STRIDE(p, n) {
    if (p == 0 || sorted_of[p] != sorted_of[p - 1]) start[sorted_of[p]] = p;
    if (p == 0) start[count] = n;
  }
}
__global__ void aggregate_norms(index_t count, const W* start, const index_t* nodes, const double* b, double* norm) {
  LA_GRID_STRIDE(a, count) {
    double s = 0;
    for (W p = start[a]; p < start[a + 1]; ++p) s += b[nodes[p]] * b[nodes[p]];
    norm[a] = sqrt(s);
  }
}
/// T: one entry a row, (of_i, B_i / norm_of_i).
template <typename T>
__global__ void tentative(index_t n, const index_t* of, const double* b, const double* norm, W* ptr, index_t* idx,
                          T* val) {
  LA_GRID_STRIDE(i, n) {
    ptr[i + 1] = i + 1;
    if (i == 0) ptr[0] = 0;
    idx[i] = of[i];
    val[i] = static_cast<T>(norm[of[i]] > 0 ? b[i] / norm[of[i]] : 0.0);
  }
}
/// S = I - omega D^-1 A on A's pattern.
template <typename T, typename O>
__global__ void smoother_operator(csr_view<const T, O> a, const T* dinv, double omega, T* s) {
  LA_GRID_STRIDE(i, a.rows)
  for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
    s[k] = static_cast<T>((a.col_idx[k] == i ? 1.0 : 0.0) - omega * static_cast<double>(dinv[i]) * a.values[k]);
}

/// The n x n operator densely, as [A | I] (n x 2n, double), for Gauss-Jordan.
template <typename T>
__global__ void densify(csr_view<const T, W> a, double* m) {
  const index_t n = a.rows;
  LA_GRID_STRIDE(e, static_cast<long long>(n) * 2 * n) m[e] = (e % (2 * n)) == n + e / (2 * n) ? 1.0 : 0.0;
}
template <typename T>
__global__ void scatter_dense(csr_view<const T, W> a, double* m) {
  const index_t n = a.rows;
  LA_GRID_STRIDE(i, n)
  for (W k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) m[i * 2 * n + a.col_idx[k]] = a.values[k];
}
/// Gauss-Jordan with partial pivoting on [A | I] in one block (1024 threads): [I | A^-1].
/// *singular = 1 when a pivot is zero. The pivot is the first row of largest magnitude.
__global__ void __launch_bounds__(1024) gauss_jordan(double* m, index_t n, int* singular) {
  __shared__ double best[1024];
  __shared__ index_t where[1024];
  __shared__ double factor_of_c;
  extern __shared__ double col[];  // column c before the elimination, n entries
  const index_t w = 2 * n;
  for (index_t c = 0; c < n; ++c) {
    double b = -1;
    index_t at = n;
    for (index_t r = c + threadIdx.x; r < n; r += blockDim.x)
      if (fabs(m[r * w + c]) > b) b = fabs(m[r * w + c]), at = r;
    best[threadIdx.x] = b, where[threadIdx.x] = at;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o /= 2) {
      if (threadIdx.x < o) {
        const double ob = best[threadIdx.x + o];
        const index_t oa = where[threadIdx.x + o];
        if (ob > best[threadIdx.x] || (ob == best[threadIdx.x] && oa < where[threadIdx.x]))
          best[threadIdx.x] = ob, where[threadIdx.x] = oa;
      }
      __syncthreads();
    }
    const index_t p = where[0];
    if (!(best[0] > 0) || !isfinite(best[0])) {
      if (threadIdx.x == 0) *singular = 1;
      return;
    }
    if (p != c)
      for (index_t k = threadIdx.x; k < w; k += blockDim.x) {
        const double t = m[c * w + k];
        m[c * w + k] = m[p * w + k], m[p * w + k] = t;
      }
    __syncthreads();
    if (threadIdx.x == 0) factor_of_c = 1 / m[c * w + c];
    __syncthreads();
    for (index_t k = threadIdx.x; k < w; k += blockDim.x) m[c * w + k] *= factor_of_c;
    for (index_t r = threadIdx.x; r < n; r += blockDim.x) col[r] = m[r * w + c];
    __syncthreads();
    for (long long e = threadIdx.x; e < static_cast<long long>(n) * w; e += blockDim.x) {
      const index_t r = static_cast<index_t>(e / w), k = static_cast<index_t>(e % w);
      if (r != c && k >= c) m[e] -= col[r] * m[c * w + k];
    }
    __syncthreads();
  }
}
template <typename T>
__global__ void take_inverse(const double* m, index_t n, T* inv) {
  LA_GRID_STRIDE(e, static_cast<long long>(n) * n) inv[e] = static_cast<T>(m[(e / n) * 2 * n + n + e % n]);
}
/// x = inv b, a warp a row.
template <typename T>
__global__ void __launch_bounds__(block_threads) dense_solve(const T* inv, index_t n, const T* b, T* x) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(i, n) {
    double s = 0;
    for (index_t k = lane; k < n; k += 32) s += static_cast<double>(inv[i * n + k]) * b[k];
    s = warp_total(s);
    if (lane == 0) x[i] = static_cast<T>(s);
  }
}

/// A device matrix over the given arrays, moved in.
template <typename T>
device_csr<T, W> csr_of(index_t rows, index_t cols, device_buffer<W> p, device_buffer<index_t> i, device_buffer<T> v) {
  return device_csr<T, W>(detail::trusted, rows, cols, std::move(p), std::move(i), std::move(v));
}

template <typename T, typename O>
device_buffer<O> copy_of(context& ctx, const device_buffer<O>& b) {
  auto c = ctx.allocate<O>(b.size());
  if (b.size()) LA_CUDA_TRY(cudaMemcpyAsync(c.data(), b.data(), b.size() * sizeof(O), cudaMemcpyDeviceToDevice, ctx.stream()));
  return c;
}

/// The largest coarsest level solved densely; a larger one (coarsening stalled, or
/// max_levels reached) is smoothed instead (hierarchy.hpp's rule).
template <typename T, typename O>
class amg_impl final : public device_preconditioner<T>::impl {
 public:
  amg_impl(context& ctx, const device_csr<T, O>& a, const amg_options& opt) : ctx_(ctx), opt_(opt), a0_(&a) {
    LA_EXPECTS(opt.smoother_degree >= 1 && opt.max_levels >= 1 && opt.coarse_size >= 1 && opt.strength >= 0,
               "amg: the smoother degree, levels and coarse size must be positive and the strength non-negative");
    fingerprint_ = fingerprint(a);
    levels_.emplace_back();
    levels_[0].n = a.rows();
    levels_[0].near_null = ctx.allocate<double>(static_cast<std::size_t>(a.rows()));
    fill_ones(levels_[0].near_null.data(), a.rows());
    for (;;) {
      const std::size_t l = levels_.size() - 1;
      prepare(l);
      const index_t n = levels_[l].n;
      if (n <= opt.coarse_size || static_cast<int>(levels_.size()) >= opt.max_levels) break;
      const auto t0 = clock::now();
      const double theta = opt.strength * std::pow(0.5, static_cast<double>(l));
      const index_t count = aggregate(l, theta);
      sec_.aggregation += since(t0);
      if (count == 0 || count > n * 9 / 10) break;
      levels_.emplace_back();
      levels_[l + 1].n = count;
      galerkin(l, true);
    }
    factor_coarse();
    allocate_vectors();
    describe();
  }

  void update(const device_csr<T, O>& a) {
    LA_EXPECTS(a.rows() == a0_->rows() && a.cols() == a0_->cols() && a.nnz() == a0_->nnz() && fingerprint(a) == fingerprint_,
               "amg: update_values needs the pattern the hierarchy was built on; build a new one for a new pattern");
    a0_ = &a;
    sec_ = {};
    const auto t0 = clock::now();
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      prepare(l);
      if (l + 1 < levels_.size()) galerkin(l, false);
    }
    factor_coarse();
    describe();
    this->rep.setup_seconds = since(t0);
  }

  void apply(const T* r, T* z, cudaStream_t s) const override { cycle(0, r, z, true, s); }

  /// The hierarchy's shape, for tests and reports.
  index_t levels() const { return static_cast<index_t>(levels_.size()); }
  index_t rows(index_t l) const { return levels_[l].n; }
  double operator_complexity() const { return opc_; }

 private:
  struct level {
    index_t n = 0;
    device_csr<T, W> a;  // below the finest
    device_csr<T, W> p, r;
    device_buffer<T> dinv;
    device_buffer<double> dabs, near_null;
    device_buffer<index_t> of;  // the aggregates of this level's nodes
    index_t count = 0;
    double lambda = 1;
    std::optional<spgemm_plan<T, O, W, W>> plan_sp0, plan_ap0;  // the finest level's S T and A P
    std::optional<spgemm_plan<T, W, W, W>> plan_sp, plan_ap;     // the others'
    std::optional<spgemm_plan<T, W, W, W>> plan_rap;
    device_csr<T, W> t;  // the tentative prolongator
    mutable device_buffer<T> b, x, res, d, d2;
    int lanes_a = 4, lanes_p = 4, lanes_r = 4;
  };

  unsigned long long fingerprint(const device_csr<T, O>& a) {
    auto out = ctx_.allocate<unsigned long long>(1);
    LA_CUDA_TRY(cudaMemsetAsync(out.data(), 0, sizeof(unsigned long long), ctx_.stream()));
    pattern_fingerprint<<<grid_for(a.rows()), block_threads, 0, ctx_.stream()>>>(a.view(), out.data());
    LA_CUDA_TRY(cudaGetLastError());
    unsigned long long h = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&h, out.data(), sizeof h, cudaMemcpyDeviceToHost, ctx_.stream()));
    ctx_.synchronize();
    return h;
  }

  template <typename F>
  decltype(auto) with_operator(std::size_t l, F&& f) const {
    if (l == 0) return f(*a0_);
    return f(levels_[l].a);
  }

  void fill_ones(double* v, index_t n) {
    fill_value<<<grid_for(n), block_threads, 0, ctx_.stream()>>>(v, n, 1.0);
    LA_CUDA_TRY(cudaGetLastError());
  }

  /// Level l's inverse diagonal, |diagonal| and lambda bound.
  void prepare(std::size_t l) {
    level& f = levels_[l];
    cudaStream_t s = ctx_.stream();
    const index_t n = f.n;
    if (f.dinv.size() != static_cast<std::size_t>(n)) {
      f.dinv = ctx_.allocate<T>(static_cast<std::size_t>(n));
      f.dabs = ctx_.allocate<double>(static_cast<std::size_t>(n));
    }
    auto flags = new_flag(ctx_);
    auto gersh = ctx_.allocate<unsigned long long>(1);
    LA_CUDA_TRY(cudaMemsetAsync(gersh.data(), 0, sizeof(unsigned long long), s));
    with_operator(l, [&](const auto& a) {
      diagonal_info<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dinv.data(), f.dabs.data(), flags.data(),
                                                          gersh.data());
      LA_CUDA_TRY(cudaGetLastError());
      f.lanes_a = lanes_for(n ? double(a.nnz()) / n : 1);
    });
    const unsigned long long bad = read_flag(ctx_, flags);
    LA_EXPECTS(bad == no_row, amg::amg_diagonal_message(l, static_cast<long long>(bad)));
    unsigned long long gbits = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&gbits, gersh.data(), sizeof gbits, cudaMemcpyDeviceToHost, s));
    ctx_.synchronize();
    double g;
    std::memcpy(&g, &gbits, sizeof g);
    const auto t0 = clock::now();
    f.lambda = g;
    if (opt_.power_iterations > 0 && n > 0) f.lambda = std::min(g, 1.1 * power_lambda(l));
    sec_.smoother += since(t0);
  }

  double power_lambda(std::size_t l) {
    level& f = levels_[l];
    const index_t n = f.n;
    cudaStream_t s = ctx_.stream();
    auto v = ctx_.allocate<double>(static_cast<std::size_t>(n)), w = ctx_.allocate<double>(static_cast<std::size_t>(n));
    const unsigned blocks = std::min<unsigned>(grid_for(n), 1024);
    auto partials = ctx_.allocate<double>(3 * blocks);
    auto sums = ctx_.allocate<double>(3);
    hash_start<<<grid_for(n), block_threads, 0, s>>>(v.data(), n);
    LA_CUDA_TRY(cudaGetLastError());
    double lambda = 0, h[3];
    for (int step = 0; step < opt_.power_iterations; ++step) {
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), v.data(), op_power<T>{f.dinv.data(), w.data()}, s);
      });
      dots3<<<blocks, block_threads, 0, s>>>(v.data(), w.data(), n, partials.data());
      finish_dots<<<1, block_threads, 0, s>>>(partials.data(), static_cast<int>(blocks), sums.data());
      LA_CUDA_TRY(cudaGetLastError());
      LA_CUDA_TRY(cudaMemcpyAsync(h, sums.data(), sizeof h, cudaMemcpyDeviceToHost, s));
      ctx_.synchronize();
      lambda = h[1] / h[0];
      scale_into<<<grid_for(n), block_threads, 0, s>>>(w.data(), v.data(), n, h[2] > 0 ? 1 / std::sqrt(h[2]) : 0.0);
      LA_CUDA_TRY(cudaGetLastError());
    }
    return lambda;
  }

  /// Level l's aggregates (f.of, f.count) from its strength graph.
  index_t aggregate(std::size_t l, double theta) {
    level& f = levels_[l];
    const index_t n = f.n;
    cudaStream_t s = ctx_.stream();
    auto gp = ctx_.allocate<W>(static_cast<std::size_t>(n) + 1);
    with_operator(l, [&](const auto& a) {
      count_strong<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dabs.data(), theta, gp.data());
    });
    LA_CUDA_TRY(cudaGetLastError());
    const W edges = detail::scan_counts(ctx_, gp.data(), n);
    auto gi = ctx_.allocate<index_t>(static_cast<std::size_t>(edges));
    with_operator(l, [&](const auto& a) {
      fill_strong<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dabs.data(), theta, gp.data(), gi.data());
    });
    LA_CUDA_TRY(cudaGetLastError());
    const graph_view g{n, gp.data(), gi.data()};
    auto state = ctx_.allocate<int>(static_cast<std::size_t>(n));
    auto k1 = ctx_.allocate<std::uint64_t>(static_cast<std::size_t>(n)), k2 = ctx_.allocate<std::uint64_t>(static_cast<std::size_t>(n));
    auto undecided = ctx_.allocate<int>(1);
    std::vector<int> ones(static_cast<std::size_t>(n), 1);
    if (n) LA_CUDA_TRY(cudaMemcpyAsync(state.data(), ones.data(), ones.size() * sizeof(int), cudaMemcpyHostToDevice, s));
    for (int more = n > 0; more;) {
      LA_CUDA_TRY(cudaMemsetAsync(undecided.data(), 0, sizeof(int), s));
      mis_k1<<<grid_for(n), block_threads, 0, s>>>(g, state.data(), k1.data());
      mis_k2<<<grid_for(n), block_threads, 0, s>>>(g, k1.data(), k2.data(), opt_.aggregation_distance);
      mis_states<<<grid_for(n), block_threads, 0, s>>>(n, k2.data(), state.data(), undecided.data());
      LA_CUDA_TRY(cudaGetLastError());
      LA_CUDA_TRY(cudaMemcpyAsync(&more, undecided.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
      ctx_.synchronize();
    }
    auto first = ctx_.allocate<index_t>(static_cast<std::size_t>(n)), root = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
    auto id = ctx_.allocate<index_t>(static_cast<std::size_t>(n) + 1);
    join_roots<<<grid_for(n), block_threads, 0, s>>>(g, state.data(), first.data());
    join_neighbours<<<grid_for(n), block_threads, 0, s>>>(g, first.data(), root.data(), id.data());
    LA_CUDA_TRY(cudaGetLastError());
    f.count = detail::scan_counts(ctx_, id.data(), n);  // id[i]: the roots before i
    f.of = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
    number_aggregates<<<grid_for(n), block_threads, 0, s>>>(n, root.data(), id.data(), f.of.data());
    LA_CUDA_TRY(cudaGetLastError());
    ctx_.synchronize();
    return f.count;
  }

  /// Level l's T (first build only: the aggregates and B do not change), P = S T, R = P^T,
  /// and level l + 1's operator R (A P) and near-null vector.
  void galerkin(std::size_t l, bool first_build) {
    level& f = levels_[l];
    level& c = levels_[l + 1];
    cudaStream_t s = ctx_.stream();
    const index_t n = f.n;
    auto t0 = clock::now();
    if (first_build) {
      // Nodes by aggregate, stably: each aggregate's norm of B sums its nodes in index order.
      auto order = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto iota = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto sorted_of = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      iota_kernel<<<grid_for(n), block_threads, 0, s>>>(iota.data(), n);
      LA_CUDA_TRY(cudaGetLastError());
      std::size_t bytes = 0;
      LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, f.of.data(), sorted_of.data(), iota.data(), order.data(), n, 0,
                                                  bits_for(f.count), s));
      auto temp = ctx_.allocate<unsigned char>(bytes);
      LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, f.of.data(), sorted_of.data(), iota.data(), order.data(),
                                                  n, 0, bits_for(f.count), s));
      auto start = ctx_.allocate<W>(static_cast<std::size_t>(f.count) + 1);
      aggregate_starts<<<grid_for(n), block_threads, 0, s>>>(n, sorted_of.data(), start.data(), f.count);
      c.near_null = ctx_.allocate<double>(static_cast<std::size_t>(f.count));
      aggregate_norms<<<grid_for(f.count), block_threads, 0, s>>>(f.count, start.data(), order.data(), f.near_null.data(),
                                                                  c.near_null.data());
      auto tp = ctx_.allocate<W>(static_cast<std::size_t>(n) + 1);
      auto ti = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto tv = ctx_.allocate<T>(static_cast<std::size_t>(n));
      tentative<<<grid_for(n), block_threads, 0, s>>>(n, f.of.data(), f.near_null.data(), c.near_null.data(), tp.data(),
                                                      ti.data(), tv.data());
      LA_CUDA_TRY(cudaGetLastError());
      f.t = csr_of<T>(n, f.count, std::move(tp), std::move(ti), std::move(tv));
      ctx_.synchronize();
    }
    const double omega = 4.0 / (3.0 * f.lambda);
    with_operator(l, [&](const auto& a) {
      using AO = typename std::decay_t<decltype(a)>::offset_type;
      auto sv = ctx_.allocate<T>(static_cast<std::size_t>(a.nnz()));
      smoother_operator<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dinv.data(), omega, sv.data());
      LA_CUDA_TRY(cudaGetLastError());
      const device_csr<T, AO> sm(detail::trusted, n, n, copy_of<T>(ctx_, a.row_ptr()), copy_of<T>(ctx_, a.col_idx()),
                                 std::move(sv));
      if constexpr (std::is_same_v<AO, O> && !std::is_same_v<O, W>) {
        if (!f.plan_sp0) f.plan_sp0.emplace(ctx_, sm, f.t);
        f.plan_sp0->run(ctx_, sm, f.t, f.p);
      } else {
        if (!f.plan_sp) f.plan_sp.emplace(ctx_, sm, f.t);
        f.plan_sp->run(ctx_, sm, f.t, f.p);
      }
      ctx_.synchronize();
    });
    {
      auto csc = to_csc(ctx_, f.p);
      auto [ptr, idx, val] = std::move(csc).release();
      f.r = csr_of<T>(f.count, n, std::move(ptr), std::move(idx), std::move(val));
    }
    f.lanes_p = lanes_for(n ? double(f.p.nnz()) / n : 1);
    f.lanes_r = lanes_for(f.count ? double(f.r.nnz()) / f.count : 1);
    sec_.prolongator += since(t0);
    t0 = clock::now();
    device_csr<T, W> ap;
    with_operator(l, [&](const auto& a) {
      using AO = typename std::decay_t<decltype(a)>::offset_type;
      if constexpr (std::is_same_v<AO, O> && !std::is_same_v<O, W>) {
        if (!f.plan_ap0) f.plan_ap0.emplace(ctx_, a, f.p);
        f.plan_ap0->run(ctx_, a, f.p, ap);
      } else {
        if (!f.plan_ap) f.plan_ap.emplace(ctx_, a, f.p);
        f.plan_ap->run(ctx_, a, f.p, ap);
      }
    });
    if (!f.plan_rap) f.plan_rap.emplace(ctx_, f.r, ap);
    f.plan_rap->run(ctx_, f.r, ap, c.a);
    ctx_.synchronize();
    sec_.galerkin += since(t0);
  }

  static int bits_for(index_t count) {
    int b = 1;
    while (b < 31 && (index_t(1) << b) < count) ++b;
    return b;
  }

  /// The coarsest level: its dense inverse when it has at most amg::dense_limit rows.
  void factor_coarse() {
    const auto t0 = clock::now();
    const std::size_t l = levels_.size() - 1;
    const index_t n = levels_[l].n;
    dense_ = n <= amg::dense_limit;
    if (dense_ && n > 0) {
      cudaStream_t s = ctx_.stream();
      auto m = ctx_.allocate<double>(static_cast<std::size_t>(n) * 2 * n);
      auto singular = ctx_.allocate<int>(1);
      LA_CUDA_TRY(cudaMemsetAsync(singular.data(), 0, sizeof(int), s));
      if (l == 0) {
        // A one-level hierarchy: the matrix itself, with 64-bit offsets for the densifier.
        const auto& a = *a0_;
        auto p = ctx_.allocate<W>(static_cast<std::size_t>(n) + 1);
        widen_offsets<<<grid_for(n + 1), block_threads, 0, s>>>(a.view().row_ptr, p.data(), n + 1);
        levels_[0].a = csr_of<T>(n, n, std::move(p), copy_of<T>(ctx_, a.col_idx()), copy_of<T>(ctx_, a.values()));
      }
      const auto av = std::as_const(levels_[l].a).view();
      densify<<<grid_for(static_cast<long long>(n) * 2 * n), block_threads, 0, s>>>(av, m.data());
      scatter_dense<<<grid_for(n), block_threads, 0, s>>>(av, m.data());
      gauss_jordan<<<1, 1024, n * sizeof(double), s>>>(m.data(), n, singular.data());
      LA_CUDA_TRY(cudaGetLastError());
      int bad = 0;
      LA_CUDA_TRY(cudaMemcpyAsync(&bad, singular.data(), sizeof bad, cudaMemcpyDeviceToHost, s));
      ctx_.synchronize();
      LA_EXPECTS(!bad, "amg: the coarsest operator (" + std::to_string(n) +
                           " rows) is singular, so the V-cycle has no coarse solve");
      inverse_ = ctx_.allocate<T>(static_cast<std::size_t>(n) * n);
      take_inverse<<<grid_for(static_cast<long long>(n) * n), block_threads, 0, s>>>(m.data(), n, inverse_.data());
      LA_CUDA_TRY(cudaGetLastError());
      ctx_.synchronize();
      if (l == 0) levels_[0].a = {};
    }
    sec_.coarse += since(t0);
  }

  void allocate_vectors() {
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      level& f = levels_[l];
      const auto n = static_cast<std::size_t>(f.n);
      if (l > 0) f.b = ctx_.allocate<T>(n), f.x = ctx_.allocate<T>(n);
      f.res = ctx_.allocate<T>(n), f.d = ctx_.allocate<T>(n), f.d2 = ctx_.allocate<T>(n);
    }
  }

  void describe() {
    precond_report& rep = this->rep;
    rep.kind = preconditioner::amg;
    double nnz = static_cast<double>(a0_->nnz()), rows = 0, bytes = 0;
    std::string sizes;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const level& f = levels_[l];
      rows += f.n;
      if (l > 0) nnz += static_cast<double>(f.a.nnz()), bytes += double(f.a.nnz()) * (sizeof(T) + sizeof(index_t)) + (f.n + 1.0) * sizeof(W);
      bytes += (double(f.p.nnz()) + double(f.r.nnz()) + double(f.t.nnz())) * (sizeof(T) + sizeof(index_t));
      bytes += double(f.n) * (5 * sizeof(T) + 2 * sizeof(double) + sizeof(index_t));
      sizes += (l ? " " : "") + std::to_string(f.n);
    }
    bytes += double(inverse_.size()) * sizeof(T);
    rep.bytes = bytes;
    opc_ = nnz / std::max(1.0, static_cast<double>(a0_->nnz()));
    gc_ = rows / std::max<double>(1, levels_[0].n);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%zu levels (%s rows), operator complexity %.2f, grid complexity %.2f, %s-cycle, Chebyshev degree %d%s; "
                  "setup: aggregation %.1f ms, prolongator %.1f ms, Galerkin %.1f ms, smoother bounds %.1f ms, "
                  "coarse %.1f ms",
                  levels_.size(), sizes.c_str(), opc_, gc_, opt_.cycle == amg_cycle::w ? "W" : "V", opt_.smoother_degree,
                  dense_ ? "" : "; the coarsest level is smoothed (too large for a dense solve)", 1e3 * sec_.aggregation,
                  1e3 * sec_.prolongator, 1e3 * sec_.galerkin, 1e3 * sec_.smoother, 1e3 * sec_.coarse);
    rep.detail = buf;
  }

  /// The Chebyshev smoother on level l (hierarchy.hpp's smooth): x += p(D^-1 A) D^-1 (b - A x).
  /// The directions alternate between two buffers (a step's product reads the previous one).
  void smooth(std::size_t l, const T* b, T* x, bool zero, cudaStream_t s) const {
    const level& f = levels_[l];
    const double hi = f.lambda, lo = 0.1 * f.lambda;
    const double theta = (hi + lo) / 2, delta = (hi - lo) / 2, sigma = theta / delta;
    T *r = f.res.data(), *d = f.d.data(), *e = f.d2.data();
    const T* dinv = f.dinv.data();
    bool pending = false;  // x += d still owed
    if (zero) {
      cheb_zero_start<<<grid_for(f.n), block_threads, 0, s>>>(b, dinv, r, d, x, f.n, 1 / theta);
      LA_CUDA_TRY(cudaGetLastError());
    } else {
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), x, op_cheb_start<T>{b, dinv, r, d, 1 / theta}, s);
      });
      pending = true;
    }
    double rho = 1 / sigma;
    for (int k = 1; k < opt_.smoother_degree; ++k) {
      const double rho_new = 1 / (2 * sigma - rho);
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), d,
                       op_cheb_step<T>{dinv, d, r, e, x, rho_new * rho, 2 * rho_new / delta, pending}, s);
      });
      pending = false;
      std::swap(d, e);
      rho = rho_new;
    }
    if (pending) {
      add_into<<<grid_for(f.n), block_threads, 0, s>>>(x, d, f.n);
      LA_CUDA_TRY(cudaGetLastError());
    }
  }

  void cycle(std::size_t l, const T* b, T* x, bool zero, cudaStream_t s) const {
    const level& f = levels_[l];
    if (l + 1 == levels_.size()) {
      if (dense_) {
        if (f.n) dense_solve<<<grid_for(static_cast<long long>(f.n) * 32), block_threads, 0, s>>>(inverse_.data(), f.n, b, x);
        LA_CUDA_TRY(cudaGetLastError());
      } else {
        smooth(l, b, x, zero, s);
        smooth(l, b, x, false, s);
      }
      return;
    }
    level& c = const_cast<level&>(levels_[l + 1]);
    smooth(l, b, x, zero, s);
    with_operator(l, [&](const auto& a) { launch_product(f.lanes_a, a.view(), x, op_residual<T>{b, f.res.data()}, s); });
    launch_product(f.lanes_r, f.r.view(), f.res.data(), op_assign<T>{c.b.data()}, s);
    const int visits = opt_.cycle == amg_cycle::w && l + 2 < levels_.size() ? 2 : 1;
    for (int v = 0; v < visits; ++v) cycle(l + 1, c.b.data(), c.x.data(), v == 0, s);
    launch_product(f.lanes_p, f.p.view(), c.x.data(), op_add<T>{x}, s);
    smooth(l, b, x, false, s);
  }

  context& ctx_;
  amg_options opt_;
  const device_csr<T, O>* a0_;
  std::vector<level> levels_;
  device_buffer<T> inverse_;
  bool dense_ = true;
  unsigned long long fingerprint_ = 0;
  double opc_ = 1, gc_ = 1;
  struct {
    double aggregation = 0, prolongator = 0, galerkin = 0, smoother = 0, coarse = 0;
  } sec_;
};

}  // namespace

template <typename T, typename O>
impl_ptr<T> make_amg(context& ctx, const device_csr<T, O>& a, const amg_options& opt) {
  return std::make_unique<amg_impl<T, O>>(ctx, a, opt);
}
template <typename T, typename O>
bool update_amg(typename device_preconditioner<T>::impl& p, const device_csr<T, O>& a) {
  auto* m = dynamic_cast<amg_impl<T, O>*>(&p);
  if (!m) return false;
  m->update(a);
  return true;
}

#define LA_INSTANTIATE(T, O)                                                                    \
  template impl_ptr<T> make_amg<T, O>(context&, const device_csr<T, O>&, const amg_options&); \
  template bool update_amg<T, O>(typename device_preconditioner<T>::impl&, const device_csr<T, O>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::precond_detail
