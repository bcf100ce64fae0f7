// The kernels of la::dense_solver (dense_device.cu says what each does in the algorithm):
// copies and conversions, LU's cooperative panel and its row swaps, the diagonal blocks'
// factorization and inverses, the solves' block updates, residuals and norms. Private to
// solvers/direct (dense_factors.cuh, dense_lu.cuh, dense_cholesky.cuh, dense_solves.cuh, dense_device.cu).
#pragma once

#include <algorithm>
#include <type_traits>
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <la/context.hpp>
#include <la/error.hpp>
#include <la/types.hpp>

namespace la::dense_detail {
namespace cgx = cooperative_groups;


constexpr int threads = 256;
inline unsigned blocks_for(long n, int per = threads) { return static_cast<unsigned>(std::max<long>(1, (n + per - 1) / per)); }

template <typename T>
__device__ __forceinline__ T abs_of(T v) {
  return v < T(0) ? -v : v;
}

// ---- copies -------------------------------------------------------------------------------

/// dst (N x N) = src (n x n, lds) converted, identity in the padding.
template <typename In, typename Out>
__global__ void pad_copy_kernel(const In* src, index_t lds, index_t n, Out* dst, index_t N, double scale) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(N) * N) return;
  const index_t i = static_cast<index_t>(e / N), j = static_cast<index_t>(e % N);
  dst[e] = i < n && j < n ? static_cast<Out>(static_cast<double>(src[static_cast<long>(i) * lds + j]) * scale) : Out(i == j ? 1 : 0);
}

/// dst[i][j] (ldd) = src[i][j] (lds) for rows x cols; transposed: dst[j][i].
template <typename T>
__global__ void copy_block_kernel(const T* src, index_t lds, T* dst, index_t ldd, index_t rows, index_t cols, bool transposed) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(rows) * cols) return;
  const index_t i = static_cast<index_t>(e / cols), j = static_cast<index_t>(e % cols);
  const T v = src[static_cast<long>(i) * lds + j];
  if (transposed) dst[static_cast<long>(j) * ldd + i] = v;
  else dst[static_cast<long>(i) * ldd + j] = v;
}

/// out = in (n x k, ld k) converted and scaled; rows n..N of out (when N > n) are zero.
template <typename In, typename Out>
__global__ void convert_rows_kernel(const In* in, index_t n, index_t N, index_t k, Out* out, double scale) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(N) * k) return;
  out[e] = e < static_cast<long>(n) * k ? static_cast<Out>(static_cast<double>(in[e]) * scale) : Out(0);
}

/// dst (rows x cols, packed) = src (ld lds) rounded to nearest in H (half or bfloat16), the
/// 16-bit trailing updates' operands. Half saturates at its largest finite value (65504)
/// rather than turning a large Schur complement entry into inf: the refinement then sees a
/// poor factor, not a NaN one.
template <typename H>
__global__ void round_block_kernel(const float* src, index_t lds, H* dst, index_t rows, index_t cols) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(rows) * cols) return;
  const index_t i = static_cast<index_t>(e / cols), j = static_cast<index_t>(e % cols);
  float v = src[static_cast<long>(i) * lds + j];
  if constexpr (std::is_same_v<H, __half>) {
    if (!isnan(v)) v = fminf(fmaxf(v, -65504.0f), 65504.0f);  // a NaN stays one
    dst[e] = __float2half_rn(v);
  } else {
    dst[e] = __float2bfloat16_rn(v);
  }
}

/// out[i] = in[perm[i]] row by row (k columns); inverse: out[perm[i]] = in[i].
template <typename T>
__global__ void permute_rows_kernel(const T* in, T* out, const index_t* perm, index_t n, index_t k, bool inverse) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(n) * k) return;
  const index_t i = static_cast<index_t>(e / k), c = static_cast<index_t>(e % k);
  if (inverse) out[static_cast<long>(perm[i]) * k + c] = in[e];
  else out[e] = in[static_cast<long>(perm[i]) * k + c];
}

// ---- LU's panel ---------------------------------------------------------------------------

