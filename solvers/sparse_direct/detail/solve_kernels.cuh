// The sparse direct solver's GPU solve kernels (solve.cu launches them; detail/solver_impl.hpp
// has the fronts' table they read): the permutations in and out, and for each level the
// forward substitution's front vectors, children's gathers and fronts, the backward one's
// fronts. Fronts of up to 32 rows a warp each; the others a thread block each, their
// triangles by 32-column tiles; a split front's off-diagonal products (split_solve) on their
// own launch of many blocks. Included by solve.cu alone.
#pragma once

#include <la/solvers/sparse_direct/detail/solver_impl.hpp>

namespace la::sparse_detail {
namespace {  // (one translation unit's kernels)
/// y = the solve's input: y[k] = in_scale[k] * b[in_idx[k]] (per right-hand side); or, out,
/// b[out_idx[k]] = out_scale[k] * y[k].
__global__ void permute_kernel(const double* from, double* to, const index_t* idx, const double* scale, index_t n, index_t k,
                               bool gather) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(n) * k) return;
  const long col = e / n;
  const index_t i = static_cast<index_t>(e % n);
  if (gather) to[e] = scale[i] * from[col * n + idx[i]];
  else to[col * n + idx[i]] = scale[i] * from[e];
}

/// Forward, step 1: a level's front vectors: w[a] = y[first + a] for the front's own rows, 0 below;
/// a block a front, or (per_block > 1, fronts of at most 32 rows) a warp a front.
__global__ void forward_init_kernel(double* w, long vec_total, front_table t, const int* list, int count, const double* y,
                                    index_t n, int per_block) {
  const int q = per_block == 1 ? static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x) * per_block + threadIdx.x / 32;
  if (q >= count) return;
  const int s = list[q];
  const long col = blockIdx.y;
  double* ws = w + col * vec_total + t.vec[s];
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const int start = per_block == 1 ? threadIdx.x : threadIdx.x & 31, step = per_block == 1 ? blockDim.x : 32;
  for (int a = start; a < m; a += step) ws[a] = a < nc ? y[col * n + f + a] : 0.0;
}

/// Forward, step 2: the children's update vectors added, an item (front, row) a thread, its
/// (child, row) pairs in order.
__global__ void forward_gather_kernel(double* w, long vec_total, front_table t, const int* item_front, const int* item_row,
                                      const long* item_ptr, const int* con_child, const int* con_row, long items) {
  const long item = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long col = blockIdx.y;
  if (item >= items) return;
  double* base = w + col * vec_total;
  double v = 0;
  for (long p = item_ptr[item]; p < item_ptr[item + 1]; ++p) {
    const int c = con_child[p];
    v += base[t.vec[c] + t.nc[c] + con_row[p]];
  }
  base[t.vec[item_front[item]] + item_row[item]] += v;
}

constexpr int tile = 32;  // the triangular parts' column tiles: a warp solves a tile's triangle
constexpr unsigned full_mask = 0xffffffffu;
__device__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(full_mask, v, o);
  return v;  // lane 0's
}

