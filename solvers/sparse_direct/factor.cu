// la::sparse_direct_solver's numeric factorization on the GPU (detail/solver_impl.hpp has the
// symbols it reads): A's entries scattered into the fronts, then level by level from the
// leaves the children's update matrices added (a warp per parent row, the child rows in a
// fixed order: no atomics, reruns bit-identical) and the level's fronts factored without
// pivoting, the small ones a thread block each in one launch, the big ones blocked with their
// trailing updates on la's fp64 Tensor Core GEMM. SPD (no matching): A = L D L^T, the big
// fronts' trailing updates on the lower triangle only (Cholesky's flops), U's rows D L^T.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <la/detail/stream_event.hpp>
#include <la/error.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/memory.hpp>
#include <la/solvers/sparse_direct/detail/solver_impl.hpp>

namespace la {
using namespace sparse_detail;
namespace {
constexpr int panel = 64;  // the big fronts' block width (the GEMM's K)

/// F[pos[e]] = vals[src[e]] * scale[e] (the fronts zeroed before).
__global__ void scatter_kernel(const double* vals, const count_t* src, const double* scale, const long* pos, long count,
                               double* F) {
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) F[pos[e]] = vals[src[e]] * scale[e];
}

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
/// below and right of each pivot up to rows_end and cols_end updated: one thread block, A in
/// global or shared memory. The update takes a warp a row, its lanes along the row (each
/// element's updates in the order of k, as an element a thread was: the same bits).
__device__ void block_lu(double* A, int m, int k0, int k1, int rows_end, int cols_end, double tiny, bool spd, int first,
                         int* bad, int* perturbed) {
  __shared__ double piv;
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  const int warps = static_cast<int>(blockDim.x >> 5);
  for (int k = k0; k < k1; ++k) {
    if (threadIdx.x == 0) {
      piv = pivot_of(A[static_cast<long>(k) * m + k], tiny, spd, first + k + 1, bad, perturbed);
      A[static_cast<long>(k) * m + k] = piv;
    }
    __syncthreads();
    const double d = piv;
    for (int i = k + 1 + static_cast<int>(threadIdx.x); i < rows_end; i += blockDim.x) A[static_cast<long>(i) * m + k] /= d;
    __syncthreads();
    const double* urow = A + static_cast<long>(k) * m;
    for (int i = k + 1 + warp; i < rows_end; i += warps) {
      double* row = A + static_cast<long>(i) * m;
      const double l = row[k];
      for (int j = k + 1 + lane; j < cols_end; j += 32) row[j] -= l * urow[j];
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

/// A big front's diagonal block [k0, k0 + kb): one block, the block in shared memory. SPD:
/// the trailing updates kept the lower triangle only, so the block's upper triangle is its
/// mirror.
__global__ void factor_diag_kernel(double* A, int m, int k0, int kb, double tiny, bool spd, int first, int* bad, int* perturbed) {
  __shared__ double d[panel * panel];
  for (int e = threadIdx.x; e < kb * kb; e += blockDim.x) {
    const int i = e / kb, j = e % kb;
    d[e] = spd && i < j ? A[static_cast<long>(k0 + j) * m + k0 + i] : A[static_cast<long>(k0 + i) * m + k0 + j];
  }
  __syncthreads();
  block_lu(d, kb, 0, kb, kb, kb, tiny, spd, first + k0, bad, perturbed);
  for (int e = threadIdx.x; e < kb * kb; e += blockDim.x) A[static_cast<long>(k0 + e / kb) * m + k0 + e % kb] = d[e];
}

/// SPD: U12 = D11 L21^T (A12 = A21^T and U11 = D11 L11^T give L11^-1 A12 = D11 L21^T), so
/// the stale upper triangle is never read: a thread per column right of the diagonal block.
__global__ void u12_symmetric_kernel(double* A, int m, int k0, int kb) {
  const int j = k0 + kb + static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  for (int i = 0; i < kb; ++i)
    A[static_cast<long>(k0 + i) * m + j] = A[static_cast<long>(k0 + i) * m + k0 + i] * A[static_cast<long>(j) * m + k0 + i];
}

/// SPD: the update matrix's upper triangle (rows and columns [c0, m)) from its lower one, for
/// the parent's extend-add, which reads whole rows.
__global__ void mirror_kernel(double* A, int m, int c0) {
  const long w = m - c0;
  const long e = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= w * w) return;
  const int i = static_cast<int>(e / w), j = static_cast<int>(e % w);
  if (i < j) A[static_cast<long>(c0 + i) * m + c0 + j] = A[static_cast<long>(c0 + j) * m + c0 + i];
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

}  // namespace

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
  d_small = upload(c, level_small);
  d_split = upload(c, solve_split);
  d_item_front = upload(c, sym.item_front), d_item_row = upload(c, sym.item_row), d_item_ptr = upload(c, sym.item_ptr);
  d_con_child = upload(c, sym.con_child), d_con_row = upload(c, sym.con_row);
  d_in_idx = upload(c, sym.in_idx), d_out_idx = upload(c, sym.out_idx), d_in_scale = upload(c, sym.in_scale), d_out_scale = upload(c, sym.out_scale);
  d_aptr = upload(c, a.row_ptr()), d_aidx = upload(c, a.col_idx());
  aval = upload(c, a.values());
  d_flags = c.allocate<int>(2);
  ws.reset();  // its buffers and graphs name the old symbols
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
  const cudaStream_t main_stream = st;
  std::vector<std::unique_ptr<context>> lanes;  // side streams for a level's big fronts
  std::size_t most_big = 0;
  for (const auto& lb : level_big) most_big = std::max(most_big, lb.size());
  for (std::size_t q = 0; q < std::min<std::size_t>(most_big > 1 ? most_big : 0, static_cast<std::size_t>(std::max(0, opt.front_streams))); ++q)
    lanes.push_back(std::make_unique<context>(c.device()));
  stream_event fork;
  std::vector<stream_event> joins(lanes.size());
  const std::size_t levels = sym.level_ptr.size() - 1;
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
    if (small_ptr[l + 1] > small_ptr[l]) {  // the level's small fronts, one launch
      factor_small_kernel<<<static_cast<unsigned>(small_ptr[l + 1] - small_ptr[l]), threads, 0, st>>>(
          F.data(), t, d_small.data() + small_ptr[l], sym.tiny, spd, bad, pert);
      LA_CHECK_LAUNCH(st);
    }
    // The level's big fronts are independent: with several, they go round-robin onto side
    // streams (each front's steps in order on its own), so their small launches overlap.
    const std::size_t lanes_used = big.size() > 1 ? std::min(big.size(), lanes.size()) : 0;
    for (std::size_t q = 0; q < lanes_used; ++q) fork.order(st, lanes[q]->stream());
    for (std::size_t b = 0; b < big.size(); ++b) {
      const int s = big[b];
      const cudaStream_t st = lanes_used ? lanes[b % lanes_used]->stream() : main_stream;
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
        if (spd) u12_symmetric_kernel<<<blocks_for(rest, 128), 128, 0, st>>>(A, m, k0, kb);
        else u12_kernel<<<blocks_for(rest, 128), 128, 0, st>>>(A, m, k0, kb);
        LA_CHECK_LAUNCH(st);
        dgemm_args g;
        g.m = rest, g.n = rest, g.k = kb;
        g.a = A + static_cast<long>(k0 + kb) * m + k0, g.lda = m;
        g.b = A + static_cast<long>(k0) * m + k0 + kb, g.ldb = m;
        g.c = A + static_cast<long>(k0 + kb) * m + k0 + kb, g.ldc = m;
        g.alpha = -1, g.beta = 1;
        g.lower_only = spd;  // SPD: the lower triangle (half the flops, Cholesky's count)
        dgemm(g, st);
      }
      if (spd && m > nc) {
        mirror_kernel<<<blocks_for(static_cast<long>(m - nc) * (m - nc)), threads, 0, st>>>(A, m, nc);
        LA_CHECK_LAUNCH(st);
      }
    }
    for (std::size_t q = 0; q < lanes_used; ++q) joins[q].order(lanes[q]->stream(), st);
  }
  int flags[2];
  LA_CUDA_TRY(cudaMemcpyAsync(flags, d_flags.data(), sizeof flags, cudaMemcpyDeviceToHost, st));
  LA_CUDA_TRY(cudaStreamSynchronize(st));
  singular = flags[0] == std::numeric_limits<int>::max() ? 0 : static_cast<index_t>(sym.an.perm[static_cast<std::size_t>(flags[0] - 1)]) + 1;
  perturbed = flags[1];
  factored = true;
  t_factor = since(t0);
}

}  // namespace la
