// A host solve set up once and run many times, the host's side of device_solver.hpp:
// la::host_solver chooses the method from the matrix's properties and builds the
// preconditioner once (through its registry entry's host builder), timed; each solve then runs
// the Krylov loop with that ready M^-1.
//
//   la::host_solver<la::csr_matrix<double>> s(a, opt);   // setup: properties, method, M^-1
//   for (auto& b : rhs) s.solve(b, x);                    // each a solve_host without the setup
//
// A must outlive the solver. Each solve's result reports the preconditioner as built (its
// setup time is the build's, done once).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <la/solvers/method.hpp>
#include <la/solvers/precond.hpp>

namespace la {

template <typename Matrix>
class host_solver {
 public:
  using T = typename Matrix::value_type;

  /// Chooses the method (opt.method automatic: from A's properties) and builds the
  /// preconditioner (automatic resolved as solve_host does). A refused method or a
  /// preconditioner that does not exist for A is la::invalid_argument with the solvers' words.
  explicit host_solver(const Matrix& a, cg_options opt = {}) : a_(&a), opt_(std::move(opt)) {
    LA_EXPECTS(a.rows() == a.cols(), "host_solver: the matrix is " + std::to_string(a.rows()) + " x " +
                                         std::to_string(a.cols()) + "; the Krylov solvers need a square matrix");
    const bool needs = opt_.method == krylov_method::automatic || (opt_.method == krylov_method::cg && !opt_.force);
    const auto t0 = std::chrono::steady_clock::now();
    matrix_properties props;
    if (needs || opt_.precond == preconditioner::automatic) {
      if constexpr (Matrix::kind == format::csr) props = properties_of(a, opt_.known_symmetric, true);
      else props = properties_of(to_csr<count_t>(a), opt_.known_symmetric, true);
    }
    why_ = detail::set_up(opt_, props, needs, false, [this] { build(); });
    setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  /// What a solve reports as it runs (the progress hook, every residual); the setup stays.
  void set_progress(std::function<void(const cg_progress&)> progress, bool record_history) {
    opt_.progress = std::move(progress);
    opt_.record_history = record_history;
  }

  /// Solves A x = b with the kept setup; x holds the initial guess (empty: zeros).
  solve_result solve(const std::vector<T>& b, std::vector<T>& x) {
    solve_result r = solve_host(*a_, b, x, opt_);
    r.solver_choice = why_;
    return r;
  }

  krylov_method method() const noexcept { return opt_.method; }
  preconditioner precond() const noexcept { return opt_.precond; }
  /// The preconditioner built (null for none and Jacobi, which the solves apply themselves).
  const precond_report* report() const { return pre_ ? &pre_->report() : nullptr; }
  /// The setup's time: the properties, the choice and the preconditioner's build.
  double setup_seconds() const noexcept { return setup_seconds_; }

 private:
  void build() {
    opt_.precond_opt.host_prebuilt.reset();
    pre_.reset();
    if (form_of(opt_.precond) != precond_form::apart) return;
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (Matrix::kind == format::csr) pre_ = std::make_shared<host_preconditioner<T>>(*a_, opt_.precond, opt_.precond_opt);
    else pre_ = std::make_shared<host_preconditioner<T>>(to_csr<count_t>(*a_), opt_.precond, opt_.precond_opt);
    pre_->set_setup_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    opt_.precond_opt.host_prebuilt = pre_;
    opt_.precond_opt.prebuilt_value_size = sizeof(T);
  }

  const Matrix* a_;
  cg_options opt_;
  std::string why_;
  double setup_seconds_ = 0;
  std::shared_ptr<host_preconditioner<T>> pre_;
};

}  // namespace la
