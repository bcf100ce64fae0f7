// The GPU's dense factorizations and solves behind la::dense_solver (dense_solver.hpp says
// what and why). Every matrix here is row-major, N x N with N = n rounded up to the panel
// width nb and an identity in the padding, so every block is whole and every GEMM aligned.
//
// LU, for each panel of columns [j, j+nb):
//   1. lu_panel_kernel (cooperative): rows j..N of the panel live in the blocks' shared memory;
//      for each column the pivot is the largest |value| over the grid (ties: the lowest row,
//      so reruns are bit-identical), the two rows are swapped through global buffers, the rows
//      below are scaled and updated. One grid barrier a column.
//   2. laswp_kernel: the panel's swaps applied to the columns left and right of it.
//   3. tri_inverse_kernel: L11^-1 (unit lower); then U12 = L11^-1 A12 as a GEMM into a
//      workspace, copied back.
//   4. A22 -= L21 U12 through the GEMM registry.
// Cholesky, for each panel: potrf_kernel factors the diagonal block in shared memory and
// inverts it; L21 = A21 L11^-T as a GEMM; A22 -= L21 L21^T (lower tiles only for double).
//
// Solves: B = P B by a gather; then for each diagonal block (forward or backward) X_j =
// (block inverse) B_j, and the rows still to come lose M[r, j] X_j (a GEMM for many
// right-hand sides, a row kernel for few). Transposed solves (the condition estimate) read
// the factors transposed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <la/kernels/gemm/gemm.hpp>
#include <la/memory.hpp>
#include <la/solvers/dense_solver.hpp>

namespace la {
namespace {
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
      const int w = nb - c - 1;
      if (w > 0)
        for (int e = threadIdx.x; e < nr * w; e += blockDim.x) {
          const int r = e / w, k = c + 1 + e % w;
          if (r0 + r > c) tile[r * sld + k] -= tile[r * sld + c] * u[k];
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

#define LA_LAUNCH_CHECK(s) LA_CHECK_LAUNCH(s)

template <typename T>
device_buffer<T> alloc(context& ctx, std::size_t n) {
  return ctx.allocate<T>(n);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int smem_optin(const context& ctx) {
  int v = 0;
  LA_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device()));
  return v;
}

/// With LA_DENSE_PROFILE set, the factorizations time their phases with events and print
/// the sums to stderr (the tuning's breakdown: bench/history/dense-direct-solvers.md).
class phase_timer {
 public:
  explicit phase_timer(cudaStream_t s) : on_(std::getenv("LA_DENSE_PROFILE") != nullptr), s_(s) {
    if (on_) mark("start");
  }
  void mark(const char* phase) {
    if (!on_) return;
    cudaEvent_t e;
    LA_CUDA_TRY(cudaEventCreate(&e));
    LA_CUDA_TRY(cudaEventRecord(e, s_));
    marks_.push_back({phase, e});
  }
  ~phase_timer() {
    if (!on_ || marks_.empty()) return;
    (void)cudaEventSynchronize(marks_.back().second);
    std::map<std::string, float> sum;
    float total = 0;
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0;
      (void)cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second);
      sum[marks_[i].first] += ms, total += ms;
    }
    std::fprintf(stderr, "dense factorization phases (ms):");
    for (const auto& [k, v] : sum) std::fprintf(stderr, " %s %.2f;", k.c_str(), v);
    std::fprintf(stderr, " total %.2f\n", total);
    for (auto& m : marks_) (void)cudaEventDestroy(m.second);
  }
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;

 private:
  bool on_;
  cudaStream_t s_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
};

/// The factors of one precision F (float or double) of an N x N padded matrix.
template <typename F>
struct factors {
  index_t n = 0, N = 0, nb = 0;
  index_t outer = 0;  // the outer panel's width: a multiple of nb
  bool chol = false;
  int info = 0;
  std::string gemm;  // F = double: a dgemm name or auto; F = float: a gemm_variants() name or auto
  device_buffer<F> f;        // N x N
  device_buffer<F> inv_l;    // (N / nb) x nb x nb: inverses of L's diagonal blocks
  device_buffer<F> inv_u;    // LU: of U's
  device_buffer<index_t> perm;  // LU: row i of P A is row perm[i] of A
  std::vector<index_t> piv;
};

/// C (m x n, ldc) = alpha A B + beta C for the factorization's blocks, in F's GEMM.
template <typename F>
void block_gemm(context& ctx, const std::string& algo, index_t m, index_t n, index_t k, const F* a, index_t lda, const F* b,
                index_t ldb, F* c, index_t ldc, F alpha, F beta, bool lower_only) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<F, double>) {
    dgemm_args g;
    g.m = m, g.n = n, g.k = k, g.a = a, g.lda = lda, g.b = b, g.ldb = ldb, g.c = c, g.ldc = ldc;
    g.alpha = alpha, g.beta = beta, g.lower_only = lower_only;
    dgemm(g, ctx.stream(), algo);
  } else {
    gemm_problem p{m, n, k, ctx.sm_count(), lda, ldb};
    const bool reduced = algo == "tf32";
    const gemm_variant& v = algo == "auto" || algo == "fp32" || algo == "tf32"
                                ? select_gemm(p, gemm_input::f32, reduced)
                                : find_gemm(algo == "tf32x3" ? (sm90a_kernels_available() ? "wgmma_tf32x3" : "reg_tiled") : algo);
    if (!v.can_implement(p)) throw not_supported("the " + algo + " GEMM cannot run this factorization's update on this device");
    const std::size_t ws_bytes = v.workspace_bytes(p);
    gemm_args g{m, n, k, a, lda, b, ldb, c, ldc, alpha, beta, ws_bytes ? ctx.scratch(ws_bytes) : nullptr, ctx.sm_count()};
    g.workspace_size = ws_bytes;
    v.run(g, ctx.stream());
  }
}

