// Restarted GMRES(m) and flexible GMRES(m), right-preconditioned: the host backend (the
// oracle) and the GPU entry point (krylov/gmres_device.cu), both driven by the Krylov skeleton's loop
// (krylov.hpp).
//
// An iteration (one product with A) extends the basis V of the Krylov space of A M^-1:
//   z = M^-1 v_j (FGMRES keeps it as Z_j);  w = A z
//   h = V'w, w -= V h; h2 = V'w, w -= V h2, h += h2  (classical Gram-Schmidt, once repeated)
//   H(:, j) = [h; ||w||];  v_{j+1} = w / ||w||
//   the rotations so far applied to H(:, j), a new one zeroing H(j+1, j), applied to g
// and |g(j+1)| is ||b - A x|| of the minimizing x (right preconditioning: the true residual
// in exact arithmetic). At the stop or after m iterations: y from the triangle of H and g,
// x += M^-1 V y (GMRES) or x += Z y (FGMRES); a restart recomputes r = b - A x explicitly
// and decides on it. iterations counts products with A inside the cycles, as PETSc's KSPGMRES.
// GMRES does not break down: H(j+1, j) = 0 means x solves the system (g(j+1) = 0).
#pragma once

#include <optional>

#include <la/solvers/host_base.hpp>

namespace la {

template <typename Matrix>
class gmres_host_backend : public host_base<Matrix> {
  using base = host_base<Matrix>;
  using base::c_, base::lim_, base::dot;

 public:
  using typename base::T;
  using typename base::vector;

  gmres_host_backend(const Matrix& a, preconditioner pc, const precond_options& popt, int restart, bool flexible)
      : base(a, pc, popt, false), m_(restart), flexible_(flexible) {}

  void start(const vector& b, vector& x, const cg_limits& lim) {
    lim_ = lim;
    b_ = &b;
    const std::size_t n = b.size();
    v_.assign(static_cast<std::size_t>(m_) + 1, vector(n, T(0)));
    z_.assign(flexible_ ? static_cast<std::size_t>(m_) : 1, vector(n, T(0)));
    w_.assign(n, T(0));
    h_.assign(static_cast<std::size_t>(m_ + 1) * m_, 0.0);
    cs_.assign(m_, 0.0), sn_.assign(m_, 0.0), g_.assign(m_ + 1, 0.0);
    h1_.assign(m_ + 1, 0.0), h2_.assign(m_ + 1, 0.0);
    c_ = cg_control{};
    restart(x, true);
  }
  void iterate(std::int64_t k, vector& x) {
    for (std::int64_t i = 0; i < k && c_.status == cg_running; ++i) {
      inner(x);
      this->record(c_, lim_);
    }
  }
  const cg_control& report() const { return c_; }

 private:
  double& H(int i, int j) { return h_[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * (m_ + 1)]; }

  /// r = b - A x, v_0 = r / ||r||, g = ||r|| e_1, and the decision on the explicit residual.
  void restart(vector& x, bool first) {
    vector& r = v_[0];
    this->residual(*b_, x, r);
    const double rr = dot(r, r);
    if (first) krylov_decide_start(c_, lim_, rr);
    else krylov_decide(c_, lim_, rr);
    j_ = 0;
    if (c_.status != cg_running) return;
    const double beta = std::sqrt(rr);
    const T inv = static_cast<T>(1 / beta);
    for (T& v : r) v *= inv;
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
  }

