// A host solve set up once and run many times, the host's side of device_solver.hpp:
// la::host_solver looks at A once (its properties, auto's choice) and builds what the method
// needs once, timed: a Krylov method's preconditioner (through its registry entry's host
// builder), or the direct method's analysis and factors (la::host_direct). Each solve then
// applies it to a right-hand side by solve_host's rules: auto's direct-first rules, its
// fallbacks (BiCGSTAB to GMRES, the Krylov methods to the direct method, whose factors are
// then kept for the later solves) are the same for one column or many.
//
//   la::host_solver<la::csr_matrix<double>> s(a, opt);   // setup: properties, method, M^-1 or factors
//   for (auto& b : rhs) s.solve(b, x);                    // each a solve_host without the setup
//
// A must outlive the solver. Each solve's result reports the setup as built (its time is the
// build's, done once). Thread safety: one solver is used by one thread at a time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <la/solvers/direct/host_direct.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/precond.hpp>

namespace la {

template <typename Matrix>
class host_solver {
 public:
  using T = typename Matrix::value_type;

  /// Chooses the method (opt.method automatic: from A's properties) and sets it up: the
  /// preconditioner (automatic resolved as solve_host does) or the direct method's factors. A
  /// refused method or a preconditioner that does not exist for A is la::invalid_argument with
  /// the solvers' words; what the direct method finds of A (singular) is each solve's status.
  explicit host_solver(const Matrix& a, cg_options opt = {}) : a_(&a), opt_(std::move(opt)) {
    LA_EXPECTS(a.rows() == a.cols(), "host_solver: the matrix is " + std::to_string(a.rows()) + " x " +
                                         std::to_string(a.cols()) + "; the solvers need a square matrix");
    const auto t0 = std::chrono::steady_clock::now();
    needs_props_ = opt_.method == krylov_method::automatic || (opt_.method == krylov_method::cg && !opt_.force) ||
                   opt_.precond == preconditioner::automatic;
    if (needs_props_) props_ = properties();
    const method_choice mc = needs_props_ ? select_method(opt_.method, props_, opt_.force) : method_choice{opt_.method, "asked for", {}};
    if (!mc.refused.empty()) throw invalid_argument(mc.refused);
    cg_options o = opt_;
    const bool auto_pc = opt_.precond == preconditioner::automatic;
    const std::string first = detail::direct_first_why(opt_.method, mc, o, props_, a.rows(), std::is_same_v<T, double>,
                                                       auto_pc, [this] { return spd_analysis(); }, false);
    if (opt_.method == krylov_method::direct || !first.empty()) {
      make_direct(o);
      why_ = first.empty() ? mc.why : first;
      if (opt_.method == krylov_method::direct || direct_->status() == solve_status::converged) {
        done(t0);
        return;
      }
    }
    if (opt_.method != krylov_method::direct) {
      cg_options k = opt_;
      const std::string why = detail::set_up(k, props_, needs_props_, false, [&] { build(k); });
      if (first.empty()) why_ = why;
      resolved_ = auto_precond_for(k.method, opt_.precond, props_, false);
      if (resolved_ == preconditioner::automatic) resolved_ = select_preconditioner(a.rows(), stored(), false);
    }
    done(t0);
  }

  /// What a solve reports as it runs (the progress hook, every residual); the setup stays.
  void set_progress(std::function<void(const cg_progress&)> progress, bool record_history) {
    opt_.progress = std::move(progress);
    opt_.record_history = record_history;
  }

  /// Solves A x = b with the kept setup; x holds the initial guess (empty: zeros).
  solve_result solve(const std::vector<T>& b, std::vector<T>& x) {
    std::vector<T> x0;
    solve_result r = detail::solve_by_method(
        a_->rows(), a_->cols(), opt_, "", [this] { return props_; },
        [&](const cg_options& o) { return run(o, b, x); },
        [&](bool restore) {
          if (restore) x = x0.empty() ? std::vector<T>(b.size(), T(0)) : x0;
          else x0 = x;
        },
        [this] { return spd_analysis(); }, std::is_same_v<T, double>);
    if (r.solver_choice.empty()) r.solver_choice = why_;
    return r;
  }

