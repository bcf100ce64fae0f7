// la::sparse_direct_solver (sparse_direct_solver.hpp says what and why): the host's symbolic
// set-up of the fronts, the GPU's multifrontal factorization level by level, the solve and
// its refinement.
//
// Symbols (host, once per analysis):
//  - M = Dr P A Dc (the matching's; the identity for the unmatched path) and its analysis;
//    Mq = Q M Q^T its ordered form, entries kept with their index into A's values, so
//    refactor() only re-reads values.
//  - supernode s: columns [first, first + nc), row structure R_s (sorted; its first nc rows are
//    its own columns): the union of Mq's entries in those columns and the children's rows
//    below their own columns. |R_s| = m is the front's size, checked against the analysis's
//    column count.
//  - the front F_s: m x m, row-major, all fronts in one buffer ordered by level. After the
//    factorization F_s holds L (unit, below the diagonal) and U (on and above it) of its first
//    nc rows and columns, and in its trailing (m - nc)^2 block the update matrix the parent adds.
//  - a child c's map: the position in its parent's front of each of its rows below its columns.
//  - a level's contribution items: one per (front, row) that receives child rows, listing the
//    (child, row) pairs in a fixed order: the extend-add is a warp per item adding its child
//    rows one after another (no atomics: reruns are bit-identical).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/solvers/precond/matching.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la {
namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

constexpr int threads = 256;
constexpr int panel = 64;  // the big fronts' block width (the GEMM's K)
inline unsigned blocks_for(long n, int per = threads) {
  return static_cast<unsigned>(std::max<long>(1, (n + per - 1) / per));
}

/// F[pos[e]] = vals[src[e]] * scale[e] (the fronts zeroed before).
__global__ void scatter_kernel(const double* vals, const count_t* src, const double* scale, const long* pos, long count,
                               double* F) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) F[pos[e]] = vals[src[e]] * scale[e];
}

struct front_table {
  const long* off;   // F_s at F + off[s]
  const int* m;      // rows
  const int* nc;     // its own columns
  const int* first;  // its first column
  const long* map;   // its map into the parent's front at rel + map[s]
  const int* rel;
  const long* vec;   // the solve's vector of front s at w + vec[s] (per right-hand side: + col * vec_total)
  const int* rows;   // R_s at rows + vec[s]
};

/// The extend-add: a warp per item (front s, row a): for each (child c, row q) in order,
/// F_s[a][map_c[r]] += U_c[q][r] for every column r of the child's update matrix.
__global__ void extend_add_kernel(double* F, front_table t, const int* item_front, const int* item_row, const long* item_ptr,
                                  const int* con_child, const int* con_row, long items) {
  const long item = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (item >= items) return;
  const int s = item_front[item];
  double* row = F + t.off[s] + static_cast<long>(item_row[item]) * t.m[s];
  for (long p = item_ptr[item]; p < item_ptr[item + 1]; ++p) {
    const int c = con_child[p], q = con_row[p];
    const int mc = t.m[c], ncc = t.nc[c], nbc = mc - ncc;
    const double* u = F + t.off[c] + static_cast<long>(ncc + q) * mc + ncc;
    const int* mp = t.rel + t.map[c];
    for (int r = lane; r < nbc; r += 32) row[mp[r]] += u[r];
    __syncwarp();
  }
}

/// Static pivoting's pivot: non-positive where SPD is assumed records the column; tiny (or
/// NaN) is set to +-tiny and counted.
__device__ double pivot_of(double p, double tiny, bool spd, int column, int* bad, int* perturbed) {
  if (spd) {
    if (!(p > 0)) {
      atomicMin(bad, column);
      return 1.0;
    }
    return p;
  }
  if (!(fabs(p) >= tiny)) {
    atomicAdd(perturbed, 1);
    return p < 0 ? -tiny : tiny;
  }
  return p;
}

/// Right-looking LU without pivoting of columns [k0, k1) of A (ld m), the rows and columns
/// below and right of each pivot up to rows_end and cols_end updated: one thread block.
__device__ void block_lu(double* A, int m, int k0, int k1, int rows_end, int cols_end, double tiny, bool spd, int first,
                         int* bad, int* perturbed) {
  __shared__ double piv;
  for (int k = k0; k < k1; ++k) {
    if (threadIdx.x == 0) {
      piv = pivot_of(A[static_cast<long>(k) * m + k], tiny, spd, first + k + 1, bad, perturbed);
      A[static_cast<long>(k) * m + k] = piv;
    }
    __syncthreads();
    const double d = piv;
    for (int i = k + 1 + threadIdx.x; i < rows_end; i += blockDim.x) A[static_cast<long>(i) * m + k] /= d;
    __syncthreads();
    const int r = rows_end - k - 1, c = cols_end - k - 1;
    const double* urow = A + static_cast<long>(k) * m;
    for (long e = threadIdx.x; e < static_cast<long>(r) * c; e += blockDim.x) {
      const int i = k + 1 + static_cast<int>(e / c), j = k + 1 + static_cast<int>(e % c);
      A[static_cast<long>(i) * m + j] -= A[static_cast<long>(i) * m + k] * urow[j];
    }
    __syncthreads();
  }
}

/// The small fronts of a level, a block each: the whole partial factorization.
__global__ void factor_small_kernel(double* F, front_table t, const int* list, double tiny, bool spd, int* bad, int* perturbed) {
  const int s = list[blockIdx.x];
  const int m = t.m[s];
  block_lu(F + t.off[s], m, 0, t.nc[s], m, m, tiny, spd, t.first[s], bad, perturbed);
}