template <typename F>
void factor_lu(context& ctx, factors<F>& fa) {
  const index_t N = fa.N, nb = fa.nb;
  cudaStream_t s = ctx.stream();
  fa.chol = false;
  auto piv = alloc<index_t>(ctx, static_cast<std::size_t>(N));
  auto info = alloc<int>(ctx, 1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(int), s));
  const index_t nblk = N / nb;
  fa.inv_l = alloc<F>(ctx, static_cast<std::size_t>(N) * nb);
  fa.inv_u = alloc<F>(ctx, static_cast<std::size_t>(N) * nb);
  auto work = alloc<F>(ctx, static_cast<std::size_t>(nb) * N);
  // The panel's grid: as many resident blocks as its rows need, each a share of the rows in shared memory.
  // The dynamic limit is the opt-in maximum less the kernel's static shared memory.
  cudaFuncAttributes fattr{};
  LA_CUDA_TRY(cudaFuncGetAttributes(&fattr, lu_panel_kernel<F>));
  const int smax = smem_optin(ctx) - static_cast<int>(fattr.sharedSizeBytes);
  LA_CUDA_TRY(cudaFuncSetAttribute(lu_panel_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, smax));
  int per_sm = 0;
  const int sm = ctx.sm_count();
  auto cand_v = alloc<F>(ctx, static_cast<std::size_t>(sm) * 2);
  auto cand_r = alloc<index_t>(ctx, static_cast<std::size_t>(sm) * 2);
  auto cand_rows = alloc<F>(ctx, static_cast<std::size_t>(sm) * 2 * nb);
  auto crow = alloc<F>(ctx, static_cast<std::size_t>(nb) * 2);
  const int tri_smem = static_cast<int>(sizeof(F) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  // Two levels: panels of nb columns factored and applied inside an outer panel of NB
  // columns; the trailing matrix right of the outer panel is updated once per outer panel,
  // with K = NB (a GEMM of K = nb would be bound by reading and writing C).
  const index_t NB = fa.outer;
  const int nbi = static_cast<int>(nb);
  phase_timer pt(s);
  auto laswp = [&](index_t j0, index_t count, index_t c_begin, index_t c_end, index_t skip_begin, index_t skip_end) {
    const index_t cols = (c_end - c_begin) - (skip_end - skip_begin);
    if (cols <= 0) return;
    laswp_kernel<F><<<blocks_for(cols), threads, 0, s>>>(fa.f.data(), N, j0, count, piv.data(), c_begin, c_end, skip_begin,
                                                         skip_end);
    LA_LAUNCH_CHECK(s);
  };
  // rows [r0, r0 + nb) x cols [c0, c1) = L_b^-1 (those rows), L_b the unit lower block at b.
  auto trsm_rows = [&](index_t b, index_t c0, index_t c1) {
    F* a12 = fa.f.data() + static_cast<long>(b) * N + c0;
    const index_t w = c1 - c0;
    block_gemm<F>(ctx, fa.gemm, nb, w, nb, fa.inv_l.data() + static_cast<long>(b / nb) * nb * nb, nb, a12, N, work.data(), w,
                  F(1), F(0), false);
    copy_block_kernel<F><<<blocks_for(long(nb) * w), threads, 0, s>>>(work.data(), w, a12, N, nb, w, false);
    LA_LAUNCH_CHECK(s);
  };
  for (index_t J = 0; J < N; J += NB) {
    const index_t JE = std::min(N, J + NB);
    for (index_t j = J; j < JE; j += nb) {
      const index_t rows = N - j;
      const int blocks = static_cast<int>(std::min<index_t>(sm, (rows + 63) / 64));
      int rpb = static_cast<int>((rows + blocks - 1) / blocks);
      const std::size_t smem = sizeof(F) * (static_cast<std::size_t>(rpb) * (nb + 1) + nb);
      if (static_cast<int>(smem) > smax)
        throw not_supported("the LU panel of " + std::to_string(rows) + " rows x " + std::to_string(nb) +
                            " does not fit the device's shared memory; pass a smaller block");
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lu_panel_kernel<F>, threads, smem));
      if (per_sm < 1) throw not_supported("the LU panel kernel cannot be resident on this device");
      F* fp = fa.f.data();
      index_t ld = N, j0 = j, rws = rows;
      int nbv = nbi;
      index_t* pv = piv.data();
      F* cv = cand_v.data();
      index_t* cr = cand_r.data();
      F* pr = cand_rows.data();
      F* sr = crow.data();
      int* inf = info.data();
      void* args[] = {&fp, &ld, &j0, &rws, &nbv, &rpb, &pv, &cv, &cr, &pr, &sr, &inf};
      LA_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(lu_panel_kernel<F>), dim3(blocks), dim3(threads), args,
                                              smem, s));
      pt.mark("panel");
      laswp(j, nb, J, JE, j, j + nb);
      pt.mark("laswp inner");
      tri_inverse_kernel<F><<<1, 64, tri_smem, s>>>(fa.f.data(), N, nbi, j / nb, true, true, fa.inv_l.data());
      LA_LAUNCH_CHECK(s);
      pt.mark("tri_inverse");
      const index_t n2 = JE - j - nb;  // the outer panel's columns right of this one
      if (n2 > 0) {
        trsm_rows(j, j + nb, JE);
        pt.mark("trsm inner");
        block_gemm<F>(ctx, fa.gemm, N - j - nb, n2, nb, fa.f.data() + static_cast<long>(j + nb) * N + j, N,
                      fa.f.data() + static_cast<long>(j) * N + j + nb, N, fa.f.data() + static_cast<long>(j + nb) * N + j + nb,
                      N, F(-1), F(1), false);
        pt.mark("update inner");
      }
    }
    laswp(J, JE - J, 0, N, J, JE);
    pt.mark("laswp outer");
    if (JE == N) continue;
    // U12 = L11^-1 A12 over the outer panel's rows, block by block; then A22 -= L21 U12.
    for (index_t b = J; b < JE; b += nb) {
      trsm_rows(b, JE, N);
      if (b + nb < JE)
        block_gemm<F>(ctx, fa.gemm, JE - b - nb, N - JE, nb, fa.f.data() + static_cast<long>(b + nb) * N + b, N,
                      fa.f.data() + static_cast<long>(b) * N + JE, N, fa.f.data() + static_cast<long>(b + nb) * N + JE, N, F(-1),
                      F(1), false);
    }
    pt.mark("trsm outer");
    block_gemm<F>(ctx, fa.gemm, N - JE, N - JE, JE - J, fa.f.data() + static_cast<long>(JE) * N + J, N,
                  fa.f.data() + static_cast<long>(J) * N + JE, N, fa.f.data() + static_cast<long>(JE) * N + JE, N, F(-1), F(1),
                  false);
    pt.mark("update trailing");
  }
  tri_inverse_kernel<F><<<static_cast<unsigned>(nblk), 64, tri_smem, s>>>(fa.f.data(), N, static_cast<int>(nb), 0, false,
                                                                          false, fa.inv_u.data());
  LA_LAUNCH_CHECK(s);
  fa.piv.resize(static_cast<std::size_t>(N));
  LA_CUDA_TRY(cudaMemcpyAsync(fa.piv.data(), piv.data(), sizeof(index_t) * N, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(&fa.info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  // The swaps as one permutation: row i of P A is row perm[i] of A.
  std::vector<index_t> perm(static_cast<std::size_t>(N));
  for (index_t i = 0; i < N; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (index_t k = 0; k < N; ++k) std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(fa.piv[k])]);
  fa.perm = alloc<index_t>(ctx, static_cast<std::size_t>(N));
  LA_CUDA_TRY(cudaMemcpyAsync(fa.perm.data(), perm.data(), sizeof(index_t) * N, cudaMemcpyHostToDevice, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
}

template <typename F>
void factor_cholesky(context& ctx, factors<F>& fa) {
  const index_t N = fa.N, nb = fa.nb;
  cudaStream_t s = ctx.stream();
  fa.chol = true;
  auto info = alloc<int>(ctx, 1);
  LA_CUDA_TRY(cudaMemsetAsync(info.data(), 0, sizeof(int), s));
  fa.inv_l = alloc<F>(ctx, static_cast<std::size_t>(N) * nb);
  auto inv_t = alloc<F>(ctx, static_cast<std::size_t>(nb * nb));
  auto work = alloc<F>(ctx, static_cast<std::size_t>(nb) * N);
  auto work_t = alloc<F>(ctx, static_cast<std::size_t>(fa.outer) * N);
  const int nbi = static_cast<int>(nb);
  const int pot_smem = static_cast<int>(sizeof(F) * nb * (nb + 1));
  const int tri_smem = static_cast<int>(sizeof(F) * (nb * nb + nb * (nb + 1)));
  LA_CUDA_TRY(cudaFuncSetAttribute(potrf_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, pot_smem));
  LA_CUDA_TRY(cudaFuncSetAttribute(tri_inverse_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, tri_smem));
  // Two levels, as LU: the nb-wide blocks update only the outer panel's columns; the
  // trailing matrix right of it is updated once per outer panel with K = NB.
  const index_t NB = fa.outer;
  const bool lower = std::is_same_v<F, double>;
  phase_timer pt(s);
  for (index_t J = 0; J < N; J += NB) {
    const index_t JE = std::min(N, J + NB);
    for (index_t j = J; j < JE; j += nb) {
      potrf_kernel<F><<<1, threads, pot_smem, s>>>(fa.f.data(), N, j, nbi, info.data());
      LA_LAUNCH_CHECK(s);
      pt.mark("potrf");
      tri_inverse_kernel<F><<<1, 64, tri_smem, s>>>(fa.f.data(), N, nbi, j / nb, true, false, fa.inv_l.data());
      LA_LAUNCH_CHECK(s);
      pt.mark("tri_inverse");
      const index_t m2 = N - j - nb;
      if (m2 == 0) continue;
      copy_block_kernel<F><<<blocks_for(long(nb) * nb), threads, 0, s>>>(fa.inv_l.data() + static_cast<long>(j / nb) * nb * nb,
                                                                         nb, inv_t.data(), nb, nb, nb, true);
      LA_LAUNCH_CHECK(s);
      F* a21 = fa.f.data() + static_cast<long>(j + nb) * N + j;
      block_gemm<F>(ctx, fa.gemm, m2, nb, nb, a21, N, inv_t.data(), nb, work.data(), nb, F(1), F(0), false);
      copy_block_kernel<F><<<blocks_for(long(m2) * nb), threads, 0, s>>>(work.data(), nb, a21, N, m2, nb, false);
      LA_LAUNCH_CHECK(s);
      pt.mark("trsm");
      const index_t w2 = JE - j - nb;
      if (w2 == 0) continue;
      copy_block_kernel<F><<<blocks_for(long(w2) * nb), threads, 0, s>>>(work.data(), nb, work_t.data(), w2, w2, nb, true);
      LA_LAUNCH_CHECK(s);
      block_gemm<F>(ctx, fa.gemm, m2, w2, nb, work.data(), nb, work_t.data(), w2,
                    fa.f.data() + static_cast<long>(j + nb) * N + j + nb, N, F(-1), F(1), lower);
      pt.mark("update inner");
    }
    const index_t mo = N - JE, kw = JE - J;
    if (mo == 0) continue;
    const F* l21 = fa.f.data() + static_cast<long>(JE) * N + J;
    copy_block_kernel<F><<<blocks_for(long(mo) * kw), threads, 0, s>>>(l21, N, work_t.data(), mo, mo, kw, true);
    LA_LAUNCH_CHECK(s);
    pt.mark("transpose outer");
    block_gemm<F>(ctx, fa.gemm, mo, mo, kw, l21, N, work_t.data(), mo, fa.f.data() + static_cast<long>(JE) * N + JE, N, F(-1),
                  F(1), lower);
    pt.mark("update trailing");
  }
  LA_CUDA_TRY(cudaMemcpyAsync(&fa.info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
}

/// B (N x k) = M^-1 B for one triangle: lower (forward) or upper (backward), M = F's
/// triangle or its transpose; inv: the diagonal blocks' inverses of F's triangle.
template <typename F>
void tri_solve(context& ctx, const factors<F>& fa, const F* inv, bool lower_eff, bool transposed, F* B, index_t k) {
  const index_t N = fa.N, nb = fa.nb, nblk = N / nb;
  cudaStream_t s = ctx.stream();
  const int nbi = static_cast<int>(nb);
  const int dsmem = static_cast<int>(sizeof(F) * (nb * nb + nb * 32));
  LA_CUDA_TRY(cudaFuncSetAttribute(diag_apply_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, dsmem));
  const bool by_gemm = !transposed && k >= 16;
  const std::size_t usmem = sizeof(F) * nb * k;
  if (!by_gemm) {
    LA_EXPECTS(usmem <= static_cast<std::size_t>(smem_optin(ctx)), "dense_solver: too many right-hand sides for a transposed solve");
    LA_CUDA_TRY(cudaFuncSetAttribute(off_update_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(usmem)));
  }
  for (index_t t = 0; t < nblk; ++t) {
    const index_t b = lower_eff ? t : nblk - 1 - t;
    const index_t j0 = b * nb;
    diag_apply_kernel<F><<<blocks_for(k, 32), threads, dsmem, s>>>(inv + static_cast<long>(b) * nb * nb, transposed,
                                                                   B + static_cast<long>(j0) * k, nbi, k);
    LA_LAUNCH_CHECK(s);
    const index_t r_begin = lower_eff ? j0 + nb : 0, r_end = lower_eff ? N : j0;
    if (r_end <= r_begin) continue;
    if (by_gemm) {
      block_gemm<F>(ctx, std::is_same_v<F, double> ? fa.gemm : std::string("auto"), r_end - r_begin, k, nb, fa.f.data() + static_cast<long>(r_begin) * N + j0, N,
                    B + static_cast<long>(j0) * k, k, B + static_cast<long>(r_begin) * k, k, F(-1), F(1), false);
    } else if (!transposed) {
      off_update_kernel<F><<<blocks_for(r_end - r_begin, threads / 32), threads, usmem, s>>>(fa.f.data(), N, j0, nbi, B, k,
                                                                                           r_begin, r_end, false);
      LA_LAUNCH_CHECK(s);
    } else {
      off_update_kernel<F><<<blocks_for(r_end - r_begin), threads, usmem, s>>>(fa.f.data(), N, j0, nbi, B, k, r_begin, r_end,
                                                                              true);
      LA_LAUNCH_CHECK(s);
    }
  }
}

/// X (N x k, in place) = A^-1 X (or A^-T X) from the factors.
template <typename F>
void factor_solve(context& ctx, const factors<F>& fa, F* X, index_t k, bool transposed) {
  cudaStream_t s = ctx.stream();
  const index_t N = fa.N;
  if (fa.chol) {
    tri_solve(ctx, fa, fa.inv_l.data(), true, false, X, k);
    tri_solve(ctx, fa, fa.inv_l.data(), false, true, X, k);
    return;
  }
  auto tmp = alloc<F>(ctx, static_cast<std::size_t>(N) * k);
  if (!transposed) {
    permute_rows_kernel<F><<<blocks_for(long(N) * k), threads, 0, s>>>(X, tmp.data(), fa.perm.data(), N, k, false);
    LA_LAUNCH_CHECK(s);
    tri_solve(ctx, fa, fa.inv_l.data(), true, false, tmp.data(), k);
    tri_solve(ctx, fa, fa.inv_u.data(), false, false, tmp.data(), k);
    LA_CUDA_TRY(cudaMemcpyAsync(X, tmp.data(), sizeof(F) * N * static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, s));
  } else {
    tri_solve(ctx, fa, fa.inv_u.data(), true, true, X, k);   // U^T: lower
    tri_solve(ctx, fa, fa.inv_l.data(), false, true, X, k);  // L^T: upper, unit
    permute_rows_kernel<F><<<blocks_for(long(N) * k), threads, 0, s>>>(X, tmp.data(), fa.perm.data(), N, k, true);
    LA_LAUNCH_CHECK(s);
    LA_CUDA_TRY(cudaMemcpyAsync(X, tmp.data(), sizeof(F) * N * static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, s));
  }
}

/// The outer panel's width (rounded down to a multiple of the inner block): the trailing
/// update's K. At 256 the trailing updates ran at 22 TFLOP/s (n = 16384, H200), half the
/// square GEMM's rate: each 128 x 128 tile reads and writes C for 256 steps of K.
constexpr index_t outer_width = 512;

index_t choose_block(const context& ctx, index_t n, index_t asked, std::size_t elem) {
  if (asked > 0) {
    LA_EXPECTS(asked % 2 == 0 && asked >= 2 && asked <= 64, "dense_solver: block must be even, from 2 to 64; got " + std::to_string(asked));
    return asked;
  }
  index_t nb = n <= 32 ? 32 : 64;
  const index_t rows_per_sm = (n + ctx.sm_count() - 1) / ctx.sm_count();
  while (nb > 8 && static_cast<double>(std::max<index_t>(rows_per_sm, 64)) * (nb + 1) * elem > smem_optin(ctx) - 8192) nb /= 2;
  return nb;
}

}  // namespace

template <typename T>
struct dense_solver<T>::impl {
  context* ctx = nullptr;
  dense_solver_options opt;
  index_t n = 0;
  device_buffer<T> a;  // n x n, ld n: A as given (residuals, refinement)
  double a_inf = 0, a_one = 0, a_max = 0;
  bool symmetric_positive_diagonal = false;
  bool mixed = false;          // T = double factored in float
  double scale = 1;            // mixed: the float factors are of scale * A
  factors<T> full;             // working-precision factors
  factors<float> low;          // mixed precision's
  dense_factor_status status;
  bool chol = false;
  double seconds = 0;
  std::string how, precision;
  index_t nb = 0;

  template <typename F>
  void factor_into(factors<F>& fa, const std::string& gemm_algo, bool want_chol, double sc) {
    context& c = *ctx;
    fa.n = n;
    fa.nb = nb;
    fa.N = (n + nb - 1) / nb * nb;
    const index_t ow = opt.outer_block > 0 ? opt.outer_block : outer_width;
    LA_EXPECTS(ow % nb == 0, "dense_solver: outer_block " + std::to_string(ow) + " is not a multiple of the block " +
                                 std::to_string(nb));
    fa.outer = nb * std::max<index_t>(1, ow / nb);
    fa.gemm = gemm_algo;
    check_device_memory(c, double(fa.N) * fa.N * sizeof(F) + 4.0 * fa.N * nb * sizeof(F),
                        "the dense factors (" + std::to_string(fa.N) + " x " + std::to_string(fa.N) + ")");
    fa.f = alloc<F>(c, static_cast<std::size_t>(fa.N) * fa.N);
    auto fill = [&] {
      pad_copy_kernel<T, F><<<blocks_for(long(fa.N) * fa.N), threads, 0, c.stream()>>>(a.data(), n, n, fa.f.data(), fa.N, sc);
      LA_LAUNCH_CHECK(c.stream());
    };
    fill();
    if (want_chol) {
      factor_cholesky(c, fa);
      if (fa.info == 0 || opt.factorization == dense_factorization::cholesky) return;
      fill();  // automatic: not positive definite after all; LU instead
    }
    factor_lu(c, fa);
  }

  void factor() {
    context& c = *ctx;
    const double t0 = now_seconds();
    nb = choose_block(c, n, opt.block, sizeof(T));
    const bool want_chol = opt.factorization == dense_factorization::cholesky ||
                           (opt.factorization == dense_factorization::automatic && symmetric_positive_diagonal);
    const std::string& fp = opt.factor_precision;
    mixed = std::is_same_v<T, double> && fp != "working" && fp != "fp64";
    if (!std::is_same_v<T, double> && fp != "working" && fp != "fp32")
      throw invalid_argument("dense_solver: factor_precision '" + fp + "' refines to double; a float solver factors in float (working)");
    if (mixed && fp != "tf32x3" && fp != "tf32" && fp != "fp32")
      throw invalid_argument("dense_solver: unknown factor_precision '" + fp + "'; choose working, fp64, tf32x3, fp32 or tf32");
    if (mixed) {
      // float's range: scale A by a power of two so its largest entry is near 1 (the
      // refinement works on the unscaled A).
      scale = a_max > 0 ? std::ldexp(1.0, -std::ilogb(a_max)) : 1.0;
      factor_into(low, fp, want_chol, scale);
      status.bad_column = low.info;
      chol = low.chol;
      precision = fp == "fp32" ? "float" : fp == "tf32" ? "float, TF32 Tensor Core updates" : "float, 3xTF32 Tensor Core updates";
    } else {
      factor_into(full, std::is_same_v<T, double> ? opt.gemm : std::string("auto"), want_chol, 1.0);
      status.bad_column = full.info;
      chol = full.chol;
      precision = std::is_same_v<T, double> ? "double, fp64 Tensor Cores" : "float";
    }
    how = chol ? "Cholesky" : "LU with partial pivoting";
    seconds = now_seconds() - t0;
  }

  /// Mixed precision stalled: the working-precision factors.
  void refactor_full() {
    mixed = false;
    low = factors<float>{};
    factor_into(full, opt.gemm, chol, 1.0);
    status.bad_column = full.info;
    precision = "double, fp64 Tensor Cores (refactored: the mixed-precision refinement stalled)";
  }
};

namespace {
template <typename T>
void measure(typename dense_solver<T>::impl& p) {
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const index_t n = p.n;
  auto rows = alloc<double>(c, static_cast<std::size_t>(n));
  auto cols = alloc<double>(c, static_cast<std::size_t>(n));
  auto cmax = alloc<double>(c, static_cast<std::size_t>(n));
  auto flags = alloc<unsigned long long>(c, 2);
  LA_CUDA_TRY(cudaMemsetAsync(flags.data(), 0, 2 * sizeof(unsigned long long), s));
  row_norms_kernel<T><<<blocks_for(n, threads / 32), threads, 0, s>>>(p.a.data(), n, n, rows.data(), flags.data());
  LA_LAUNCH_CHECK(s);
  col_norms_kernel<T><<<blocks_for(n), threads, 0, s>>>(p.a.data(), n, n, cols.data(), cmax.data());
  LA_LAUNCH_CHECK(s);
  if (p.opt.factorization == dense_factorization::automatic) {  // only automatic looks for symmetry
    symmetric_kernel<T><<<blocks_for(long(n) * n), threads, 0, s>>>(p.a.data(), n, n, flags.data() + 1);
    LA_LAUNCH_CHECK(s);
  }
  std::vector<double> hr(static_cast<std::size_t>(n)), hc(static_cast<std::size_t>(n)), hm(static_cast<std::size_t>(n));
  unsigned long long hf[2] = {0, 0};
  LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rows.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hc.data(), cols.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hm.data(), cmax.data(), sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaMemcpyAsync(hf, flags.data(), sizeof(hf), cudaMemcpyDeviceToHost, s));
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  if (hf[0]) throw invalid_argument("dense_solver: A has " + std::to_string(hf[0]) + " entries that are NaN or infinite");
  for (index_t i = 0; i < n; ++i) {
    p.a_inf = std::max(p.a_inf, hr[static_cast<std::size_t>(i)]);
    p.a_one = std::max(p.a_one, hc[static_cast<std::size_t>(i)]);
    p.a_max = std::max(p.a_max, hm[static_cast<std::size_t>(i)]);
  }
  p.symmetric_positive_diagonal = hf[1] == 0;
}
}  // namespace

template <typename T>
dense_solver<T>::dense_solver(context& ctx, const device_dense<T>& a, dense_solver_options o) : p_(std::make_unique<impl>()) {
  LA_EXPECTS(a.rows() == a.cols(), "dense_solver: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  p_->ctx = &ctx;
  p_->opt = std::move(o);
  p_->n = a.rows();
  const index_t n = p_->n;
  check_device_memory(ctx, double(n) * n * sizeof(T), "a copy of A (" + std::to_string(n) + " x " + std::to_string(n) + ")");
  p_->a = alloc<T>(ctx, static_cast<std::size_t>(n) * n);
  if (n > 0)
    LA_CUDA_TRY(cudaMemcpy2DAsync(p_->a.data(), sizeof(T) * n, a.view().values, sizeof(T) * a.ld(), sizeof(T) * n, n,
                                  cudaMemcpyDeviceToDevice, ctx.stream()));
  if (n == 0) return;
  measure<T>(*p_);
  p_->factor();
}

template <typename T>
dense_solver<T>::dense_solver(context& ctx, const dense_matrix<T>& a, dense_solver_options o)
    : dense_solver(ctx,
                   [&] {
                     LA_EXPECTS(a.rows() == a.cols(), "dense_solver: A is " + std::to_string(a.rows()) + " x " +
                                                          std::to_string(a.cols()) + "; a direct solve needs a square matrix");
                     device_dense<T> d(ctx, a.rows(), a.cols());
                     if (a.rows() > 0)
                       LA_CUDA_TRY(cudaMemcpy2DAsync(d.view().values, sizeof(T) * a.cols(), a.view().values, sizeof(T) * a.ld(),
                                                     sizeof(T) * a.cols(), a.rows(), cudaMemcpyHostToDevice, ctx.stream()));
                     return d;
                   }(),
                   std::move(o)) {}

template <typename T>
dense_solver<T>::~dense_solver() = default;
template <typename T>
dense_solver<T>::dense_solver(dense_solver&&) noexcept = default;
template <typename T>
dense_solver<T>& dense_solver<T>::operator=(dense_solver&&) noexcept = default;

template <typename T>
index_t dense_solver<T>::size() const noexcept { return p_->n; }
template <typename T>
dense_factor_status dense_solver<T>::status() const noexcept { return p_->status; }
template <typename T>
bool dense_solver<T>::cholesky() const noexcept { return p_->chol; }
template <typename T>
double dense_solver<T>::factor_seconds() const noexcept { return p_->seconds; }
template <typename T>
index_t dense_solver<T>::block() const noexcept { return p_->nb; }
template <typename T>
std::string dense_solver<T>::description() const {
  const index_t ow = p_->opt.outer_block > 0 ? p_->opt.outer_block : outer_width;
  return p_->how + " (" + p_->precision + ", blocks " + std::to_string(p_->nb) + " in " +
         std::to_string(p_->nb * std::max<index_t>(1, ow / p_->nb)) + ")";
}

template <typename T>
dense_solve_report dense_solver<T>::solve(device_vector<T>& b) {
  LA_EXPECTS(b.size() == p_->n, "dense_solver: the right-hand side has " + std::to_string(b.size()) + " entries, A has " +
                                    std::to_string(p_->n) + " rows");
  device_dense<T> view(p_->n, 1, 1, device_buffer<T>::borrow(b.data(), static_cast<std::size_t>(p_->n), p_->ctx->device()));
  return solve(view);
}

template <typename T>
dense_solve_report dense_solver<T>::solve(device_dense<T>& bm) {
  impl& p = *p_;
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const double t0 = now_seconds();
  const index_t n = p.n, k = bm.cols();
  LA_EXPECTS(bm.rows() == n, "dense_solver: B has " + std::to_string(bm.rows()) + " rows, A has " + std::to_string(n));
  LA_EXPECTS(bm.ld() == k, "dense_solver: B must be packed (ld = cols)");
  dense_solve_report rep;
  if (n == 0 || k == 0) return rep;
  if (!p.status.ok())
    throw invalid_argument("dense_solver: A is singular: " + p.how + " finds no " +
                           (p.chol ? "positive" : "nonzero") + " pivot in column " + std::to_string(p.status.bad_column));
  T* B = bm.view().values;
  // b kept in double for the residuals; its column maxima for the backward error.
  auto b64 = alloc<double>(c, static_cast<std::size_t>(n) * k);
  convert_rows_kernel<T, double><<<blocks_for(long(n) * k), threads, 0, s>>>(B, n, n, k, b64.data(), 1.0);
  LA_LAUNCH_CHECK(s);
  auto bmax = alloc<double>(c, static_cast<std::size_t>(k));
  auto xmax = alloc<double>(c, static_cast<std::size_t>(k));
  auto rmax = alloc<double>(c, static_cast<std::size_t>(k));
  column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(b64.data(), n, k, bmax.data());
  LA_LAUNCH_CHECK(s);
  auto r64 = alloc<double>(c, static_cast<std::size_t>(n) * k);
  auto x64 = alloc<double>(c, static_cast<std::size_t>(n) * k);
  // The worst column's backward error of the current x (x64); r_max, b_max: the largest |r|, |b|.
  double r_max = 0, b_max = 0;
  auto backward = [&]() {
    residual_kernel<T, double><<<dim3(blocks_for(n, threads / 32), static_cast<unsigned>(k)), threads, 0, s>>>(
        p.a.data(), n, n, x64.data(), b64.data(), r64.data(), k);
    LA_LAUNCH_CHECK(s);
    column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(x64.data(), n, k, xmax.data());
    LA_LAUNCH_CHECK(s);
    column_max_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(r64.data(), n, k, rmax.data());
    LA_LAUNCH_CHECK(s);
    std::vector<double> hb(static_cast<std::size_t>(k)), hx(hb.size()), hr(hb.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hx.data(), xmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rmax.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    double worst = 0;
    r_max = 0;
    for (std::size_t i = 0; i < hb.size(); ++i) {
      r_max = std::max(r_max, hr[i]);
      b_max = std::max(b_max, hb[i]);
      const double den = p.a_inf * hx[i] + hb[i];
      const double be = den > 0 ? hr[i] / den : (hr[i] > 0 ? INFINITY : 0.0);
      worst = std::isnan(hr[i]) ? INFINITY : std::max(worst, be);
    }
    return worst;
  };
  // One solve with the factors of precision F applied to rhs (double, n x k) -> added to x64.
  auto apply = [&](auto& fa, const double* rhs, double rhs_scale, double out_scale) {
    using F = typename std::decay_t<decltype(fa.f)>::value_type;
    auto w = alloc<F>(c, static_cast<std::size_t>(fa.N) * k);
    convert_rows_kernel<double, F><<<blocks_for(long(fa.N) * k), threads, 0, s>>>(rhs, n, fa.N, k, w.data(), rhs_scale);
    LA_LAUNCH_CHECK(s);
    factor_solve(c, fa, w.data(), k, false);
    add_kernel<F><<<blocks_for(long(n) * k), threads, 0, s>>>(x64.data(), w.data(), static_cast<long>(n) * k, out_scale);
    LA_LAUNCH_CHECK(s);
  };
  LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
  int steps = 0;
  double be = 0;
  if (!p.mixed) {
    apply(p.full, b64.data(), 1.0, 1.0);
    be = backward();
  } else {
    // The float factors are of s A (s = scale): A^-1 r = s (sA)^-1 r, and r goes in scaled by
    // a power of two t near 1/max|r| (float's range): A^-1 r = (s / t) (sA)^-1 (t r).
    auto pow2_inverse = [](double m) { return m > 0 && std::isfinite(m) ? std::ldexp(1.0, -std::ilogb(m)) : 1.0; };
    be = backward();  // x = 0: r = b, and b_max
    apply(p.low, b64.data(), pow2_inverse(b_max), p.scale / pow2_inverse(b_max));
    be = backward();
    double prev = be;
    int slow = 0;
    while (be > p.opt.refine_tolerance && steps < p.opt.max_refinement) {
      const double t = pow2_inverse(r_max);
      apply(p.low, r64.data(), t, p.scale / t);
      ++steps;
      be = backward();
      if (!(be < 0.5 * prev)) ++slow;
      else slow = 0;
      if (slow >= 2 || !std::isfinite(be)) break;
      prev = be;
    }
    if (!(be <= p.opt.refine_tolerance)) {
      const int mixed_steps = steps;
      p.refactor_full();
      rep.refactored = true;
      if (!p.status.ok())
        throw invalid_argument("dense_solver: A is singular: " + p.how + " finds no nonzero pivot in column " +
                               std::to_string(p.status.bad_column));
      LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
      apply(p.full, b64.data(), 1.0, 1.0);
      be = backward();
      rep.message = "mixed precision stalled after " + std::to_string(mixed_steps) + " refinement steps; refactored in fp64. ";
      steps = 0;
    }
  }
  // One classical step in working precision where it helps (the residual in double).
  if (!p.mixed && be > 4e-16 && steps == 0) {
    apply(p.full, r64.data(), 1.0, 1.0);
    const double be2 = backward();
    if (be2 < be) be = be2, steps = 1;
    else {  // undo: x -= the correction (recompute from scratch is simpler)
      LA_CUDA_TRY(cudaMemsetAsync(x64.data(), 0, sizeof(double) * n * k, s));
      apply(p.full, b64.data(), 1.0, 1.0);
      be = backward();
    }
  }
  // The worst column's ||b - Ax||_2 / ||b||_2 (r64 and rmax hold the last residual).
  {
    auto rn = alloc<double>(c, static_cast<std::size_t>(k));
    auto bn = alloc<double>(c, static_cast<std::size_t>(k));
    column_norm2_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(r64.data(), n, k, rmax.data(), rn.data());
    LA_LAUNCH_CHECK(s);
    column_norm2_kernel<double><<<static_cast<unsigned>(k), threads, 0, s>>>(b64.data(), n, k, bmax.data(), bn.data());
    LA_LAUNCH_CHECK(s);
    std::vector<double> hr(static_cast<std::size_t>(k)), hb(hr.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hr.data(), rn.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaMemcpyAsync(hb.data(), bn.data(), sizeof(double) * k, cudaMemcpyDeviceToHost, s));
    LA_CUDA_TRY(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < hr.size(); ++i)
      rep.relative_residual = std::max(rep.relative_residual, hb[i] > 0 ? hr[i] / hb[i] : (hr[i] > 0 ? INFINITY : 0.0));
  }
  convert_rows_kernel<double, T><<<blocks_for(long(n) * k), threads, 0, s>>>(x64.data(), n, n, k, B, 1.0);
  LA_LAUNCH_CHECK(s);
  LA_CUDA_TRY(cudaStreamSynchronize(s));
  rep.precision = p.precision;
  rep.refinement_steps = steps;
  rep.backward_error = be;
  rep.seconds = now_seconds() - t0;
  rep.message += p.how + " (" + p.precision + "), " + std::to_string(steps) + " refinement step" + (steps == 1 ? "" : "s") +
                 ", backward error " + std::to_string(be);
  return rep;
}

template <typename T>
double dense_solver<T>::condition_estimate() {
  impl& p = *p_;
  if (p.n == 0) return 0;
  if (!p.status.ok()) return INFINITY;
  context& c = *p.ctx;
  cudaStream_t s = c.stream();
  const bool use_low = p.mixed;
  const index_t N = use_low ? p.low.N : p.full.N;
  auto run = [&](T* v, bool transposed) {
    std::vector<double> h(static_cast<std::size_t>(N), 0.0);
    for (index_t i = 0; i < p.n; ++i) h[static_cast<std::size_t>(i)] = static_cast<double>(v[i]);
    auto solve_with = [&](auto& fa, double sc) {
      using F = typename std::decay_t<decltype(fa.f)>::value_type;
      std::vector<F> hf(h.begin(), h.end());
      auto d = alloc<F>(c, static_cast<std::size_t>(N));
      LA_CUDA_TRY(cudaMemcpyAsync(d.data(), hf.data(), sizeof(F) * N, cudaMemcpyHostToDevice, s));
      factor_solve(c, fa, d.data(), 1, transposed);
      LA_CUDA_TRY(cudaMemcpyAsync(hf.data(), d.data(), sizeof(F) * N, cudaMemcpyDeviceToHost, s));
      LA_CUDA_TRY(cudaStreamSynchronize(s));
      for (index_t i = 0; i < p.n; ++i) v[i] = static_cast<T>(hf[static_cast<std::size_t>(i)] * sc);
    };
    if (use_low) solve_with(p.low, p.scale);
    else solve_with(p.full, 1.0);
  };
  const double inv = inverse_norm1_estimate<T>(p.n, [&](T* v) { run(v, false); }, [&](T* v) { run(v, true); });
  return p.a_one * inv;
}

template class dense_solver<float>;
template class dense_solver<double>;

}  // namespace la