/// A block's front's triangular part, tile by tile (forward: L11 x1 = w1, unit, from the first
/// tile, also updating rows [nc, bound) of L21; backward: U11 x1 = w1 from the last tile), ws
/// holding w and left holding x1. Pipelined: warp 0 solves tile j's triangle from shared memory
/// while the other warps load the next tile and their first eight rows' values of tile j's
/// columns; after a barrier they subtract those rows' products with x_j, then the rest's.
template <bool Forward>
__device__ void front_triangle(const double* A, int m, int nc, double* ws, int bound) {
  __shared__ double T[2][tile][tile + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, helpers = blockDim.x / 32 - 1, h = warp - 1;
  auto load_tile = [&](double (*dst)[tile + 1], int j0, int jw, int from, int step) {
    for (int r = from; r < jw; r += step)
      if (lane < jw) dst[r][lane] = A[static_cast<long>(j0 + r) * m + j0 + lane];
  };
  int j0 = Forward ? 0 : max(0, nc - tile), jw = Forward ? min(tile, nc) : nc - j0;
  load_tile(T[0], j0, jw, warp, blockDim.x / 32);
  __syncthreads();
  for (int buf = 0; jw > 0; buf ^= 1) {
    const int count = Forward ? bound - (j0 + jw) : j0;  // the rows tile j updates, nearest first
    const int nj0 = Forward ? j0 + jw : max(0, j0 - tile), njw = Forward ? min(tile, nc - nj0) : j0 - nj0;
    auto row = [&](int idx) { return Forward ? j0 + jw + idx : j0 - 1 - idx; };
    double pv[8];
    if (warp == 0) {
      double v = lane < jw ? ws[j0 + lane] : 0.0;
      if (Forward) {
        for (int k = 0; k < jw - 1; ++k) {
          const double xk = __shfl_sync(full_mask, v, k);
          if (lane > k && lane < jw) v -= T[buf][lane][k] * xk;
        }
      } else {
        const double inv = lane < jw ? 1.0 / T[buf][lane][lane] : 0.0;
        for (int k = jw - 1; k >= 0; --k) {
          const double xk = __shfl_sync(full_mask, v * inv, k);
          if (lane == k) v = xk;
          else if (lane < k) v -= T[buf][lane][k] * xk;
        }
      }
      if (lane < jw) ws[j0 + lane] = v;
    } else {
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int idx = h + u * helpers;
        pv[u] = idx < count && lane < jw ? A[static_cast<long>(row(idx)) * m + j0 + lane] : 0.0;
      }
      load_tile(T[buf ^ 1], nj0, njw, h, helpers);
    }
    __syncthreads();
    if (warp != 0) {
      const double xl = lane < jw ? ws[j0 + lane] : 0.0;
      for (int i0 = 0; i0 < count; i0 += 8 * helpers) {
        if (i0 > 0) {
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int idx = i0 + h + u * helpers;
            pv[u] = idx < count && lane < jw ? A[static_cast<long>(row(idx)) * m + j0 + lane] : 0.0;
          }
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int idx = i0 + h + u * helpers;
          const double sum = warp_sum(pv[u] * xl);
          if (lane == 0 && idx < count) ws[row(idx)] -= sum;
        }
      }
    }
    __syncthreads();
    j0 = nj0, jw = njw;
  }
}

/// Forward, step 3, a block per front: L11 x1 = w1 and w2 -= L21 x1 (front_triangle), or, for a
/// split front (split_solve), L21's products by forward_below_kernel after. y[first..] = x1.
__global__ void __launch_bounds__(1024) forward_front_kernel(const double* F, double* w, long vec_total, front_table t,
                                                             const int* list, double* y, index_t n, long split_at) {
  const int s = list[blockIdx.x];
  const long col = blockIdx.y;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  double* ws = w + col * vec_total + t.vec[s];
  front_triangle<true>(F + t.off[s], m, nc, ws, split_solve(m, nc, split_at) ? nc : m);
  for (int a = threadIdx.x; a < nc; a += blockDim.x) y[col * n + f + a] = ws[a];
}

/// Forward, steps 3 and 4 for fronts of at most 32 rows, a warp a front (lane a its row a):
/// L11 x1 = w1 and w2 -= L21 x1 in one loop over the front's columns; y[first..] = x1.
__global__ void forward_warp_kernel(const double* F, double* w, long vec_total, front_table t, const int* list, int count,
                                    double* y, index_t n) {
  const int q = static_cast<int>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (q >= count) return;
  const int s = list[q], lane = threadIdx.x & 31;
  const long col = blockIdx.y;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const double* A = F + t.off[s];
  double* ws = w + col * vec_total + t.vec[s];
  double v = lane < m ? ws[lane] : 0.0;
  for (int k = 0; k < nc; ++k) {
    const double xk = __shfl_sync(full_mask, v, k);
    if (lane > k && lane < m) v -= A[lane * m + k] * xk;
  }
  if (lane < m) ws[lane] = v;
  if (lane < nc) y[col * n + f + lane] = v;
}

