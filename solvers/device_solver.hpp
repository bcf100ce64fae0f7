// A GPU solve set up once and run many times: la::device_solver keeps the method's choice
// and what the method built (AMG's hierarchy, FSAI's factor, the incomplete factors, or the
// direct method's analysis and factors: la::device_direct) across solves with new right-hand
// sides, each solved by solve_device's rules (auto's direct-first rules and fallbacks
// included), and on new values of the same pattern reruns only what depends on the values
// (AMG: its numeric phases, keeping the aggregates and the SpGEMM plans; the direct method:
// its refactorization by the first factorization's steps; the others are built again).
//
//   la::device_solver<double, int> s(ctx, a, opt);   // setup: properties, method, M^-1 or factors
//   for (auto& b : rhs) s.solve(b, x);                 // each a solve_device without the setup
//   s.update_values(a2);                               // same pattern, new values
//
// A (and every matrix given to update_values) must outlive the solver: AMG's finest level is
// A itself. Each solve's result reports the preconditioner as built (its setup time is the
// build's, done once); the solve's own setup_seconds leaves it out. Thread safety: one solver
// is used by one thread at a time (it keeps buffers and a stream's work).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <la/solvers/device_precond.hpp>
#include <la/solvers/direct/device_direct.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/precond.hpp>

namespace la {

template <typename T, typename O>
class device_solver {
 public:
  /// Chooses the method (opt.method automatic: from the matrix's properties) and sets it up:
  /// the preconditioner (automatic resolved as solve_device does) or the direct method's
  /// factors (la::device_direct). A refused method or a preconditioner that does not exist for
  /// A is la::invalid_argument with the solvers' words; what the direct method finds of A
  /// (singular) is each solve's status.
  device_solver(context& ctx, const device_csr<T, O>& a, cg_options opt = {}, device_cg_options dopt = {})
      : ctx_(&ctx), a_(&a), opt_(std::move(opt)), dopt_(dopt) {
    LA_EXPECTS(a.rows() == a.cols(), "device_solver: the matrix is " + std::to_string(a.rows()) + " x " +
                                         std::to_string(a.cols()) + "; the solvers need a square matrix");
    needs_props_ = opt_.method == krylov_method::automatic || (opt_.method == krylov_method::cg && !opt_.force) ||
                   opt_.precond == preconditioner::automatic;
    if (needs_props_) props_ = properties_of(ctx, a);
    const method_choice mc = needs_props_ ? select_method(opt_.method, props_, opt_.force) : method_choice{opt_.method, "asked for", {}};
    if (!mc.refused.empty()) throw invalid_argument(mc.refused);
    cg_options o = opt_;
    const std::string first = detail::direct_first_why(opt_.method, mc, o, props_, a.rows(), std::is_same_v<T, double>,
                                                       opt_.precond == preconditioner::automatic, [this] { return spd_analysis(); }, true);
    if (opt_.method == krylov_method::direct || !first.empty()) {
      direct_ = std::make_unique<device_direct<T, O>>(ctx, a, o);
      why_ = first.empty() ? mc.why : first;
      if (opt_.method == krylov_method::direct || direct_->status() == solve_status::converged) return;
    }
    if (opt_.method != krylov_method::direct) {
      cg_options k = opt_;
      const std::string why = detail::set_up(k, props_, needs_props_, true, [&] { build_kind(k.precond); });
      if (first.empty()) why_ = why;
      resolved_ = auto_precond_for(k.method, opt_.precond, props_, true);
      if (resolved_ == preconditioner::automatic) resolved_ = select_preconditioner(props_.rows, props_.nnz, true);
      method_ = k.method;
    }
  }

  /// What a solve reports as it runs (the progress hook, every residual); the setup stays.
  void set_progress(std::function<void(const cg_progress&)> progress, bool record_history) {
    opt_.progress = std::move(progress);
    opt_.record_history = record_history;
  }