/// A big front's diagonal block [k0, k0 + kb): one block.
__global__ void factor_diag_kernel(double* A, int m, int k0, int kb, double tiny, bool spd, int first, int* bad, int* perturbed) {
  block_lu(A, m, k0, k0 + kb, k0 + kb, k0 + kb, tiny, spd, first, bad, perturbed);
}

/// L21 = A21 U11^-1: a thread per row below the diagonal block (U11 in shared memory).
__global__ void l21_kernel(double* A, int m, int k0, int kb) {
  __shared__ double u[panel * panel];
  for (int e = threadIdx.x; e < kb * kb; e += blockDim.x) u[e] = A[static_cast<long>(k0 + e / kb) * m + k0 + e % kb];
  __syncthreads();
  const int i = k0 + kb + static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  double* row = A + static_cast<long>(i) * m + k0;
  double x[panel];
  for (int j = 0; j < kb; ++j) {
    double v = row[j];
    for (int q = 0; q < j; ++q) v -= x[q] * u[q * kb + j];
    x[j] = v / u[j * kb + j];
  }
  for (int j = 0; j < kb; ++j) row[j] = x[j];
}

/// U12 = L11^-1 A12 (L11 unit): a thread per column right of the diagonal block.
__global__ void u12_kernel(double* A, int m, int k0, int kb) {
  __shared__ double l[panel * panel];
  for (int e = threadIdx.x; e < kb * kb; e += blockDim.x) l[e] = A[static_cast<long>(k0 + e / kb) * m + k0 + e % kb];
  __syncthreads();
  const int j = k0 + kb + static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  double* col = A + static_cast<long>(k0) * m + j;
  for (int i = 1; i < kb; ++i) {
    double v = col[static_cast<long>(i) * m];
    for (int q = 0; q < i; ++q) v -= l[i * kb + q] * col[static_cast<long>(q) * m];
    col[static_cast<long>(i) * m] = v;
  }
}

// ---- the solve ----

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

/// Forward, step 1: a level's front vectors: w[a] = y[first + a] for the front's own rows, 0 below.
__global__ void forward_init_kernel(double* w, long vec_total, front_table t, const int* list, int count, const double* y,
                                    index_t n) {
  const int s = list[blockIdx.x];
  const long col = blockIdx.y;
  double* ws = w + col * vec_total + t.vec[s];
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  for (int a = threadIdx.x; a < m; a += blockDim.x) ws[a] = a < nc ? y[col * n + f + a] : 0.0;
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

/// Forward, step 3, a block per front: L11 x1 = w1 (unit), w2 -= L21 x1; y[first..] = x1.
__global__ void forward_front_kernel(const double* F, double* w, long vec_total, front_table t, const int* list, double* y,
                                     index_t n) {
  const int s = list[blockIdx.x];
  const long col = blockIdx.y;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const double* A = F + t.off[s];
  double* ws = w + col * vec_total + t.vec[s];
  for (int k = 0; k < nc; ++k) {
    const double xk = ws[k];
    for (int i = k + 1 + threadIdx.x; i < nc; i += blockDim.x) ws[i] -= A[static_cast<long>(i) * m + k] * xk;
    __syncthreads();
  }
  const int lane = threadIdx.x & 31, warps = blockDim.x / 32;
  for (int i = nc + threadIdx.x / 32; i < m; i += warps) {  // a warp per row below
    const double* row = A + static_cast<long>(i) * m;
    double v = 0;
    for (int q = lane; q < nc; q += 32) v += row[q] * ws[q];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) ws[i] -= v;
  }
  for (int a = threadIdx.x; a < nc; a += blockDim.x) y[col * n + f + a] = ws[a];
}

/// Backward, a block per front (roots first): w1 = y1 - U12 x(R_s below); U11 x1 = w1; y[first..] = x1.
__global__ void backward_front_kernel(const double* F, double* w, long vec_total, front_table t, const int* list, double* y,
                                      index_t n) {
  const int s = list[blockIdx.x];
  const long col = blockIdx.y;
  const int m = t.m[s], nc = t.nc[s], f = t.first[s];
  const double* A = F + t.off[s];
  double* ws = w + col * vec_total + t.vec[s];
  const int* rows = t.rows + t.vec[s];
  const double* yc = y + col * n;
  const int lane = threadIdx.x & 31, warps = blockDim.x / 32;
  for (int a = threadIdx.x / 32; a < nc; a += warps) {
    const double* row = A + static_cast<long>(a) * m;
    double v = 0;
    for (int q = nc + lane; q < m; q += 32) v += row[q] * yc[rows[q]];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) ws[a] = yc[f + a] - v;
  }
  __syncthreads();
  for (int k = nc - 1; k >= 0; --k) {
    const double xk = ws[k] / A[static_cast<long>(k) * m + k];
    __syncthreads();
    if (threadIdx.x == 0) ws[k] = xk;
    for (int a = threadIdx.x; a < k; a += blockDim.x) ws[a] -= A[static_cast<long>(a) * m + k] * xk;
    __syncthreads();
  }
  for (int a = threadIdx.x; a < nc; a += blockDim.x) y[col * n + f + a] = ws[a];
}

