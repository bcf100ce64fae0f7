// The GPU AMG's aggregation (amg.cu's setup calls it a level at a time): the strength graph
// (count, scan, fill), the distance-2 MIS in rounds (three kernels a round, one flag read),
// the joins and the numbering by a scan: aggregation.hpp's rounds, which the host oracle
// runs, node for node.
#include <la/detail/instantiate.hpp>
#include <la/solvers/amg/aggregation.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail::amg_detail {

using W = count_t;

namespace {

/// Strong neighbours: j != i with |a_ij| >= theta sqrt(|a_ii a_jj|). Counts, then the fill.
template <typename T, typename O>
__global__ void count_strong(csr_view<const T, O> a, const double* dabs, double theta, W* counts) {
  LA_GRID_STRIDE(i, a.rows) {
    W c = 0;
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      c += j != i && fabs(static_cast<double>(a.values[k])) >= theta * sqrt(dabs[i] * dabs[j]);
    }
    counts[i + 1] = c;
  }
}
template <typename T, typename O>
__global__ void fill_strong(csr_view<const T, O> a, const double* dabs, double theta, const W* gp, index_t* gi) {
  LA_GRID_STRIDE(i, a.rows) {
    W at = gp[i];
    for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      if (j != i && fabs(static_cast<double>(a.values[k])) >= theta * sqrt(dabs[i] * dabs[j])) gi[at++] = j;
    }
  }
}

struct graph_view {
  index_t n;
  const W* ptr;
  const index_t* idx;
};

__device__ __forceinline__ std::uint64_t key_of(int state, index_t i) { return amg::node_key(state, i); }

/// One MIS round (aggregation.hpp's): k1 = the largest key within distance 1, k2 within 2,
/// then the states.
__global__ void mis_k1(graph_view g, const int* state, std::uint64_t* k1) {
  LA_GRID_STRIDE(i, g.n) {
    std::uint64_t m = key_of(state[i], static_cast<index_t>(i));
    for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = max(m, key_of(state[g.idx[k]], g.idx[k]));
    k1[i] = m;
  }
}
__global__ void mis_k2(graph_view g, const std::uint64_t* k1, std::uint64_t* k2, int distance) {
  LA_GRID_STRIDE(i, g.n) {
    std::uint64_t m = k1[i];
    if (distance > 1)
      for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = max(m, k1[g.idx[k]]);
    k2[i] = m;
  }
}
__global__ void mis_states(index_t n, const std::uint64_t* k2, int* state, int* undecided) {
  LA_GRID_STRIDE(i, n) {
    if (state[i] != 1) continue;
    if (k2[i] == key_of(1, static_cast<index_t>(i))) state[i] = 2;
    else if ((k2[i] >> 62) == 2) state[i] = 0;
    else *undecided = 1;
  }
}
/// Each node's root: a root itself; else the root of largest key among its neighbours.
__global__ void join_roots(graph_view g, const int* state, index_t* first) {
  LA_GRID_STRIDE(i, g.n) {
    if (state[i] == 2) {
      first[i] = static_cast<index_t>(i);
      continue;
    }
    std::uint64_t best = 0;
    index_t f = -1;
    for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
      const index_t j = g.idx[k];
      if (state[j] == 2 && key_of(2, j) > best) best = key_of(2, j), f = j;
    }
    first[i] = f;
  }
}
/// Else the root of its neighbour of largest key that has one; else itself. roots[i + 1] =
/// whether i is a root (for the numbering scan).
__global__ void join_neighbours(graph_view g, const index_t* first, index_t* root, index_t* is_root) {
  LA_GRID_STRIDE(i, g.n) {
    index_t r = first[i];
    if (r < 0) {
      std::uint64_t best = 0;
      for (W k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
        const index_t j = g.idx[k];
        if (first[j] >= 0 && key_of(1, j) > best) best = key_of(1, j), r = first[j];
      }
      if (r < 0) r = static_cast<index_t>(i);
    }
    root[i] = r;
    is_root[i + 1] = r == i;
  }
}
__global__ void number_aggregates(index_t n, const index_t* root, const index_t* id, index_t* of) {
  LA_GRID_STRIDE(i, n) of[i] = id[root[i]];
}
__global__ void undecided_states(int* state, index_t n) {
  LA_GRID_STRIDE(i, n) state[i] = 1;
}

}  // namespace

template <typename T, typename O>
index_t aggregate_device(context& ctx, const device_csr<T, O>& a, const double* dabs, double theta, int distance,
                         device_buffer<index_t>& of) {
  const index_t n = a.rows();
  cudaStream_t s = ctx.stream();
  auto gp = ctx.allocate<W>(static_cast<std::size_t>(n) + 1);
  count_strong<<<grid_for(n), block_threads, 0, s>>>(a.view(), dabs, theta, gp.data());
  LA_CUDA_TRY(cudaGetLastError());
  const W edges = detail::scan_counts(ctx, gp.data(), n);
  auto gi = ctx.allocate<index_t>(static_cast<std::size_t>(edges));
  fill_strong<<<grid_for(n), block_threads, 0, s>>>(a.view(), dabs, theta, gp.data(), gi.data());
  LA_CUDA_TRY(cudaGetLastError());
  const graph_view g{n, gp.data(), gi.data()};
  auto state = ctx.allocate<int>(static_cast<std::size_t>(n));
  auto k1 = ctx.allocate<std::uint64_t>(static_cast<std::size_t>(n)), k2 = ctx.allocate<std::uint64_t>(static_cast<std::size_t>(n));
  auto undecided = ctx.allocate<int>(1);
  undecided_states<<<grid_for(n), block_threads, 0, s>>>(state.data(), n);
  LA_CUDA_TRY(cudaGetLastError());
  for (int more = n > 0; more;) {
    LA_CUDA_TRY(cudaMemsetAsync(undecided.data(), 0, sizeof(int), s));
    mis_k1<<<grid_for(n), block_threads, 0, s>>>(g, state.data(), k1.data());
    mis_k2<<<grid_for(n), block_threads, 0, s>>>(g, k1.data(), k2.data(), distance);
    mis_states<<<grid_for(n), block_threads, 0, s>>>(n, k2.data(), state.data(), undecided.data());
    LA_CUDA_TRY(cudaGetLastError());
    LA_CUDA_TRY(cudaMemcpyAsync(&more, undecided.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
    ctx.synchronize();
  }
  auto first = ctx.allocate<index_t>(static_cast<std::size_t>(n)), root = ctx.allocate<index_t>(static_cast<std::size_t>(n));
  auto id = ctx.allocate<index_t>(static_cast<std::size_t>(n) + 1);
  join_roots<<<grid_for(n), block_threads, 0, s>>>(g, state.data(), first.data());
  join_neighbours<<<grid_for(n), block_threads, 0, s>>>(g, first.data(), root.data(), id.data());
  LA_CUDA_TRY(cudaGetLastError());
  const index_t count = detail::scan_counts(ctx, id.data(), n);  // id[i]: the roots before i
  of = ctx.allocate<index_t>(static_cast<std::size_t>(n));
  number_aggregates<<<grid_for(n), block_threads, 0, s>>>(n, root.data(), id.data(), of.data());
  LA_CUDA_TRY(cudaGetLastError());
  ctx.synchronize();
  return count;
}

#define LA_INSTANTIATE(T, O)                                                                                       \
  template index_t aggregate_device<T, O>(context&, const device_csr<T, O>&, const double*, double, int, \
                                          device_buffer<index_t>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::precond_detail::amg_detail
