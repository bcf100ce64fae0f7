// The backend of the Krylov skeleton's loop (krylov.hpp) for CG on several GPUs
// (distributed.cu): the distributed matrix's product with its halo exchange and overlap, the
// all-gathered dots, the plain and graph paths, the preconditioners on each GPU's block.
// Private; built only with NCCL.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#include <la/solvers/device_precond.hpp>
#include <la/solvers/distributed/detail/impl.cuh>
#include <la/solvers/detail/vector_kernels.cuh>

namespace la::detail {

// ---- the backend of cg.hpp's loop ------------------------------------------------------------

template <typename T>
class dist_backend {
 public:
  using value_type = T;
  using vector = device_vector<T>;
  static constexpr std::int64_t largest_chunk = 4096;
  static constexpr std::int64_t history_cap = 2 * largest_chunk;
  static constexpr int graph_iterations = 8;  // even: the direction buffers alternate

  dist_backend(dist_comm& comm, const dist_matrix<T>& a, preconditioner pc, const precond_options& popt, bool history,
               const dist_cg_options& o)
      : comm_(comm), m_(a.get()), ctx_(comm.ctx()), s_(ctx_.stream()), side_(comm.get().side), pc_(pc), form_(form_of(pc)), popt_(popt),
        graph_(o.graph), overlap_(o.overlap), n_(m_.plan.rows), R_(comm.ranks()), me_(comm.rank()) {
    const std::size_t n = static_cast<std::size_t>(n_), ext = n + static_cast<std::size_t>(m_.plan.halo_size());
    r_ = ctx_.allocate<T>(n), q_ = ctx_.allocate<T>(n);
    for (auto& p : p_) p = ctx_.allocate<T>(ext);
    if (form_ == precond_form::diagonal) inv_d_ = ctx_.allocate<T>(n), d_ = ctx_.allocate<T>(n);
    if (cg_detail::built_apart(pc)) z_ = ctx_.allocate<T>(n);
    send_ = ctx_.allocate<T>(m_.plan.send_idx.size());
    control_ = ctx_.allocate<cg_control>(1);
    gathered_ = ctx_.allocate<double>(3 * 2 * static_cast<std::size_t>(R_));  // direction, residual, other
    flags_ = ctx_.allocate<unsigned long long>(4);
    tickets_ = ctx_.allocate<unsigned>(4);
    LA_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, 4 * sizeof(unsigned), s_));
    sms_ = ctx_.sm_count();
    vector_blocks_ = blocks_for(n_, sms_);
    const int per_sm = o.walk_blocks_per_sm > 0 ? o.walk_blocks_per_sm : dist_walk_blocks_per_sm;
    auto walk_grid = [&](long long items) {
      return std::min<unsigned>(detail::grid_for(items), static_cast<unsigned>(per_sm * sms_));
    };
    const double bytes_per_row = a.matrix_bytes() / std::max<double>(1, n_) + 6.0 * sizeof(T);  // z, p, x in; x, p, q out
    const bool pays = m_.width == 1 && dist_sweep_pays(m_.plane, bytes_per_row, ctx_.properties().l2CacheSize);
    sweep_tile_ = m_.interior_sweep(o.sweep_tile >= 0 ? o.sweep_tile : pays ? dist_sweep_tile : 0);
    m_.with_interior([&](auto w) { interior_blocks_ = walk_grid(w.items()); }, sweep_tile_);
    m_.with_boundary([&](auto w) { boundary_blocks_ = walk_grid(w.items()); });
    partials_i_ = ctx_.allocate<double>(interior_blocks_);
    partials_ = ctx_.allocate<double>(2 * static_cast<std::size_t>(std::max({vector_blocks_, boundary_blocks_})));
    if (history) history_ = ctx_.allocate<double>(history_cap);
    LA_CUDA_TRY(cudaMallocHost(&host_control_, sizeof(cg_control)));
  }
  ~dist_backend() {
    if (graph_exec_) LA_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(graph_exec_));
    if (host_control_) LA_CUDA_TRY_NO_THROW(cudaFreeHost(host_control_));
  }
  dist_backend(const dist_backend&) = delete;
  dist_backend& operator=(const dist_backend&) = delete;

  global_index size() const { return m_.global_rows; }

  std::string check_input(const vector& b, const vector& x) {
    std::string why;
    if (b.size() != n_)
      why = "right-hand side slice of rank " + std::to_string(me_) + " has " + std::to_string(b.size()) +
            " entries, its part has " + std::to_string(n_) + " rows";
    else if (x.size() != n_)
      why = "initial guess slice of rank " + std::to_string(me_) + " has " + std::to_string(x.size()) +
            " entries, expected " + std::to_string(n_);
    return comm_.agree(why);
  }

  std::string check_values(const vector& b, const vector& x) {
    const unsigned long long none = ~0ull;
    std::vector<unsigned long long> f(3, none);
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data(), f.data(), 3 * sizeof(none), cudaMemcpyHostToDevice, s_));
    auto scan = [&](const T* v, long long count, int slot) {
      if (count == 0) return;
      cg_detail::first_non_finite<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(v, count, flags_.data() + slot);
      LA_CHECK_LAUNCH(s_);
    };
    scan(m_.val.data(), m_.nnz, 0);
    scan(b.data(), n_, 1);
    scan(x.data(), n_, 2);
    LA_CUDA_TRY(cudaMemcpyAsync(f.data(), flags_.data(), 3 * sizeof(none), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    std::vector<std::int64_t> mine(3);
    for (int j = 0; j < 3; ++j) mine[j] = f[j] == none ? -1 : static_cast<std::int64_t>(f[j]);
    const auto all = comm_.all_gather(mine);
    const char* what[] = {"matrix", "right-hand side", "initial guess"};
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < R_; ++r)
        if (const std::int64_t at = all[3 * r + j]; at >= 0)
          return std::string(what[j]) + " holds a non-finite value at " +
                 (j == 0 ? "stored entry " + std::to_string(at + 1) + " of rank " + std::to_string(r) + "'s part"
                         : "entry " + std::to_string(at + 1) + " of rank " + std::to_string(r) + "'s slice") +
                 " (1-based)";
    return {};
  }

  std::string check_preconditioner() {
    rep_.kind = pc_;
    if (cg_detail::built_apart(pc_)) return build_block_preconditioner();
    if (form_ != precond_form::diagonal) return {};
    const auto t0 = std::chrono::steady_clock::now();
    rep_.bytes = 2.0 * double(n_) * sizeof(T);
    const unsigned long long none = ~0ull;
    unsigned long long bad = none;
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data() + 3, &none, sizeof(none), cudaMemcpyHostToDevice, s_));
    // The part's rows as a CSR view: the owned diagonal is local column i.
    auto go = [&](const auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      const csr_view<const T, O> a{n_, n_ + m_.plan.halo_size(), static_cast<O>(m_.nnz), rp, m_.col.data(),
                                   m_.val.data()};
      cg_detail::csr_inverse_diagonal<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(a, inv_d_.data(),
                                                                                            d_.data(), flags_.data() + 3);
    };
    if (m_.wide) go(m_.rp64.data());
    else go(m_.rp32.data());
    LA_CHECK_LAUNCH(s_);
    LA_CUDA_TRY(cudaMemcpyAsync(&bad, flags_.data() + 3, sizeof(bad), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    std::string why;
    if (bad != none) {
      T v = T(0);
      LA_CUDA_TRY(cudaMemcpyAsync(&v, d_.data() + bad, sizeof(T), cudaMemcpyDeviceToHost, s_));
      comm_.wait();
      const std::string i = std::to_string(m_.plan.first_row + static_cast<global_index>(bad) + 1);
      why = "Jacobi preconditioner: diagonal entry A(" + i + "," + i + ") = " + std::to_string(static_cast<double>(v)) +
            " is not positive, so the matrix is not symmetric positive definite";
    }
    why = comm_.agree(why);
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return why;
  }
  precond_report describe_preconditioner() const { return rep_; }

  /// M^-1 built by device_preconditioner on the part's diagonal block (its rows and owned
  /// columns): the block-diagonal preconditioner of the partition, one block a GPU, applied
  /// with no communication. A block it does not exist for ends the solve on every rank with
  /// the failing rank's message.
  std::string build_block_preconditioner() {
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    auto go = [&](const auto* rp) {
      using O = std::remove_const_t<std::remove_pointer_t<decltype(rp)>>;
      device_csr<T, O> block = owned_block(rp);
      if (std::string e = cg_detail::emplace_preconditioner(pre_, ctx_, block, pc_, popt_); !e.empty())
        why = "rank " + std::to_string(me_) + " (global rows " + std::to_string(m_.plan.first_row + 1) + " to " +
              std::to_string(m_.plan.first_row + n_) + ", its block's rows counted from the first): " + e;
    };
    if (m_.wide) go(m_.rp64.data());
    else go(m_.rp32.data());
    why = comm_.agree(why);
    if (!why.empty()) return why;
    rep_ = pre_->report();
    rep_.detail = "on each GPU's diagonal block" + (rep_.detail.empty() ? std::string() : ", " + rep_.detail);
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {};
  }

  /// The part's diagonal block as a device CSR matrix (rows x rows, the part's offset type).
  template <typename O>
  device_csr<T, O> owned_block(const O* rp) {
    auto ptr = ctx_.allocate<O>(static_cast<std::size_t>(n_) + 1);
    if (n_ > 0) {
      dist_detail::owned_counts<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(rp, m_.col.data(), n_,
                                                                                      ptr.data() + 1);
      LA_CHECK_LAUNCH(s_);
    }
    const O nnz = detail::scan_counts(ctx_, ptr.data(), n_);
    device_csr<T, O> block(detail::trusted, n_, n_, std::move(ptr), ctx_.allocate<index_t>(static_cast<std::size_t>(nnz)),
                           ctx_.allocate<T>(static_cast<std::size_t>(nnz)));
    if (n_ > 0) {
      dist_detail::owned_copy<<<blocks_for(n_, sms_), detail::block_threads, 0, s_>>>(rp, m_.col.data(), m_.val.data(),
                                                                                    n_, block.view());
      LA_CHECK_LAUNCH(s_);
    }
    return block;
  }

  /// ||v|| over every rank, scale-safe: the global dot where it neither under- nor
  /// overflows, else each rank's scale-safe norm gathered and summed scaled by the largest
  /// (in rank order: the same on every rank).
  double nrm2(const vector& v) {
    const double s = global_dot(v.data(), v.data());
    if (s > 1e-280 && s < 1e280) return std::sqrt(s);
    double* scratch = gathered_.data() + 4 * R_ + 2 * me_;  // this rank's pair of global_dot's slots
    const double local = cg_detail::safe_nrm2(v.data(), n_, vector_blocks_, scratch, partials_.data(),
                                              tickets_.data() + 3, s_);
    std::int64_t bits = 0;
    std::memcpy(&bits, &local, sizeof bits);
    const std::vector<std::int64_t> all = comm_.all_gather({bits});
    std::vector<double> norms(all.size());
    double most = 0;
    for (std::size_t r = 0; r < all.size(); ++r) std::memcpy(&norms[r], &all[r], sizeof(double)), most = std::max(most, norms[r]);
    if (!(most > 0) || !std::isfinite(most)) return most;
    double t = 0;
    for (double d : norms) t += (d / most) * (d / most);
    return most * std::sqrt(t);
  }
  void set_zero(vector& x) { LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), s_)); }
  void scale(vector& x, double s) { cg_detail::scale_async(ctx_, x.data(), n_, s, vector_blocks_); }
  vector scaled_copy(const vector& b, double s) {
    return cg_detail::scaled_copy_async(ctx_, b.data(), n_, s, vector_blocks_);
  }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    LA_CUDA_TRY(cudaMemsetAsync(control_.data(), 0, sizeof(cg_control), s_));
    residual(b, x, r_.data());
    for (auto& p : p_) LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, p.size() * sizeof(T), s_));
    double* g = gathered_.data() + 4 * R_;
    if (pre_) pre_->apply(r_.data(), z_.data(), s_);
    dist_detail::start_rows<<<vector_blocks_, detail::block_threads, 0, s_>>>(
        r_.data(), inv_d(), pre_ ? z_.data() : nullptr, n_, partials_.data(), tickets_.data() + 2, g + 2 * me_);
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    dist_detail::start_decide<<<1, 32, 0, s_>>>(control_.data(), lim_, g, R_);
    LA_CHECK_LAUNCH(s_);
    directions_ = 0;
    queue_direction_step(x.data());
    if (graph_) capture(x.data());
  }

  void iterate(std::int64_t k, vector& x) {
    // Every rank queues the same count: the chunk rule reads each rank's own clock.
    const auto all = comm_.all_gather({k});
    for (int r = 0; r < R_; ++r) k = std::min<std::int64_t>(k, all[r]);
    if (!graph_) {
      for (std::int64_t j = 0; j < k; ++j) queue_iteration(x.data());
      return;
    }
    if (!graph_exec_ || graph_x_ != x.data()) capture(x.data());
    for (std::int64_t j = 0; j < k; j += graph_iterations) {
      LA_CUDA_TRY(cudaGraphLaunch(graph_exec_, s_));
      directions_ += graph_iterations;
    }
  }

  const cg_control& report() {
    LA_CUDA_TRY(cudaMemcpyAsync(host_control_, control_.data(), sizeof(cg_control), cudaMemcpyDeviceToHost, s_));
    comm_.wait();
    return *host_control_;
  }

  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) {
    cg_detail::read_history_async(history_.data(), history_cap, first, last, out, s_);
    comm_.wait();
  }

  double residual_norm(const vector& b, const vector& x) {
    residual(b, x, q_.data());
    return std::sqrt(global_dot(q_.data(), q_.data()));
  }

  /// One iteration's communication alone (pack, halo exchange, two all-gathers), seconds
  /// per repetition over `reps`.
  double time_exchange(int reps) {
    cudaEvent_t e0, e1;
    LA_CUDA_TRY(cudaEventCreate(&e0));
    LA_CUDA_TRY(cudaEventCreate(&e1));
    double* g = gathered_.data() + 4 * R_;
    auto once = [&] {
      exchange(p_[0].data());
      all_gather_pair(g);
      all_gather_pair(g);
    };
    for (int j = 0; j < 5; ++j) once();
    comm_.all_gather({0});  // every rank starts together
    LA_CUDA_TRY(cudaEventRecord(e0, s_));
    for (int j = 0; j < reps; ++j) once();
    LA_CUDA_TRY(cudaEventRecord(e1, s_));
    comm_.wait();
    float ms = 0;
    LA_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    return 1e-3 * ms / reps;
  }

  long long sweep_tile() const { return sweep_tile_; }
  std::string method() const {
    return "distributed CG on " + std::to_string(R_) + " GPU" + (R_ > 1 ? "s" : "") + " (" + nccl_status() +
           "), CSR rows " + (m_.width == 1 ? std::string("a thread each") : std::to_string(m_.width) + " lanes each") +
           (overlap_ == dist_cg_options::overlap_mode::boundary   ? ", interior rows beside the halo exchange and the boundary rows"
            : overlap_ == dist_cg_options::overlap_mode::exchange ? ", interior rows beside the halo exchange"
                                                                  : ", interior rows before the halo exchange") +
           (sweep_tile_ > 0 ? ", swept in tiles of " + std::to_string(sweep_tile_) + " rows through the grid's planes"
                            : std::string()) +
           ", " + (graph_ ? "graph" : "plain") +
           " path, deterministic (rank-ordered sums)";
  }

 private:
  const T* inv_d() const { return form_ == precond_form::diagonal ? inv_d_.data() : nullptr; }

  /// Fills v's halo (v[rows..rows + halo)) from the other ranks' owned entries.
  void exchange(T* v) {
    const index_t count = static_cast<index_t>(m_.plan.send_idx.size());
    if (count > 0) {
      dist_detail::pack<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(static_cast<const T*>(v),
                                                                                   m_.send_idx.data(), count,
                                                                                   send_.data());
      LA_CHECK_LAUNCH(s_);
    }
    send_recv(v);
  }
  void send_recv(T* v) {
    const halo_plan& h = m_.plan;
    ncclComm_t c = comm_.get().comm;
    LA_NCCL_TRY(ncclGroupStart(), c);
    for (int q = 0; q < R_; ++q) {
      if (q == me_) continue;
      if (const index_t k = h.send_ptr[q + 1] - h.send_ptr[q]; k > 0)
        LA_NCCL_TRY(ncclSend(send_.data() + h.send_ptr[q], k, nccl_type<T>(), q, c, s_), c);
      if (const index_t k = h.recv_ptr[q + 1] - h.recv_ptr[q]; k > 0)
        LA_NCCL_TRY(ncclRecv(v + n_ + h.recv_ptr[q], k, nccl_type<T>(), q, c, s_), c);
    }
    LA_NCCL_TRY(ncclGroupEnd(), c);
  }
  /// In place: this rank's two values at g[2 me] go to every rank's g.
  void all_gather_pair(double* g) {
    ncclComm_t c = comm_.get().comm;
    LA_NCCL_TRY(ncclAllGather(g + 2 * me_, g, 2, ncclDouble, c, s_), c);
  }

  double global_dot(const T* x, const T* y) {
    double* g = gathered_.data() + 4 * R_;
    LA_CUDA_TRY(cudaMemsetAsync(g + 2 * me_ + 1, 0, sizeof(double), s_));
    cg_detail::dot_kernel<<<vector_blocks_, detail::block_threads, 0, s_>>>(x, y, n_, g + 2 * me_, partials_.data(),
                                                                         tickets_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    comm_.wait();  // before the copy into pageable memory (see all_gather)
    std::vector<double> all(2 * static_cast<std::size_t>(R_));
    LA_CUDA_TRY(cudaMemcpy(all.data(), g, all.size() * sizeof(double), cudaMemcpyDeviceToHost));
    double s = 0;
    for (int r = 0; r < R_; ++r) s += all[2 * r];
    return s;
  }

  /// out = b - A x, with x's halo exchanged through p_[0] (free outside the loop).
  void residual(const vector& b, const vector& x, T* out) {
    T* v = p_[0].data();
    LA_CUDA_TRY(cudaMemcpyAsync(v, x.data(), static_cast<std::size_t>(n_) * sizeof(T), cudaMemcpyDeviceToDevice, s_));
    exchange(v);
    m_.with_walk(nullptr, 0, n_, [&](auto w) {
      dist_detail::residual_of<<<blocks_for(w.items(), sms_), detail::block_threads, 0, s_>>>(w, static_cast<const T*>(v),
                                                                                           b.data(), out);
    });
    LA_CHECK_LAUNCH(s_);
  }

  void queue_direction_step(T* x) {
    ++directions_;
    T* p_old = p_[(directions_ - 1) % 2].data();
    T* p_new = p_[directions_ % 2].data();
    const cg_detail::direction<T> dir{pre_ ? z_.data() : r_.data(), inv_d(), p_old, T(0)};
    double* g = gathered_.data();
    // The interior rows on the side stream, from the state the residual step left (or on
    // the main stream, before the exchange, without overlap).
    using mode = dist_cg_options::overlap_mode;
    const bool beside = overlap_ != mode::none;
    const cudaStream_t in = beside ? side_ : s_;
    if (beside) {
      LA_CUDA_TRY(cudaEventRecord(comm_.get().fork, s_));
      LA_CUDA_TRY(cudaStreamWaitEvent(side_, comm_.get().fork, 0));
    }
    m_.with_interior(
        [&](auto w) {
          dist_detail::direction_part<<<interior_blocks_, detail::block_threads, 0, in>>>(
              w, dir, dir, p_new, q_.data(), x, control_.data(), partials_i_.data(), tickets_.data(), g + 2 * me_);
        },
        sweep_tile_);
    LA_CHECK_LAUNCH(in);
    if (beside) LA_CUDA_TRY(cudaEventRecord(comm_.get().join, side_));
    // Meanwhile the values other ranks need, then the boundary rows.
    if (const index_t count = static_cast<index_t>(m_.plan.send_idx.size()); count > 0) {
      dist_detail::pack_direction<<<blocks_for(count, sms_), detail::block_threads, 0, s_>>>(dir, m_.send_idx.data(), count,
                                                                                         send_.data(), control_.data());
      LA_CHECK_LAUNCH(s_);
    }
    send_recv(p_new);
    if (overlap_ == mode::exchange) LA_CUDA_TRY(cudaStreamWaitEvent(s_, comm_.get().join, 0));
    const dist_detail::halo_direction<T> hd{dir, p_new, n_};
    m_.with_boundary([&](auto w) {
      dist_detail::direction_part<<<boundary_blocks_, detail::block_threads, 0, s_>>>(
          w, hd, dir, p_new, q_.data(), x, control_.data(), partials_.data(), tickets_.data() + 1, g + 2 * me_ + 1);
    });
    LA_CHECK_LAUNCH(s_);
    if (overlap_ == mode::boundary) LA_CUDA_TRY(cudaStreamWaitEvent(s_, comm_.get().join, 0));
    all_gather_pair(g);
    dist_detail::direction_decide<<<1, 32, 0, s_>>>(control_.data(), g, R_);
    LA_CHECK_LAUNCH(s_);
  }

  void queue_iteration(T* x) {
    double* g = gathered_.data() + 2 * R_;
    if (pre_) {
      cg_detail::residual_only<<<vector_blocks_, detail::block_threads, 0, s_>>>(r_.data(), q_.data(), n_,
                                                                               control_.data());
      LA_CHECK_LAUNCH(s_);
      pre_->apply(r_.data(), z_.data(), s_);
      dist_detail::residual_dots<<<vector_blocks_, detail::block_threads, 0, s_>>>(
          r_.data(), z_.data(), n_, control_.data(), partials_.data(), tickets_.data() + 2, g + 2 * me_);
    } else {
      dist_detail::residual_rows<<<vector_blocks_, detail::block_threads, 0, s_>>>(
          r_.data(), q_.data(), inv_d(), n_, control_.data(), partials_.data(), tickets_.data() + 2, g + 2 * me_);
    }
    LA_CHECK_LAUNCH(s_);
    all_gather_pair(g);
    dist_detail::residual_decide<<<1, 32, 0, s_>>>(control_.data(), lim_, g, R_,
                                                   history_.empty() ? nullptr : history_.data(), history_cap);
    LA_CHECK_LAUNCH(s_);
    queue_direction_step(x);
  }

  void capture(T* x) {
    const std::int64_t directions = directions_;
    cg_detail::capture_graph(s_, graph_exec_, [&] {
      for (int j = 0; j < graph_iterations; ++j) queue_iteration(x);
    });
    directions_ = directions;
    graph_x_ = x;
  }

  dist_comm& comm_;
  const typename dist_matrix<T>::impl& m_;
  context& ctx_;
  cudaStream_t s_, side_;
  preconditioner pc_;
  precond_form form_;  // how pc_ is applied (its registry entry's)
  precond_options popt_;
  std::optional<device_preconditioner<T>> pre_;
  bool graph_;
  dist_cg_options::overlap_mode overlap_;
  index_t n_;
  int R_, me_;
  int sms_ = 1;
  device_buffer<T> r_, q_, inv_d_, d_, z_, send_;
  device_buffer<T> p_[2];  // rows + halo each; they alternate
  std::int64_t directions_ = 0;
  device_buffer<cg_control> control_;
  // 2 values a rank for each of: the direction step's p'q (interior, boundary), the
  // residual step's r'r and r'z, and the start's and the norms'.
  device_buffer<double> gathered_, partials_, partials_i_, history_;
  device_buffer<unsigned long long> flags_;
  device_buffer<unsigned> tickets_;  // interior, boundary, residual, dots
  precond_report rep_;
  cg_limits lim_;
  cg_control* host_control_ = nullptr;
  unsigned vector_blocks_ = 1, interior_blocks_ = 1, boundary_blocks_ = 1;
  long long sweep_tile_ = 0;  // the interior's (0: in order)
  cudaGraphExec_t graph_exec_ = nullptr;
  const T* graph_x_ = nullptr;
};
}  // namespace la::detail
