// The GPU AMG's coarsening of a system's level (detail/system.cuh): near_null.hpp's steps on
// the device, each in the host oracle's order.
//   1. Node strength: C = sqrt(E^T (A o A) E) by la's SpGEMM (E: unknown -> node, one 1 a
//      row), |diag C|, then aggregate.cu's MIS on C; the unknowns take their node's aggregate.
//   2. T by a QR an aggregate: the unknowns sorted by aggregate (stably: each aggregate's
//      members in index order), one thread an aggregate running near_null.hpp's modified
//      Gram-Schmidt on B's rows, a column kept where its remainder exceeds 1e-10 of its norm.
//   3. The kept columns numbered by a scan; T's rows (each every kept column of its
//      aggregate), the coarse space R and the coarse unknowns' nodes written from it.
// No atomics in any value: reruns are bit-identical.
#include <cub/device/device_radix_sort.cuh>

#include <la/kernels/spgemm/spgemm.hpp>
#include <la/solvers/amg/detail/system.cuh>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail::amg_detail {
namespace {

using W = count_t;

template <typename T, typename O>
__global__ void squared_values(csr_view<const T, O> a, T* out) {
  LA_GRID_STRIDE(i, a.rows)
  for (O k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) out[k] = a.values[k] * a.values[k];
}
/// E (n x nodes): row i's one entry (node_of[i], 1).
template <typename T>
__global__ void node_matrix(index_t n, const index_t* node_of, W* ptr, index_t* idx, T* val) {
  LA_GRID_STRIDE(i, n) {
    ptr[i + 1] = i + 1;
    if (i == 0) ptr[0] = 0;
    idx[i] = node_of[i], val[i] = T(1);
  }
}
/// C's values to their square roots, and |diag C|.
template <typename T>
__global__ void root_and_diagonal(index_t rows, const W* ptr, const index_t* idx, T* val, double* dabs) {
  LA_GRID_STRIDE(i, rows) {
    double d = 0;
    for (W k = ptr[i]; k < ptr[i + 1]; ++k) {
      val[k] = sqrt(val[k]);
      if (idx[k] == i) d = static_cast<double>(val[k]);
    }
    dabs[i] = d;
  }
}
__global__ void spread(index_t n, const index_t* node_of, const index_t* node_agg, index_t* of) {
  LA_GRID_STRIDE(i, n) of[i] = node_agg[node_of[i]];
}
__global__ void iota(index_t* v, index_t n) {
  LA_GRID_STRIDE(i, n) v[i] = static_cast<index_t>(i);
}
__global__ void starts(index_t n, const index_t* sorted_of, W* start, index_t count) {
  LA_GRID_STRIDE(p, n) {
    if (p == 0 || sorted_of[p] != sorted_of[p - 1]) start[sorted_of[p]] = p;
    if (p == 0) start[count] = n;
  }
}

/// near_null.hpp's tentative(), an aggregate a thread: q (n x k by unknown) and r (k x k an
/// aggregate, row-major) written, kept[a] the kept columns' bits.
__global__ void aggregate_qr(index_t count, int k, index_t n, const W* start, const index_t* order, const double* b,
                             double* q, double* r, unsigned* kept) {
  const std::size_t ks = static_cast<std::size_t>(k), nn = static_cast<std::size_t>(n);
  LA_GRID_STRIDE(a, count) {
    const W s = start[a], e = start[a + 1];
    double* ra = r + a * ks * ks;
    unsigned bits = 0;
    for (int c = 0; c < k; ++c) {
      double orig = 0;
      for (W t = s; t < e; ++t) {
        const index_t i = order[t];
        const double v = b[c * nn + i];
        q[i * ks + c] = v, orig += v * v;
      }
      for (int p = 0; p < c; ++p) {
        if (!(bits >> p & 1u)) continue;
        double dot = 0;
        for (W t = s; t < e; ++t) dot += q[order[t] * ks + p] * q[order[t] * ks + c];
        ra[p * ks + c] = dot;
        for (W t = s; t < e; ++t) q[order[t] * ks + c] -= dot * q[order[t] * ks + p];
      }
      double nrm = 0;
      for (W t = s; t < e; ++t) nrm += q[order[t] * ks + c] * q[order[t] * ks + c];
      nrm = sqrt(nrm);
      if (nrm > 1e-10 * sqrt(orig)) {
        bits |= 1u << c;
        ra[c * ks + c] = nrm;
        for (W t = s; t < e; ++t) q[order[t] * ks + c] /= nrm;
      } else {
        for (W t = s; t < e; ++t) q[order[t] * ks + c] = 0;
      }
    }
    kept[a] = bits;
  }
}
/// offset[a + 1] = the kept columns of aggregate a (scanned after); full[a + 1] = 1 where none dropped.
__global__ void kept_counts(index_t count, const unsigned* kept, unsigned full, index_t* offset, index_t* deficient) {
  LA_GRID_STRIDE(a, count) {
    offset[a + 1] = __popc(kept[a]);
    deficient[a + 1] = kept[a] != full;
  }
}
__global__ void row_counts(index_t n, const index_t* of, const unsigned* kept, W* ptr) {
  LA_GRID_STRIDE(i, n) ptr[i + 1] = __popc(kept[of[i]]);
}
template <typename T>
__global__ void fill_t(index_t n, int k, const index_t* of, const unsigned* kept, const index_t* offset, const double* q,
                       const W* ptr, index_t* idx, T* val) {
  LA_GRID_STRIDE(i, n) {
    const index_t a = of[i];
    W at = ptr[i];
    index_t col = offset[a];
    for (int c = 0; c < k; ++c)
      if (kept[a] >> c & 1u) idx[at] = col++, val[at] = static_cast<T>(q[i * static_cast<std::size_t>(k) + c]), ++at;
  }
}
__global__ void coarse_space(index_t count, int k, const unsigned* kept, const index_t* offset, const double* r,
                             index_t nc, double* cb, index_t* coarse_node) {
  const std::size_t ks = static_cast<std::size_t>(k);
  LA_GRID_STRIDE(a, count) {
    index_t row = offset[a];
    for (int p = 0; p < k; ++p) {
      if (!(kept[a] >> p & 1u)) continue;
      coarse_node[row] = static_cast<index_t>(a);
      for (int c = p; c < k; ++c) cb[c * static_cast<std::size_t>(nc) + row] = r[(a * ks + p) * ks + c];
      ++row;
    }
  }
}

}  // namespace