  /// k right-hand sides (B n x k, column after column; X likewise): where the setup made the
  /// direct method's factors, the columns go through them together (host_direct::
  /// solve_columns: side by side on the host's threads); a column they do not solve, and every
  /// column of a Krylov method, goes through solve(), auto's rules and fallbacks included.
  std::vector<solve_result> solve_columns(const std::vector<T>& b, std::vector<T>& x, index_t k) {
    const auto n = static_cast<std::size_t>(a_->rows());
    LA_EXPECTS(k >= 0 && b.size() == n * static_cast<std::size_t>(k),
               "host_solver: b has " + std::to_string(b.size()) + " entries for " + std::to_string(k) + " columns of " +
                   std::to_string(n));
    if (x.size() != b.size()) x.assign(b.size(), T(0));
    std::vector<solve_result> out;
    if (direct_ && !pre_ && direct_->status() == solve_status::converged) {
      std::vector<T> y;
      out = direct_->solve_columns(b, y, k);
      for (index_t c = 0; c < k; ++c) {
        solve_result& r = out[static_cast<std::size_t>(c)];
        const auto at = static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(c));
        if (r.status == solve_status::converged || opt_.method == krylov_method::direct) {
          std::copy(y.begin() + at, y.begin() + at + static_cast<std::ptrdiff_t>(n), x.begin() + at);
          if (r.solver_choice.empty()) r.solver_choice = why_;
          continue;
        }
        std::vector<T> bc(b.begin() + at, b.begin() + at + static_cast<std::ptrdiff_t>(n)), xc;
        r = solve(bc, xc);
        std::copy(xc.begin(), xc.end(), x.begin() + at);
      }
      return out;
    }
    for (index_t c = 0; c < k; ++c) {
      const auto at = static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(c));
      std::vector<T> bc(b.begin() + at, b.begin() + at + static_cast<std::ptrdiff_t>(n));
      std::vector<T> xc(x.begin() + at, x.begin() + at + static_cast<std::ptrdiff_t>(n));
      out.push_back(solve(bc, xc));
      std::copy(xc.begin(), xc.end(), x.begin() + at);
    }
    return out;
  }

  /// New values with A's pattern: the setup's steps again on them (the direct method's
  /// refactor runs its first factorization's steps, fallbacks included), timed.
  void update_values(const Matrix& a) {
    LA_EXPECTS(a.rows() == a_->rows() && a.cols() == a_->cols() && stored_of(a) == stored(),
               "host_solver: update_values needs a matrix of the same shape and pattern; make a new solver");
    const auto t0 = std::chrono::steady_clock::now();
    a_ = &a;
    if (needs_props_) props_ = properties();
    if (direct_) {
      if constexpr (std::is_same_v<Matrix, csr_matrix<T, count_t>>) {
        direct_->refactor(a);
      } else {
        csr_ = to_csr<count_t>(a);
        direct_->refactor(*csr_);
      }
    }
    if (pre_) build_kind(pre_kind_);
    done(t0);
  }

  krylov_method method() const noexcept { return direct_ && !pre_ ? krylov_method::direct : opt_.method; }
  preconditioner precond() const noexcept { return pre_kind_; }
  /// The preconditioner built (null for none and Jacobi, which the solves apply themselves).
  const precond_report* report() const { return pre_ ? &pre_->report() : nullptr; }
  /// The direct method's setup (null where the method is a Krylov one).
  const host_direct<T>* direct() const noexcept { return direct_.get(); }
  /// The setup's time: the properties, the choice and the preconditioner's build or the factors.
  double setup_seconds() const noexcept { return setup_seconds_; }

 private:
  matrix_properties properties() const {
    if constexpr (Matrix::kind == format::csr) return properties_of(*a_, opt_.known_symmetric, true);
    else return properties_of(to_csr<count_t>(*a_), opt_.known_symmetric, true);
  }
  std::shared_ptr<const sparse_analysis> spd_analysis() {
    if (!spd_analysis_) spd_analysis_ = detail::spd_analysis_of(*a_);
    return *spd_analysis_;
  }
  const csr_matrix<T, count_t>& csr() {
    if constexpr (std::is_same_v<Matrix, csr_matrix<T, count_t>>) {
      return *a_;
    } else {
      if (!csr_) csr_ = to_csr<count_t>(*a_);
      return *csr_;
    }
  }
  /// The stored entries (a dense A's rows x cols), as select_preconditioner counts them.
  static std::int64_t stored_of(const Matrix& a) {
    if constexpr (Matrix::kind == format::dense) return std::int64_t(a.rows()) * a.cols();
    else return static_cast<std::int64_t>(a.nnz());
  }
  std::int64_t stored() const { return stored_of(*a_); }
  void make_direct(const cg_options& o) { direct_ = std::make_unique<host_direct<T>>(csr(), o); }
  void done(std::chrono::steady_clock::time_point t0) {
    setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  /// One method by o's words: the kept factors for the direct method (made at the first need:
  /// auto's fallback after its Krylov methods), the kept preconditioner where o asks for it.
  solve_result run(cg_options o, const std::vector<T>& b, std::vector<T>& x) {
    if (o.method == krylov_method::direct) {
      if (!direct_) make_direct(o);
      solve_result r = direct_->solve(b, x);
      return r;
    }
    o.precond = detail::kept_precond(o, a_->rows(), stored(), false, resolved_, pre_kind_);
    o.precond_opt.host_prebuilt.reset();
    if (pre_ && o.precond == pre_kind_) {
      o.precond_opt.host_prebuilt = pre_;
      o.precond_opt.prebuilt_value_size = sizeof(T);
    }
    return detail::run_host_method(*a_, b, x, o);
  }

  void build(const cg_options& k) { build_kind(k.precond); }
  void build_kind(preconditioner kind) {
    pre_.reset();
    pre_kind_ = kind;
    if (form_of(kind) != precond_form::apart) return;
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (Matrix::kind == format::csr) pre_ = std::make_shared<host_preconditioner<T>>(*a_, kind, opt_.precond_opt);
    else pre_ = std::make_shared<host_preconditioner<T>>(to_csr<count_t>(*a_), kind, opt_.precond_opt);
    pre_->set_setup_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  const Matrix* a_;
  cg_options opt_;
  bool needs_props_ = false;
  matrix_properties props_;
  std::optional<std::shared_ptr<const sparse_analysis>> spd_analysis_;
  std::optional<csr_matrix<T, count_t>> csr_;
  std::string why_;
  double setup_seconds_ = 0;
  preconditioner pre_kind_ = preconditioner::none, resolved_ = preconditioner::none;
  std::shared_ptr<host_preconditioner<T>> pre_;
  std::unique_ptr<host_direct<T>> direct_;
};

}  // namespace la
