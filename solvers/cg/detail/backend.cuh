// The device backend of the CG loop (cg.hpp's Backend contract): buffers, the three paths
// (plain, graph, persistent) and the checks. Private to solvers/cg/device_cg.cu.
#pragma once

#include <algorithm>
#include <cmath>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_precond.hpp>
#include <la/solvers/precond.hpp>
#include <la/solvers/detail/backend_util.cuh>
#include <la/solvers/detail/cg_kernels.cuh>
#include <la/solvers/cg/detail/walks.cuh>
#include <la/solvers/detail/vector_kernels.cuh>

namespace la::cg_detail {

template <typename T>
class device_backend {
 public:
  using value_type = T;
  using vector = device_vector<T>;
  /// Chunks stay below the history ring's capacity, so a drain never misses an iteration.
  static constexpr std::int64_t largest_chunk = 4096;
  static constexpr std::int64_t history_cap = 2 * largest_chunk;

  /// `a` is the CSR matrix the operator was built from: check_values scans its values and
  /// check_preconditioner takes its diagonal.
  template <typename O>
  device_backend(context& ctx, const spmv_operator<T>& op, const device_csr<T, O>& a, preconditioner pc,
                 const precond_options& popt, cg_path path, bool history)
      : ctx_(ctx), op_(op), walk_(op.variant().walk), pc_(pc), form_(form_of(pc)), n_(op.matrix().rows), path_(path),
        a_values_(a.values().data()), a_nnz_(a.nnz()), a_csr_(spmv_view(a)),
        prepare_preconditioner_([this, &a, popt] { return prepare_preconditioner(a, popt); }) {
    s_ = ctx.stream();
    const std::size_t n = static_cast<std::size_t>(n_);
    r_ = ctx.allocate<T>(n), q_ = ctx.allocate<T>(n);
    for (auto& p : p_) p = ctx.allocate<T>(n);
    if (form_ == precond_form::diagonal) inv_d_ = ctx.allocate<T>(n), d_ = ctx.allocate<T>(n);
    if (built_apart(pc)) z_ = ctx.allocate<T>(n);
    control_ = ctx.allocate<cg_control>(1);
    scalars_ = ctx.allocate<double>(2);  // a norm; FSAI's r'r between its two kernels
    flags_ = ctx.allocate<unsigned long long>(4);
    tickets_ = ctx.allocate<unsigned>(4);
    LA_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, 4 * sizeof(unsigned), s_));
    vector_blocks_ = blocks_for(n_, ctx.sm_count());
    fused_ = with_fused_walk(op.matrix(), walk_, [&](auto w) { walk_blocks_ = blocks_for(w.items(), ctx.sm_count()); });
    // With FSAI the persistent kernel is sized once the factor exists (prepare_preconditioner).
    if (path_ == cg_path::persistent && !built_apart(pc)) setup_persistent();
    if (path_ == cg_path::persistent && built_apart(pc) && !fsai_persistent(pc, a_csr_.wide))
      throw not_supported(std::string("the persistent CG path applies no preconditioner, Jacobi, or FSAI in double with "
                                      "32-bit offsets inside its kernel; ") +
                          to_string(pc) + " here runs between kernels: use the graph or plain path");
    const unsigned most = std::max({vector_blocks_, walk_blocks_, persistent_blocks_});
    partials_ = ctx.allocate<double>(3 * static_cast<std::size_t>(most));
    if (history) history_ = ctx.allocate<double>(history_cap);
    LA_CUDA_TRY(cudaMallocHost(&host_control_, sizeof(cg_control)));
  }
  ~device_backend() {
    if (graph_) LA_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(graph_));
    if (host_control_) LA_CUDA_TRY_NO_THROW(cudaFreeHost(host_control_));
  }
  device_backend(const device_backend&) = delete;
  device_backend& operator=(const device_backend&) = delete;

  index_t size() const { return n_; }
  bool fused() const { return fused_; }

  /// Sizes of b and x (cg_device has refused a matrix that is not square).
  std::string check_input(const vector& b, const vector& x) const { return size_mismatch(b.size(), x.size(), n_); }

  /// Where the matrix values (the CSR input), b or x hold NaN/Inf ("" when nowhere): one
  /// scan kernel each and one read-back.
  std::string check_values(const vector& b, const vector& x) { return find_non_finite(b, x); }
  /// Builds the preconditioner (the Jacobi inverse diagonal, or device_precond.hpp's); "" or
  /// why it does not exist for this matrix.
  std::string check_preconditioner() { return prepare_preconditioner_(); }
  precond_report describe_preconditioner() const { return rep_; }
  /// Whether the persistent path can run preconditioner pc: one applied as two products G^T G
  /// (FSAI's entry says so), in double, with 32-bit offsets.
  static bool fsai_persistent(preconditioner pc, bool wide) {
    return entry_of(pc).two_products && std::is_same_v<T, double> && !wide;  // (cg_device resolved automatic)
  }

 private:
  std::string find_non_finite(const vector& b, const vector& x) {
    const auto at = first_non_finite_of(ctx_, a_values_, static_cast<long long>(a_nnz_), b.data(), x.data(), n_,
                                        flags_.data());
    const char* what[] = {"matrix", "right-hand side", "initial guess"};
    for (int j = 0; j < 3; ++j)
      if (at[j] != ~0ull)
        return std::string(what[j]) + " holds a non-finite value at " + (j == 0 ? "stored entry " : "entry ") +
               std::to_string(at[j] + 1) + " (1-based)";
    return {};
  }
  template <typename O>
  std::string prepare_preconditioner(const device_csr<T, O>& m, const precond_options& popt) {
    rep_.kind = pc_;
    if (built_apart(pc_)) {
      if (std::string why = emplace_preconditioner(pre_, ctx_, m, pc_, popt); !why.empty()) return why;
      rep_ = pre_->report();
      matrix_view<T> g, gt;
      if (pre_->factors(g, gt)) {
        g_ = g, gt_ = gt;
        with_factor_walk(g_, [&](auto w) { g_blocks_ = blocks_for(w.items(), ctx_.sm_count()); });
        with_factor_walk(gt_, [&](auto w) { gt_blocks_ = blocks_for(w.items(), ctx_.sm_count()); });
        factored_ = true;
        r2_ = ctx_.allocate<T>(static_cast<std::size_t>(n_)), t_ = ctx_.allocate<T>(static_cast<std::size_t>(n_));
        // The partials buffer was sized before the factors existed.
        const unsigned most = std::max({vector_blocks_, walk_blocks_, persistent_blocks_, g_blocks_, gt_blocks_});
        if (3 * static_cast<std::size_t>(most) > partials_.size()) partials_ = ctx_.allocate<double>(3 * static_cast<std::size_t>(most));
        if (path_ == cg_path::persistent) setup_persistent_fsai();
      }
      return {};
    }
    if (form_ != precond_form::diagonal || n_ == 0) return {};
    const auto t0 = std::chrono::steady_clock::now();
    const csr_view<const T, O> a = m.view();
    rep_.bytes = 2.0 * n_ * sizeof(T);
    const unsigned long long none = ~0ull;
    LA_CUDA_TRY(cudaMemcpyAsync(flags_.data() + 3, &none, sizeof(none), cudaMemcpyHostToDevice, s_));
    csr_inverse_diagonal<<<blocks_for(n_, ctx_.sm_count()), block_threads, 0, s_>>>(a, inv_d_.data(), d_.data(),
                                                                                  flags_.data() + 3);
    LA_CHECK_LAUNCH(s_);
    unsigned long long bad = none;
    LA_CUDA_TRY(cudaMemcpyAsync(&bad, flags_.data() + 3, sizeof(bad), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    rep_.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (bad == none) return {};
    T v;
    LA_CUDA_TRY(cudaMemcpyAsync(&v, d_.data() + bad, sizeof(T), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return "Jacobi preconditioner: diagonal entry A(" + std::to_string(bad + 1) + "," + std::to_string(bad + 1) +
           ") = " + std::to_string(static_cast<double>(v)) +
           " is not positive, so the matrix is not symmetric positive definite";
  }

 public:
  double nrm2(const vector& v) { return norm(v.data()); }
  void set_zero(vector& x) { LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, x.size() * sizeof(T), s_)); }
  void scale(vector& x, double s) { scale_async(ctx_, x.data(), n_, s, vector_blocks_); }
  vector scaled_copy(const vector& b, double s) { return scaled_copy_async(ctx_, b.data(), n_, s, vector_blocks_); }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    LA_CUDA_TRY(cudaMemsetAsync(control_.data(), 0, sizeof(cg_control), s_));
    for (auto& p : p_) LA_CUDA_TRY(cudaMemsetAsync(p.data(), 0, p.size() * sizeof(T), s_));
    residual(b, x, r_.data());
    if (pre_) pre_->apply(r_.data(), z_.data(), s_);
    start_step<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), inv_d(), pre_ ? z_.data() : nullptr, n_,
                                                      control_.data(), lim_, partials_.data(), tickets_.data());
    LA_CHECK_LAUNCH(s_);
    directions_ = 0;
    residuals_ = 0;
    queue_direction_step(x.data());
    // The graph is captured here, in setup, so the loop's time is replays only.
    if (path_ == cg_path::graph) capture(x.data());
  }

  void iterate(std::int64_t k, vector& x) {
    if (path_ == cg_path::persistent) return run_persistent(k, x);
    if (path_ == cg_path::plain) {
      for (std::int64_t j = 0; j < k; ++j) queue_iteration(x.data());
      return;
    }
    if (!graph_ || graph_x_ != x.data()) capture(x.data());
    std::int64_t j = 0;
    for (; j + graph_iterations <= k; j += graph_iterations) {
      LA_CUDA_TRY(cudaGraphLaunch(graph_, s_));
      directions_ += graph_iterations;
      residuals_ += graph_iterations;
    }
    // The rest launched plainly, rounded up to an even count so the graph's buffer roles
    // hold: a whole graph for a short chunk ran up to 8 iterations past the stop, which an
    // AMG iteration (a V-cycle, ~10 SpMVs) made cost twice the solve on 15-iteration solves.
    for (std::int64_t rest = (k - j + 1) / 2 * 2; rest > 0; --rest) queue_iteration(x.data());
  }

  const cg_control& report() {
    LA_CUDA_TRY(cudaMemcpyAsync(host_control_, control_.data(), sizeof(cg_control), cudaMemcpyDeviceToHost, s_));
    ctx_.synchronize();
    return *host_control_;
  }

  void history(std::int64_t first, std::int64_t last, std::vector<double>& out) {
    read_history_async(history_.data(), history_cap, first, last, out, s_);
    ctx_.synchronize();
  }

  double residual_norm(const vector& b, const vector& x) {
    residual(b, x, q_.data());
    return norm(q_.data());
  }

 private:
  static constexpr int graph_iterations = 8;

  const T* inv_d() const { return form_ == precond_form::diagonal ? inv_d_.data() : nullptr; }
  /// The residual of iteration k: FSAI's fused step alternates two buffers (r_ for even k).
  T* residual_buffer(std::int64_t k) { return k % 2 ? r2_.data() : r_.data(); }
  double* history_ptr() { return history_.empty() ? nullptr : history_.data(); }

  void residual(const vector& b, const vector& x, T* out) {
    LA_CUDA_TRY(cudaMemcpyAsync(out, b.data(), b.size() * sizeof(T), cudaMemcpyDeviceToDevice, s_));
    op_.apply(x.data(), out, T(-1), T(1), s_);
  }
  /// ||v||, scale-safe, read back (setup and the final check only, never inside the loop).
  double norm(const T* v) {
    return safe_nrm2(v, n_, vector_blocks_, scalars_.data(), partials_.data(), tickets_.data() + 3, s_);
  }

  /// Direction step number directions_ + 1: reads the direction buffer the previous one wrote.
  void queue_direction_step(T* x) {
    ++directions_;
    T* p_old = p_[(directions_ - 1) % 2].data();
    T* p_new = p_[directions_ % 2].data();
    // beta is left 0 here: the kernels read it from the control block.
    // With a general preconditioner z is a buffer: the direction reads it in r's place.
    const direction_args<T> a{{pre_ ? z_.data() : r_.data(), inv_d(), p_old, T(0)}, p_new, q_.data(), x, n_};
    if (fused_) {
      with_fused_walk(op_.matrix(), walk_, [&](auto w) {
        direction_step_fused<<<walk_blocks_, block_threads, 0, s_>>>(w, a, control_.data(), partials_.data(), tickets_.data());
      });
      LA_CHECK_LAUNCH(s_);
    } else {
      direction_update<<<vector_blocks_, block_threads, 0, s_>>>(a, control_.data());
      LA_CHECK_LAUNCH(s_);
      op_.apply(p_new, q_.data(), T(1), T(0), s_);
      direction_dot<<<vector_blocks_, block_threads, 0, s_>>>(p_new, q_.data(), n_, control_.data(), partials_.data(),
                                                       tickets_.data());
      LA_CHECK_LAUNCH(s_);
    }
  }
  void queue_iteration(T* x) {
    if (factored_) {
      // FSAI fused: t = G r_new with r_new = r_old - alpha q stored by the walk, then z = G^T t
      // and the decision; the residual buffers alternate.
      T* r_old = residual_buffer(residuals_);
      T* r_new = residual_buffer(residuals_ + 1);
      ++residuals_;
      with_factor_walk(g_, [&](auto w) {
        fsai_residual<<<g_blocks_, block_threads, 0, s_>>>(w, r_old, q_.data(), r_new, t_.data(), control_.data(),
                                                           partials_.data(), tickets_.data() + 1, scalars_.data() + 1);
      });
      LA_CHECK_LAUNCH(s_);
      with_factor_walk(gt_, [&](auto w) {
        fsai_decide<<<gt_blocks_, block_threads, 0, s_>>>(w, t_.data(), r_new, z_.data(), control_.data(), lim_,
                                                          partials_.data(), tickets_.data() + 2, scalars_.data() + 1,
                                                          history_ptr(), history_cap);
      });
      LA_CHECK_LAUNCH(s_);
      return queue_direction_step(x);
    }
    if (pre_) {
      residual_only<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), q_.data(), n_, control_.data());
      LA_CHECK_LAUNCH(s_);
      pre_->apply(r_.data(), z_.data(), s_);
      residual_decide<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), z_.data(), n_, control_.data(), lim_,
                                                               partials_.data(), tickets_.data() + 1, history_ptr(),
                                                               history_cap);
      LA_CHECK_LAUNCH(s_);
      return queue_direction_step(x);
    }
    residual_step<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), q_.data(), inv_d(), n_, control_.data(), lim_,
                                                       partials_.data(), tickets_.data() + 1, history_ptr(),
                                                       history_cap);
    LA_CHECK_LAUNCH(s_);
    queue_direction_step(x);
  }

  void capture(T* x) {
    // An even number of iterations, so every replay starts with the same buffer roles.
    static_assert(graph_iterations % 2 == 0, "the direction buffers alternate: capture an even count");
    const std::int64_t directions = directions_, residuals = residuals_;
    capture_graph(s_, graph_, [&] {
      for (int j = 0; j < graph_iterations; ++j) queue_iteration(x);
    });
    directions_ = directions, residuals_ = residuals;
    graph_x_ = x;
  }

  void setup_persistent() {
    int coop = 0;
    LA_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx_.device()));
    if (!coop) throw not_supported("the persistent CG path needs cooperative launch, which this device lacks");
    const bool ok = with_fused_walk(op_.matrix(), walk_, [&](auto w) {
      int per_sm = 0;
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent<decltype(w), T>, block_threads, 0));
      const unsigned resident = static_cast<unsigned>(per_sm) * ctx_.sm_count();
      persistent_blocks_ = std::min(resident, std::max(grid_for(w.items()), grid_for(n_)));
    });
    if (!ok)
      throw not_supported("the persistent CG path needs a kernel with a row walk (" + fused_kernels() + "); kernel '" +
                          std::string(op_.variant().name) + "' has none: use the graph or plain path");
    if (persistent_blocks_ == 0) throw not_supported("the persistent CG kernel cannot be resident on this device");
  }

  /// f(A's walk, G's walk, G^T's walk) for the persistent FSAI kernel, over the CSR input:
  /// a thread a row for A's rows up to 16 entries on average (as the persistent path's rule,
  /// tuning note T9) and G's up to 8, else groups of 32 and 8 lanes. Double with 32-bit
  /// offsets only (four instantiations); false otherwise.
  template <typename F>
  bool with_fsai_walks(F&& f) {
    if constexpr (!std::is_same_v<T, double>) {
      return false;
    } else {
      if (a_csr_.wide || g_.wide || gt_.wide) return false;
      auto mean = [](const matrix_view<T>& m) { return m.rows ? double(m.nnz) / m.rows : 0.0; };
      auto with_g = [&](auto aw) {
        if (mean(g_) <= 8) f(aw, walk::by_thread(walk::rows_of(g_.csr32)), walk::by_thread(walk::rows_of(gt_.csr32)));
        else f(aw, walk::group_rows<8, T, std::int32_t>{g_.csr32}, walk::group_rows<8, T, std::int32_t>{gt_.csr32});
      };
      if (mean(a_csr_) <= 16) with_g(walk::by_thread(walk::rows_of(a_csr_.csr32)));
      else with_g(walk::group_rows<32, T, std::int32_t>{a_csr_.csr32});
      return true;
    }
  }
  void setup_persistent_fsai() {
    int coop = 0;
    LA_CUDA_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, ctx_.device()));
    if (!coop) throw not_supported("the persistent CG path needs cooperative launch, which this device lacks");
    const bool ok = with_fsai_walks([&](auto aw, auto gw, auto gtw) {
      int per_sm = 0;
      LA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, persistent_fsai<decltype(aw), decltype(gw), T>, block_threads, 0));
      const unsigned resident = static_cast<unsigned>(per_sm) * ctx_.sm_count();
      persistent_blocks_ = std::min(resident, std::max({grid_for(aw.items()), grid_for(gw.items()), grid_for(gtw.items()),
                                                        grid_for(n_)}));
    });
    if (!ok) throw not_supported("the persistent CG path runs FSAI in double with 32-bit offsets only");
    if (persistent_blocks_ == 0) throw not_supported("the persistent CG kernel cannot be resident on this device");
    if (3 * static_cast<std::size_t>(persistent_blocks_) > partials_.size())
      partials_ = ctx_.allocate<double>(3 * static_cast<std::size_t>(persistent_blocks_));
  }
  void run_persistent_fsai(std::int64_t k, vector& x) {
    with_fsai_walks([&](auto aw, auto gw, auto gtw) {
      T *xp = x.data(), *r0 = r_.data(), *r1 = r2_.data(), *t = t_.data(), *z = z_.data(), *p0 = p_[0].data(),
        *p1 = p_[1].data(), *q = q_.data();
      index_t n = n_;
      cg_control* c = control_.data();
      double* partials = partials_.data();
      double* hist = history_ptr();
      std::int64_t cap = history_cap, next = directions_ + 1, rnext = residuals_ + 1;
      void* args[] = {&aw, &gw, &gtw, &xp, &r0, &r1, &t, &z, &p0, &p1, &q, &n, &c, &lim_, &partials, &hist, &cap, &k,
                      &next, &rnext};
      LA_CUDA_TRY(cudaLaunchCooperativeKernel(
          reinterpret_cast<const void*>(persistent_fsai<decltype(aw), decltype(gw), T>), persistent_blocks_,
          block_threads, args, 0, s_));
    });
    directions_ += k, residuals_ += k;
  }

  /// The registry's variants with a fused form, for messages.
  static std::string fused_kernels() {
    std::string names;
    for (const auto& v : spmv_variants<T>())
      if (v.walk != row_walk::none) names += (names.empty() ? "" : ", ") + std::string(v.name);
    return names;
  }

  void run_persistent(std::int64_t k, vector& x) {
    if (factored_) return run_persistent_fsai(k, x);
    with_fused_walk(op_.matrix(), walk_, [&](auto w) {
      T *xp = x.data(), *r = r_.data(), *p0 = p_[0].data(), *p1 = p_[1].data(), *q = q_.data();
      const T* id = inv_d();
      index_t n = n_;
      cg_control* c = control_.data();
      double* partials = partials_.data();
      double* hist = history_ptr();
      std::int64_t cap = history_cap, next = directions_ + 1;
      void* args[] = {&w, &xp, &r, &p0, &p1, &q, &id, &n, &c, &lim_, &partials, &hist, &cap, &k, &next};
      LA_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent<decltype(w), T>),
                                              persistent_blocks_, block_threads, args, 0, s_));
    });
    directions_ += k;  // when it stops early, nothing reads the buffers again
  }

  context& ctx_;
  const spmv_operator<T>& op_;
  const row_walk walk_;  // the operator's variant's: its fused form
  preconditioner pc_;
  precond_form form_;  // how pc_ is applied (its registry entry's)
  index_t n_;
  cg_path path_;
  const T* a_values_;
  count_t a_nnz_;
  matrix_view<T> a_csr_;  // the CSR input: the persistent FSAI kernel walks it
  std::function<std::string()> prepare_preconditioner_;  // bound to the CSR input's offset type
  cudaStream_t s_;
  std::optional<device_preconditioner<T>> pre_;  // block-Jacobi, FSAI, IC(0)
  precond_report rep_;
  device_buffer<T> r_, q_, inv_d_, d_, z_, r2_, t_;  // r2_, t_: FSAI's second residual, G r
  bool factored_ = false;        // M^-1 = G^T G, fused into the residual step (fsai_residual, fsai_decide)
  matrix_view<T> g_, gt_;
  unsigned g_blocks_ = 1, gt_blocks_ = 1;
  std::int64_t residuals_ = 0;   // residual steps queued so far (which buffer is which)
  device_buffer<T> p_[2];     // the search direction, old and new (they alternate)
  std::int64_t directions_ = 0;    // direction steps queued so far (which buffer is which)
  device_buffer<cg_control> control_;
  device_buffer<double> scalars_, partials_, history_;
  device_buffer<unsigned long long> flags_;
  device_buffer<unsigned> tickets_;
  cg_limits lim_;
  cg_control* host_control_ = nullptr;
  unsigned vector_blocks_ = 1, walk_blocks_ = 1, persistent_blocks_ = 0;
  bool fused_ = false;
  cudaGraphExec_t graph_ = nullptr;
  const T* graph_x_ = nullptr;
};


}  // namespace la::cg_detail
