// Conjugate gradients on several GPUs: a row-partitioned matrix, a halo-exchanging SpMV over
// NCCL and the CG loop of cg.hpp over a distributed backend (target la::dist).
//
// A team is one rank per GPU. Ranks may be threads of one process (run_on_gpus: `la solve
// --gpus N`) or processes (one MPI rank per GPU: `la solve --mpi`, with the NCCL id sent
// over MPI); either way each rank runs the same code on its own dist_comm, so the two launch
// modes are one code path. Rank r holds part r of the matrix (formats/partition.hpp: a
// contiguous row block, columns renumbered owned-then-halo) and the matching slices of b
// and x.
//
// An iteration is the single-GPU one (device_cg.hpp) with its two dots made global:
//   direction step  the rows that need no halo (interior); the direction's values other
//                   ranks need packed and exchanged (grouped ncclSend/ncclRecv of only
//                   those values, received in place behind the owned entries); then the
//                   boundary rows. x += alpha p, p = z + beta p, q = A p and the p'q
//                   partials fused, as on one GPU. The interior rows can run on a second
//                   stream beside the exchange (dist_cg_options::overlap; measured slower,
//                   so off by default), and on a generated 3D grid they are walked in
//                   tiles through the planes (plane_sweep), which keeps the values a row
//                   shares with its neighbours a plane away in L2.
//   residual step   r -= alpha q fused with the r'r and r'z partials.
// With a preconditioner other than Jacobi (built on the part's diagonal block), the residual
// step is r -= alpha q, z = M^-1 r on the part, then the r'r and r'z partials.
// After each step every rank's partials (one value per dot and row class) are all-gathered
// in one ncclAllGather and every rank adds them in rank order, so every rank takes the same
// decision from the same bits and a solve is bit-identical run to run for a given number
// of GPUs (the partition, and with it the order of the sums, depends on that number). The
// iterations of a chunk are captured once into a CUDA graph, NCCL calls included.
//
// Errors: what the solver finds in the data is a status, agreed by every rank (a check that
// fails on one rank fails on all). A CUDA or NCCL failure on one rank throws there; in one
// process the other ranks' waits see it and abort their communicators instead of hanging
// (la::device_error: "another GPU of the team failed"); an MPI launcher aborts the job.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/partition.hpp>
#include <la/vector.hpp>
#include <la/solvers/cg.hpp>

namespace la {

/// Whether this build has NCCL; nccl_status() says which, or why not.
bool nccl_available() noexcept;
std::string nccl_status();
/// CUDA devices this process sees (0 without a driver or device).
int visible_gpus() noexcept;

/// One rank of a team of GPUs: its device, stream and NCCL communicator.
class dist_comm {
 public:
  /// NCCL's bootstrap id: made by one rank (new_id), given to every rank (in memory, or
  /// over MPI as plain bytes).
  struct unique_id {
    std::array<char, 128> bytes{};
  };
  static unique_id new_id();

  /// Joins the team as rank `rank` of `ranks` on CUDA device `device`. Collective: every
  /// rank constructs its dist_comm with the same id at about the same time. `team_failed`
  /// is shared by the ranks of one process (run_on_gpus): a rank that fails sets it, and
  /// the others' waits then abort instead of waiting for it forever.
  dist_comm(int rank, int ranks, const unique_id& id, int device,
            std::shared_ptr<std::atomic<bool>> team_failed = nullptr);
  ~dist_comm();
  dist_comm(const dist_comm&) = delete;
  dist_comm& operator=(const dist_comm&) = delete;

  int rank() const noexcept;
  int ranks() const noexcept;
  context& ctx() noexcept;

  /// Every rank's `values` (the same count on each), rank after rank (collective; waits).
  std::vector<std::int64_t> all_gather(const std::vector<std::int64_t>& values);
  /// The message of the first rank whose `why` is not empty, on every rank (empty when every
  /// rank's is); collective. How a check that fails on one rank ends the solve on all.
  std::string agree(const std::string& why);
  /// Waits for the stream, polling, so that a failure of another rank of the process ends
  /// the wait with an exception instead of a hang.
  void wait();
  /// Marks the team failed (a rank's error path calls it before rethrowing).
  void fail() noexcept;

  struct impl;
  impl& get() noexcept { return *p_; }

 private:
  std::unique_ptr<impl> p_;
};

/// Runs f(comm) on GPUs 0..gpus-1 of this process, one thread and rank each, and rethrows
/// the first rank's failure after every thread has ended. NCCL_NVLS_ENABLE is set to 0
/// unless already set (NVLink multicast stays off).
void run_on_gpus(int gpus, const std::function<void(dist_comm&)>& f);

/// Sets NCCL_NVLS_ENABLE=0 (and NVSHMEM_DISABLE_NVLS=1) unless the environment sets them,
/// and NCCL_RUNTIME_CONNECT=0 (connections made at initialization, so no later call blocks
/// on a peer that failed): every entry point that starts NCCL calls it first.
void keep_nvlink_multicast_off() noexcept;

/// This rank's part of a row-partitioned matrix, on its GPU.
template <typename T>
class dist_matrix {
 public:
  /// Uploads a part whose send lists are set (link_sends, or symmetric_sends). Offsets
  /// stay as the part has them (32- or 64-bit).
  template <typename O>
  dist_matrix(dist_comm& comm, const matrix_part<T, O>& part);
  /// Part comm.rank() of the 5-point (dims 2) or 7-point (dims 3) Laplacian on an n^dims
  /// grid, generated on the GPU (no copy of the matrix on the host; rows split evenly,
  /// even_row_blocks). 32-bit offsets when the part's nonzeros fit them.
  static dist_matrix poisson(dist_comm& comm, int dims, global_index n);

