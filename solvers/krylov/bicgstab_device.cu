// BiCGSTAB on the GPU (bicgstab.hpp has the iteration; device_solve.hpp the design). An
// iteration is five kernels of la's, two registry SpMVs, and with ILU(0) two applications:
//   direction  p = r + beta (p - omega v), Jacobi's M^-1 p beside it
//   [M^-1 p]   SpMV v = A M^-1 p
//   alpha      r0'v, alpha = rho / r0'v (last block)
//   half       s = r - alpha v, s's, Jacobi's M^-1 s; the half step's test (last block)
//   [M^-1 s]   SpMV t = A M^-1 s
//   omega      t's and t't, omega (last block)
//   update     x += alpha M^-1 p + omega M^-1 s, r = s - omega t, r'r and r0'r, the decision,
//              rho and beta for the next iteration (last block); after a half step it
//              settles x += alpha M^-1 p, r = s instead
// Each reads the control block first and does nothing once a status is set (the SpMVs and
// ILU(0)'s solves run anyway: a chunk's iterations past the stop cost their time, not their
// effect).
#include <string>

#include <la/detail/instantiate.hpp>
#include <la/error.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/detail/krylov_device.cuh>

namespace la {
namespace cg_detail {

struct bicg_control {
  cg_control c;
  double rho, rho_old, alpha, omega, beta;
  int half;  // the half step met the tolerance: update settles x += alpha M^-1 p, r = s
};

template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_direction(T* p, const T* r, const T* v, const T* inv_d, T* ph,
                                                                index_t n, const bicg_control* c) {
  if (c->c.status != cg_running) return;
  const T beta = static_cast<T>(c->beta), omega = static_cast<T>(c->omega);
  LA_GRID_STRIDE(i, n) {
    const T pi = r[i] + beta * (p[i] - omega * v[i]);
    p[i] = pi;
    if (ph) ph[i] = inv_d ? inv_d[i] * pi : pi;
  }
}

template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_alpha(const T* r0, const T* v, index_t n, bicg_control* c,
                                                            double* partials, unsigned* ticket, cg_limits lim,
                                                            double* history, std::int64_t cap) {
  if (c->c.status != cg_running) return;
  double s[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) s[0] += static_cast<double>(r0[i]) * static_cast<double>(v[i]);
  if (!last_block_sum<1>(s, partials, ticket, total)) return;
  const double rv = total[0];
  if (rv == 0 || !cg_finite(rv)) {
    c->c.iteration += 1;
    c->c.status = cg_finite(rv) ? cg_breakdown : cg_non_finite;
    c->c.reason = cg_finite(rv) ? reason_bicg_rv : reason_none;
    if (history) history[(c->c.iteration - 1) % cap] = cg_relative(c->c, lim);
    return;
  }
  c->alpha = c->rho / rv;
}

template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_half(const T* r, const T* v, T* s, const T* inv_d, T* sh, index_t n,
                                                           bicg_control* c, cg_limits lim, double* partials,
                                                           unsigned* ticket, double* history, std::int64_t cap) {
  if (c->c.status != cg_running) return;
  const T alpha = static_cast<T>(c->alpha);
  double v2[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) {
    const T si = r[i] - alpha * v[i];
    s[i] = si;
    if (sh) sh[i] = inv_d ? inv_d[i] * si : si;
    v2[0] += static_cast<double>(si) * si;
  }
  if (!last_block_sum<1>(v2, partials, ticket, total)) return;
  if (total[0] <= lim.threshold2 || total[0] <= lim.floor2) {
    c->half = 1;
    c->c.iteration += 1;
    krylov_decide(c->c, lim, total[0]);
    if (history) history[(c->c.iteration - 1) % cap] = cg_relative(c->c, lim);
  }
}

template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_omega(const T* t, const T* s, index_t n, bicg_control* c,
                                                            double* partials, unsigned* ticket) {
  if (c->c.status != cg_running) return;
  double v2[2] = {0, 0}, total[2];
  LA_GRID_STRIDE(i, n) {
    const double ti = t[i];
    v2[0] += ti * static_cast<double>(s[i]);
    v2[1] += ti * ti;
  }
  if (last_block_sum<2>(v2, partials, ticket, total)) c->omega = total[1] > 0 ? total[0] / total[1] : 0;
}

template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_update(T* x, T* r, const T* r0, const T* s, const T* t, const T* ph,
                                                             const T* sh, index_t n, bicg_control* c, cg_limits lim,
                                                             double* partials, unsigned* ticket, double* history,
                                                             std::int64_t cap) {
  const bool running = c->c.status == cg_running, half = c->half;
  if (!running && !half) return;
  const T alpha = static_cast<T>(c->alpha), omega = static_cast<T>(c->omega);
  double v2[2] = {0, 0}, total[2];
  if (half) {
    LA_GRID_STRIDE(i, n) {
      x[i] += alpha * ph[i];
      r[i] = s[i];
    }
  } else {
    LA_GRID_STRIDE(i, n) {
      x[i] += alpha * ph[i] + omega * sh[i];
      const T ri = s[i] - omega * t[i];
      r[i] = ri;
      v2[0] += static_cast<double>(ri) * ri;
      v2[1] += static_cast<double>(r0[i]) * ri;
    }
  }
  if (!last_block_sum<2>(v2, partials, ticket, total)) return;
  if (half) {
    c->half = 0;
    return;
  }
  bicg_control& k = *c;
  k.c.iteration += 1;
  krylov_decide(k.c, lim, total[0]);
  if (k.c.status == cg_running && k.omega == 0) k.c.status = cg_breakdown, k.c.reason = reason_bicg_omega;
  if (history) history[(k.c.iteration - 1) % cap] = cg_relative(k.c, lim);
  k.rho_old = k.rho;
  k.rho = total[1];
  if (k.c.status == cg_running && k.rho == 0) {  // the next iteration cannot start (the host oracle counts it)
    k.c.iteration += 1;
    k.c.status = cg_breakdown;
    k.c.reason = reason_bicg_rho;
    if (history) history[(k.c.iteration - 1) % cap] = cg_relative(k.c, lim);
  }
  k.beta = k.c.status == cg_running ? (k.rho / k.rho_old) * (k.alpha / k.omega) : 0;
}

/// After r = b - A x: r0 = r, r'r, the start decision.
template <typename T>
__global__ void __launch_bounds__(block_threads) bicg_start(const T* r, T* r0, index_t n, bicg_control* c, cg_limits lim,
                                                            double* partials, unsigned* ticket) {
  double v[1] = {0}, total[1];
  LA_GRID_STRIDE(i, n) {
    r0[i] = r[i];
    v[0] += static_cast<double>(r[i]) * r[i];
  }
  if (!last_block_sum<1>(v, partials, ticket, total)) return;
  krylov_decide_start(c->c, lim, total[0]);
  c->rho = total[0];
  c->rho_old = c->alpha = c->omega = 1;
  c->beta = 0;
  c->half = 0;
}

template <typename T>
class bicgstab_backend : public krylov_device_base<T> {
  using base = krylov_device_base<T>;
  using base::s_, base::n_, base::ctx_, base::op_, base::pre_, base::lim_, base::vector_blocks_, base::partials_,
      base::tickets_;

