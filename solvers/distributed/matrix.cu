// CG on several GPUs (distributed.hpp): the distributed matrix (a GPU's rows, their halo
// plan, the interior/boundary classes and walks) and its row sums. Built only with NCCL
// (team.cu holds the stand-ins).
#include <la/solvers/distributed/distributed.hpp>

#if LA_HAVE_NCCL
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#include <la/solvers/distributed/detail/impl.cuh>

namespace la {

template <typename T>
template <typename O>
dist_matrix<T>::dist_matrix(dist_comm& comm, const matrix_part<T, O>& part) : p_(std::make_shared<impl>()) {
  impl& m = *p_;
  const halo_plan& h = part.plan;
  LA_EXPECTS(h.parts == comm.ranks() && h.part == comm.rank(),
             "distributed matrix: part " + std::to_string(h.part) + " of " + std::to_string(h.parts) +
                 " given to rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.ranks()));
  LA_EXPECTS(h.send_ptr.size() == static_cast<std::size_t>(h.parts) + 1 &&
                 h.send_ptr.back() == static_cast<index_t>(h.send_idx.size()),
             "distributed matrix: the part's send lists are not set (link_sends or symmetric_sends)");
  m.ctx = &comm.ctx();
  m.plan = h;
  m.nnz = part.local.nnz();
  m.wide = sizeof(O) == 8;
  if constexpr (sizeof(O) == 8) m.rp64 = upload_async(*m.ctx, part.local.row_ptr());
  else m.rp32 = upload_async(*m.ctx, part.local.row_ptr());
  m.col = upload_async(*m.ctx, part.local.col_idx());
  m.val = upload_async(*m.ctx, part.local.values());
  impl::upload_rows(*m.ctx, part.interior, m.interior, m.interior_first);
  impl::upload_rows(*m.ctx, part.boundary, m.boundary, m.boundary_first);
  m.send_idx = upload_async(*m.ctx, h.send_idx);
  m.n_interior = static_cast<index_t>(part.interior.size());
  m.n_boundary = static_cast<index_t>(part.boundary.size());
  comm.wait();
  m.finish(comm);
}

template <typename T>
dist_matrix<T> dist_matrix<T>::poisson(dist_comm& comm, int dims, global_index n) {
  dist_matrix out;
  out.p_ = std::make_shared<impl>();
  impl& m = *out.p_;
  context& ctx = comm.ctx();
  m.ctx = &ctx;
  const auto bounds = even_row_blocks(poisson_size(dims, n), comm.ranks());
  std::vector<index_t> boundary;
  m.plan = poisson_plan(dims, n, bounds, comm.rank(), &boundary);
  m.plane = dims == 3 ? n * n : n;
  const index_t rows = m.plan.rows;
  // The interior is the boundary's complement: one range when the boundary is a prefix and
  // a suffix of the rows (a part thicker than the stencil's reach), listed only otherwise.
  const index_t nb = static_cast<index_t>(boundary.size());
  index_t prefix = 0;
  while (prefix < nb && boundary[prefix] == prefix) ++prefix;
  bool range = true;
  for (index_t j = prefix; j < nb && range; ++j) range = boundary[j] == rows - (nb - j);
  m.n_interior = rows - nb, m.n_boundary = nb;
  if (range) {
    m.interior_first = prefix;
  } else {
    std::vector<index_t> interior;
    interior.reserve(static_cast<std::size_t>(rows - nb));
    for (index_t i = 0, b = 0; i < rows; ++i) {
      if (b < nb && boundary[b] == i) ++b;
      else interior.push_back(i);
    }
    impl::upload_rows(ctx, interior, m.interior, m.interior_first);
  }
  impl::upload_rows(ctx, boundary, m.boundary, m.boundary_first);
  m.send_idx = upload_async(ctx, m.plan.send_idx);
  device_buffer<global_index> halo = upload_async(ctx, m.plan.halo);
  const dist_detail::poisson_part part{dims, n, m.plan.first_row, rows, halo.data(), m.plan.halo_size()};
  // Offsets: counts, then a scan, in 64 bits; 32-bit copies when the part's nonzeros fit.
  device_buffer<std::int64_t> rp64 = ctx.allocate<std::int64_t>(static_cast<std::size_t>(rows) + 1);
  if (rows > 0) {
    dist_detail::poisson_counts<<<blocks_for(rows, ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(
        part, rp64.data() + 1);
    LA_CHECK_LAUNCH(ctx.stream());
  }
  const std::int64_t nnz = detail::scan_counts(ctx, rp64.data(), rows);
  m.nnz = nnz;
  m.wide = needs_64bit_offsets(nnz);
  m.col = ctx.allocate<index_t>(static_cast<std::size_t>(nnz));
  m.val = ctx.allocate<T>(static_cast<std::size_t>(nnz));
  if (!m.wide) {
    m.rp32 = ctx.allocate<std::int32_t>(static_cast<std::size_t>(rows) + 1);
    LA_CUDA_TRY(cudaMemsetAsync(m.rp32.data(), 0, sizeof(std::int32_t), ctx.stream()));
  }
  dist_detail::poisson_fill<T, std::int32_t><<<blocks_for(rows, ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(
      part, rp64.data(), m.wide ? nullptr : m.rp32.data(), m.col.data(), m.val.data());
  LA_CHECK_LAUNCH(ctx.stream());
  if (m.wide) m.rp64 = std::move(rp64);
  comm.wait();
  m.finish(comm);
  return out;
}

template <typename T>
const halo_plan& dist_matrix<T>::plan() const noexcept { return p_->plan; }
template <typename T>
global_index dist_matrix<T>::global_rows() const noexcept { return p_->global_rows; }
template <typename T>
count_t dist_matrix<T>::nnz() const noexcept { return p_->nnz; }
template <typename T>
count_t dist_matrix<T>::global_nnz() const noexcept { return p_->global_nnz; }
template <typename T>
bool dist_matrix<T>::wide() const noexcept { return p_->wide; }
template <typename T>
index_t dist_matrix<T>::interior_rows() const noexcept { return p_->n_interior; }
template <typename T>
double dist_matrix<T>::matrix_bytes() const noexcept {
  const impl& m = *p_;
  return double(m.nnz) * (sizeof(T) + sizeof(index_t)) + double(m.plan.rows + 1) * (m.wide ? 8 : 4) +
         double(m.interior.size() + m.boundary.size()) * sizeof(index_t);
}
template <typename T>
void dist_matrix<T>::download(std::vector<std::int64_t>& row_ptr, std::vector<index_t>& col_idx,
                              std::vector<T>& values) const {
  const impl& m = *p_;
  if (m.wide) {
    row_ptr = download_async(m.rp64);
  } else {
    const auto r = download_async(m.rp32);
    m.ctx->synchronize();
    row_ptr.assign(r.begin(), r.end());
  }
  col_idx = download_async(m.col);
  values = download_async(m.val);
  m.ctx->synchronize();
}

template <typename T>
device_vector<T> dist_row_sums(dist_comm& comm, const dist_matrix<T>& a) {
  const auto& m = a.get();
  context& ctx = comm.ctx();
  device_vector<T> b(ctx, m.plan.rows);
  m.with_walk(nullptr, 0, m.plan.rows, [&](auto w) {
    dist_detail::row_sums<<<blocks_for(w.items(), ctx.sm_count()), detail::block_threads, 0, ctx.stream()>>>(w, b.data());
  });
  LA_CHECK_LAUNCH(ctx.stream());
  return b;
}

#define LA_DIST_INSTANTIATE(T)                                                            \
  template class dist_matrix<T>;                                                         \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int32_t>&); \
  template dist_matrix<T>::dist_matrix(dist_comm&, const matrix_part<T, std::int64_t>&); \
  template device_vector<T> dist_row_sums(dist_comm&, const dist_matrix<T>&);
LA_DIST_INSTANTIATE(float)
LA_DIST_INSTANTIATE(double)
#undef LA_DIST_INSTANTIATE

}  // namespace la
#endif  // LA_HAVE_NCCL
