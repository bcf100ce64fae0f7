// BiCGSTAB (van der Vorst 1992), right-preconditioned: the host backend (the oracle) and
// the GPU entry point (krylov/bicgstab_device.cu), both driven by the Krylov skeleton's loop (krylov.hpp).
//
// An iteration, with M^-1 applied on the right so r is the true residual b - A x:
//   beta = (rho / rho_old) (alpha / omega);  p = r + beta (p - omega v)
//   v = A M^-1 p;  alpha = rho / r0'v;       s = r - alpha v
//   (||s|| at the tolerance: x += alpha M^-1 p and stop, the half step)
//   t = A M^-1 s;  omega = t's / t't
//   x += alpha M^-1 p + omega M^-1 s;  r = s - omega t;  rho_old = rho, rho = r0'r
// two products with A and two applications of M^-1 an iteration; r0 is the first residual.
// Breakdowns (rho, r0'v or omega = 0) are statuses that name the quantity (cg_control.hpp's
// krylov_reason). The steps and their order are those of PETSc's KSPBCGS, so iteration
// counts compare.
#pragma once

#include <optional>

#include <la/solvers/host_base.hpp>

namespace la {

template <typename Matrix>
class bicgstab_host_backend : public host_base<Matrix> {
  using base = host_base<Matrix>;
  using base::c_, base::lim_, base::dot;

 public:
  using typename base::T;
  using typename base::vector;

  bicgstab_host_backend(const Matrix& a, preconditioner pc, const precond_options& popt = {})
      : base(a, pc, popt, false) {}

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    const std::size_t n = b.size();
    for (vector* v : {&r_, &r0_, &p_, &v_, &s_, &t_, &ph_, &sh_}) v->assign(n, T(0));
    this->residual(b, x, r_);
    r0_ = r_;
    const double rr = dot(r_, r_);
    krylov_decide_start(c_, lim_, rr);
    rho_ = rr, rho_old_ = alpha_ = omega_ = 1;
  }
  void iterate(std::int64_t k, vector& x) {
    for (std::int64_t j = 0; j < k && c_.status == cg_running; ++j) {
      step(x);
      this->record(c_, lim_);
    }
  }
  const cg_control& report() const { return c_; }

 private:
  void stop(int reason) {
    c_.iteration += 1;
    c_.status = cg_breakdown;
    c_.reason = reason;
  }
  void step(vector& x) {
    const std::size_t n = r_.size();
    if (rho_ == 0) return stop(reason_bicg_rho);
    const double beta = (rho_ / rho_old_) * (alpha_ / omega_);
    const T b = static_cast<T>(beta), w = static_cast<T>(omega_);
    for (std::size_t i = 0; i < n; ++i) p_[i] = r_[i] + b * (p_[i] - w * v_[i]);
    this->precondition(p_, ph_);
    this->multiply(ph_, v_);
    const double rv = dot(r0_, v_);
    if (rv == 0 || !cg_finite(rv)) {
      if (!cg_finite(rv)) return c_.iteration += 1, void(c_.status = cg_non_finite);
      return stop(reason_bicg_rv);
    }
    alpha_ = rho_ / rv;
    const T a = static_cast<T>(alpha_);
    for (std::size_t i = 0; i < n; ++i) s_[i] = r_[i] - a * v_[i];
    const double ss = dot(s_, s_);
    if (ss <= lim_.threshold2 || ss <= lim_.floor2) {  // the half step meets the tolerance
      for (std::size_t i = 0; i < n; ++i) x[i] += a * ph_[i];
      r_ = s_;
      c_.iteration += 1;
      return krylov_decide(c_, lim_, ss);
    }
    this->precondition(s_, sh_);
    this->multiply(sh_, t_);
    const double ts = dot(t_, s_), tt = dot(t_, t_);
    omega_ = tt > 0 ? ts / tt : 0;
    const T o = static_cast<T>(omega_);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += a * ph_[i] + o * sh_[i];
      r_[i] = s_[i] - o * t_[i];
    }
    c_.iteration += 1;
    krylov_decide(c_, lim_, dot(r_, r_));
    if (c_.status == cg_running && omega_ == 0) c_.status = cg_breakdown, c_.reason = reason_bicg_omega;
    rho_old_ = rho_;
    rho_ = dot(r0_, r_);
  }

  vector r_, r0_, p_, v_, s_, t_, ph_, sh_;
  double rho_ = 1, rho_old_ = 1, alpha_ = 1, omega_ = 1;
};

/// BiCGSTAB on the host over any format; x holds the initial guess (resized to n zeros if
/// empty).
template <typename Matrix, typename T>
solve_result bicgstab_host(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& opt = {}) {
  check_host_memory(double(b.size()) * (12 * sizeof(T) + sizeof(wider_t<T>)), "the BiCGSTAB solve");
  if (x.empty()) x.assign(b.size(), T(0));
  bicgstab_host_backend<Matrix> be(a, opt.precond, opt.precond_opt);
  be.record_history(opt.record_history);
  cg_options o = opt;
  o.method = krylov_method::bicgstab;
  solve_result r = krylov_solve(be, b, x, o);
  r.solver = krylov_method::bicgstab;
  r.method = std::string("bicgstab, host, ") + to_string(Matrix::kind) + ", reference kernels";
  return r;
}

}  // namespace la
