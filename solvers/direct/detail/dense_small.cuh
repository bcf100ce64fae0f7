// la::dense_solver's paths without a grid-wide barrier (detail/block_lu.cuh does the work):
//   - small n: A measured (norms, non-finite entries, symmetry), factored and its diagonal
//     blocks inverted in one kernel, one thread block with the whole padded matrix in shared
//     memory; its solves one kernel too. Chosen where N (N + 1) values fit a block's shared
//     memory (double: n <= 160) and the caller left the block widths to the plan.
//   - LU panels whose rows fit one block's shared memory: factored by one block (three block
//     barriers a column) instead of the cooperative kernel (a grid barrier a column).
// Private to solvers/direct (dense_factors.cuh, dense_impl.cuh).
#pragma once

#include <la/solvers/direct/detail/block_lu.cuh>
#include <la/solvers/direct/detail/dense_kernels.cuh>

namespace la::dense_detail {

constexpr int small_threads = 512;
constexpr int panel_block_threads = 1024;

/// What the small kernel measured and found; the host reads it once.
struct small_result {
  double a_inf = 0, a_one = 0, a_max = 0;
  unsigned long long non_finite = 0;
  int symmetric = 0;  // symmetric with a positive diagonal (measured only when asked)
  int info = 0;       // 0, or the first column (1-based) without a usable pivot
  int chol = 0;       // factored by Cholesky
};

/// Shared memory the small kernel takes for N: the matrix (ld N + 1) and two int rows.
template <typename F>
constexpr std::size_t small_smem(long N) {
  return sizeof(F) * static_cast<std::size_t>(N) * (N + 1) + 2 * sizeof(int) * static_cast<std::size_t>(N);
}

/// A (n x n, ld n) times `scale` into F, padded to N x N with an identity, in shared memory;
/// measured when `measure`; factored (how: 0 automatic, Cholesky where A is symmetric with a
/// positive diagonal and LU where a pivot is not positive; 1 LU; 2 Cholesky), the factors into
/// f (N x N), the pivots and the permutation they make (LU), the inverses of the nb x nb
/// diagonal blocks of L (and U). A non-finite entry stops it before the factorization.
template <typename T, typename F>
__global__ void __launch_bounds__(small_threads)
    small_factor_kernel(const T* a, int n, double scale, F* f, int N, int nb, int how, bool measure, index_t* piv,
                        index_t* perm, F* inv_l, F* inv_u, small_result* out) {
  extern __shared__ __align__(16) unsigned char raw[];
  const long ld = N + 1;
  F* M = reinterpret_cast<F*>(raw);
  int* ipiv = reinterpret_cast<int*>(M + N * ld);
  int* iperm = ipiv + N;
  __shared__ double s[32];
  __shared__ int si[32];
  __shared__ unsigned long long bad;
  if (threadIdx.x == 0) bad = 0;
  bool sym = true;
  auto load = [&] {
    for (int e = threadIdx.x; e < N * N; e += blockDim.x) {
      const int i = e / N, j = e % N;
      F v = F(i == j ? 1 : 0);
      if (i < n && j < n) {
        const T x = a[static_cast<long>(i) * n + j];
        v = static_cast<F>(static_cast<double>(x) * scale);
        if (measure) {
          if (!isfinite(static_cast<double>(x))) atomicAdd(&bad, 1ull);
          if (how == 0) sym = sym && (j <= i || x == a[static_cast<long>(j) * n + i]) && (i != j || x > T(0));
        }
      }
      M[i * ld + j] = v;
    }
  };
  __syncthreads();
  load();
  sym = __syncthreads_and(sym);
  small_result r;
  if (measure) {
    double row = 0, col = 0, big = 0;
    for (int q = threadIdx.x; q < n; q += blockDim.x) {
      double rs = 0, cs = 0;
      for (int c = 0; c < n; ++c) {
        const double vr = fabs(static_cast<double>(a[static_cast<long>(q) * n + c]));
        rs += vr, cs += fabs(static_cast<double>(a[static_cast<long>(c) * n + q]));
        big = fmax(big, vr);
      }
      row = fmax(row, rs), col = fmax(col, cs);
    }
    r.a_inf = block_lu::block_max(row, s);
    r.a_one = block_lu::block_max(col, s);
    r.a_max = block_lu::block_max(big, s);
    r.non_finite = bad;
    r.symmetric = sym ? 1 : 0;
    if (r.non_finite) {
      if (threadIdx.x == 0) *out = r;
      return;  // every thread: bad is read after the barriers above
    }
  }
  const bool try_chol = how == 2 || (how == 0 && sym);
  int info = 0;
  bool chol = false;
  if (try_chol) {
    info = block_lu::cholesky(M, ld, N);
    chol = info == 0 || how == 2;
    if (!chol) {
      __syncthreads();
      load();
      __syncthreads();
    }
  }
  if (!chol) info = block_lu::lu(M, ld, N, N, ipiv, s, si, true);
  __syncthreads();
  for (int e = threadIdx.x; e < N * N; e += blockDim.x) {
    const int i = e / N, j = e % N;
    f[e] = chol && j > i ? F(0) : M[i * ld + j];
  }
  if (info == 0) {
    block_lu::diagonal_inverses(M, ld, N, nb, true, !chol, inv_l);
    if (!chol) block_lu::diagonal_inverses(M, ld, N, nb, false, false, inv_u);
  }
  if (!chol) {
    if (threadIdx.x == 0) {  // the swaps as one permutation: row i of P A is row perm[i] of A
      for (int i = 0; i < N; ++i) iperm[i] = i;
      for (int k = 0; k < N; ++k) {
        const int p = k < N && (info == 0 || k < info - 1) ? ipiv[k] : k;
        const int t = iperm[k];
        iperm[k] = iperm[p], iperm[p] = t;
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
      piv[i] = info == 0 || i < info - 1 ? ipiv[i] : i;
      perm[i] = iperm[i];
    }
  }
  if (threadIdx.x == 0) {
    r.info = info, r.chol = chol ? 1 : 0;
    *out = r;
  }
}

/// X (N x k, in place) = A^-1 X from the small kernel's factors: P, L's forward sweep, U's
/// (or L^T's) backward sweep, a barrier a column. W: N x k of shared memory where it fits
/// (`staged`), else a global workspace.
template <typename F>
__global__ void __launch_bounds__(small_threads)
    small_solve_kernel(const F* f, int N, bool chol, const index_t* perm, F* X, int k, F* W, bool staged) {
  extern __shared__ __align__(16) unsigned char raw[];
  F* w = staged ? reinterpret_cast<F*>(raw) : W;
  const long nk = static_cast<long>(N) * k;
  for (long e = threadIdx.x; e < nk; e += blockDim.x) {
    const long i = e / k, c = e % k;
    w[e] = X[(chol ? i : static_cast<long>(perm[i])) * k + c];
  }
  __syncthreads();
  for (int j = 0; j < N; ++j) {  // L y = P b (unit L for LU)
    if (chol) {
      const F d = f[static_cast<long>(j) * N + j];
      for (int c = threadIdx.x; c < k; c += blockDim.x) w[static_cast<long>(j) * k + c] /= d;
      __syncthreads();
    }
    const long rest = static_cast<long>(N - j - 1) * k;
    for (long e = threadIdx.x; e < rest; e += blockDim.x) {
      const long r = j + 1 + e / k, c = e % k;
      w[r * k + c] -= f[r * N + j] * w[static_cast<long>(j) * k + c];
    }
    __syncthreads();
  }
  for (int j = N - 1; j >= 0; --j) {  // U x = y, or L^T x = y
    const F d = f[static_cast<long>(j) * N + j];
    for (int c = threadIdx.x; c < k; c += blockDim.x) w[static_cast<long>(j) * k + c] /= d;
    __syncthreads();
    const long rest = static_cast<long>(j) * k;
    for (long e = threadIdx.x; e < rest; e += blockDim.x) {
      const long r = e / k, c = e % k;
      const F u = chol ? f[static_cast<long>(j) * N + r] : f[r * N + j];
      w[r * k + c] -= u * w[static_cast<long>(j) * k + c];
    }
    __syncthreads();
  }
  for (long e = threadIdx.x; e < nk; e += blockDim.x) X[e] = w[e];
}

/// The LU panel rows x nb at (j0, j0) of F factored by one block in shared memory (ld nb + 1):
/// the pivots into piv[j0..j0+nb) (global rows), a column without a nonzero pivot into *info
/// (the first, 1-based) and left as it is.
template <typename F>
__global__ void __launch_bounds__(panel_block_threads)
    lu_panel_block_kernel(F* A, index_t ld, index_t j0, int rows, int nb, index_t* piv, int* info) {
  extern __shared__ __align__(16) unsigned char raw[];
  const long sld = nb + 1;
  F* tile = reinterpret_cast<F*>(raw);
  int* ipiv = reinterpret_cast<int*>(tile + rows * sld);
  __shared__ double s[32];
  __shared__ int si[32];
  F* base = A + static_cast<long>(j0) * ld + j0;
  for (int e = threadIdx.x; e < rows * nb; e += blockDim.x) tile[(e / nb) * sld + e % nb] = base[static_cast<long>(e / nb) * ld + e % nb];
  __syncthreads();
  const int zero = block_lu::lu(tile, sld, rows, nb, ipiv, s, si, false);
  for (int e = threadIdx.x; e < rows * nb; e += blockDim.x) base[static_cast<long>(e / nb) * ld + e % nb] = tile[(e / nb) * sld + e % nb];
  for (int c = threadIdx.x; c < nb; c += blockDim.x) piv[j0 + c] = j0 + ipiv[c];
  if (threadIdx.x == 0 && zero != 0 && *info == 0) *info = static_cast<int>(j0 + zero);
}

/// Shared memory lu_panel_block_kernel takes for a panel of rows x nb.
template <typename F>
constexpr std::size_t panel_block_smem(long rows, long nb) {
  return sizeof(F) * static_cast<std::size_t>(rows) * (nb + 1) + sizeof(int) * static_cast<std::size_t>(nb);
}

}  // namespace la::dense_detail