/// R = B - A X (A CSR, X and B n x k column after column), summed in double-double (each
/// product split exactly by an FMA, each sum by two-sum), so the residual is right to about
/// eps^2 |A| |x|: refinement then reaches the solution's last bit even where b is small
/// against |A| |x| (the badly scaled circuit matrices).
__global__ void residual_kernel(const count_t* ptr, const index_t* idx, const double* val, index_t n, const double* x,
                                const double* b, double* r) {
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long col = blockIdx.y;
  if (i >= n) return;
  double hi = b[col * n + i], lo = 0;
  for (count_t p = ptr[i]; p < ptr[i + 1]; ++p) {
    const double a = val[p], xv = x[col * n + idx[p]];
    const double ph = -a * xv, pl = fma(-a, xv, -ph);  // -a x = ph + pl exactly
    const double sh = hi + ph, bb = sh - hi;
    const double err = (hi - (sh - bb)) + (ph - bb);  // two-sum's rounding error
    hi = sh;
    lo += err + pl;
  }
  r[col * n + i] = hi + lo;
}

constexpr int norm_blocks = 120;
/// Per column and block: the largest |v| (NaN as infinity) and the sum of squares; a fixed grid,
/// so the host's sums come out in a fixed order.
__global__ void norms_kernel(const double* v, index_t n, double* part_max, double* part_sq) {
  __shared__ double smax[threads / 32], ssq[threads / 32];
  const long col = blockIdx.y;
  double mx = 0, sq = 0;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double a = v[col * n + i];
    mx = isnan(a) ? INFINITY : fmax(mx, fabs(a));
    sq += a * a;
  }
  for (int o = 16; o > 0; o >>= 1) mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, o)), sq += __shfl_down_sync(0xffffffffu, sq, o);
  if ((threadIdx.x & 31) == 0) smax[threadIdx.x / 32] = mx, ssq[threadIdx.x / 32] = sq;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < threads / 32; ++q) mx = fmax(mx, smax[q]), sq += ssq[q];
    part_max[col * gridDim.x + blockIdx.x] = mx, part_sq[col * gridDim.x + blockIdx.x] = sq;
  }
}
__global__ void axpy_kernel(double* x, const double* d, long count) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) x[e] += d[e];
}

template <typename V>
device_buffer<typename V::value_type> upload(context& ctx, const V& h) {
  auto d = ctx.allocate<typename V::value_type>(h.size());
  if (!h.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), sizeof(typename V::value_type) * h.size(), cudaMemcpyHostToDevice,
                                ctx.stream()));
  return d;
}
}  // namespace

struct sparse_direct_solver::impl {
  context* ctx = nullptr;
  sparse_direct_options opt;
  csr_matrix<double, count_t> a;
  index_t n = 0;
  double a_inf = 0;
  bool spd = false;        // no matching, no pivoting: A taken as SPD
  bool unmatched_lu = false;  // static pivoting on A's own rows (the matching gave up; A's diagonal zero-free)
  bool factored = false;
  index_t singular = 0, perturbed = 0;
  double t_analyze = 0, t_factor = 0;
  sparse_detail::front_symbols sym;
  std::vector<std::vector<int>> level_big;  // per level: its fronts of more than big_front rows
  bool host = false;        // the host's threads (no context): the fronts in hF
  int threads = 1;
  std::vector<double> hF;
  // The device's.
  device_buffer<double> F, aval, w;
  device_buffer<count_t> d_src, d_aptr;
  device_buffer<index_t> d_aidx, d_in_idx, d_out_idx;
  device_buffer<double> d_scale, d_in_scale, d_out_scale;
  device_buffer<long> d_pos, d_off, d_vec, d_map, d_item_ptr;
  device_buffer<int> d_m, d_nc, d_first, d_rows, d_rel, d_list, d_item_front, d_item_row, d_con_child, d_con_row, d_flags;

  front_table table() const {
    return {d_off.data(), d_m.data(), d_nc.data(), d_first.data(), d_map.data(), d_rel.data(), d_vec.data(), d_rows.data()};
  }

  void init(const csr_matrix<double, count_t>& m, sparse_direct_options o);
  void analyze(bool matched);
  void upload_symbols();
  void numeric();
  void numeric_host();
  sparse_direct_report solve_host(std::vector<double>& b, index_t k);
};

void sparse_direct_solver::impl::analyze(bool matched) {
  const double before = t_analyze;
  bool lu_unmatched = false;
  try {
    sym = sparse_detail::build_fronts(a, matched, opt.ordering);
  } catch (const invalid_argument& e) {
    // The matching's search budget (a pattern its augmenting paths wander): a zero-free
    // diagonal needs no matching, static pivoting on the rows as they are; else no sparse LU.
    bool zero_free = matched;
    for (index_t i = 0; i < n && zero_free; ++i) {
      const auto b = a.col_idx().begin() + a.row_ptr()[i], en = a.col_idx().begin() + a.row_ptr()[i + 1];
      const auto it = std::lower_bound(b, en, i);
      zero_free = it != en && *it == i && a.values()[static_cast<std::size_t>(it - a.col_idx().begin())] != 0;
    }
    if (!zero_free)
      throw invalid_argument(std::string("sparse direct solver: ") + e.what() +
                             " (the sparse LU needs the matching where A's diagonal has zeros; the dense LU with partial "
                             "pivoting does not)");
    sym = sparse_detail::build_fronts(a, false, opt.ordering);
    lu_unmatched = true;
  }
  if (lu_unmatched) sym.spd = false;
  t_analyze = before + sym.seconds;
  singular = sym.singular;
  spd = sym.spd;
  unmatched_lu = lu_unmatched;
  // Blocked (the GEMM path, one front after another) above big_front rows where the level has
  // few fronts, above 4 big_front always: a level of many medium fronts runs faster as one
  // launch of a block each (132 SMs busy) than front by front.
  level_big.assign(sym.levels(), {});
  for (std::size_t l = 0; l < sym.levels(); ++l) {
    const bool few = sym.level_ptr[l + 1] - sym.level_ptr[l] < 64;
    for (std::size_t e = sym.level_ptr[l]; e < sym.level_ptr[l + 1]; ++e) {
      const int m = sym.f_m[static_cast<std::size_t>(sym.level_list[e])];
      if (m > 4 * opt.big_front || (few && m > opt.big_front)) level_big[l].push_back(sym.level_list[e]);
    }
  }
}

