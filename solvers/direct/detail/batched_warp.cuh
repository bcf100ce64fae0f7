// la::batched_dense_solver's kernels for systems of at most 32 rows: one warp a system, lane r
// holding row r in registers (NMAX values, NMAX a compile-time bound: 8, 16 or 32), so a column
// is a handful of warp shuffles and no barrier: the pivot search (the first largest |a_rj|, as
// the host's), the row swap, the scaling and the rank-1 update. The statuses, the automatic
// choice and the residual check are the block kernels' (batched_dense.cu). Private to it.
#pragma once

#include <la/solvers/direct/detail/batched_impl.hpp>

namespace la::batched_warp {

using batched_detail::batch_layout;
__device__ inline int size_of(const batch_layout& L, long s) { return L.uniform_n > 0 ? L.uniform_n : L.n[s]; }
__device__ inline long long a_of(const batch_layout& L, long s) {
  return L.uniform_n > 0 ? static_cast<long long>(s) * L.uniform_n * L.uniform_n : L.a_off[s];
}
__device__ inline long long r_of(const batch_layout& L, long s) {
  return L.uniform_n > 0 ? static_cast<long long>(s) * L.uniform_n : L.r_off[s];
}

constexpr int warps_per_block = 4;
constexpr unsigned full = 0xffffffffu;

__device__ inline double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(full, v, o));
  return v;
}

/// LU with partial pivoting of the warp's rows a (lane r: row r, n <= NMAX columns); mine:
/// lane j gets column j's pivot row. 0 or the first column (1-based) without a nonzero pivot.
template <typename T, int NMAX>
__device__ int lu(T (&a)[NMAX], int n, int lane, int& mine) {
#pragma unroll
  for (int j = 0; j < NMAX; ++j) {
    if (j >= n) break;
    double v = lane >= j && lane < n ? fabs(static_cast<double>(a[j])) : -1.0;
    int row = lane;
    for (int o = 16; o > 0; o >>= 1) {
      const double ov = __shfl_xor_sync(full, v, o);
      const int orow = __shfl_xor_sync(full, row, o);
      if (ov > v || (ov == v && orow < row)) v = ov, row = orow;
    }
    if (!(v > 0)) return j + 1;
    const int p = row;
    if (lane == j) mine = p;
    if (p != j) {
#pragma unroll
      for (int c = 0; c < NMAX; ++c) {
        const T from_p = __shfl_sync(full, a[c], p), from_j = __shfl_sync(full, a[c], j);
        if (lane == j) a[c] = from_p;
        if (lane == p) a[c] = from_j;
      }
    }
    const T piv = __shfl_sync(full, a[j], j);
    if (lane > j) a[j] /= piv;
#pragma unroll
    for (int c = j + 1; c < NMAX; ++c) {
      const T u = __shfl_sync(full, a[c], j);
      if (lane > j) a[c] -= a[j] * u;
    }
  }
  return 0;
}

/// A = L L^T in the warp's rows' lower parts; 0 or the first column (1-based) whose pivot is
/// not positive.
template <typename T, int NMAX>
__device__ int cholesky(T (&a)[NMAX], int n, int lane) {
#pragma unroll
  for (int j = 0; j < NMAX; ++j) {
    if (j >= n) break;
    const T d = __shfl_sync(full, a[j], j);
    if (!(d > T(0))) return j + 1;
    const T root = sqrt(d);
    if (lane == j) a[j] = root;
    if (lane > j) a[j] /= root;
#pragma unroll
    for (int c = j + 1; c < NMAX; ++c) {
      const T lc = __shfl_sync(full, a[j], c);  // L[c][j]
      if (lane >= c) a[c] -= a[j] * lc;
    }
  }
  return 0;
}

/// One warp a system (n <= NMAX): A_i checked (finite), ||A_i||_inf, the factorization asked for
/// (how 0: automatic), the factors into F, the pivots into piv.
template <typename T, int NMAX>
__global__ void __launch_bounds__(32 * warps_per_block)
    factor_kernel(batch_layout L, long count, const T* A, T* F, int* piv, int* info, unsigned char* chol, double* ainf,
                  int how) {
  const long sys = static_cast<long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
  if (sys >= count) return;  // a whole warp leaves together
  const int lane = threadIdx.x & 31, n = size_of(L, sys);
  const T* a = A + a_of(L, sys);
  T row[NMAX];
  bool finite = true, sym = true;
  double sum = 0;
#pragma unroll
  for (int c = 0; c < NMAX; ++c) {
    row[c] = T(0);
    if (lane < n && c < n) {
      row[c] = a[static_cast<long>(lane) * n + c];
      finite = finite && isfinite(static_cast<double>(row[c]));
      sym = sym && (c <= lane || row[c] == a[static_cast<long>(c) * n + lane]) && (c != lane || row[c] > T(0));
      sum += fabs(static_cast<double>(row[c]));
    }
  }
  finite = __all_sync(full, finite), sym = __all_sync(full, sym);
  const double norm = warp_max(sum);
  int status = 0, mine = lane;
  bool by_cholesky = false;
  if (!finite) {
    status = batched_detail::info_non_finite;
  } else if (how == static_cast<int>(dense_factorization::cholesky) || (how == 0 && sym)) {
    status = cholesky<T, NMAX>(row, n, lane);
    by_cholesky = status == 0 || how != 0;
    if (status != 0 && how == 0) {  // automatic: not positive definite, so LU from A again
#pragma unroll
      for (int c = 0; c < NMAX; ++c) row[c] = lane < n && c < n ? a[static_cast<long>(lane) * n + c] : T(0);
      status = lu<T, NMAX>(row, n, lane, mine);
    }
  } else {
    status = lu<T, NMAX>(row, n, lane, mine);
  }
  if (status == 0 && lane < n) {
    T* f = F + a_of(L, sys);
#pragma unroll
    for (int c = 0; c < NMAX; ++c)
      if (c < n) f[static_cast<long>(lane) * n + c] = row[c];
    if (!by_cholesky) piv[r_of(L, sys) + lane] = mine;
  }
  if (lane == 0) info[sys] = status, chol[sys] = by_cholesky ? 1 : 0, ainf[sys] = norm;
}