  void inner(vector& x) {
    const int j = j_;
    const std::size_t n = w_.size();
    vector& z = z_[flexible_ ? j : 0];
    if (this->form_ == precond_form::identity && !flexible_) {
      this->multiply(v_[j], w_);  // M = I: no copy of v_j
    } else {
      this->precondition(v_[j], z);
      this->multiply(z, w_);
    }
    // Classical Gram-Schmidt, repeated where the first pass cancelled most of w (||w|| fell
    // below 1/sqrt(2) of ||A z||: Daniel, Gragg, Kaufman and Stewart's test, PETSc's
    // KSPGMRESCGSRefinement "ifneeded"); the GPU always repeats it. Where the test passes the
    // second pass would change w by rounding only, and skipping it halves the host's work at a
    // large restart (bench/history/defaults-the-host-solver-and-the-sanitiz.md, "The host solver against scipy").
    const double before = detail::plain_dot(w_.data(), w_.data(), n);
    std::fill(h2_.begin(), h2_.begin() + j + 1, 0.0);
    for (int pass = 0; pass < 2; ++pass) {  // h1_, h2_ sized m + 1 in start(): no allocation here
      if (pass == 1 && detail::plain_dot(w_.data(), w_.data(), n) > 0.5 * before) break;
      std::vector<double>& hp = pass == 0 ? h1_ : h2_;
      for (int i = 0; i <= j; ++i) hp[i] = detail::plain_dot(v_[i].data(), w_.data(), n);
      // w -= V h: one pass over w a basis vector (contiguous, vectorized). Blocking the rows so
      // that w stays in L1 measured slower (bench/history/defaults-the-host-solver-and-the-sanitiz.md, "The host solver against scipy").
      T* w = w_.data();
      for (int i = 0; i <= j; ++i) {
        const double h = hp[i];
        const T* v = v_[i].data();
        for (std::size_t r = 0; r < n; ++r) w[r] = static_cast<T>(w[r] - h * v[r]);
      }
    }
    double col2 = 0;  // ||A M^-1 v_j||^2: the column's norm, which the rotations keep
    for (int i = 0; i <= j; ++i) H(i, j) = h1_[i] + h2_[i], col2 += H(i, j) * H(i, j);
    const double hn = std::sqrt(dot(w_, w_));
    H(j + 1, j) = hn;
    col2 += hn * hn;
    for (int i = 0; i < j; ++i) {  // the earlier rotations
      const double a = H(i, j), b = H(i + 1, j);
      H(i, j) = cs_[i] * a + sn_[i] * b;
      H(i + 1, j) = -sn_[i] * a + cs_[i] * b;
    }
    const double d = std::hypot(H(j, j), H(j + 1, j));
    cs_[j] = d > 0 ? H(j, j) / d : 1;
    sn_[j] = d > 0 ? H(j + 1, j) / d : 0;
    H(j, j) = d;
    H(j + 1, j) = 0;
    g_[j + 1] = -sn_[j] * g_[j];
    g_[j] = cs_[j] * g_[j];
    c_.iteration += 1;
    j_ = j + 1;
    krylov_decide(c_, lim_, g_[j + 1] * g_[j + 1]);
    if (gmres_column_singular(d, col2)) {
      gmres_singular_column(c_, lim_, g_[j]);
      if (c_.status == cg_breakdown) j_ = j;  // the update leaves the singular column out
    }
    if (c_.status == cg_running && j_ < m_) {
      const T inv = static_cast<T>(1 / hn);
      for (std::size_t r = 0; r < n; ++r) v_[j + 1][r] = w_[r] * inv;
      return;
    }
    update(x);
    if (c_.status == cg_running) restart(x, false);
  }

  /// x += M^-1 V y (or Z y), y solving the j_ x j_ triangle of H against g.
  void update(vector& x) {
    const int k = j_;
    std::vector<double>& y = h1_;  // the cycle is over: h1_ is free
    for (int i = k; i-- > 0;) {
      double s = g_[i];
      for (int l = i + 1; l < k; ++l) s -= H(i, l) * y[l];
      y[i] = H(i, i) != 0 ? s / H(i, i) : 0;
    }
    const std::size_t n = x.size();
    const std::vector<vector>& basis = flexible_ ? z_ : v_;
    std::fill(w_.begin(), w_.end(), T(0));
    for (int i = 0; i < k; ++i) {  // w = basis y, a basis vector at a time
      const double yi = y[i];
      const T* v = basis[i].data();
      T* w = w_.data();
      for (std::size_t r = 0; r < n; ++r) w[r] = static_cast<T>(w[r] + yi * v[r]);
    }
    if (flexible_) {
      for (std::size_t r = 0; r < n; ++r) x[r] += w_[r];
    } else {
      vector& z = z_[0];
      this->precondition(w_, z);
      for (std::size_t r = 0; r < n; ++r) x[r] += z[r];
    }
  }

  int m_;
  bool flexible_;
  int j_ = 0;
  const vector* b_ = nullptr;
  std::vector<vector> v_, z_;  // the basis (m + 1 vectors); FGMRES's M^-1 v (m), else one scratch vector
  vector w_;
  std::vector<double> h_, cs_, sn_, g_;  // H ((m + 1) x m, column-major), the rotations, the rotated residual
  std::vector<double> h1_, h2_;          // an iteration's two projections (and the cycle's y)
};

/// GMRES(m) (or flexible GMRES(m), `flexible`) on the host over any format, m =
/// opt.restart; x holds the initial guess (resized to n zeros if empty).
template <typename Matrix, typename T>
solve_result gmres_host(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& opt = {},
                        bool flexible = false) {
  const int m = std::max(1, std::min(opt.restart, 1000));
  check_host_memory(double(b.size()) * ((2.0 * m + 6) * sizeof(T) + sizeof(wider_t<T>)), "the GMRES solve");
  if (x.empty()) x.assign(b.size(), T(0));
  gmres_host_backend<Matrix> be(a, opt.precond, opt.precond_opt, m, flexible);
  be.record_history(opt.record_history);
  cg_options o = opt;
  o.method = flexible ? krylov_method::fgmres : krylov_method::gmres;
  solve_result r = krylov_solve(be, b, x, o);
  r.solver = flexible ? krylov_method::fgmres : krylov_method::gmres;
  r.method = std::string(flexible ? "fgmres(" : "gmres(") + std::to_string(m) + "), host, " + to_string(Matrix::kind) +
             ", reference kernels";
  return r;
}

}  // namespace la
