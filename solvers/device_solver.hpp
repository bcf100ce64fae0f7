// A GPU solve set up once and run many times: la::device_solver keeps the method's choice
// and the preconditioner (AMG's hierarchy, FSAI's factor, the incomplete factors) across
// solves with new right-hand sides, and on new values of the same pattern reruns only
// what depends on the values (AMG: its numeric phases, keeping the aggregates and the
// SpGEMM plans; the others are built again).
//
//   la::device_solver<double, int> s(ctx, a, opt);   // setup: properties, method, M^-1
//   for (auto& b : rhs) s.solve(b, x);                 // each a solve_device without the setup
//   s.update_values(a2);                               // same pattern, new values
//
// A (and every matrix given to update_values) must outlive the solver: AMG's finest level is
// A itself. Each solve's result reports the preconditioner as built (its setup time is the
// build's, done once); the solve's own setup_seconds leaves it out.
#pragma once

#include <memory>
#include <string>

#include <la/solvers/device_precond.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/precond.hpp>

namespace la {

template <typename T, typename O>
class device_solver {
 public:
  /// Chooses the method (opt.method automatic: from the matrix's properties) and builds the
  /// preconditioner (automatic resolved as solve_device does). A refused method or a
  /// preconditioner that does not exist for A is la::invalid_argument with the solvers' words.
  device_solver(context& ctx, const device_csr<T, O>& a, cg_options opt = {}, device_cg_options dopt = {})
      : ctx_(&ctx), a_(&a), opt_(std::move(opt)), dopt_(dopt) {
    const bool needs = opt_.method == krylov_method::automatic || (opt_.method == krylov_method::cg && !opt_.force);
    LA_EXPECTS(a.rows() == a.cols(), "device_solver: the matrix is " + std::to_string(a.rows()) + " x " +
                                         std::to_string(a.cols()) + "; the Krylov solvers need a square matrix");
    const matrix_properties props =
        needs || opt_.precond == preconditioner::automatic ? properties_of(ctx, a) : matrix_properties{};
    forced_ = opt_.force;  // checked here and on new values: the solves skip the properties (a transpose)
    why_ = detail::set_up(opt_, props, needs, true, [this] { build(); });
  }

  /// What a solve reports as it runs (the progress hook, every residual); the setup stays.
  void set_progress(std::function<void(const cg_progress&)> progress, bool record_history) {
    opt_.progress = std::move(progress);
    opt_.record_history = record_history;
  }

  /// Solves A x = b with the kept setup; x holds the initial guess (empty: zeros).
  solve_result solve(const device_vector<T>& b, device_vector<T>& x) {
    solve_result r = solve_device(*ctx_, *a_, b, x, opt_, dopt_);
    r.solver_choice = why_;
    return r;
  }

  /// New values on the same pattern: AMG reruns its numeric setup; the other preconditioners
  /// are built again. A different pattern, or values CG cannot take (not symmetric, unless
  /// cg_options::force), is la::invalid_argument.
  void update_values(const device_csr<T, O>& a) {
    LA_EXPECTS(a.rows() == a_->rows() && a.cols() == a_->cols() && a.nnz() == a_->nnz(),
               "device_solver: update_values needs a matrix of the same shape and pattern; make a new solver");
    if (opt_.method == krylov_method::cg && !forced_) {  // new values may not be symmetric any more
      const method_choice mc = select_method(krylov_method::cg, properties_of(*ctx_, a), false);
      if (!mc.refused.empty()) throw invalid_argument(mc.refused);
    }
    a_ = &a;
    if (pre_ && entry_of(opt_.precond).values_only_resetup) return pre_->update_values(a);
    build();
  }

  /// The preconditioner built (kind none or jacobi: the solver's own, fused).
  preconditioner precond() const noexcept { return opt_.precond; }
  const precond_report* report() const { return pre_ ? &pre_->report() : nullptr; }
  krylov_method method() const noexcept { return opt_.method; }

 private:
  void build() {
    opt_.precond_opt.prebuilt.reset();
    pre_.reset();
    if (form_of(opt_.precond) != precond_form::apart) return;
    pre_ = std::make_shared<device_preconditioner<T>>(*ctx_, *a_, opt_.precond, opt_.precond_opt);
    opt_.precond_opt.prebuilt = pre_;
    opt_.precond_opt.prebuilt_value_size = sizeof(T);
  }

  context* ctx_;
  const device_csr<T, O>* a_;
  cg_options opt_;
  device_cg_options dopt_;
  std::string why_;
  bool forced_ = false;  // the caller's cg_options::force
  std::shared_ptr<device_preconditioner<T>> pre_;
};

}  // namespace la