/// cand_val/cand_row: 2 x gridDim (one set a column parity), cand_rows: 2 x gridDim x nb (each
/// block's candidate row), crow: 2 x nb (row c as it was, written by the block that owns it).
/// One grid barrier a column: every block publishes its candidate's whole row and the owner of
/// row c publishes that row, so after the barrier each block has what the swap needs; the
/// parity double-buffers them (column c+2 writes only after column c+1's barrier, which every
/// block reaches after it has read column c's).
template <typename T>
__global__ void __launch_bounds__(threads) lu_panel_kernel(T* F, index_t ld, index_t j0, index_t rows, int nb, int rpb,
                                                           index_t* piv, T* cand_val, index_t* cand_row, T* cand_rows,
                                                           T* crow, int* info) {
  cgx::grid_group grid = cgx::this_grid();
  extern __shared__ __align__(16) unsigned char raw[];
  const int sld = nb + 1;  // odd: a column's values fall in different banks
  T* tile = reinterpret_cast<T*>(raw);
  T* u = tile + static_cast<long>(rpb) * sld;
  __shared__ T red_v[threads / 32];
  __shared__ index_t red_r[threads / 32];
  __shared__ index_t s_p, s_best_row;
  __shared__ T s_pv;
  __shared__ int s_w;
  const index_t r0 = static_cast<index_t>(blockIdx.x) * rpb;
  const int nr = static_cast<int>(std::max<index_t>(0, std::min<index_t>(rows - r0, rpb)));
  T* base = F + static_cast<long>(j0) * ld + j0;
  for (int e = threadIdx.x; e < nr * nb; e += blockDim.x)
    tile[(e / nb) * sld + e % nb] = base[static_cast<long>(r0 + e / nb) * ld + e % nb];
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned G = gridDim.x;
  for (int c = 0; c < nb; ++c) {
    const int par = c & 1;
    // The block's candidate: the largest |value| in column c at or below row c, lowest row on ties.
    T best = T(-1);
    index_t br = -1;
    for (int r = threadIdx.x; r < nr; r += blockDim.x) {
      if (r0 + r < c) continue;
      const T v = abs_of(tile[r * sld + c]);
      if (v > best || (v != v && best == best)) best = v != v ? T(INFINITY) : v, br = r0 + r;  // NaN wins: it shows
    }
    for (int o = 16; o > 0; o >>= 1) {
      const T ov = __shfl_down_sync(0xffffffffu, best, o);
      const index_t orr = __shfl_down_sync(0xffffffffu, br, o);
      if (ov > best || (ov == best && orr >= 0 && (br < 0 || orr < br))) best = ov, br = orr;
    }
    if (lane == 0) red_v[warp] = best, red_r[warp] = br;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < threads / 32; ++w)
        if (red_v[w] > best || (red_v[w] == best && red_r[w] >= 0 && (br < 0 || red_r[w] < br))) best = red_v[w], br = red_r[w];
      cand_val[par * G + blockIdx.x] = best, cand_row[par * G + blockIdx.x] = br;
      s_best_row = br;
    }
    __syncthreads();
    if (s_best_row >= 0)
      for (int k = threadIdx.x; k < nb; k += blockDim.x)
        cand_rows[(static_cast<long>(par) * G + blockIdx.x) * nb + k] = tile[(s_best_row - r0) * sld + k];
    if (c >= r0 && c < r0 + nr)
      for (int k = threadIdx.x; k < nb; k += blockDim.x) crow[par * nb + k] = tile[(c - r0) * sld + k];
    grid.sync();
    if (warp == 0) {  // every block picks the same pivot from the candidates
      best = T(-1), br = -1;
      int wb = -1;
      for (unsigned b = lane; b < G; b += 32) {
        const T v = cand_val[par * G + b];
        const index_t r = cand_row[par * G + b];
        if (v > best || (v == best && r >= 0 && (br < 0 || r < br))) best = v, br = r, wb = static_cast<int>(b);
      }
      for (int o = 16; o > 0; o >>= 1) {
        const T ov = __shfl_down_sync(0xffffffffu, best, o);
        const index_t orr = __shfl_down_sync(0xffffffffu, br, o);
        const int ow = __shfl_down_sync(0xffffffffu, wb, o);
        if (ov > best || (ov == best && orr >= 0 && (br < 0 || orr < br))) best = ov, br = orr, wb = ow;
      }
      if (lane == 0) s_p = best > T(0) ? br : c, s_pv = best, s_w = wb;
    }
    __syncthreads();
    const index_t p = s_p;
    const bool singular = !(s_pv > T(0));
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      piv[j0 + c] = j0 + p;
      if (singular && *info == 0) *info = static_cast<int>(j0 + c + 1);
    }
    if (!singular) {
      const T* prow = cand_rows + (static_cast<long>(par) * G + s_w) * nb;
      for (int k = threadIdx.x; k < nb; k += blockDim.x) {
        const T pv = prow[k];
        u[k] = pv;
        if (p != c && c >= r0 && c < r0 + nr) tile[(c - r0) * sld + k] = pv;
        if (p != c && p >= r0 && p < r0 + nr) tile[(p - r0) * sld + k] = crow[par * nb + k];
      }
      __syncthreads();
      const T inv = T(1) / u[c];
      for (int r = threadIdx.x; r < nr; r += blockDim.x)
        if (r0 + r > c) tile[r * sld + c] *= inv;
      __syncthreads();
      // The rank-1 update: a warp a row, its lanes along it (no division per element).
      if (nb - c - 1 > 0)
        for (int r = warp; r < nr; r += threads / 32) {
          if (r0 + r <= c) continue;
          const T l = tile[r * sld + c];
          for (int k = c + 1 + lane; k < nb; k += 32) tile[r * sld + k] -= l * u[k];
        }
      __syncthreads();
    }
  }
  for (int e = threadIdx.x; e < nr * nb; e += blockDim.x)
    base[static_cast<long>(r0 + e / nb) * ld + e % nb] = tile[(e / nb) * sld + e % nb];
}

