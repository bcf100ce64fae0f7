// What the parts of the multi-GPU CG (solvers/distributed/: team.cu, matrix.cu, distributed.cu)
// share: NCCL's error check, the team's and the distributed matrix's state. Private; built
// only with NCCL.
#pragma once

#include <la/solvers/distributed/distributed.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include <nccl.h>

#include <la/solvers/distributed/detail/kernels.cuh>

namespace la {

[[noreturn]] inline void throw_nccl(ncclResult_t r, const char* call, const char* file, int line, ncclComm_t comm) {
  std::string msg = std::string("NCCL failed: ") + ncclGetErrorString(r);
  if (const char* last = comm ? ncclGetLastError(comm) : nullptr; last && *last) msg += " (" + std::string(last) + ")";
  throw device_error(msg, std::string(file) + ":" + std::to_string(line) + ": " + call);
}
#define LA_NCCL_TRY(call, comm)                                                   \
  do {                                                                            \
    ncclResult_t la_nccl_ = (call);                                               \
    if (la_nccl_ != ncclSuccess) throw_nccl(la_nccl_, #call, __FILE__, __LINE__, comm); \
  } while (0)

// ---- the team --------------------------------------------------------------------------------

struct dist_comm::impl {
  int rank = 0, ranks = 1;
  std::unique_ptr<context> ctx;
  ncclComm_t comm = nullptr;
  std::shared_ptr<std::atomic<bool>> failed;
  cudaStream_t side = nullptr;  // the interior rows' stream
  cudaEvent_t fork = nullptr, join = nullptr;
  bool broken = false;  // aborted, or a rank failed: destroy by abort

  void abort() noexcept {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    broken = true;
  }
};

template <typename T>
constexpr ncclDataType_t nccl_type() {
  return sizeof(T) == 8 ? ncclDouble : ncclFloat;
}

using cg_detail::blocks_for;

// ---- the distributed matrix ------------------------------------------------------------------

template <typename T>
struct dist_matrix<T>::impl {
  context* ctx = nullptr;
  halo_plan plan;
  global_index global_rows = 0;
  count_t nnz = 0, global_nnz = 0;
  bool wide = false;
  device_buffer<std::int32_t> rp32;
  device_buffer<std::int64_t> rp64;
  device_buffer<index_t> col;
  device_buffer<T> val;
  device_buffer<index_t> interior, boundary, send_idx;  // interior, boundary: empty when contiguous
  index_t n_interior = 0, n_boundary = 0;
  index_t interior_first = 0, boundary_first = 0;  // the first row of a contiguous class

  /// Uploads a class of rows, or keeps only its first row when the rows are contiguous
  /// (the interior of a banded part, every row of a single part): a walk over a range
  /// reads no list and has no dependent load before its row offsets.
  static void upload_rows(context& ctx, const std::vector<index_t>& rows, device_buffer<index_t>& list, index_t& first) {
    const bool contiguous = rows.empty() || rows.back() - rows.front() + 1 == static_cast<index_t>(rows.size());
    first = rows.empty() ? 0 : rows.front();
    if (!contiguous) list = upload_async(ctx, rows);
  }
  /// The interior rows, walked in tiles of `tile` rows through the grid's planes when `tile`
  /// > 0 and the rows are a range of a generated grid (plane_sweep; tuning note D2).
  template <typename F>
  void with_interior(F&& f, long long tile = 0) const {
    with_walk(interior.empty() ? nullptr : interior.data(), interior_first, n_interior, f, tile);
  }
  template <typename F>
  void with_boundary(F&& f) const { with_walk(boundary.empty() ? nullptr : boundary.data(), boundary_first, n_boundary, f); }
  int width = 1;  // lanes a row
  /// How far a row's farthest neighbour sits on a generated grid (n^2 rows in 3D, n in 2D);
  /// 0 for a part from a file (no sweep).
  long long plane = 0;

  /// The order of a class of `count` rows for tiles of `tile` rows: swept through `plane`
  /// for a range of a generated grid longer than a plane, else the class's own order.
  plane_sweep order_of(const index_t* list, long long count, long long tile) const {
    return plane_sweep::of(count, list ? 0 : plane, tile);
  }
  /// The tile the interior rows are swept in when asked for `tile` (0: they walk in order).
  long long interior_sweep(long long tile) const {
    return order_of(interior.empty() ? nullptr : interior.data(), n_interior, tile).tile;
  }

  /// f(walk over `list` of `count` rows; null: the rows first, first + 1, ..., in
  /// order_of(list, count, tile)).
  template <typename F>
  void with_walk(const index_t* list, index_t first, long long count, F&& f, long long tile = 0) const {
    const plane_sweep order = order_of(list, count, tile);
    auto go = [&](auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      if (width == 1) f(dist_detail::listed_rows<1, T, O>{rp, col.data(), val.data(), list, first, count, order});
      else if (width == 8) f(dist_detail::listed_rows<8, T, O>{rp, col.data(), val.data(), list, first, count, order});
      else f(dist_detail::listed_rows<32, T, O>{rp, col.data(), val.data(), list, first, count, order});
    };
    if (wide) go(static_cast<const std::int64_t*>(rp64.data()));
    else go(static_cast<const std::int32_t*>(rp32.data()));
  }

  /// Totals over the team; the rows' width from the mean row length: a thread a row up to
  /// 16 entries (as the single-GPU persistent rule, bench/history/tuning-notes-the-code-cites.md note T9), then
  /// 8 and 32 lanes.
  void finish(dist_comm& comm) {
    const auto all = comm.all_gather({static_cast<std::int64_t>(plan.rows), nnz});
    global_rows = 0, global_nnz = 0;
    for (int r = 0; r < comm.ranks(); ++r) global_rows += all[2 * r], global_nnz += all[2 * r + 1];
    const double mean = plan.rows ? double(nnz) / plan.rows : 0;
    width = mean <= 16 ? 1 : mean <= 48 ? 8 : 32;
  }
};

}  // namespace la
