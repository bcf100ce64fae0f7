// The host backend of the CG loop: sequential reference kernels over any of the eight
// formats (host_base.hpp). It is the oracle for the GPU solver and the CPU path of `la solve`.
#pragma once

#include <la/solvers/cg.hpp>
#include <la/solvers/host_base.hpp>

namespace la {

/// The host backend: the CG steps (start, then the residual step and the direction step an
/// iteration) with sequential reference kernels, dots in wider_t (long double for double).
/// The oracle for the GPU backend.
template <typename Matrix>
class host_backend : public host_base<Matrix> {
  using base = host_base<Matrix>;
  using base::a_, base::c_, base::lim_, base::dot, base::form_, base::inv_diag_;

 public:
  using typename base::T;
  using typename base::vector;

  host_backend(const Matrix& a, preconditioner pc, const precond_options& popt = {}) : base(a, pc, popt, true) {}

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    const std::size_t n = b.size();
    for (vector* v : {&r_, &z_, &p_, &q_}) v->assign(n, T(0));  // the whole workspace, once
    this->residual(b, x, r_);
    this->precondition(r_, z_);
    cg_decide_start(c_, lim_, dot(r_, r_), dot(r_, z_));
    direction_step(x);  // p = z (the old direction is zero), q = A p, p'q
  }
  /// The direction step: x += alpha p for the iteration the residual step finished; then, while running, the new
  /// direction p = z + beta p, q = A p and p'q.
  void direction_step(vector& x) {
    const std::size_t n = x.size();
    const vector& z = form_ == precond_form::identity ? r_ : z_;  // M = I: z is r itself, not a copy
    T* xp = x.data();
    T* p = p_.data();
    const T* zp = z.data();
    const bool running = c_.status == cg_running;
    const T beta = static_cast<T>(c_.beta);
    if (c_.x_pending) {
      const T a = static_cast<T>(c_.alpha);
      if (running)  // x += alpha p and p = z + beta p in one pass
        for (std::size_t i = 0; i < n; ++i) xp[i] += a * p[i], p[i] = zp[i] + beta * p[i];
      else
        for (std::size_t i = 0; i < n; ++i) xp[i] += a * p[i];
      c_.x_pending = 0;
    } else if (running) {
      for (std::size_t i = 0; i < n; ++i) p[i] = zp[i] + beta * p[i];
    }
    if (!running) return;
    c_.pq = this->multiply_dot(p_, q_);
  }
  /// The residual step: alpha, r -= alpha q, z = M^-1 r, r'r and r'z, and the decision.
  void residual_step() {
    if (c_.status != cg_running) return;
    double alpha;
    if (!cg_step_length(c_, alpha)) return cg_decide_bad_pq(c_);
    const T a = static_cast<T>(alpha);
    const std::size_t n = r_.size();
    T* r = r_.data();
    const T* q = q_.data();
    double rr = 0, rz = 0;
    if (form_ == precond_form::identity) {  // r -= alpha q and r'r in one pass; r'z = r'r
      double s1 = 0;
      std::size_t i = 0;
      for (; i + 2 <= n; i += 2) {
        r[i] -= a * q[i], r[i + 1] -= a * q[i + 1];
        rr += static_cast<double>(r[i]) * r[i], s1 += static_cast<double>(r[i + 1]) * r[i + 1];
      }
      for (; i < n; ++i) r[i] -= a * q[i], rr += static_cast<double>(r[i]) * r[i];
      rz = rr += s1;
    } else if (form_ == precond_form::diagonal) {  // and z = D^-1 r, r'z in the same pass
      T* z = z_.data();
      const T* d = inv_diag_.data();
      for (std::size_t i = 0; i < n; ++i) {
        r[i] -= a * q[i];
        z[i] = d[i] * r[i];
        rr += static_cast<double>(r[i]) * r[i], rz += static_cast<double>(r[i]) * z[i];
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) r[i] -= a * q[i];
      this->precondition(r_, z_);
      rr = dot(r_, r_), rz = dot(r_, z_);
    }
    cg_decide_step(c_, lim_, alpha, rr, rz);
  }
  void iterate(std::int64_t k, vector& x) {
    for (std::int64_t j = 0; j < k && c_.status == cg_running; ++j) {
      residual_step();
      direction_step(x);
      this->record(c_, lim_);
    }
  }
  const cg_control& report() const { return c_; }

 private:
  vector r_, z_, p_, q_;
};

/// CG on the host over any format; x holds the initial guess (resized to n zeros if empty).
template <typename Matrix, typename T>
solve_result cg_host(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& opt = {}) {
  // b, x, r, z, p, q, the accumulator (wider), the Jacobi diagonal and its inverse
  check_host_memory(double(b.size()) * (8 * sizeof(T) + sizeof(wider_t<T>)), "the CG solve");
  if (x.empty()) x.assign(b.size(), T(0));
  host_backend<Matrix> be(a, opt.precond, opt.precond_opt);
  be.record_history(opt.record_history);
  solve_result r = cg(be, b, x, opt);
  r.method = std::string("host, ") + to_string(Matrix::kind) + ", reference kernels";
  return r;
}

}  // namespace la
