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
constexpr int panel_block_threads = 512;

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
/// measured when `measure` (T = F, scale 1); factored (how: 0 automatic, Cholesky where A is
/// symmetric with a positive diagonal and LU where a pivot is not positive; 1 LU; 2 Cholesky),
/// the factors into f (N x N), the pivots and the permutation they make (LU). The diagonal
/// blocks' inverses, which only the transposed solves need, are made when first asked for
/// (ensure_inverses). A non-finite entry stops it before the factorization.
template <typename T, typename F>
__global__ void __launch_bounds__(small_threads)
    small_factor_kernel(const T* a, int n, double scale, F* f, int N, int how, bool measure, index_t* piv,
                        index_t* perm, small_result* out) {
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
  if (measure) {  // from the shared copy (measure is asked with T = F and scale 1: the copy is A)
    double row = 0, col = 0, big = 0;
    for (int q = threadIdx.x; q < n; q += blockDim.x) {
      double rs = 0, cs = 0;
      for (int c = 0; c < n; ++c) {
        const double vr = fabs(static_cast<double>(M[q * ld + c]));
        rs += vr, cs += fabs(static_cast<double>(M[c * ld + q]));
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
  block_lu::solve_in_place(f, N, N, chol, w, k);
  for (long e = threadIdx.x; e < nk; e += blockDim.x) X[e] = w[e];
}

/// The LU panel rows x nb at (j0, j0) of A factored by one block in shared memory (ld nb + 1),
/// with what follows it inside the outer panel [J, JE) fused in: its swaps applied to the outer
/// panel's other columns, L11^-1 into inv_l's block j0 / nb, and U12 = L11^-1 A12 over the
/// columns [j0 + nb, JE). The pivots go into piv[j0..j0+nb) (global rows), a column without a
/// nonzero pivot into *info (the first, 1-based), left as it is. A thread a column for the
/// swaps and U12 (in place, from the bottom row up).
template <typename F, int NB>
__global__ void __launch_bounds__(panel_block_threads)
    lu_panel_block_kernel(F* A, index_t ld, index_t j0, int rows, index_t J, index_t JE, index_t* piv, int* info, F* inv_l) {
  extern __shared__ __align__(16) unsigned char raw[];
  constexpr long sld = NB + 1;
  F* tile = reinterpret_cast<F*>(raw);
  F* iv = tile + rows * sld;                     // NB x NB: L11^-1
  int* ipiv = reinterpret_cast<int*>(iv + NB * NB);
  __shared__ double s[32];
  __shared__ int si[32];
  F* base = A + static_cast<long>(j0) * ld + j0;
  for (int e = threadIdx.x; e < rows * NB; e += blockDim.x) tile[(e / NB) * sld + e % NB] = base[static_cast<long>(e / NB) * ld + e % NB];
  __syncthreads();
  const int zero = block_lu::lu(tile, sld, rows, NB, ipiv, s, si, false);
  for (int e = threadIdx.x; e < rows * NB; e += blockDim.x) base[static_cast<long>(e / NB) * ld + e % NB] = tile[(e / NB) * sld + e % NB];
  for (int c = threadIdx.x; c < NB; c += blockDim.x) piv[j0 + c] = j0 + ipiv[c];
  if (threadIdx.x == 0 && zero != 0 && *info == 0) *info = static_cast<int>(j0 + zero);
  // L11^-1 (unit lower): a thread a column, into shared memory and inv_l.
  F* out = inv_l + (j0 / NB) * NB * NB;
  for (int k = threadIdx.x; k < NB; k += blockDim.x) {
    for (int i = 0; i < NB; ++i) iv[i * NB + k] = F(i == k ? 1 : 0);
    for (int i = k + 1; i < NB; ++i) {
      F sum = 0;
      for (int q = k; q < i; ++q) sum += tile[i * sld + q] * iv[q * NB + k];
      iv[i * NB + k] = -sum;
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) out[e] = iv[e];
  // The outer panel's other columns: this panel's swaps, then (right of it) U12.
  const index_t cols = (JE - J) - NB;
  for (index_t t = threadIdx.x; t < cols; t += blockDim.x) {
    const index_t col = J + t < j0 ? J + t : J + t + NB;
    F* c0 = A + static_cast<long>(j0) * ld + col;
    for (int c = 0; c < NB; ++c) {
      const int p = ipiv[c];
      if (p != c) {
        const F v = c0[static_cast<long>(c) * ld];
        c0[static_cast<long>(c) * ld] = c0[static_cast<long>(p) * ld];
        c0[static_cast<long>(p) * ld] = v;
      }
    }
    if (col < j0) continue;
    for (int i = NB - 1; i >= 1; --i) {  // y = L11^-1 x in place, bottom up: x[q < i] are still the inputs
      F sum = c0[static_cast<long>(i) * ld];
      for (int q = 0; q < i; ++q) sum += iv[i * NB + q] * c0[static_cast<long>(q) * ld];
      c0[static_cast<long>(i) * ld] = sum;
    }
  }
}

/// Shared memory lu_panel_block_kernel takes for a panel of rows x nb.
template <typename F>
constexpr std::size_t panel_block_smem(long rows, long nb) {
  return sizeof(F) * (static_cast<std::size_t>(rows) * (nb + 1) + static_cast<std::size_t>(nb) * nb) +
         sizeof(int) * static_cast<std::size_t>(nb);
}

// ---- Cholesky's panel in two launches --------------------------------------------------------

/// Dynamic shared memory chol_diag_kernel takes.
template <typename F>
constexpr std::size_t chol_diag_smem(int nb) { return sizeof(F) * static_cast<std::size_t>(nb) * (2 * nb + 1); }

/// The diagonal block at (j0, j0) (NB x NB) factored by Cholesky in shared memory (the strict
/// upper part set to zero) and L11^-1 into inv_l's block j0 / NB; a pivot that is not positive
/// sets *info (the first, 1-based) and stops the block.
template <typename F, int NB>
__global__ void __launch_bounds__(256) chol_diag_kernel(F* A, index_t ld, index_t j0, F* inv_l, int* info) {
  extern __shared__ __align__(16) unsigned char raw[];
  F* m = reinterpret_cast<F*>(raw);  // NB x (NB + 1)
  F* iv = m + NB * (NB + 1);         // NB x NB
  constexpr int sm = NB + 1;
  F* base = A + static_cast<long>(j0) * ld + j0;
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) m[(e / NB) * sm + e % NB] = base[static_cast<long>(e / NB) * ld + e % NB];
  __syncthreads();
  const int bad = block_lu::cholesky(m, sm, NB);
  if (bad != 0) {
    if (threadIdx.x == 0 && *info == 0) *info = static_cast<int>(j0 + bad);
    return;  // every thread: bad is the same for all
  }
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) {
    const int i = e / NB, j = e % NB;
    base[static_cast<long>(i) * ld + j] = j <= i ? m[i * sm + j] : F(0);
  }
  for (int k = threadIdx.x; k < NB; k += blockDim.x) {  // L11^-1: a thread a column
    for (int i = 0; i < NB; ++i) iv[i * NB + k] = F(0);
    iv[k * NB + k] = F(1) / m[k * sm + k];
    for (int i = k + 1; i < NB; ++i) {
      F sum = 0;
      for (int q = k; q < i; ++q) sum += m[i * sm + q] * iv[q * NB + k];
      iv[i * NB + k] = -sum / m[i * sm + i];
    }
  }
  __syncthreads();
  F* out = inv_l + (j0 / NB) * NB * NB;
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) out[e] = iv[e];
}

/// L21 = A21 L11^-T in place for the rows [j0 + NB, N) of the panel at j0 (a thread a row, its
/// NB values in registers), and the first w2 of them transposed into lt (NB x w2): the inner
/// update's right operand. Reads L11^-1 from inv_l (chol_diag_kernel's). Skipped where the
/// diagonal block failed (*info set).
template <typename F, int NB>
__global__ void __launch_bounds__(128) chol_l21_kernel(F* A, index_t ld, index_t j0, index_t N, const F* inv_l, F* lt,
                                                       index_t w2, const int* info) {
  __shared__ F iv[NB * NB];
  if (*info != 0) return;
  const F* in = inv_l + (j0 / NB) * NB * NB;
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) iv[e] = in[e];
  __syncthreads();
  const index_t r = j0 + NB + static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= N) return;
  F* row = A + static_cast<long>(r) * ld + j0;
  F x[NB];
#pragma unroll
  for (int q = 0; q < NB; ++q) x[q] = row[q];
  // l_i = sum_{q <= i} inv[i][q] a_q, bottom up so that a_q (q < i) are still the inputs.
#pragma unroll
  for (int i = NB - 1; i >= 0; --i) {
    F sum = 0;
#pragma unroll
    for (int q = 0; q <= i; ++q) sum += iv[i * NB + q] * x[q];
    x[i] = sum;
  }
  const index_t t = r - (j0 + NB);
#pragma unroll
  for (int q = 0; q < NB; ++q) {
    row[q] = x[q];
    if (t < w2) lt[static_cast<long>(q) * w2 + t] = x[q];
  }
}

}  // namespace la::dense_detail