  const halo_plan& plan() const noexcept;
  global_index global_rows() const noexcept;
  count_t nnz() const noexcept;          // this part's
  count_t global_nnz() const noexcept;   // every part's
  bool wide() const noexcept;            // 64-bit offsets
  index_t interior_rows() const noexcept;
  /// Bytes one SpMV reads of this part's matrix (values, columns, offsets, row lists).
  double matrix_bytes() const noexcept;
  /// The local CSR arrays, copied back (tests).
  void download(std::vector<std::int64_t>& row_ptr, std::vector<index_t>& col_idx, std::vector<T>& values) const;

  struct impl;
  const impl& get() const noexcept { return *p_; }

 private:
  dist_matrix() = default;
  std::shared_ptr<impl> p_;
};

/// b = A * ones, this rank's slice (the right-hand side of a known solution x = ones).
template <typename T>
device_vector<T> dist_row_sums(dist_comm& comm, const dist_matrix<T>& a);

struct dist_cg_options {
  /// Capture the iterations into a CUDA graph (NCCL calls included); false launches each
  /// step (slower; for NCCL builds whose calls cannot be captured).
  bool graph = true;
  /// Resident blocks per multiprocessor the row walks launch (their grid: this many
  /// blocks a multiprocessor, striding over the rows); 0: the tuned default,
  /// dist_walk_blocks_per_sm.
  int walk_blocks_per_sm = 0;
  /// The interior rows' order on a generated grid (dist_matrix::poisson): tiles of this many
  /// rows, each walked through every plane of the part before the next (plane_sweep); 0
  /// walks the rows in order; -1 (default; any negative value) sweeps in tiles of
  /// dist_sweep_tile rows where dist_sweep_pays says so. Parts made from a matrix (a file)
  /// are always walked in order.
  long long sweep_tile = -1;
  /// What runs beside the interior rows (on a second stream): nothing (the interior rows,
  /// then the exchange and the boundary rows, on one stream), the halo exchange (the
  /// boundary rows after both), or the exchange and the boundary rows.
  /// Default: none, the fastest measured (tuning note D3: beside the interior rows, even
  /// the exchange alone made the 3D Laplacian's iteration 14% slower on two H200s).
  enum class overlap_mode { none, exchange, boundary };
  overlap_mode overlap = overlap_mode::none;
};

/// The row walks' grid (dist_cg_options::walk_blocks_per_sm): 4 blocks of 256 threads a
/// multiprocessor, as the one-GPU persistent kernel (tuning note T8). A full grid (8) made
/// the 3D Laplacian's iteration 1.37x slower and 2 blocks 1.32x (bench/RESULTS.md, "CG on
/// several GPUs", tuning note D1).
inline constexpr int dist_walk_blocks_per_sm = 4;

/// The interior rows' sweep on a generated grid (dist_cg_options::sweep_tile): tiles of
/// this many rows (bench/history/tuning-notes-the-code-cites.md, note D2).
inline constexpr long long dist_sweep_tile = 32768;

/// Whether the sweep pays: in the natural order a row's values are read again two planes
/// of rows later (by the row a plane below), and the direction step moves `bytes_per_row`
/// a row in between (matrix and vectors). The sweep was faster from 3D n = 256 on (those
/// bytes 18 MB, a third of an H200's 50 MB of L2; tuning note D2), so it is taken from a
/// quarter of L2 on.
inline bool dist_sweep_pays(long long plane, double bytes_per_row, long long l2_bytes) {
  return plane > 0 && 2.0 * double(plane) * bytes_per_row > 0.25 * double(l2_bytes);
}

/// What a distributed solve measured, for benchmarks: the time one iteration's
/// communication takes alone (the halo exchange and the two all-gathers, timed apart from
/// the solve after it: with the interior rows beside the exchange (overlap) the share it
/// gives is an upper bound).
struct dist_timing {
  double exchange_seconds = 0;
  long long sweep_tile = 0;  // the interior rows' sweep the solve used (0: in order)
};

/// Solves A x = b with this rank's slices of b and x (x holds the initial guess on entry).
/// Collective: every rank calls it with the same options. Preconditioners: none, Jacobi,
/// and the others of device_preconditioner (block-Jacobi, FSAI, IC(0), ILU(0), auto) built
/// on each part's diagonal block (its rows and owned columns): a block-diagonal M^-1, one
/// block a GPU, applied without communication; so with more GPUs it drops more of A and
/// may take more iterations than on one.
template <typename T>
solve_result cg_distributed(dist_comm& comm, const dist_matrix<T>& a, const device_vector<T>& b,
                            device_vector<T>& x, const cg_options& opt = {}, const dist_cg_options& dopt = {},
                            dist_timing* timing = nullptr);

}  // namespace la