void sparse_direct_solver::impl::upload_symbols() {
  context& c = *ctx;
  check_device_memory(c, double(sym.front_total) * 8 + double(sym.ent_pos.size()) * 24 + double(sym.vec_total) * 16 + double(n) * 64,
                      "the sparse factorization's fronts (" + std::to_string(sym.f_m.size()) + " fronts, " +
                          std::to_string(sym.front_total) + " entries: " + sym.an.summary() + ")");
  F = c.allocate<double>(static_cast<std::size_t>(sym.front_total));
  d_src = upload(c, sym.ent_src), d_scale = upload(c, sym.ent_scale), d_pos = upload(c, sym.ent_pos);
  d_off = upload(c, sym.f_off), d_vec = upload(c, sym.f_vec), d_map = upload(c, sym.f_map);
  d_m = upload(c, sym.f_m), d_nc = upload(c, sym.f_nc), d_first = upload(c, sym.f_first), d_rows = upload(c, sym.f_rows), d_rel = upload(c, sym.f_rel);
  d_list = upload(c, sym.level_list);
  d_item_front = upload(c, sym.item_front), d_item_row = upload(c, sym.item_row), d_item_ptr = upload(c, sym.item_ptr);
  d_con_child = upload(c, sym.con_child), d_con_row = upload(c, sym.con_row);
  d_in_idx = upload(c, sym.in_idx), d_out_idx = upload(c, sym.out_idx), d_in_scale = upload(c, sym.in_scale), d_out_scale = upload(c, sym.out_scale);
  d_aptr = upload(c, a.row_ptr()), d_aidx = upload(c, a.col_idx());
  aval = upload(c, a.values());
  d_flags = c.allocate<int>(2);
}

void sparse_direct_solver::impl::numeric() {
  context& c = *ctx;
  cudaStream_t st = c.stream();
  const auto t0 = clock_type::now();
  const front_table t = table();
  LA_CUDA_TRY(cudaMemsetAsync(F.data(), 0, sizeof(double) * static_cast<std::size_t>(sym.front_total), st));
  const int init_flags[2] = {std::numeric_limits<int>::max(), 0};
  LA_CUDA_TRY(cudaMemcpyAsync(d_flags.data(), init_flags, sizeof init_flags, cudaMemcpyHostToDevice, st));
  const long entries = static_cast<long>(sym.ent_pos.size());
  if (entries > 0) {
    scatter_kernel<<<blocks_for(entries), threads, 0, st>>>(aval.data(), d_src.data(), d_scale.data(), d_pos.data(), entries, F.data());
    LA_CHECK_LAUNCH(st);
  }
  int* bad = d_flags.data();
  int* pert = d_flags.data() + 1;
  const std::size_t levels = sym.level_ptr.size() - 1;
  std::vector<int> small;
  for (std::size_t l = 0; l < levels; ++l) {
    const long i0 = static_cast<long>(sym.level_items[l]), i1 = static_cast<long>(sym.level_items[l + 1]);
    if (i1 > i0) {
      extend_add_kernel<<<blocks_for((i1 - i0) * 32), threads, 0, st>>>(F.data(), t, d_item_front.data() + i0, d_item_row.data() + i0,
                                                                         d_item_ptr.data() + i0, d_con_child.data(),
                                                                         d_con_row.data(), i1 - i0);
      LA_CHECK_LAUNCH(st);
    }
    const std::size_t count = sym.level_ptr[l + 1] - sym.level_ptr[l];
    const std::vector<int>& big = level_big[l];
    if (big.size() < count) {
      // The level's list holds the small and big fronts; the small kernel skips none, so the
      // small ones get their own list when the level has big ones.
      if (big.empty()) {
        factor_small_kernel<<<static_cast<unsigned>(count), threads, 0, st>>>(F.data(), t, d_list.data() + sym.level_ptr[l], sym.tiny,
                                                                               spd, bad, pert);
        LA_CHECK_LAUNCH(st);
      } else {
        small.clear();
        for (std::size_t e = sym.level_ptr[l]; e < sym.level_ptr[l + 1]; ++e)
          if (std::find(big.begin(), big.end(), sym.level_list[e]) == big.end()) small.push_back(sym.level_list[e]);
        auto d_small = upload(c, small);
        factor_small_kernel<<<static_cast<unsigned>(small.size()), threads, 0, st>>>(F.data(), t, d_small.data(), sym.tiny, spd, bad, pert);
        LA_CHECK_LAUNCH(st);
        LA_CUDA_TRY(cudaStreamSynchronize(st));  // d_small's lifetime
      }
    }
    for (int s : big) {
      const auto su = static_cast<std::size_t>(s);
      const int m = sym.f_m[su], nc = sym.f_nc[su];
      double* A = F.data() + sym.f_off[su];
      for (int k0 = 0; k0 < nc; k0 += panel) {
        const int kb = std::min(panel, nc - k0);
        factor_diag_kernel<<<1, threads, 0, st>>>(A, m, k0, kb, sym.tiny, spd, sym.f_first[su], bad, pert);
        LA_CHECK_LAUNCH(st);
        const int rest = m - k0 - kb;
        if (rest == 0) continue;
        l21_kernel<<<blocks_for(rest, 128), 128, 0, st>>>(A, m, k0, kb);
        LA_CHECK_LAUNCH(st);
        u12_kernel<<<blocks_for(rest, 128), 128, 0, st>>>(A, m, k0, kb);
        LA_CHECK_LAUNCH(st);
        dgemm_args g;
        g.m = rest, g.n = rest, g.k = kb;
        g.a = A + static_cast<long>(k0 + kb) * m + k0, g.lda = m;
        g.b = A + static_cast<long>(k0) * m + k0 + kb, g.ldb = m;
        g.c = A + static_cast<long>(k0 + kb) * m + k0 + kb, g.ldc = m;
        g.alpha = -1, g.beta = 1;
        dgemm(g, st);
      }
    }
  }
  int flags[2];
  LA_CUDA_TRY(cudaMemcpyAsync(flags, d_flags.data(), sizeof flags, cudaMemcpyDeviceToHost, st));
  LA_CUDA_TRY(cudaStreamSynchronize(st));
  singular = flags[0] == std::numeric_limits<int>::max() ? 0 : static_cast<index_t>(sym.an.perm[static_cast<std::size_t>(flags[0] - 1)]) + 1;
  perturbed = flags[1];
  factored = true;
  t_factor = since(t0);
}