/// The swaps piv[j0..j0+count) (global rows) applied in order to the columns [c_begin,
/// c_end) outside [skip_begin, skip_end) (a range inside it, whose rows the panel swapped
/// itself): one thread a column.
template <typename T>
__global__ void laswp_kernel(T* F, index_t ld, index_t j0, index_t count, const index_t* piv, index_t c_begin, index_t c_end,
                             index_t skip_begin, index_t skip_end) {
  index_t col = c_begin + static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= c_end - (skip_end - skip_begin)) return;
  if (col >= skip_begin) col += skip_end - skip_begin;
  for (index_t c = 0; c < count; ++c) {
    const index_t p = piv[j0 + c], r = j0 + c;
    if (p != r) {
      T* a = F + static_cast<long>(r) * ld + col;
      T* b = F + static_cast<long>(p) * ld + col;
      const T t = *a;
      *a = *b, *b = t;
    }
  }
}

// ---- diagonal blocks ----------------------------------------------------------------------

/// The inverse of a diagonal block's triangle (lower or upper, unit or not), block
/// blockIdx.x of N / nb: thread k computes column k. out gets nb x nb per block, row-major.
template <typename T>
__global__ void tri_inverse_kernel(const T* F, index_t ld, int nb, index_t first_block, bool lower, bool unit, T* out) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* m = reinterpret_cast<T*>(raw);  // nb x nb
  T* x = m + nb * nb;                // nb x (nb + 1): column k of the inverse in x[i][k]
  const index_t j0 = (first_block + blockIdx.x) * nb;
  for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) m[e] = F[static_cast<long>(j0 + e / nb) * ld + j0 + e % nb];
  __syncthreads();
  const int sx = nb + 1;
  for (int k = threadIdx.x; k < nb; k += blockDim.x) {
    for (int i = 0; i < nb; ++i) x[i * sx + k] = T(0);
    if (lower) {
      x[k * sx + k] = unit ? T(1) : T(1) / m[k * nb + k];
      for (int i = k + 1; i < nb; ++i) {
        T s = 0;
        for (int q = k; q < i; ++q) s += m[i * nb + q] * x[q * sx + k];
        x[i * sx + k] = unit ? -s : -s / m[i * nb + i];
      }
    } else {
      x[k * sx + k] = unit ? T(1) : T(1) / m[k * nb + k];
      for (int i = k - 1; i >= 0; --i) {
        T s = 0;
        for (int q = i + 1; q <= k; ++q) s += m[i * nb + q] * x[q * sx + k];
        x[i * sx + k] = unit ? -s : -s / m[i * nb + i];
      }
    }
  }
  __syncthreads();
  T* o = out + static_cast<long>(first_block + blockIdx.x) * nb * nb;
  for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) o[e] = x[(e / nb) * sx + e % nb];
}

