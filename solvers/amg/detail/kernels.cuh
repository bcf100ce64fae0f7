// The kernels of the GPU AMG (solvers/amg/amg.cu): the products with their element-wise work
// fused in (the cycle, the coarse solve by the dense inverse coarse.cu computes), and the
// setup's (diagonals and bounds, the power estimate's dots, the tentative prolongator, S = I -
// omega D^-1 A). Private to amg.cu; the strength graph and the MIS rounds are aggregate.cu's
// own (aggregate_device below).
#pragma once

#include <la/solvers/amg/aggregation.hpp>
#include <la/solvers/detail/reduce.cuh>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail::amg_detail {

using W = count_t;  // the offsets of every level below the finest, and of P and R

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

/// L1-Jacobi: x = l1inv b from x = 0, and x += l1inv r.
template <typename T>
__global__ void l1_start(const T* b, const T* l1inv, T* x, index_t n) {
  LA_GRID_STRIDE(i, n) x[i] = static_cast<T>(static_cast<double>(l1inv[i]) * b[i]);
}
template <typename T>
__global__ void l1_update(const T* r, const T* l1inv, T* x, index_t n) {
  LA_GRID_STRIDE(i, n) x[i] = static_cast<T>(x[i] + static_cast<double>(l1inv[i]) * r[i]);
}

template <typename T>
__global__ void add_into(T* x, const T* d, index_t n) {
  LA_GRID_STRIDE(i, n) x[i] = static_cast<T>(x[i] + static_cast<double>(d[i]));
}

/// Lanes a row for a matrix with this mean row length.
inline int lanes_for(double mean) { return mean <= 8 ? 4 : mean <= 24 ? 8 : 32; }

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

/// dinv = 1 / a_ii, l1inv = 1 / sum_j |a_ij| (L1-Jacobi's), dabs = |a_ii|, the first row with
/// a zero or missing diagonal into *bad, and Gershgorin's max_i sum_j |a_ij| / |a_ii| into
/// *gersh (a max of non-negative doubles as their bits: the same whatever the order).
template <typename T, typename O>
__global__ void diagonal_info(csr_view<const T, O> a, T* dinv, T* l1inv, double* dabs, unsigned long long* bad,
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
    l1inv[i] = static_cast<T>(sum > 0 ? 1 / sum : 0);
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

/// The aggregates of A's strength graph on the device (aggregate.cu: aggregation.hpp's rounds):
/// of[i] for each row (allocated here), their count returned.
template <typename T, typename O>
index_t aggregate_device(context& ctx, const device_csr<T, O>& a, const double* dabs, double theta, int distance,
                         device_buffer<index_t>& of);

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

}  // namespace la::precond_detail::amg_detail