 public:
  using typename base::vector;
  template <typename O>
  bicgstab_backend(context& ctx, const spmv_operator<T>& op, const device_csr<T, O>& a, preconditioner pc,
                   const precond_options& popt, bool history, bool graph)
      : base(ctx, op, a, pc, popt, history), graph_on_(graph) {
    const std::size_t n = static_cast<std::size_t>(n_);
    for (auto* v : {&r_, &r0_, &p_, &v_, &sv_, &t_}) *v = ctx.allocate<T>(n);
    if (this->form_ != precond_form::identity) ph_ = ctx.allocate<T>(n), sh_ = ctx.allocate<T>(n);
    control_ = ctx.allocate<bicg_control>(1);
  }

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    LA_CUDA_TRY(cudaMemsetAsync(control_.data(), 0, sizeof(bicg_control), s_));
    for (auto* v : {&p_, &v_}) LA_CUDA_TRY(cudaMemsetAsync(v->data(), 0, v->size() * sizeof(T), s_));
    this->residual(b.data(), x.data(), r_.data());
    bicg_start<<<vector_blocks_, block_threads, 0, s_>>>(r_.data(), r0_.data(), n_, control_.data(), lim_,
                                                         partials_.data(), tickets_.data());
    LA_CHECK_LAUNCH(s_);
    if (graph_on_) capture(x.data());
  }
  void iterate(std::int64_t k, vector& x) {
    if (!graph_on_) {
      for (std::int64_t j = 0; j < k; ++j) queue(x.data());
      return;
    }
    if (!this->graph_ || this->graph_x_ != x.data()) capture(x.data());
    for (std::int64_t j = 0; j < k; j += graph_iterations) LA_CUDA_TRY(cudaGraphLaunch(this->graph_, s_));
  }
  const cg_control& report() { return this->read_control(control_.data()); }