void sparse_direct_solver::impl::init(const csr_matrix<double, count_t>& a, sparse_direct_options o) {
  LA_EXPECTS(a.rows() == a.cols(), "sparse direct solver: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                       "; a direct solve needs a square matrix");
  const std::string& f = o.factorization;
  if (f != "auto" && f != "lu" && f != "spd")
    throw invalid_argument("sparse direct solver: unknown factorization '" + f + "'; choose auto, lu or spd");
  LA_EXPECTS(o.big_front >= 1, "sparse direct solver: big_front must be at least 1");
  impl& p = *this;
  p.opt = std::move(o);
  p.a = a;
  p.n = a.rows();
  for (double v : a.values())
    if (!std::isfinite(v)) throw invalid_argument("sparse direct solver: A holds NaN or infinite values");
  for (index_t i = 0; i < p.n; ++i) {
    double s = 0;
    for (count_t q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) s += std::abs(a.values()[q]);
    p.a_inf = std::max(p.a_inf, s);
  }
  // Symmetric with a positive diagonal: tried without matching or pivoting first.
  bool sym_pos = p.opt.factorization != "lu";
  if (p.opt.factorization == "auto") {
    const csr_matrix<double, count_t>& m = a;
    for (index_t i = 0; i < p.n && sym_pos; ++i) {
      bool diag = false;
      for (count_t q = m.row_ptr()[i]; q < m.row_ptr()[i + 1] && sym_pos; ++q) {
        const index_t j = m.col_idx()[q];
        if (j == i) diag = m.values()[q] > 0;
        // A(j, i) by binary search in row j (columns sorted).
        const auto b = m.col_idx().begin() + m.row_ptr()[j], e = m.col_idx().begin() + m.row_ptr()[j + 1];
        const auto it = std::lower_bound(b, e, i);
        if (it == e || *it != i || m.values()[static_cast<std::size_t>(it - m.col_idx().begin())] != m.values()[q]) sym_pos = false;
      }
      if (!diag) sym_pos = false;
    }
  }
  p.analyze(!sym_pos);
  if (p.singular == 0 && p.n > 0 && !p.host) p.upload_symbols();
}

sparse_direct_solver::sparse_direct_solver(context& ctx, const csr_matrix<double, count_t>& a, sparse_direct_options o)
    : p_(std::make_unique<impl>()) {
  p_->ctx = &ctx;
  p_->init(a, std::move(o));
}

sparse_direct_solver::sparse_direct_solver(const csr_matrix<double, count_t>& a, sparse_direct_options o, int threads)
    : p_(std::make_unique<impl>()) {
  p_->host = true;
  p_->threads = thread_count(threads);
  p_->init(a, std::move(o));
}

sparse_direct_solver::~sparse_direct_solver() = default;
sparse_direct_solver::sparse_direct_solver(sparse_direct_solver&&) noexcept = default;
sparse_direct_solver& sparse_direct_solver::operator=(sparse_direct_solver&&) noexcept = default;

void sparse_direct_solver::factor() {
  impl& p = *p_;
  if (p.n == 0 || (p.singular && !p.factored && p.sym.an.n == 0)) return;  // structurally singular: nothing to factor
  auto numeric = [&] { p.host ? p.numeric_host() : p.numeric(); };
  numeric();
  if (p.singular && p.spd && p.opt.factorization == "auto") {
    // A pivot that is not positive: not SPD after all; the matched LU instead.
    p.analyze(true);
    if (p.singular == 0) {
      if (!p.host) p.upload_symbols();
      numeric();
    }
  }
}

void sparse_direct_solver::refactor(const csr_matrix<double, count_t>& a) {
  impl& p = *p_;
  LA_EXPECTS(a.rows() == p.n && a.cols() == p.n && a.row_ptr() == p.a.row_ptr() && a.col_idx() == p.a.col_idx(),
             "sparse direct solver: refactor() needs A's pattern (the same row pointers and column indices); "
             "a new pattern needs a new solver");
  for (double v : a.values())
    if (!std::isfinite(v)) throw invalid_argument("sparse direct solver: A holds NaN or infinite values");
  p.a = a;
  p.a_inf = 0;
  for (index_t i = 0; i < p.n; ++i) {
    double s = 0;
    for (count_t q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) s += std::abs(a.values()[q]);
    p.a_inf = std::max(p.a_inf, s);
  }
  if (p.sym.an.n == 0) return factor();
  if (p.host) return p.numeric_host();
  LA_CUDA_TRY(cudaMemcpyAsync(p.aval.data(), a.values().data(), sizeof(double) * a.values().size(), cudaMemcpyHostToDevice,
                              p.ctx->stream()));
  p.numeric();
}

bool sparse_direct_solver::ok() const noexcept { return p_->singular == 0; }
index_t sparse_direct_solver::singular_column() const noexcept { return p_->singular; }
index_t sparse_direct_solver::perturbed() const noexcept { return p_->perturbed; }
bool sparse_direct_solver::matched() const noexcept { return !p_->spd && !p_->unmatched_lu; }
const sparse_analysis& sparse_direct_solver::analysis() const noexcept { return p_->sym.an; }
std::size_t sparse_direct_solver::fronts() const noexcept { return p_->sym.f_m.size(); }
std::size_t sparse_direct_solver::levels() const noexcept { return p_->sym.level_ptr.empty() ? 0 : p_->sym.level_ptr.size() - 1; }
double sparse_direct_solver::front_bytes() const noexcept { return double(p_->sym.front_total) * 8; }
double sparse_direct_solver::analyze_seconds() const noexcept { return p_->t_analyze; }
double sparse_direct_solver::factor_seconds() const noexcept { return p_->t_factor; }
std::string sparse_direct_solver::description() const {
  const impl& p = *p_;
  char buf[200];
  std::snprintf(buf, sizeof buf, "supernodal multifrontal LU (%s), %zu fronts in %zu levels, %.3g MB of fronts",
                p.spd            ? "no pivoting: A symmetric with a positive diagonal"
                : p.unmatched_lu ? "static pivoting on A's rows: the matching gave up, the diagonal is zero-free"
                                 : "static pivoting after a max-product matching",
                fronts(), levels(), front_bytes() / 1e6);
  return std::string(buf) + (p.host ? " on " + std::to_string(p.threads) + " host thread" + (p.threads == 1 ? "" : "s") : std::string(" on the GPU"));
}

sparse_direct_solver::host_factors sparse_direct_solver::download_factors() const {
  const impl& p = *p_;
  LA_EXPECTS(p.factored, "sparse direct solver: download_factors() before factor()");
  if (p.host) return sparse_detail::fronts_to_factors(p.sym, p.hF);
  std::vector<double> f(static_cast<std::size_t>(p.sym.front_total));
  LA_CUDA_TRY(cudaMemcpyAsync(f.data(), p.F.data(), sizeof(double) * f.size(), cudaMemcpyDeviceToHost, p.ctx->stream()));
  LA_CUDA_TRY(cudaStreamSynchronize(p.ctx->stream()));
  return sparse_detail::fronts_to_factors(p.sym, f);
}

void sparse_direct_solver::impl::numeric_host() {
  const auto t0 = clock_type::now();
  check_host_memory(8.0 * double(sym.front_total), "the sparse factorization's fronts (" + std::to_string(sym.f_m.size()) +
                                                         " fronts, " + std::to_string(sym.front_total) + " entries: " +
                                                         sym.an.summary() + ")");
  index_t pert = 0, bad = 0;
  hF = sparse_detail::factor_fronts_threaded(sym, a.values(), threads, pert, bad);
  singular = bad, perturbed = pert;
  factored = true;
  t_factor = since(t0);
}

sparse_direct_report sparse_direct_solver::impl::solve_host(std::vector<double>& b, index_t k) {
  const auto t0 = clock_type::now();
  sparse_direct_report rep;
  std::vector<double> x(static_cast<std::size_t>(n)), r(x.size()), d(x.size()), y(x.size()), ry(x.size()), best(x.size());
  // r = bc - A x in long double; the backward error, rel the relative residual (fronts.cpp).
  auto residual = [&](const double* bc, const std::vector<double>& xv, std::vector<double>& rv, double& rel) {
    return sparse_detail::residual_host(a, a_inf, bc, xv, rv, rel);
  };
  for (index_t c = 0; c < k; ++c) {
    double* bc = b.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(n);
    std::copy(bc, bc + n, x.begin());
    sparse_detail::solve_fronts_host(sym, hF, x.data());
    double rel = 0, be = residual(bc, x, r, rel);
    double best_be = be, best_rel = rel;
    best = x;
    int steps = 0, slow = 0;
    while ((be > opt.refine_tolerance || rel > opt.refine_residual) && steps < opt.max_refinement) {
      d = r;
      sparse_detail::solve_fronts_host(sym, hF, d.data());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += d[i];
      ++steps;
      const double prev = be, prev_rel = rel;
      be = residual(bc, x, r, rel);
      if (rel < best_rel || (rel == best_rel && be < best_be)) best_be = be, best_rel = rel, best = x;
      slow = be < 0.5 * prev || rel < 0.5 * prev_rel ? 0 : slow + 1;
      if (slow >= 2 || !std::isfinite(be)) break;
    }
    std::copy(best.begin(), best.end(), bc);
    rep.refinement_steps = std::max(rep.refinement_steps, steps);
    rep.backward_error = std::max(rep.backward_error, best_be);
    rep.relative_residual = std::max(rep.relative_residual, best_rel);
  }
  rep.seconds = since(t0);
  return rep;
}

sparse_direct_report sparse_direct_solver::solve(std::vector<double>& b, index_t k) {
  impl& p = *p_;
  LA_EXPECTS(k >= 0 && b.size() == static_cast<std::size_t>(p.n) * static_cast<std::size_t>(k),
             "sparse direct solver: b has " + std::to_string(b.size()) + " entries, A has " + std::to_string(p.n) + " rows");
  if (p.host) {
    if (p.n == 0 || k == 0) return {};
    if (!p.factored && p.singular == 0) throw invalid_argument("sparse direct solver: solve() before factor()");
    if (p.singular)
      throw invalid_argument("sparse direct solver: A is singular: " +
                             std::string(p.factored ? "no positive pivot in column " : "no row matches column ") +
                             std::to_string(p.singular));
    sparse_direct_report r = p.solve_host(b, k);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%d refinement step%s, backward error %.2e, %lld pivot%s perturbed", r.refinement_steps,
                  r.refinement_steps == 1 ? "" : "s", r.backward_error, static_cast<long long>(p.perturbed),
                  p.perturbed == 1 ? "" : "s");
    r.message = description() + ": " + buf;
    return r;
  }
  device_vector<double> d(*p.ctx, static_cast<index_t>(b.size()));
  if (!b.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(d.data(), b.data(), sizeof(double) * b.size(), cudaMemcpyHostToDevice, p.ctx->stream()));
  sparse_direct_report r = solve(d, k);
  if (!b.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(b.data(), d.data(), sizeof(double) * b.size(), cudaMemcpyDeviceToHost, p.ctx->stream()));
  LA_CUDA_TRY(cudaStreamSynchronize(p.ctx->stream()));
  return r;
}

