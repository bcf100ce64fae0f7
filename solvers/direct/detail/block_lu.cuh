// One thread block's dense factorizations in place: the batched solver's kernels (one block a
// system, batched_dense.cu), la::dense_solver's single-kernel path for small n and its panels
// that fit one block (dense_small.cuh). M is row-major with leading dimension ld (shared or
// global memory); blockDim.x is a multiple of 32, at most 1024; every thread of the block calls.
// A column costs three barriers and no grid-wide synchronization.
#pragma once

#include <la/types.hpp>

namespace la::block_lu {

/// The block's largest v (s: 32 doubles of shared memory); every thread gets it.
__device__ inline double block_max(double v, double* s) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();  // s free: its last readers are done
  if ((threadIdx.x & 31) == 0) s[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : v;
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    if (threadIdx.x == 0) s[0] = v;
  }
  __syncthreads();
  return s[0];
}

/// The row of the largest |M[r][j]|, r in [j, rows) (the first where several tie, as LAPACK's
/// idamax); its magnitude in *big. A NaN wins, so that it shows (the caller checked for
/// non-finite entries where it must). s, si: 32 entries of shared memory each.
template <typename T>
__device__ int pivot_row(const T* M, long ld, int rows, int j, double* s, int* si, double* big) {
  double best = -1;
  int row = rows;
  for (int r = j + static_cast<int>(threadIdx.x); r < rows; r += blockDim.x) {
    double v = fabs(static_cast<double>(M[r * ld + j]));
    if (v != v) v = INFINITY;
    if (v > best) best = v, row = r;  // a thread's rows ascend: the first largest kept
  }
  for (int o = 16; o > 0; o >>= 1) {
    const double ob = __shfl_down_sync(0xffffffffu, best, o);
    const int orow = __shfl_down_sync(0xffffffffu, row, o);
    if (ob > best || (ob == best && orow < row)) best = ob, row = orow;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) s[threadIdx.x / 32] = best, si[threadIdx.x / 32] = row;
  __syncthreads();
  if (threadIdx.x < 32) {
    const bool have = threadIdx.x < blockDim.x / 32;
    best = have ? s[threadIdx.x] : -1.0, row = have ? si[threadIdx.x] : rows;
    for (int o = 16; o > 0; o >>= 1) {
      const double ob = __shfl_down_sync(0xffffffffu, best, o);
      const int orow = __shfl_down_sync(0xffffffffu, row, o);
      if (ob > best || (ob == best && orow < row)) best = ob, row = orow;
    }
    if (threadIdx.x == 0) s[0] = best, si[0] = row;
  }
  __syncthreads();
  *big = s[0];
  return si[0];
}

/// LU with partial pivoting of the rows x cols block M (rows >= cols; a panel when rows >
/// cols: its rows below cols are L's) in place; piv[j] = the row swapped with j. Returns 0 or
/// the first column (1-based) without a nonzero pivot; `stop_at_zero`: return there (a
/// system that is not solved), else leave that column as it is and go on (a panel: the
/// caller records the column and the factorization continues, as LAPACK's getrf does).
template <typename T>
__device__ int lu(T* M, long ld, int rows, int cols, int* piv, double* s, int* si, bool stop_at_zero) {
  int first_zero = 0;
  for (int j = 0; j < cols; ++j) {
    double big;
    const int p = pivot_row(M, ld, rows, j, s, si, &big);
    if (!(big > 0)) {
      if (first_zero == 0) first_zero = j + 1;
      if (threadIdx.x == 0) piv[j] = j;
      if (stop_at_zero) return first_zero;
      continue;  // every thread saw the same big: no barrier is skipped by some only
    }
    if (threadIdx.x == 0) piv[j] = p;
    if (p != j)
      for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const T t = M[j * ld + c];
        M[j * ld + c] = M[p * ld + c];
        M[p * ld + c] = t;
      }
    __syncthreads();
    const T inv = T(1) / M[j * ld + j];
    for (int r = j + 1 + static_cast<int>(threadIdx.x); r < rows; r += blockDim.x) M[r * ld + j] *= inv;
    __syncthreads();
    // The rank-1 update, the elements spread over the threads. (A warp a row, lanes along it,
    // measured slower in the one-block panels: H100, n = 512 2.21 against 1.91 ms.)
    const int w = cols - j - 1;
    if (w > 0)
      for (int e = threadIdx.x; e < (rows - j - 1) * w; e += blockDim.x) {
        const int r = j + 1 + e / w, c = j + 1 + e % w;
        M[r * ld + c] -= M[r * ld + j] * M[j * ld + c];
      }
    __syncthreads();
  }
  return first_zero;
}

/// A = L L^T in the lower triangle of the n x n M; 0 or the first column (1-based) without a
/// positive pivot (the factorization stops there).
template <typename T>
__device__ int cholesky(T* M, long ld, int n) {
  for (int j = 0; j < n; ++j) {
    const T d = M[j * ld + j];
    if (!(d > T(0))) return j + 1;  // every thread read d before anyone writes it (the barrier below)
    __syncthreads();
    const T root = sqrt(d), inv = T(1) / root;
    if (threadIdx.x == 0) M[j * ld + j] = root;
    for (int r = j + 1 + static_cast<int>(threadIdx.x); r < n; r += blockDim.x) M[r * ld + j] *= inv;
    __syncthreads();
    for (int r = j + 1 + static_cast<int>(threadIdx.x / 32); r < n; r += blockDim.x / 32) {  // a warp a row, as lu's
      const T l = M[r * ld + j];
      for (int c = j + 1 + static_cast<int>(threadIdx.x & 31); c <= r; c += 32) M[r * ld + c] -= l * M[c * ld + j];
    }
    __syncthreads();
  }
  return 0;
}

/// B (n x k, row-major, in place) = (L U)^-1 B, or (L L^T)^-1 B, from the factors in M (ld):
/// the forward sweep with L (unit for LU), the backward one with U or L^T; a barrier a column.
/// B's rows are already in the pivots' order.
template <typename T>
__device__ void solve_in_place(const T* M, long ld, int n, bool chol, T* b, int k) {
  for (int j = 0; j < n; ++j) {
    if (chol) {
      const T d = M[j * ld + j];
      for (int c = threadIdx.x; c < k; c += blockDim.x) b[static_cast<long>(j) * k + c] /= d;
      __syncthreads();
    }
    const long rest = static_cast<long>(n - j - 1) * k;
    for (long e = threadIdx.x; e < rest; e += blockDim.x) {
      const long r = j + 1 + e / k, c = e % k;
      b[r * k + c] -= M[r * ld + j] * b[static_cast<long>(j) * k + c];
    }
    __syncthreads();
  }
  for (int j = n - 1; j >= 0; --j) {
    const T d = M[j * ld + j];
    for (int c = threadIdx.x; c < k; c += blockDim.x) b[static_cast<long>(j) * k + c] /= d;
    __syncthreads();
    const long rest = static_cast<long>(j) * k;
    for (long e = threadIdx.x; e < rest; e += blockDim.x) {
      const long r = e / k, c = e % k;
      const T u = chol ? M[j * ld + r] : M[r * ld + j];
      b[r * k + c] -= u * b[static_cast<long>(j) * k + c];
    }
    __syncthreads();
  }
}

}  // namespace la::block_lu