 private:
  static constexpr int graph_iterations = 4;
  void capture(T* x) {
    capture_graph(s_, this->graph_, [&] {
      for (int j = 0; j < graph_iterations; ++j) queue(x);
    });
    this->graph_x_ = x;
  }
  void queue(T* x) {
    const bool apart = pre_.has_value();
    const T* id = this->inv_d();
    // M^-1 p and M^-1 s: Jacobi's written by the elementwise kernels, ILU(0)'s applied after
    // them, none's are p and s themselves.
    T* ph = this->form_ == precond_form::identity ? p_.data() : ph_.data();
    T* sh = this->form_ == precond_form::identity ? sv_.data() : sh_.data();
    T* ph_fused = this->form_ == precond_form::diagonal ? ph_.data() : nullptr;
    T* sh_fused = this->form_ == precond_form::diagonal ? sh_.data() : nullptr;
    const unsigned G = vector_blocks_;
    double* hist = this->history_ptr();
    const std::int64_t cap = base::history_cap;
    bicg_direction<<<G, block_threads, 0, s_>>>(p_.data(), r_.data(), v_.data(), id, ph_fused, n_, control_.data());
    LA_CHECK_LAUNCH(s_);
    if (apart) pre_->apply(p_.data(), ph, s_);
    op_.apply(ph, v_.data(), T(1), T(0), s_);
    bicg_alpha<<<G, block_threads, 0, s_>>>(r0_.data(), v_.data(), n_, control_.data(), partials_.data(),
                                            tickets_.data(), lim_, hist, cap);
    LA_CHECK_LAUNCH(s_);
    bicg_half<<<G, block_threads, 0, s_>>>(r_.data(), v_.data(), sv_.data(), id, sh_fused, n_, control_.data(), lim_,
                                           partials_.data(), tickets_.data(), hist, cap);
    LA_CHECK_LAUNCH(s_);
    if (apart) pre_->apply(sv_.data(), sh, s_);
    op_.apply(sh, t_.data(), T(1), T(0), s_);
    bicg_omega<<<G, block_threads, 0, s_>>>(t_.data(), sv_.data(), n_, control_.data(), partials_.data(),
                                            tickets_.data());
    LA_CHECK_LAUNCH(s_);
    bicg_update<<<G, block_threads, 0, s_>>>(x, r_.data(), r0_.data(), sv_.data(), t_.data(), ph, sh, n_,
                                             control_.data(), lim_, partials_.data(), tickets_.data(), hist, cap);
    LA_CHECK_LAUNCH(s_);
  }

  bool graph_on_;
  device_buffer<T> r_, r0_, p_, v_, sv_, t_, ph_, sh_;
  device_buffer<bicg_control> control_;
};

}  // namespace cg_detail

template <typename T, typename O>
solve_result bicgstab_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                             const cg_options& opt, const device_cg_options& dopt) {
  return cg_detail::run_device_method(
      ctx, a, b, x, opt, dopt, krylov_method::bicgstab, "BiCGSTAB", "bicgstab", "",
      [&](const spmv_operator<T>& op, bool graph) {
        return cg_detail::bicgstab_backend<T>(ctx, op, a, opt.precond, opt.precond_opt, opt.record_history, graph);
      });
}

#define LA_INSTANTIATE(T, O)                                                                                   \
  template solve_result bicgstab_device<T, O>(context&, const device_csr<T, O>&, const device_vector<T>&,    \
                                              device_vector<T>&, const cg_options&, const device_cg_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace la
