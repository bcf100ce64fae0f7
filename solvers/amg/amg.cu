// Smoothed-aggregation AMG on the GPU: the whole setup on the device, mirroring the host
// oracle (hierarchy.hpp) phase by phase, and the cycle as kernels only (capturable).
//
// Setup, a level at a time: the inverse diagonal and Gershgorin's bound (one kernel), the
// power estimate of lambda_max(D^-1 A) (a fused product and fixed-order dots a step); the
// strength graph and the distance-2 MIS aggregates (aggregate.cu); the tentative prolongator
// (nodes sorted by aggregate, stably, so each aggregate's norm is summed in node order); S =
// I - omega D^-1 A on A's pattern and P = S T, R = P^T (the device CSR->CSC conversion), A P
// and R (A P) by la's SpGEMM; the coarsest operator inverted densely on the device
// (coarse.cu: la::dense_solver's LU with partial pivoting in double, solved for the
// identity). The aggregates and the SpGEMM plans are kept, so update_values reruns only the
// numeric phases.
//
// The cycle: a level's Chebyshev steps, residual, restriction and correction are each one
// product kernel with its element-wise work fused in (sub-warp rows, fixed shuffle sums);
// the coarsest level is one dense product. No atomics in any value, so reruns are
// bit-identical.
#include <cub/device/device_radix_sort.cuh>

#include <la/kernels/spgemm/spgemm.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/amg/detail/coarse.cuh>
#include <la/solvers/amg/detail/kernels.cuh>
#include <la/solvers/amg/detail/system.cuh>
#include <la/solvers/detail/precond_device.cuh>

namespace la::precond_detail {
namespace {

using namespace amg_detail;
using clock = std::chrono::steady_clock;
double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

/// A device matrix over the given arrays, moved in.
template <typename T>
device_csr<T, W> csr_of(index_t rows, index_t cols, device_buffer<W> p, device_buffer<index_t> i, device_buffer<T> v) {
  return device_csr<T, W>(detail::trusted, rows, cols, std::move(p), std::move(i), std::move(v));
}

/// The largest coarsest level solved densely; a larger one (coarsening stalled, or
/// max_levels reached) is smoothed instead (hierarchy.hpp's rule).
template <typename T, typename O>
class amg_impl final : public device_preconditioner<T>::impl {
 public:
  amg_impl(context& ctx, const device_csr<T, O>& a, const amg_options& opt) : ctx_(ctx), opt_(opt), a0_(&a) {
    amg::check_options(opt);
    LA_EXPECTS(opt.partitions == 1, "amg: the partitioned hierarchy (amg_options::partitions > 1) is built on the host "
                                    "only so far; build it with partitions = 1 on the GPU");
    fingerprint_ = fingerprint(a);
    amg::near_null_space ns = amg::resolve_near_null(opt, a.rows());  // the host's resolution, checks and all
    scalar_ = ns.scalar();
    near_null_what_ = ns.what;
    levels_.emplace_back();
    levels_[0].n = a.rows();
    levels_[0].k = ns.k;
    levels_[0].nodes = ns.nodes;
    if (scalar_) {
      levels_[0].near_null = ctx.allocate<double>(static_cast<std::size_t>(a.rows()));
      fill_ones(levels_[0].near_null.data(), a.rows());
    } else {
      levels_[0].near_null = upload_async(ctx, ns.b);  // ns outlives the copies: prepare() waits on the stream
      levels_[0].node_of = upload_async(ctx, ns.node_of);
    }
    for (;;) {
      const std::size_t l = levels_.size() - 1;
      prepare(l);
      const index_t n = levels_[l].n;
      if (n <= opt.coarse_size || static_cast<int>(levels_.size()) >= opt.max_levels) break;
      const auto t0 = clock::now();
      const double theta = opt.strength * std::pow(0.5, static_cast<double>(l));
      if (scalar_) {
        const index_t count = aggregate(l, theta);
        sec_.aggregation += since(t0);
        if (count == 0 || count > n * 9 / 10) break;
        levels_.emplace_back();
        levels_[l + 1].n = count;
        galerkin(l, true);
      } else {
        if (!coarsen_system(l, theta)) break;
        sec_.aggregation += since(t0);
        galerkin(l, false);
      }
    }
    factor_coarse();
    allocate_vectors();
    describe();
  }