template <typename T, typename O>
bool system_coarsen(context& ctx, const device_csr<T, O>& a, const double* dabs, const device_buffer<index_t>& node_of,
                    index_t nodes, const device_buffer<double>& b, int k, double theta, int distance, system_level<T>& out) {
  cudaStream_t s = ctx.stream();
  const index_t n = a.rows();
  LA_EXPECTS(k >= 1 && k <= 32 && b.size() == static_cast<std::size_t>(n) * k, "amg: the near-null space is not n x k");
  // 1. Aggregates of the unknowns.
  device_buffer<index_t> of;
  index_t count = 0;
  if (node_of.size() == 0) {
    count = aggregate_device(ctx, a, dabs, theta, distance, of);
  } else {
    auto sq = ctx.allocate<T>(static_cast<std::size_t>(a.nnz()));
    squared_values<<<grid_for(n), block_threads, 0, s>>>(a.view(), sq.data());
    LA_CHECK_LAUNCH(s);
    const device_csr<T, O> a2(detail::trusted, n, n, copy_of(ctx, a.row_ptr()), copy_of(ctx, a.col_idx()), std::move(sq));
    auto ep = ctx.allocate<W>(static_cast<std::size_t>(n) + 1);
    auto ei = ctx.allocate<index_t>(static_cast<std::size_t>(n));
    auto ev = ctx.allocate<T>(static_cast<std::size_t>(n));
    node_matrix<<<grid_for(n), block_threads, 0, s>>>(n, node_of.data(), ep.data(), ei.data(), ev.data());
    LA_CHECK_LAUNCH(s);
    const device_csr<T, W> e(detail::trusted, n, nodes, std::move(ep), std::move(ei), std::move(ev));
    const device_csr<T, W> et = transposed(ctx, e);
    device_csr<T, W> ae, c;
    spgemm_plan<T, O, W, W>(ctx, a2, e).run(ctx, a2, e, ae);
    spgemm_plan<T, W, W, W>(ctx, et, ae).run(ctx, et, ae, c);
    auto cd = ctx.allocate<double>(static_cast<std::size_t>(nodes));
    auto [cp, ci, cv] = std::move(c).release();
    root_and_diagonal<<<grid_for(nodes), block_threads, 0, s>>>(nodes, cp.data(), ci.data(), cv.data(), cd.data());
    LA_CHECK_LAUNCH(s);
    const device_csr<T, W> cn(detail::trusted, nodes, nodes, std::move(cp), std::move(ci), std::move(cv));
    device_buffer<index_t> node_agg;
    count = aggregate_device(ctx, cn, cd.data(), theta, distance, node_agg);
    of = ctx.allocate<index_t>(static_cast<std::size_t>(n));
    spread<<<grid_for(n), block_threads, 0, s>>>(n, node_of.data(), node_agg.data(), of.data());
    LA_CHECK_LAUNCH(s);
  }
  if (count == 0) return false;
  // 2. The unknowns by aggregate (stably), and the QR of each aggregate's rows of B.
  auto order = ctx.allocate<index_t>(static_cast<std::size_t>(n)), ids = ctx.allocate<index_t>(static_cast<std::size_t>(n));
  auto sorted_of = ctx.allocate<index_t>(static_cast<std::size_t>(n));
  iota<<<grid_for(n), block_threads, 0, s>>>(ids.data(), n);
  LA_CHECK_LAUNCH(s);
  int bits = 1;
  while (bits < 31 && (index_t(1) << bits) < count) ++bits;
  std::size_t bytes = 0;
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, of.data(), sorted_of.data(), ids.data(), order.data(), n, 0, bits, s));
  auto temp = ctx.allocate<unsigned char>(bytes);
  LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, of.data(), sorted_of.data(), ids.data(), order.data(), n, 0,
                                              bits, s));
  auto start = ctx.allocate<W>(static_cast<std::size_t>(count) + 1);
  starts<<<grid_for(n), block_threads, 0, s>>>(n, sorted_of.data(), start.data(), count);
  LA_CHECK_LAUNCH(s);
  const std::size_t ks = static_cast<std::size_t>(k);
  auto q = ctx.allocate<double>(static_cast<std::size_t>(n) * ks);
  auto r = ctx.allocate<double>(static_cast<std::size_t>(count) * ks * ks);
  LA_CUDA_TRY(cudaMemsetAsync(r.data(), 0, r.size() * sizeof(double), s));
  auto kept = ctx.allocate<unsigned>(static_cast<std::size_t>(count));
  aggregate_qr<<<grid_for(count, 64), 64, 0, s>>>(count, k, n, start.data(), order.data(), b.data(), q.data(), r.data(),
                                                  kept.data());
  LA_CHECK_LAUNCH(s);
  // 3. The kept columns numbered; T, the coarse space and the coarse nodes.
  auto offset = ctx.allocate<index_t>(static_cast<std::size_t>(count) + 1);
  auto deficient = ctx.allocate<index_t>(static_cast<std::size_t>(count) + 1);
  kept_counts<<<grid_for(count), block_threads, 0, s>>>(count, kept.data(), k == 32 ? ~0u : (1u << k) - 1, offset.data(),
                                                        deficient.data());
  LA_CHECK_LAUNCH(s);
  const index_t nc = detail::scan_counts(ctx, offset.data(), count);
  out.deficient = detail::scan_counts(ctx, deficient.data(), count);
  if (nc == 0 || nc > n * 9 / 10) return false;
  auto tp = ctx.allocate<W>(static_cast<std::size_t>(n) + 1);
  row_counts<<<grid_for(n), block_threads, 0, s>>>(n, of.data(), kept.data(), tp.data());
  LA_CHECK_LAUNCH(s);
  const W tnnz = detail::scan_counts(ctx, tp.data(), n);
  auto ti = ctx.allocate<index_t>(static_cast<std::size_t>(tnnz));
  auto tv = ctx.allocate<T>(static_cast<std::size_t>(tnnz));
  fill_t<<<grid_for(n), block_threads, 0, s>>>(n, k, of.data(), kept.data(), offset.data(), q.data(), tp.data(), ti.data(),
                                               tv.data());
  LA_CHECK_LAUNCH(s);
  out.coarse_b = ctx.allocate<double>(static_cast<std::size_t>(nc) * ks);
  LA_CUDA_TRY(cudaMemsetAsync(out.coarse_b.data(), 0, out.coarse_b.size() * sizeof(double), s));
  out.coarse_node = ctx.allocate<index_t>(static_cast<std::size_t>(nc));
  coarse_space<<<grid_for(count), block_threads, 0, s>>>(count, k, kept.data(), offset.data(), r.data(), nc,
                                                         out.coarse_b.data(), out.coarse_node.data());
  LA_CHECK_LAUNCH(s);
  out.t = device_csr<T, W>(detail::trusted, n, nc, std::move(tp), std::move(ti), std::move(tv));
  out.coarse_n = nc;
  out.aggregates = count;
  ctx.synchronize();
  return true;
}

#define LA_INSTANTIATE(T, O)                                                                                        \
  template bool system_coarsen<T, O>(context&, const device_csr<T, O>&, const double*, const device_buffer<index_t>&, \
                                     index_t, const device_buffer<double>&, int, double, int, system_level<T>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::precond_detail::amg_detail
