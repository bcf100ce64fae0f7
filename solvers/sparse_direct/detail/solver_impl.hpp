// la::sparse_direct_solver's state (sparse_direct_solver.hpp says what and why), shared by its
// files: solvers/sparse_direct/solver.cpp (the calls, the analysis's use, the host's numeric
// factorization and solve), factor.cu (the GPU's factorization, level by level) and solve.cu
// (the GPU's solve and refinement). The symbols themselves are built by fronts.cpp.
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
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <la/context.hpp>
#include <la/device_buffer.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la {
namespace sparse_detail {
using clock_type = std::chrono::steady_clock;
inline double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

constexpr int threads = 256;
inline unsigned blocks_for(long n, int per = threads) {
  return static_cast<unsigned>(std::max<long>(1, (n + per - 1) / per));
}

/// The fronts' device arrays, by value into the kernels.
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

/// h (a host vector) copied to ctx's device, in stream order.
template <typename V>
device_buffer<typename V::value_type> upload(context& ctx, const V& h) {
  auto d = ctx.allocate<typename V::value_type>(h.size());
  if (!h.empty())
    LA_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), sizeof(typename V::value_type) * h.size(), cudaMemcpyHostToDevice,
                                ctx.stream()));
  return d;
}

/// The GPU solve's buffers and its level loop's CUDA graphs (one per count of right-hand sides),
/// kept between solves: a kept factor's later solves allocate nothing and launch one graph.
/// Made again when the symbols are (upload_symbols).
struct solve_workspace {
  index_t k = 0;  // right-hand sides the buffers hold
  device_buffer<double> b0, x, r, y, best, wv, pmax, psq;
  std::vector<std::pair<index_t, cudaGraphExec_t>> graphs;
  solve_workspace() = default;
  solve_workspace(const solve_workspace&) = delete;
  solve_workspace& operator=(const solve_workspace&) = delete;
  ~solve_workspace() {
    for (auto& g : graphs) cudaGraphExecDestroy(g.second);
  }
};
}  // namespace sparse_detail

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
  std::vector<std::vector<int>> level_big;  // per level: its fronts factored blocked (big_front)
  std::vector<int> level_small;             // the rest, level after level: [small_ptr[l], small_ptr[l + 1])
  std::vector<std::size_t> small_ptr;
  std::vector<int> solve_split;             // per level, its split fronts (split_solve): [split_ptr[l], split_ptr[l + 1])
  std::vector<std::size_t> split_ptr;
  std::vector<int> split_below, split_own;  // per level, the largest m - nc and nc of its split fronts
  std::unique_ptr<sparse_detail::solve_workspace> ws;  // the GPU solve's (solve.cu)
  std::vector<int> level_m;                 // per level, its largest front (the solve: a warp a front up to 32 rows)
  bool host = false;        // the host's threads (no context): the fronts in hF
  int host_threads = 1;     // (not `threads`: that is the kernels' block size, sparse_detail::threads)
  std::vector<double> hF;
  // The device's.
  device_buffer<double> F, aval;
  device_buffer<count_t> d_src, d_aptr;
  device_buffer<index_t> d_aidx, d_in_idx, d_out_idx;
  device_buffer<double> d_scale, d_in_scale, d_out_scale;
  device_buffer<long> d_pos, d_off, d_vec, d_map, d_item_ptr;
  device_buffer<int> d_m, d_nc, d_first, d_rows, d_rel, d_list, d_item_front, d_item_row, d_con_child, d_con_row, d_flags,
      d_small, d_split;

  sparse_detail::front_table table() const {
    return {d_off.data(), d_m.data(), d_nc.data(), d_first.data(), d_map.data(), d_rel.data(), d_vec.data(), d_rows.data()};
  }

  void init(const csr_matrix<double, count_t>& m, sparse_direct_options o);  // solver.cpp
  void analyze(bool matched);                                                 // solver.cpp
  void upload_symbols();                                                      // factor.cu
  void numeric();                                                             // factor.cu
  void numeric_host();                                                        // solver.cpp
  sparse_direct_report solve_host(std::vector<double>& b, index_t k);        // solver.cpp
  double row_sum_max() const;                                                 // solver.cpp: ||A||_inf
};

}  // namespace la