  void update(const device_csr<T, O>& a) {
    LA_EXPECTS(a.rows() == a0_->rows() && a.cols() == a0_->cols() && a.nnz() == a0_->nnz() && fingerprint(a) == fingerprint_,
               "amg: update_values needs the pattern the hierarchy was built on; build a new one for a new pattern");
    a0_ = &a;
    sec_ = {};
    const auto t0 = clock::now();
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      prepare(l);
      if (l + 1 < levels_.size()) galerkin(l, false);
    }
    factor_coarse();
    describe();
    this->rep.setup_seconds = since(t0);
  }

  void apply(const T* r, T* z, cudaStream_t s) const override { cycle(0, r, z, true, opt_.cycle, s); }

  /// The hierarchy's shape, for tests and reports.
  index_t levels() const { return static_cast<index_t>(levels_.size()); }
  index_t rows(index_t l) const { return levels_[l].n; }
  double operator_complexity() const { return opc_; }

 private:
  struct level {
    index_t n = 0;
    device_csr<T, W> a;  // below the finest
    device_csr<T, W> p, r;
    device_buffer<T> dinv, l1inv;
    device_buffer<double> dabs, near_null;
    device_buffer<index_t> of;  // the aggregates of this level's nodes
    index_t count = 0;
    int k = 1;                       // near_null's columns (n x k, column-major)
    device_buffer<index_t> node_of;  // a system's unknowns' nodes (empty: each unknown its own)
    index_t nodes = 0, deficient = 0;
    double lambda = 1;
    std::optional<spgemm_plan<T, O, W, W>> plan_sp0, plan_ap0;  // the finest level's S T and A P
    std::optional<spgemm_plan<T, W, W, W>> plan_sp, plan_ap;     // the others'
    std::optional<spgemm_plan<T, W, W, W>> plan_rap;
    device_csr<T, W> t;  // the tentative prolongator
    mutable device_buffer<T> b, x, res, d, d2;
    int lanes_a = 4, lanes_p = 4, lanes_r = 4;
  };