sparse_direct_report sparse_direct_solver::solve(device_vector<double>& bv, index_t k) {
  impl& p = *p_;
  if (p.host)
    throw invalid_argument("sparse direct solver: this solver runs on the host (made without a context); solve a "
                           "std::vector, or make it with a context for device vectors");
  context& c = *p.ctx;
  cudaStream_t st = c.stream();
  const auto t0 = clock_type::now();
  const index_t n = p.n;
  LA_EXPECTS(k >= 1 && static_cast<long>(bv.size()) == static_cast<long>(n) * k,
             "sparse direct solver: b has " + std::to_string(bv.size()) + " entries for " + std::to_string(k) +
                 " right-hand sides of " + std::to_string(n));
  sparse_direct_report rep;
  if (n == 0) return rep;
  if (!p.factored && p.singular == 0) throw invalid_argument("sparse direct solver: solve() before factor()");
  if (p.singular)
    throw invalid_argument("sparse direct solver: A is singular: " +
                           std::string(p.factored ? "no positive pivot in column " : "no row matches column ") +
                           std::to_string(p.singular));
  const long nk = static_cast<long>(n) * k;
  double* B = bv.data();
  auto b0 = c.allocate<double>(static_cast<std::size_t>(nk));  // b kept for the residuals
  auto x = c.allocate<double>(static_cast<std::size_t>(nk));
  auto r = c.allocate<double>(static_cast<std::size_t>(nk));
  auto y = c.allocate<double>(static_cast<std::size_t>(nk));
  auto wv = c.allocate<double>(static_cast<std::size_t>(p.sym.vec_total) * static_cast<std::size_t>(k));
  LA_CUDA_TRY(cudaMemcpyAsync(b0.data(), B, sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  const front_table t = p.table();
  const std::size_t levels = p.sym.level_ptr.size() - 1;
  const dim3 per_col(1, static_cast<unsigned>(k));
  // out = A^-1 in (the factors' solve), in and out n x k.
  auto factor_solve = [&](const double* in, double* out) {
    permute_kernel<<<blocks_for(nk), threads, 0, st>>>(in, y.data(), p.d_in_idx.data(), p.d_in_scale.data(), n, k, true);
    LA_CHECK_LAUNCH(st);
    for (std::size_t l = 0; l < levels; ++l) {
      const auto count = static_cast<unsigned>(p.sym.level_ptr[l + 1] - p.sym.level_ptr[l]);
      const int* list = p.d_list.data() + p.sym.level_ptr[l];
      forward_init_kernel<<<dim3(count, static_cast<unsigned>(k)), 128, 0, st>>>(wv.data(), p.sym.vec_total, t, list, static_cast<int>(count),
                                                                                  y.data(), n);
      LA_CHECK_LAUNCH(st);
      const long i0 = static_cast<long>(p.sym.level_items[l]), i1 = static_cast<long>(p.sym.level_items[l + 1]);
      if (i1 > i0) {
        forward_gather_kernel<<<dim3(blocks_for(i1 - i0), static_cast<unsigned>(k)), threads, 0, st>>>(
            wv.data(), p.sym.vec_total, t, p.d_item_front.data() + i0, p.d_item_row.data() + i0, p.d_item_ptr.data() + i0,
            p.d_con_child.data(), p.d_con_row.data(), i1 - i0);
        LA_CHECK_LAUNCH(st);
      }
      forward_front_kernel<<<dim3(count, static_cast<unsigned>(k)), threads, 0, st>>>(p.F.data(), wv.data(), p.sym.vec_total, t, list,
                                                                                       y.data(), n);
      LA_CHECK_LAUNCH(st);
    }
    for (std::size_t l = levels; l-- > 0;) {
      const auto count = static_cast<unsigned>(p.sym.level_ptr[l + 1] - p.sym.level_ptr[l]);
      backward_front_kernel<<<dim3(count, static_cast<unsigned>(k)), threads, 0, st>>>(
          p.F.data(), wv.data(), p.sym.vec_total, t, p.d_list.data() + p.sym.level_ptr[l], y.data(), n);
      LA_CHECK_LAUNCH(st);
    }
    permute_kernel<<<blocks_for(nk), threads, 0, st>>>(y.data(), out, p.d_out_idx.data(), p.d_out_scale.data(), n, k, false);
    LA_CHECK_LAUNCH(st);
  };
  auto pmax = c.allocate<double>(static_cast<std::size_t>(norm_blocks) * k);
  auto psq = c.allocate<double>(static_cast<std::size_t>(norm_blocks) * k);
  // Per column: max |v| and ||v||_2.
  auto norms = [&](const double* v, std::vector<double>& mx, std::vector<double>& l2) {
    norms_kernel<<<dim3(norm_blocks, static_cast<unsigned>(k)), threads, 0, st>>>(v, n, pmax.data(), psq.data());
    LA_CHECK_LAUNCH(st);
    std::vector<double> hm(static_cast<std::size_t>(norm_blocks) * k), hs(hm.size());
    LA_CUDA_TRY(cudaMemcpyAsync(hm.data(), pmax.data(), sizeof(double) * hm.size(), cudaMemcpyDeviceToHost, st));
    LA_CUDA_TRY(cudaMemcpyAsync(hs.data(), psq.data(), sizeof(double) * hs.size(), cudaMemcpyDeviceToHost, st));
    LA_CUDA_TRY(cudaStreamSynchronize(st));
    mx.assign(static_cast<std::size_t>(k), 0), l2.assign(static_cast<std::size_t>(k), 0);
    for (index_t col = 0; col < k; ++col) {
      double m = 0, s = 0;
      for (int q = 0; q < norm_blocks; ++q)
        m = std::max(m, hm[static_cast<std::size_t>(col) * norm_blocks + q]), s += hs[static_cast<std::size_t>(col) * norm_blocks + q];
      mx[static_cast<std::size_t>(col)] = m, l2[static_cast<std::size_t>(col)] = std::sqrt(s);
    }
  };
  std::vector<double> bmax, b2, xmax, x2, rmax, r2;
  norms(b0.data(), bmax, b2);
  // The worst column's backward error of x (r = b - A x left in r).
  auto backward = [&] {
    residual_kernel<<<dim3(blocks_for(n), static_cast<unsigned>(k)), threads, 0, st>>>(p.d_aptr.data(), p.d_aidx.data(), p.aval.data(),
                                                                                        n, x.data(), b0.data(), r.data());
    LA_CHECK_LAUNCH(st);
    norms(x.data(), xmax, x2);
    norms(r.data(), rmax, r2);
    double worst = 0, rel = 0;
    for (std::size_t col = 0; col < static_cast<std::size_t>(k); ++col) {
      const double den = p.a_inf * xmax[col] + bmax[col];
      const double be = den > 0 ? rmax[col] / den : (rmax[col] > 0 ? INFINITY : 0.0);
      worst = std::isfinite(rmax[col]) ? std::max(worst, be) : INFINITY;
      rel = std::max(rel, b2[col] > 0 ? r2[col] / b2[col] : (r2[col] > 0 ? INFINITY : 0.0));
    }
    rep.relative_residual = rel;
    return worst;
  };
  factor_solve(b0.data(), x.data());
  double be = backward();
  // Classical refinement while it helps (static pivots make the factors approximate).
  auto best = c.allocate<double>(static_cast<std::size_t>(nk));
  double best_be = be, best_rel = rep.relative_residual;
  LA_CUDA_TRY(cudaMemcpyAsync(best.data(), x.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  int steps = 0, slow = 0;
  // On while the backward error or the relative residual is above its target and either halves.
  double rel = rep.relative_residual;
  while ((be > p.opt.refine_tolerance || rel > p.opt.refine_residual) && steps < p.opt.max_refinement) {
    factor_solve(r.data(), r.data());  // r read into y first, the correction written over r
    axpy_kernel<<<blocks_for(nk), threads, 0, st>>>(x.data(), r.data(), nk);
    LA_CHECK_LAUNCH(st);
    ++steps;
    const double prev = be, prev_rel = rel;
    be = backward();
    rel = rep.relative_residual;
    if (rel < best_rel || (rel == best_rel && be < best_be)) {
      best_be = be, best_rel = rel;
      LA_CUDA_TRY(cudaMemcpyAsync(best.data(), x.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
    }
    slow = be < 0.5 * prev || rel < 0.5 * prev_rel ? 0 : slow + 1;
    if (slow >= 2 || !std::isfinite(be)) break;
  }
  LA_CUDA_TRY(cudaMemcpyAsync(B, best.data(), sizeof(double) * nk, cudaMemcpyDeviceToDevice, st));
  LA_CUDA_TRY(cudaStreamSynchronize(st));
  rep.refinement_steps = steps;
  rep.backward_error = best_be;
  rep.relative_residual = best_rel;
  rep.seconds = since(t0);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%d refinement step%s, backward error %.2e, %lld pivot%s perturbed", steps, steps == 1 ? "" : "s",
                best_be, static_cast<long long>(p.perturbed), p.perturbed == 1 ? "" : "s");
  rep.message = description() + ": " + buf;
  return rep;
}

}  // namespace la
