// csr_balanced: equal-nonzero partitions for very uneven rows. The entries are cut into
// chunks of E = 256; a warp per chunk. A row belongs to the chunk its first entry falls in
// (rows starting at nnz go to the last chunk), and that chunk sums the row's entries inside
// the chunk: a lane per row for rows that end in the chunk, the whole warp for the one that
// runs on. A chunk's leading entries that belong to a row started earlier (its "head")
// are summed separately; the owner of a row that runs past its chunk then adds the heads of
// the following chunks, in order, while the row lasts. So a row of a million entries is
// spread over 4,000 warps, and the result is deterministic: every sum has a fixed order.
//   workspace: owner[c] = first row owned by chunk c (chunks + 1 entries; prepare, once per
//          matrix, binary searches the row pointers), then head[c] (scratch for run).
#include <la/kernels/spmv/detail/common.cuh>
#include <la/kernels/spmv/detail/variants.hpp>

namespace la::spmv_detail {
namespace {
constexpr long long chunk_entries = 256;  // E: 8 entries per lane

long long chunk_count(const spmv_problem& p) {
  return std::max<long long>(1, (p.nnz + chunk_entries - 1) / chunk_entries);
}

template <typename T>
std::size_t head_offset(const spmv_problem& p) {
  const std::size_t owner = static_cast<std::size_t>(chunk_count(p) + 1) * sizeof(index_t);
  return (owner + alignof(T) - 1) / alignof(T) * alignof(T);
}

/// owner[c] = first row whose first entry is at or after c*E (c = 0..chunks); the last
/// chunk also owns the rows that start at nnz (empty trailing rows).
template <typename O>
__global__ void owners_kernel(const O* ptr, index_t rows, long long chunks, index_t* owner) {
  LA_GRID_STRIDE(c, chunks + 1) {
    if (c == chunks) {
      owner[c] = rows;
      continue;
    }
    const long long start = c * chunk_entries;
    index_t lo = 0, hi = rows;
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (static_cast<long long>(ptr[mid]) < start) lo = mid + 1;
      else hi = mid;
    }
    owner[c] = lo;
  }
}

/// head[c] = sum of chunk c's entries before its first owned row starts (one row's part).
template <typename T, typename O>
__global__ void heads_kernel(csr_view<const T, O> a, const index_t* owner, long long chunks, const T* x, T* head) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(c, chunks) {
    const long long b = c * chunk_entries;
    const long long chunk_end = std::min<long long>(b + chunk_entries, a.nnz);
    const long long e = owner[c] < a.rows ? std::min<long long>(a.row_ptr[owner[c]], chunk_end) : chunk_end;
    T s = T(0);
    for (long long k = b + lane; k < e; k += 32) s += a.values[k] * x[a.col_idx[k]];
    s = group_sum<32>(s);
    if (lane == 0) head[c] = s;
  }
}

/// The rows a chunk owns: those that end inside it one per lane (their entries lie in the
/// chunk, at most E together, so no lane walks more than E); the last owned row, when it runs
/// past the chunk, by the whole warp (its part in the chunk, then the heads of the chunks it
/// spans, in order).
template <typename T, typename O>
__global__ void rows_kernel(csr_view<const T, O> a, const index_t* owner, long long chunks, const T* head, const T* x,
                            T* y, T alpha, T beta) {
  const int lane = threadIdx.x % 32;
  LA_WARP_STRIDE(c, chunks) {
    const long long chunk_end = std::min<long long>((c + 1) * chunk_entries, a.nnz);
    const index_t first = owner[c], end = owner[c + 1];
    if (first == end) continue;
    const bool spills = a.row_ptr[end] > chunk_end;  // the last owned row runs past the chunk
    const index_t inside = spills ? end - 1 : end;
    for (index_t r = first + lane; r < inside; r += 32) {
      T s = T(0);
      for (O k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) s += a.values[k] * x[a.col_idx[k]];
      finish(y, r, s, alpha, beta);
    }
    if (spills) {
      const index_t r = end - 1;
      const long long b = a.row_ptr[r], e = a.row_ptr[r + 1];
      T s = T(0);
      for (long long k = b + lane; k < chunk_end; k += 32) s += a.values[k] * x[a.col_idx[k]];
      s = group_sum<32>(s);
      T t = T(0);
      const long long last = (e - 1) / chunk_entries;  // the chunk holding the row's last entry
      for (long long q = c + 1 + lane; q <= last; q += 32) t += head[q];
      s += group_sum<32>(t);
      if (lane == 0) finish(y, r, s, alpha, beta);
    }
  }
}
}  // namespace

std::size_t csr_balanced_workspace_bytes(const spmv_problem& p, std::size_t value_bytes) {
  const std::size_t owner = static_cast<std::size_t>(chunk_count(p) + 1) * sizeof(index_t);
  return (owner + value_bytes - 1) / value_bytes * value_bytes + static_cast<std::size_t>(chunk_count(p)) * value_bytes;
}

template <typename T>
void prepare_csr_balanced(const matrix_view<T>& a, void* workspace, cudaStream_t s) {
  const long long chunks = chunk_count(problem_of(a));
  auto* owner = static_cast<index_t*>(workspace);
  with_width(a.wide, a.csr32, a.csr64, [&](auto v) {
    owners_kernel<<<grid_for(chunks + 1), block_threads, 0, s>>>(v.row_ptr, a.rows, chunks, owner);
  });
  LA_CHECK_LAUNCH(s);
}

template <typename T>
void run_csr_balanced(const matrix_view<T>& a, void* workspace, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  const spmv_problem p = problem_of(a);
  const long long chunks = chunk_count(p);
  const auto* owner = static_cast<const index_t*>(workspace);
  T* head = reinterpret_cast<T*>(static_cast<unsigned char*>(workspace) + head_offset<T>(p));
  const unsigned grid = grid_for(chunks * 32);
  with_width(a.wide, a.csr32, a.csr64, [&](auto v) {
    heads_kernel<<<grid, block_threads, 0, s>>>(v, owner, chunks, x, head);
    LA_CHECK_LAUNCH(s);
    rows_kernel<<<grid, block_threads, 0, s>>>(v, owner, chunks, head, x, y, alpha, beta);
    LA_CHECK_LAUNCH(s);
  });
}
LA_SPMV_INSTANTIATE(run_csr_balanced)
#define LA_INSTANTIATE_PREPARE(T) template void prepare_csr_balanced<T>(const matrix_view<T>&, void*, cudaStream_t);
LA_SPMV_FOR_EACH_DEVICE_VALUE(LA_INSTANTIATE_PREPARE)
#undef LA_INSTANTIATE_PREPARE
}  // namespace la::spmv_detail