  unsigned long long fingerprint(const device_csr<T, O>& a) {
    auto out = ctx_.allocate<unsigned long long>(1);
    LA_CUDA_TRY(cudaMemsetAsync(out.data(), 0, sizeof(unsigned long long), ctx_.stream()));
    pattern_fingerprint<<<grid_for(a.rows()), block_threads, 0, ctx_.stream()>>>(a.view(), out.data());
    LA_CUDA_TRY(cudaGetLastError());
    unsigned long long h = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&h, out.data(), sizeof h, cudaMemcpyDeviceToHost, ctx_.stream()));
    ctx_.synchronize();
    return h;
  }

  template <typename F>
  decltype(auto) with_operator(std::size_t l, F&& f) const {
    if (l == 0) return f(*a0_);
    return f(levels_[l].a);
  }

  void fill_ones(double* v, index_t n) {
    fill_value<<<grid_for(n), block_threads, 0, ctx_.stream()>>>(v, n, 1.0);
    LA_CUDA_TRY(cudaGetLastError());
  }

  /// Level l's inverse diagonal, |diagonal| and lambda bound.
  void prepare(std::size_t l) {
    level& f = levels_[l];
    cudaStream_t s = ctx_.stream();
    const index_t n = f.n;
    if (f.dinv.size() != static_cast<std::size_t>(n)) {
      f.dinv = ctx_.allocate<T>(static_cast<std::size_t>(n));
      f.l1inv = ctx_.allocate<T>(static_cast<std::size_t>(n));
      f.dabs = ctx_.allocate<double>(static_cast<std::size_t>(n));
    }
    auto flags = new_flag(ctx_);
    auto gersh = ctx_.allocate<unsigned long long>(1);
    LA_CUDA_TRY(cudaMemsetAsync(gersh.data(), 0, sizeof(unsigned long long), s));
    with_operator(l, [&](const auto& a) {
      diagonal_info<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dinv.data(), f.l1inv.data(), f.dabs.data(),
                                                          flags.data(), gersh.data());
      LA_CUDA_TRY(cudaGetLastError());
      f.lanes_a = lanes_for(n ? double(a.nnz()) / n : 1);
    });
    const unsigned long long bad = read_flag(ctx_, flags);
    LA_EXPECTS(bad == no_row, amg::amg_diagonal_message(l, static_cast<long long>(bad)));
    unsigned long long gbits = 0;
    LA_CUDA_TRY(cudaMemcpyAsync(&gbits, gersh.data(), sizeof gbits, cudaMemcpyDeviceToHost, s));
    ctx_.synchronize();
    double g;
    std::memcpy(&g, &gbits, sizeof g);
    const auto t0 = clock::now();
    f.lambda = g;
    if (opt_.power_iterations > 0 && n > 0) f.lambda = std::min(g, 1.1 * power_lambda(l));
    sec_.smoother += since(t0);
  }

  double power_lambda(std::size_t l) {
    level& f = levels_[l];
    const index_t n = f.n;
    cudaStream_t s = ctx_.stream();
    auto v = ctx_.allocate<double>(static_cast<std::size_t>(n)), w = ctx_.allocate<double>(static_cast<std::size_t>(n));
    const unsigned blocks = std::min<unsigned>(grid_for(n), 1024);
    auto partials = ctx_.allocate<double>(3 * blocks);
    auto sums = ctx_.allocate<double>(3);
    hash_start<<<grid_for(n), block_threads, 0, s>>>(v.data(), n);
    LA_CUDA_TRY(cudaGetLastError());
    double lambda = 0, h[3];
    for (int step = 0; step < opt_.power_iterations; ++step) {
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), v.data(), op_power<T>{f.dinv.data(), w.data()}, s);
      });
      dots3<<<blocks, block_threads, 0, s>>>(v.data(), w.data(), n, partials.data());
      finish_dots<<<1, block_threads, 0, s>>>(partials.data(), static_cast<int>(blocks), sums.data());
      LA_CUDA_TRY(cudaGetLastError());
      LA_CUDA_TRY(cudaMemcpyAsync(h, sums.data(), sizeof h, cudaMemcpyDeviceToHost, s));
      ctx_.synchronize();
      lambda = h[1] / h[0];
      scale_into<<<grid_for(n), block_threads, 0, s>>>(w.data(), v.data(), n, h[2] > 0 ? 1 / std::sqrt(h[2]) : 0.0);
      LA_CUDA_TRY(cudaGetLastError());
    }
    return lambda;
  }


  /// A system's level l (system.cu: near_null.hpp's steps): the aggregates of its nodes, T by
  /// a QR of B an aggregate (kept for update), and level l + 1's size, nodes and B. False
  /// where coarsening stalled.
  bool coarsen_system(std::size_t l, double theta) {
    level& f = levels_[l];
    system_level<T> out;
    const bool ok = with_operator(l, [&](const auto& a) {
      return system_coarsen(ctx_, a, f.dabs.data(), f.node_of, f.nodes, f.near_null, f.k, theta, opt_.aggregation_distance, out);
    });
    if (!ok) return false;
    f.t = std::move(out.t);
    f.count = out.coarse_n;
    f.deficient = out.deficient;
    levels_.emplace_back();
    level& c = levels_[l + 1];
    c.n = out.coarse_n;
    c.k = f.k;
    c.near_null = std::move(out.coarse_b);
    c.node_of = std::move(out.coarse_node);
    c.nodes = out.aggregates;
    return true;
  }

  /// Level l's aggregates (f.of, f.count) from its strength graph.
  index_t aggregate(std::size_t l, double theta) {
    level& f = levels_[l];
    f.count = with_operator(l, [&](const auto& a) {
      return aggregate_device(ctx_, a, f.dabs.data(), theta, opt_.aggregation_distance, f.of);
    });
    return f.count;
  }

  /// Level l's T (first build only: the aggregates and B do not change), P = S T, R = P^T,
  /// and level l + 1's operator R (A P) and near-null vector.
  void galerkin(std::size_t l, bool first_build) {
    level& f = levels_[l];
    level& c = levels_[l + 1];
    cudaStream_t s = ctx_.stream();
    const index_t n = f.n;
    auto t0 = clock::now();
    if (first_build) {
      // Nodes by aggregate, stably: each aggregate's norm of B sums its nodes in index order.
      auto order = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto iota = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto sorted_of = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      iota_kernel<<<grid_for(n), block_threads, 0, s>>>(iota.data(), n);
      LA_CUDA_TRY(cudaGetLastError());
      std::size_t bytes = 0;
      LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, f.of.data(), sorted_of.data(), iota.data(), order.data(), n, 0,
                                                  bits_for(f.count), s));
      auto temp = ctx_.allocate<unsigned char>(bytes);
      LA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, f.of.data(), sorted_of.data(), iota.data(), order.data(),
                                                  n, 0, bits_for(f.count), s));
      auto start = ctx_.allocate<W>(static_cast<std::size_t>(f.count) + 1);
      aggregate_starts<<<grid_for(n), block_threads, 0, s>>>(n, sorted_of.data(), start.data(), f.count);
      c.near_null = ctx_.allocate<double>(static_cast<std::size_t>(f.count));
      aggregate_norms<<<grid_for(f.count), block_threads, 0, s>>>(f.count, start.data(), order.data(), f.near_null.data(),
                                                                  c.near_null.data());
      auto tp = ctx_.allocate<W>(static_cast<std::size_t>(n) + 1);
      auto ti = ctx_.allocate<index_t>(static_cast<std::size_t>(n));
      auto tv = ctx_.allocate<T>(static_cast<std::size_t>(n));
      tentative<<<grid_for(n), block_threads, 0, s>>>(n, f.of.data(), f.near_null.data(), c.near_null.data(), tp.data(),
                                                      ti.data(), tv.data());
      LA_CUDA_TRY(cudaGetLastError());
      f.t = csr_of<T>(n, f.count, std::move(tp), std::move(ti), std::move(tv));
      ctx_.synchronize();
    }
    const double omega = 4.0 / (3.0 * f.lambda);
    with_operator(l, [&](const auto& a) {
      using AO = typename std::decay_t<decltype(a)>::offset_type;
      auto sv = ctx_.allocate<T>(static_cast<std::size_t>(a.nnz()));
      smoother_operator<<<grid_for(n), block_threads, 0, s>>>(a.view(), f.dinv.data(), omega, sv.data());
      LA_CUDA_TRY(cudaGetLastError());
      const device_csr<T, AO> sm(detail::trusted, n, n, copy_of(ctx_, a.row_ptr()), copy_of(ctx_, a.col_idx()),
                                 std::move(sv));
      if constexpr (std::is_same_v<AO, O> && !std::is_same_v<O, W>) {
        if (!f.plan_sp0) f.plan_sp0.emplace(ctx_, sm, f.t);
        f.plan_sp0->run(ctx_, sm, f.t, f.p);
      } else {
        if (!f.plan_sp) f.plan_sp.emplace(ctx_, sm, f.t);
        f.plan_sp->run(ctx_, sm, f.t, f.p);
      }
      ctx_.synchronize();
    });
    f.r = transposed(ctx_, f.p);
    f.lanes_p = lanes_for(n ? double(f.p.nnz()) / n : 1);
    f.lanes_r = lanes_for(c.n ? double(f.r.nnz()) / c.n : 1);
    sec_.prolongator += since(t0);
    t0 = clock::now();
    device_csr<T, W> ap;
    with_operator(l, [&](const auto& a) {
      using AO = typename std::decay_t<decltype(a)>::offset_type;
      if constexpr (std::is_same_v<AO, O> && !std::is_same_v<O, W>) {
        if (!f.plan_ap0) f.plan_ap0.emplace(ctx_, a, f.p);
        f.plan_ap0->run(ctx_, a, f.p, ap);
      } else {
        if (!f.plan_ap) f.plan_ap.emplace(ctx_, a, f.p);
        f.plan_ap->run(ctx_, a, f.p, ap);
      }
    });
    if (!f.plan_rap) f.plan_rap.emplace(ctx_, f.r, ap);
    f.plan_rap->run(ctx_, f.r, ap, c.a);
    ctx_.synchronize();
    sec_.galerkin += since(t0);
  }

  static int bits_for(index_t count) {
    int b = 1;
    while (b < 31 && (index_t(1) << b) < count) ++b;
    return b;
  }

  /// The coarsest level: its dense inverse when it has at most amg_dense_rows(coarse_size) rows.
  void factor_coarse() {
    const auto t0 = clock::now();
    const std::size_t l = levels_.size() - 1;
    const index_t n = levels_[l].n;
    dense_ = n <= amg_dense_rows(opt_.coarse_size);
    if (dense_ && n > 0) {
      cudaStream_t s = ctx_.stream();
      if (l == 0) {
        // A one-level hierarchy: the matrix itself, with 64-bit offsets for the densifier.
        const auto& a = *a0_;
        auto p = ctx_.allocate<W>(static_cast<std::size_t>(n) + 1);
        widen_offsets<<<grid_for(n + 1), block_threads, 0, s>>>(a.view().row_ptr, p.data(), n + 1);
        LA_CUDA_TRY(cudaGetLastError());
        levels_[0].a = csr_of<T>(n, n, std::move(p), copy_of(ctx_, a.col_idx()), copy_of(ctx_, a.values()));
      }
      inverse_ = coarse_inverse(ctx_, std::as_const(levels_[l].a));
      if (l == 0) levels_[0].a = {};
    }
    sec_.coarse += since(t0);
  }

  void allocate_vectors() {
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      level& f = levels_[l];
      const auto n = static_cast<std::size_t>(f.n);
      if (l > 0) f.b = ctx_.allocate<T>(n), f.x = ctx_.allocate<T>(n);
      f.res = ctx_.allocate<T>(n), f.d = ctx_.allocate<T>(n), f.d2 = ctx_.allocate<T>(n);
    }
  }

  void describe() {
    precond_report& rep = this->rep;
    double nnz = static_cast<double>(a0_->nnz()), rows = 0, bytes = 0;
    std::string sizes;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const level& f = levels_[l];
      rows += f.n;
      if (l > 0) nnz += static_cast<double>(f.a.nnz()), bytes += double(f.a.nnz()) * (sizeof(T) + sizeof(index_t)) + (f.n + 1.0) * sizeof(W);
      bytes += (double(f.p.nnz()) + double(f.r.nnz()) + double(f.t.nnz())) * (sizeof(T) + sizeof(index_t));
      bytes += double(f.n) * (6 * sizeof(T) + 2 * sizeof(double) + sizeof(index_t));
      sizes += (l ? " " : "") + std::to_string(f.n);
    }
    bytes += double(inverse_.size()) * sizeof(T);
    rep.bytes = bytes;
    opc_ = nnz / std::max(1.0, static_cast<double>(a0_->nnz()));
    gc_ = rows / std::max<double>(1, levels_[0].n);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%zu levels (%s rows), operator complexity %.2f, grid complexity %.2f, %s-cycle, %s %d%s; "
                  "setup: aggregation %.1f ms, prolongator %.1f ms, Galerkin %.1f ms, smoother bounds %.1f ms, "
                  "coarse %.1f ms",
                  levels_.size(), sizes.c_str(), opc_, gc_, opt_.cycle == amg_cycle::w ? "W" : opt_.cycle == amg_cycle::f ? "F" : "V",
                  opt_.smoother == amg_smoother::l1_jacobi ? "L1-Jacobi sweeps" : "Chebyshev degree", opt_.smoother_degree,
                  dense_ ? "" : "; the coarsest level is smoothed (too large for a dense solve)", 1e3 * sec_.aggregation,
                  1e3 * sec_.prolongator, 1e3 * sec_.galerkin, 1e3 * sec_.smoother, 1e3 * sec_.coarse);
    rep.detail = buf;
    if (!scalar_) rep.detail += "; near-null space: " + near_null_what_;
  }

  /// The Chebyshev smoother on level l (hierarchy.hpp's smooth): x += p(D^-1 A) D^-1 (b - A x).
  /// The directions alternate between two buffers (a step's product reads the previous one).
  void smooth(std::size_t l, const T* b, T* x, bool zero, cudaStream_t s) const {
    const level& f = levels_[l];
    if (opt_.smoother == amg_smoother::l1_jacobi) {  // hierarchy.hpp's: x += l1inv (b - A x), a sweep
      for (int k = 0; k < opt_.smoother_degree; ++k) {
        if (zero && k == 0) {
          l1_start<<<grid_for(f.n), block_threads, 0, s>>>(b, f.l1inv.data(), x, f.n);
        } else {
          with_operator(l, [&](const auto& a) {
            launch_product(f.lanes_a, a.view(), x, op_residual<T>{b, f.res.data()}, s);
          });
          l1_update<<<grid_for(f.n), block_threads, 0, s>>>(f.res.data(), f.l1inv.data(), x, f.n);
        }
        LA_CUDA_TRY(cudaGetLastError());
      }
      return;
    }
    const double hi = f.lambda, lo = 0.1 * f.lambda;
    const double theta = (hi + lo) / 2, delta = (hi - lo) / 2, sigma = theta / delta;
    T *r = f.res.data(), *d = f.d.data(), *e = f.d2.data();
    const T* dinv = f.dinv.data();
    bool pending = false;  // x += d still owed
    if (zero) {
      cheb_zero_start<<<grid_for(f.n), block_threads, 0, s>>>(b, dinv, r, d, x, f.n, 1 / theta);
      LA_CUDA_TRY(cudaGetLastError());
    } else {
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), x, op_cheb_start<T>{b, dinv, r, d, 1 / theta}, s);
      });
      pending = true;
    }
    double rho = 1 / sigma;
    for (int k = 1; k < opt_.smoother_degree; ++k) {
      const double rho_new = 1 / (2 * sigma - rho);
      with_operator(l, [&](const auto& a) {
        launch_product(f.lanes_a, a.view(), d,
                       op_cheb_step<T>{dinv, d, r, e, x, rho_new * rho, 2 * rho_new / delta, pending}, s);
      });
      pending = false;
      std::swap(d, e);
      rho = rho_new;
    }
    if (pending) {
      add_into<<<grid_for(f.n), block_threads, 0, s>>>(x, d, f.n);
      LA_CUDA_TRY(cudaGetLastError());
    }
  }

  void cycle(std::size_t l, const T* b, T* x, bool zero, amg_cycle kind, cudaStream_t s) const {
    const level& f = levels_[l];
    if (l + 1 == levels_.size()) {
      if (dense_) {
        if (f.n) dense_solve<<<grid_for(static_cast<long long>(f.n) * 32), block_threads, 0, s>>>(inverse_.data(), f.n, b, x);
        LA_CUDA_TRY(cudaGetLastError());
      } else {
        smooth(l, b, x, zero, s);
        smooth(l, b, x, false, s);
      }
      return;
    }
    level& c = const_cast<level&>(levels_[l + 1]);
    smooth(l, b, x, zero, s);
    with_operator(l, [&](const auto& a) { launch_product(f.lanes_a, a.view(), x, op_residual<T>{b, f.res.data()}, s); });
    launch_product(f.lanes_r, f.r.view(), f.res.data(), op_assign<T>{c.b.data()}, s);
    // hierarchy.hpp's: W visits the coarse level twice, F runs an F-cycle there, then a V.
    const int visits = kind != amg_cycle::v && l + 2 < levels_.size() ? 2 : 1;
    for (int v = 0; v < visits; ++v)
      cycle(l + 1, c.b.data(), c.x.data(), v == 0, kind == amg_cycle::f && v == 1 ? amg_cycle::v : kind, s);
    launch_product(f.lanes_p, f.p.view(), c.x.data(), op_add<T>{x}, s);
    smooth(l, b, x, false, s);
  }

  context& ctx_;
  amg_options opt_;
  const device_csr<T, O>* a0_;
  std::vector<level> levels_;
  device_buffer<T> inverse_;
  bool dense_ = true;
  bool scalar_ = true;
  std::string near_null_what_;
  unsigned long long fingerprint_ = 0;
  double opc_ = 1, gc_ = 1;
  struct {
    double aggregation = 0, prolongator = 0, galerkin = 0, smoother = 0, coarse = 0;
  } sec_;
};

}  // namespace

template <typename T, typename O>
impl_ptr<T> make_amg(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  return std::make_unique<amg_impl<T, O>>(ctx, a, opt.amg);
}
template <typename T, typename O>
bool update_amg(typename device_preconditioner<T>::impl& p, const device_csr<T, O>& a) {
  auto* m = dynamic_cast<amg_impl<T, O>*>(&p);
  if (!m) return false;
  m->update(a);
  return true;
}

#define LA_INSTANTIATE(T, O)                                                                    \
  template impl_ptr<T> make_amg<T, O>(context&, const device_csr<T, O>&, const precond_options&); \
  template bool update_amg<T, O>(typename device_preconditioner<T>::impl&, const device_csr<T, O>&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la::precond_detail