/// Cholesky of the diagonal block at j0 in shared memory (lower; the strict upper part is
/// set to zero), written back; a pivot that is not positive sets *info (if not yet set).
template <typename T>
__global__ void potrf_kernel(T* F, index_t ld, index_t j0, int nb, int* info) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* m = reinterpret_cast<T*>(raw);
  const int sm = nb + 1;
  __shared__ bool bad;
  for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) m[(e / nb) * sm + e % nb] = F[static_cast<long>(j0 + e / nb) * ld + j0 + e % nb];
  if (threadIdx.x == 0) bad = false;
  __syncthreads();
  for (int k = 0; k < nb; ++k) {
    if (threadIdx.x == 0) {
      const T d = m[k * sm + k];
      if (!(d > T(0))) {
        if (!bad && *info == 0) *info = static_cast<int>(j0 + k + 1);
        bad = true;
      }
      m[k * sm + k] = d > T(0) ? sqrt(d) : T(1);
    }
    __syncthreads();
    const T inv = T(1) / m[k * sm + k];
    for (int i = k + 1 + threadIdx.x; i < nb; i += blockDim.x) m[i * sm + k] *= inv;
    __syncthreads();
    const int w = nb - k - 1;
    for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
      const int i = k + 1 + e / w, j = k + 1 + e % w;
      if (j <= i) m[i * sm + j] -= m[i * sm + k] * m[j * sm + k];
    }
    __syncthreads();
  }
  for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) {
    const int i = e / nb, j = e % nb;
    F[static_cast<long>(j0 + i) * ld + j0 + j] = j <= i ? m[i * sm + j] : T(0);
  }
}

// ---- solves -------------------------------------------------------------------------------

/// B_j (nb x k, ld k) = Inv B_j, Inv = inv or inv^T (nb x nb): block y a chunk of 32 columns.
template <typename T>
__global__ void diag_apply_kernel(const T* inv, bool transposed, T* bj, int nb, index_t k) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* iv = reinterpret_cast<T*>(raw);  // nb x nb
  T* b = iv + nb * nb;                // nb x 32
  const index_t c0 = static_cast<index_t>(blockIdx.x) * 32;
  const int cw = static_cast<int>(std::min<index_t>(32, k - c0));
  for (int e = threadIdx.x; e < nb * nb; e += blockDim.x) iv[e] = transposed ? inv[(e % nb) * nb + e / nb] : inv[e];
  for (int e = threadIdx.x; e < nb * 32; e += blockDim.x) {
    const int i = e / 32, c = e % 32;
    b[e] = c < cw ? bj[static_cast<long>(i) * k + c0 + c] : T(0);
  }
  __syncthreads();
  for (int e = threadIdx.x; e < nb * 32; e += blockDim.x) {
    const int i = e / 32, c = e % 32;
    if (c >= cw) continue;
    T s = 0;
    for (int q = 0; q < nb; ++q) s += iv[i * nb + q] * b[q * 32 + c];
    bj[static_cast<long>(i) * k + c0 + c] = s;
  }
}

/// B[r] -= sum_q M[r][q] X[q] for rows r in [r_begin, r_end), q over the block at j0 (nb
/// wide), M[r][q] = F[r][j0+q] (or F[j0+q][r] transposed), X = B's rows j0..j0+nb. k
/// right-hand sides (at most 8 handled per thread pass). Not transposed: a warp per row, its
/// lanes over q; transposed: a thread per row (F's rows read along r).
template <typename T>
__global__ void off_update_kernel(const T* F, index_t ld, index_t j0, int nb, T* B, index_t k, index_t r_begin, index_t r_end,
                                  bool transposed) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* x = reinterpret_cast<T*>(raw);  // nb x k
  for (long e = threadIdx.x; e < static_cast<long>(nb) * k; e += blockDim.x) x[e] = B[static_cast<long>(j0) * k + e];
  __syncthreads();
  if (!transposed) {
    const index_t r = r_begin + static_cast<index_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x & 31;
    if (r >= r_end) return;
    const T* row = F + static_cast<long>(r) * ld + j0;
    for (index_t c = 0; c < k; ++c) {
      T s = 0;
      for (int q = lane; q < nb; q += 32) s += row[q] * x[q * k + c];
      for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
      if (lane == 0) B[static_cast<long>(r) * k + c] -= s;
    }
  } else {
    const index_t r = r_begin + static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= r_end) return;
    for (index_t c = 0; c < k; ++c) {
      T s = 0;
      for (int q = 0; q < nb; ++q) s += F[static_cast<long>(j0 + q) * ld + r] * x[q * k + c];
      B[static_cast<long>(r) * k + c] -= s;
    }
  }
}