  /// Solves A x = b with the kept setup, by solve_device's rules (auto's included); x holds
  /// the initial guess (empty: zeros).
  solve_result solve(const device_vector<T>& b, device_vector<T>& x) {
    cg_options o = opt_;
    if (!needs_props_) o.force = true;  // checked at setup: the solves skip the properties (a transpose)
    solve_result r = detail::solve_by_method(
        a_->rows(), a_->cols(), o, "gpu", [this] { return props_; },
        [&](const cg_options& m) { return run(m, b, x); },
        [&, x0 = device_vector<T>()](bool restore) mutable {
          const std::size_t bytes = static_cast<std::size_t>(x.size()) * sizeof(T);
          if (!restore) {
            if (x.size() == 0) return;
            x0 = device_vector<T>(*ctx_, x.size());
            LA_CUDA_TRY(cudaMemcpyAsync(x0.data(), x.data(), bytes, cudaMemcpyDeviceToDevice, ctx_->stream()));
          } else if (x0.size() == x.size() && x.size() > 0) {
            LA_CUDA_TRY(cudaMemcpyAsync(x.data(), x0.data(), bytes, cudaMemcpyDeviceToDevice, ctx_->stream()));
          } else if (x.size() > 0) {
            LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, bytes, ctx_->stream()));
          }
        },
        [this] { return spd_analysis(); }, std::is_same_v<T, double>);
    if (r.solver_choice.empty()) r.solver_choice = why_;
    return r;
  }

  /// New values on the same pattern: AMG reruns its numeric setup; the other preconditioners
  /// are built again; the direct method refactors by its first factorization's steps. A
  /// different pattern, or values CG cannot take (not symmetric, unless cg_options::force), is
  /// la::invalid_argument.
  void update_values(const device_csr<T, O>& a) {
    LA_EXPECTS(a.rows() == a_->rows() && a.cols() == a_->cols() && a.nnz() == a_->nnz(),
               "device_solver: update_values needs a matrix of the same shape and pattern; make a new solver");
    if (needs_props_) props_ = properties_of(*ctx_, a);
    if (method_ == krylov_method::cg && !opt_.force) {  // new values may not be symmetric any more
      const method_choice mc = select_method(krylov_method::cg, props_, false);
      if (!mc.refused.empty() && opt_.method == krylov_method::cg) throw invalid_argument(mc.refused);
    }
    a_ = &a;
    if (direct_) direct_->refactor(a);
    if (pre_ && entry_of(pre_kind_).values_only_resetup) return pre_->update_values(a);
    if (pre_) build_kind(pre_kind_);
  }

  /// The preconditioner built (kind none or jacobi: the solver's own, fused).
  preconditioner precond() const noexcept { return pre_kind_; }
  const precond_report* report() const { return pre_ ? &pre_->report() : nullptr; }
  krylov_method method() const noexcept { return direct_ && !pre_ ? krylov_method::direct : method_; }
  /// The direct method's setup (null where the method is a Krylov one).
  const device_direct<T, O>* direct() const noexcept { return direct_.get(); }

 private:
  std::shared_ptr<const sparse_analysis> spd_analysis() {
    if (!spd_analysis_) spd_analysis_ = spd_analysis_of(*ctx_, *a_);
    return *spd_analysis_;
  }
  /// One method by m's words: the kept factors for the direct method (made at the first need),
  /// the kept preconditioner where m asks for it.
  solve_result run(cg_options m, const device_vector<T>& b, device_vector<T>& x) {
    if (m.method == krylov_method::direct) {
      if (!direct_) direct_ = std::make_unique<device_direct<T, O>>(*ctx_, *a_, m);
      return direct_->solve(b, x);
    }
    m.precond = detail::kept_precond(m, a_->rows(), a_->nnz(), true, resolved_, pre_kind_);
    m.precond_opt.prebuilt.reset();
    if (pre_ && m.precond == pre_kind_) {
      m.precond_opt.prebuilt = pre_;
      m.precond_opt.prebuilt_value_size = sizeof(T);
    }
    return run_device_method(*ctx_, *a_, b, x, m, dopt_);
  }
  void build_kind(preconditioner kind) {
    pre_.reset();
    pre_kind_ = kind;
    if (form_of(kind) != precond_form::apart) return;
    pre_ = std::make_shared<device_preconditioner<T>>(*ctx_, *a_, kind, opt_.precond_opt);
  }

  context* ctx_;
  const device_csr<T, O>* a_;
  cg_options opt_;
  device_cg_options dopt_;
  bool needs_props_ = false;
  matrix_properties props_;
  std::optional<std::shared_ptr<const sparse_analysis>> spd_analysis_;
  std::string why_;
  krylov_method method_ = krylov_method::direct;
  preconditioner pre_kind_ = preconditioner::none, resolved_ = preconditioner::none;
  std::shared_ptr<device_preconditioner<T>> pre_;
  std::unique_ptr<device_direct<T, O>> direct_;
};

}  // namespace la