/// Backward for fronts of at most 32 rows, a warp a front: w1 = y1 - U12 x(R_s below) (lane a
/// its row a), U11 x1 = w1; y[first..] = x1.
__global__ void backward_warp_kernel(const double* F, front_table t, const int* list, int count, double* y, index_t n) {
  const int q = static_cast<int>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (q >= count) return;
  const int s = list[q], lane = threadIdx.x & 31;
  double* yc = y + static_cast<long>(blockIdx.y) * n;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const double* A = F + t.off[s];
  const int* rows = t.rows + t.vec[s];
  double v = 0;
  if (lane < nc) {
    v = yc[f + lane];
#pragma unroll 4
    for (int r = nc; r < m; ++r) v -= A[lane * m + r] * yc[rows[r]];
  }
  for (int k = nc - 1; k >= 0; --k) {
    const double xk = __shfl_sync(full_mask, v, k) / A[k * m + k];
    if (lane == k) v = xk;
    else if (lane < k) v -= A[lane * m + k] * xk;
  }
  if (lane < nc) yc[f + lane] = v;
}

constexpr int split_rows = 8;  // the split kernels' rows a block (8 warps, a row each)
/// Forward, step 4, split fronts: w2 -= L21 x1, blocks of split_rows rows (grid: front, row block, column).
__global__ void forward_below_kernel(const double* F, double* w, long vec_total, front_table t, const int* list) {
  const int s = list[blockIdx.x];
  const int m = t.m[s], nc = t.nc[s];
  const int r0 = nc + static_cast<int>(blockIdx.y) * split_rows;
  if (r0 >= m) return;
  const int r1 = min(m, r0 + split_rows);
  const double* A = F + t.off[s];
  double* ws = w + static_cast<long>(blockIdx.z) * vec_total + t.vec[s];
  const int lane = threadIdx.x & 31;
  for (int i = r0 + threadIdx.x / 32; i < r1; i += blockDim.x / 32) {
    const double* row = A + static_cast<long>(i) * m;
    double v = 0;
#pragma unroll 8
    for (int q = lane; q < nc; q += 32) v += row[q] * ws[q];
    v = warp_sum(v);
    if (lane == 0) ws[i] -= v;
  }
}

/// Backward: ws[a] = y[f + a] - U12[a, :] x(R_s below) for a front's rows a in [a0, a1) (row a at
/// A + a * m; its columns past nc hold x at y[rows[q]]), a warp a row.
__device__ void upper_rows(const double* A, int m, int nc, const int* rows, const double* yc, int f, double* ws, int a0, int a1) {
  const int lane = threadIdx.x & 31;
  for (int a = a0 + threadIdx.x / 32; a < a1; a += blockDim.x / 32) {
    const double* row = A + static_cast<long>(a) * m;
    double v = 0;
#pragma unroll 8
    for (int q = nc + lane; q < m; q += 32) v += row[q] * yc[rows[q]];
    v = warp_sum(v);
    if (lane == 0) ws[a] = yc[f + a] - v;
  }
}

/// Backward, split fronts first: w1 = y1 - U12 x(R_s below), blocks of split_rows rows.
__global__ void backward_above_kernel(const double* F, double* w, long vec_total, front_table t, const int* list, const double* y,
                                      index_t n) {
  const int s = list[blockIdx.x];
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const int r0 = static_cast<int>(blockIdx.y) * split_rows;
  if (r0 >= nc) return;
  const int r1 = min(nc, r0 + split_rows);
  const long col = blockIdx.z;
  const double* A = F + t.off[s];
  double* ws = w + col * vec_total + t.vec[s];
  const int* rows = t.rows + t.vec[s];
  const double* yc = y + col * n;
  upper_rows(A, m, nc, rows, yc, f, ws, r0, r1);
}

/// Backward, a block per front (roots first): w1 = y1 - U12 x(R_s below) (done by
/// backward_above_kernel for a split front); U11 x1 = w1 (front_triangle); y[first..] = x1.
__global__ void __launch_bounds__(1024) backward_front_kernel(const double* F, double* w, long vec_total, front_table t,
                                                              const int* list, double* y, index_t n, long split_at) {
  const int s = list[blockIdx.x];
  const long col = blockIdx.y;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const double* A = F + t.off[s];
  double* ws = w + col * vec_total + t.vec[s];
  if (!split_solve(m, nc, split_at)) {
    upper_rows(A, m, nc, t.rows + t.vec[s], y + col * n, f, ws, 0, nc);
    __syncthreads();
  }
  front_triangle<false>(A, m, nc, ws, 0);
  for (int a = threadIdx.x; a < nc; a += blockDim.x) y[col * n + f + a] = ws[a];
}

}  // namespace
}  // namespace la::sparse_detail