/// R = B - A X for n x k (A n x n, lda), in double; a warp per (row, column).
template <typename TA, typename TX>
__global__ void residual_kernel(const TA* A, index_t lda, index_t n, const TX* X, const double* B, double* R, index_t k) {
  const index_t r = static_cast<index_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const index_t c = blockIdx.y;
  const int lane = threadIdx.x & 31;
  if (r >= n) return;
  const TA* row = A + static_cast<long>(r) * lda;
  double s = 0;
  for (index_t q = lane; q < n; q += 32) s += static_cast<double>(row[q]) * static_cast<double>(X[static_cast<long>(q) * k + c]);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) R[static_cast<long>(r) * k + c] = B[static_cast<long>(r) * k + c] - s;
}

/// out[c] = max over rows of |M[r][c]| (n x k, ld k), for the backward error; a block per column.
template <typename T>
__global__ void column_max_kernel(const T* M, index_t n, index_t k, double* out) {
  __shared__ double red[threads / 32];
  const index_t c = blockIdx.x;
  double m = 0;
  for (index_t r = threadIdx.x; r < n; r += blockDim.x) m = fmax(m, fabs(static_cast<double>(M[static_cast<long>(r) * k + c])));
  for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < threads / 32; ++w) m = fmax(m, red[w]);
    out[c] = m;
  }
}

/// out[c] = ||M[:, c]||_2 (n x k, ld k), scaled by the column's largest |entry| against
/// overflow; a block per column, a fixed reduction order.
template <typename T>
__global__ void column_norm2_kernel(const T* M, index_t n, index_t k, const double* col_max, double* out) {
  __shared__ double red[threads / 32];
  const index_t c = blockIdx.x;
  const double m = col_max[c];
  double s = 0;
  if (m > 0)
    for (index_t r = threadIdx.x; r < n; r += blockDim.x) {
      const double v = static_cast<double>(M[static_cast<long>(r) * k + c]) / m;
      s += v * v;
    }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < threads / 32; ++w) s += red[w];
    out[c] = m * sqrt(s);
  }
}

/// Row sums (inf-norm) and column sums (1-norm) of |A| and its largest |entry| and non-finite
/// count: a warp per row; columns by atomics (order-free for the max only; the 1-norm's
/// column sums are a second pass per column block to stay deterministic).
template <typename T>
__global__ void row_norms_kernel(const T* A, index_t lda, index_t n, double* row_sum, unsigned long long* bad) {
  const index_t r = static_cast<index_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (r >= n) return;
  double s = 0;
  unsigned long long nf = 0;
  for (index_t q = lane; q < n; q += 32) {
    const double v = static_cast<double>(A[static_cast<long>(r) * lda + q]);
    if (!isfinite(v)) ++nf;
    s += fabs(v);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o), nf += __shfl_down_sync(0xffffffffu, nf, o);
  if (lane == 0) {
    row_sum[r] = s;
    if (nf) atomicAdd(bad, nf);
  }
}
template <typename T>
__global__ void col_norms_kernel(const T* A, index_t lda, index_t n, double* col_sum, double* col_max) {
  const index_t c = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n) return;
  double s = 0, m = 0;
  for (index_t r = 0; r < n; ++r) {
    const double v = fabs(static_cast<double>(A[static_cast<long>(r) * lda + c]));
    s += v, m = fmax(m, v);
  }
  col_sum[c] = s, col_max[c] = m;
}
template <typename T>
__global__ void symmetric_kernel(const T* A, index_t lda, index_t n, unsigned long long* asym) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long>(n) * n) return;
  const index_t i = static_cast<index_t>(e / n), j = static_cast<index_t>(e % n);
  if (j > i && A[static_cast<long>(i) * lda + j] != A[static_cast<long>(j) * lda + i]) atomicAdd(asym, 1ull);
  if (i == j && !(A[static_cast<long>(i) * lda + i] > T(0))) atomicAdd(asym, 1ull);
}

/// X += D (n x k), D in Td.
template <typename Td>
__global__ void add_kernel(double* X, const Td* D, long count, double scale) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) X[e] += static_cast<double>(D[e]) * scale;
}

}  // namespace la::dense_detail