/// One warp a system: X = A_i^-1 B_i in place (B_i n x k), then its residual against A_i in
/// double and the backward error; x = NaN where the system is not solved (as the block kernel).
template <typename T, int NMAX>
__global__ void __launch_bounds__(32 * warps_per_block)
    solve_kernel(batch_layout L, long count, const T* A, const T* F, const int* piv, const int* finfo,
                 const unsigned char* chol, const double* ainf, T* B, int k, double tol, int* info, double* be) {
  const long sys = static_cast<long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
  if (sys >= count) return;
  const int lane = threadIdx.x & 31, n = size_of(L, sys);
  const bool ch = chol[sys] != 0;
  const T* f = F + a_of(L, sys);
  const T* a = A + a_of(L, sys);
  T* b = B + r_of(L, sys) * k;
  T frow[NMAX], arow[NMAX];
#pragma unroll
  for (int c = 0; c < NMAX; ++c) {
    frow[c] = lane < n && c < n ? f[static_cast<long>(lane) * n + c] : T(0);
    arow[c] = lane < n && c < n ? a[static_cast<long>(lane) * n + c] : T(0);
  }
  const int my_piv = !ch && lane < n ? piv[r_of(L, sys) + lane] : lane;
  int status = finfo[sys];
  double rmax = 0, xmax = 0, bmax = 0;
  bool ok = true;
  for (int col = 0; col < k; ++col) {
    const T b0 = lane < n ? b[static_cast<long>(lane) * k + col] : T(0);
    ok = ok && isfinite(static_cast<double>(b0));
    T x = b0;
    if (status == 0) {
      if (!ch)
#pragma unroll
        for (int j = 0; j < NMAX; ++j) {  // the row swaps in order
          if (j >= n) break;
          const int p = __shfl_sync(full, my_piv, j);
          const T xp = __shfl_sync(full, x, p), xj = __shfl_sync(full, x, j);
          if (lane == j) x = xp;
          if (lane == p) x = xj;
        }
#pragma unroll
      for (int j = 0; j < NMAX; ++j) {  // L y = P b
        if (j >= n) break;
        if (ch && lane == j) x /= frow[j];
        const T y = __shfl_sync(full, x, j);
        if (lane > j) x -= frow[j] * y;
      }
#pragma unroll
      for (int j = NMAX - 1; j >= 0; --j) {  // U x = y, or L^T x = y
        if (j >= n) continue;
        if (lane == j) x /= frow[j];
        const T y = __shfl_sync(full, x, j);
        const T u = ch ? (lane < j ? f[static_cast<long>(j) * n + lane] : T(0)) : frow[j];
        if (lane < j) x -= u * y;
      }
      double r = static_cast<double>(b0);
#pragma unroll
      for (int j = 0; j < NMAX; ++j) {
        const double xj = static_cast<double>(__shfl_sync(full, x, j));
        if (j < n) r -= static_cast<double>(arow[j]) * xj;
      }
      if (lane < n) {
        ok = ok && isfinite(static_cast<double>(x)) && isfinite(r);
        rmax = fmax(rmax, fabs(r)), xmax = fmax(xmax, fabs(static_cast<double>(x))), bmax = fmax(bmax, fabs(static_cast<double>(b0)));
      }
    }
    if (lane < n) b[static_cast<long>(lane) * k + col] = x;
  }
  ok = __all_sync(full, ok);
  rmax = warp_max(rmax), xmax = warp_max(xmax), bmax = warp_max(bmax);
  double err = NAN;
  if (status == 0 && !ok) status = batched_detail::info_non_finite;
  if (status == 0) {
    const double den = ainf[sys] * xmax + bmax;
    err = den > 0 ? rmax / den : (rmax > 0 ? INFINITY : 0.0);
    if (!(err <= tol)) status = batched_detail::info_check;
  }
  if (status != 0 && lane < n)
    for (int col = 0; col < k; ++col) b[static_cast<long>(lane) * k + col] = static_cast<T>(NAN);  // never a silent answer
  if (lane == 0) info[sys] = status, be[sys] = err;
}

}  // namespace la::batched_warp
