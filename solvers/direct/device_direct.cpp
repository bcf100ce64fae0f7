// la::device_direct (device_direct.hpp): the direct method's chain on the GPU, set up once and
// applied column by column, in the steps host_direct.cpp names: screen, sparse, dense, column.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/device_convert.hpp>
#include <la/memory.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/solvers/detail/norms.hpp>
#include <la/solvers/direct/detail/screen.hpp>
#include <la/solvers/direct/detail/setup.hpp>
#include <la/solvers/direct/detail/verdict.hpp>
#include <la/solvers/direct/device_direct.hpp>
#include <la/solvers/sparse_direct_solver.hpp>

namespace la {
namespace {
using direct_detail::clock_type;
using direct_detail::plural;
using direct_detail::since;
using direct_detail::static_pivoting_backward;
}  // namespace

template <typename T, typename O>
struct device_direct<T, O>::impl {
  context* ctx = nullptr;
  cg_options opt;
  csr_matrix<T, count_t> ha;  // A (2^e A where e != 0), downloaded once
  double ainf = 0;            // its ||.||_inf, for the columns' backward errors
  index_t n = 0;
  int e = 0;
  solve_status st = solve_status::converged;
  std::string msg, how, before, line;
  double t_setup = 0;
  std::unique_ptr<sparse_direct_solver> sd;
  std::unique_ptr<dense_solver<T>> ds;
  double cond = std::nan("");

  void fail(solve_status s, std::string m) { st = s, msg = std::move(m); }

  void setup(const device_csr<T, O>& a) {
    const auto t0 = clock_type::now();
    st = solve_status::converged, msg.clear(), how.clear(), before.clear(), sd.reset(), ds.reset();
    n = a.rows();
    ha = to_csr<count_t>(to_host(*ctx, a));
    const direct_detail::screened s = direct_detail::screen(ha);
    if (s.status != solve_status::converged) {
      fail(s.status, s.message);
    } else {
      e = s.exponent;
      if (e != 0) ha = direct_detail::scaled(ha, e);
      ainf = direct_detail::inf_norm_of(ha);
      if (n > 0) {
        if constexpr (std::is_same_v<T, double>) sparse();
        if (st == solve_status::converged && !sd) dense(true);
      }
    }
    t_setup = since(t0);
  }

  void sparse() {
    if constexpr (std::is_same_v<T, double>) sparse_double<T>();
  }
  template <typename U>  // a member template: not instantiated for float with the class
  void sparse_double() {
    const sparse_direct_options so = direct_detail::sparse_options_of(opt);
    try {
      sd = std::make_unique<sparse_direct_solver>(*ctx, ha, so);
      if (sd->ok()) {
        // Everything the factorization and its solves allocate beside the fronts' symbols
        // (uploaded with the analysis): the fronts, the solve's vectors (b, x, r, y, the best x
        // and the fronts' own, about the fronts' rows), GMRES-based refinement's basis.
        const double vectors = 8.0 * double(n) * (6 + so.gmres_restart + 1);
        check_device_memory(*ctx, sd->front_bytes() + vectors + 8.0 * double(sd->analysis().factor_nnz),
                            "the sparse factorization and its solve (" + sd->analysis().summary() + ")");
        sd->factor();
      }
    } catch (const invalid_argument& x) {
      sd.reset();
      before = std::string("the sparse LU could not start (") + x.what() + "), so ";
      return;
    }
    if (!sd->ok()) {
      fail(solve_status::breakdown, "A is singular: " +
                                        std::string(sd->matched() ? "structurally, no ordering of its rows puts a nonzero on "
                                                                    "the diagonal of column "
                                                                  : "a pivot that is not positive in column ") +
                                        std::to_string(sd->singular_column()) +
                                        (sd->matched() ? " (a maximum matching of rows to columns leaves it out)" : ""));
      sd.reset();
      return;
    }
    line = "direct, gpu, sparse " + std::to_string(n) + " x " + std::to_string(n);
    how = sd->description() + " (" + sd->analysis().summary() + "; analysis and fronts " + short_number(sd->analyze_seconds()) +
          " s, factorization " + short_number(sd->factor_seconds()) + " s, " + plural(long(sd->perturbed()), "pivot") +
          " perturbed)";
  }

  /// A's dense form (n^2), its copy in the solver and the padded factors, where they fit
  /// (`must`: no sparse path, so a dense form that does not fit is la::out_of_memory).
  bool dense(bool must) {
    const index_t padded = (n + 63) / 64 * 64;
    const double need = (2.0 * double(n) * n + double(padded) * padded) * sizeof(T);
    const std::string what = "the direct solve (A's dense form, its copy and the factors, " + std::to_string(n) + " x " +
                             std::to_string(n) + ")";
    if (must) {
      check_device_memory(*ctx, need, what);
      check_host_memory(double(n) * n * sizeof(T), what);
    } else {
      std::size_t free_b = 0, total_b = 0;
      LA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
      if (need > 0.5 * static_cast<double>(free_b) || double(n) * n * sizeof(T) > 0.5 * double(host_memory_available()))
        return false;
    }
    ds = std::make_unique<dense_solver<T>>(*ctx, to_dense(ha));
    if (!ds->ok()) {
      fail(solve_status::breakdown, "A is singular: " + before + std::string(ds->cholesky() ? "Cholesky" : "LU with partial pivoting") +
                                        " finds no nonzero pivot in column " + std::to_string(ds->status().bad_column) +
                                        " (every entry at or below the diagonal there is zero after the earlier eliminations)");
      ds.reset();
      return false;
    }
    sd.reset();
    cond = ds->condition_estimate();
    line = "direct, gpu, dense " + std::to_string(n) + " x " + std::to_string(n) + ", " + ds->description();
    how = before + ds->description();
    before.clear();
    return true;
  }

  solve_result column(const device_vector<T>& b, device_vector<T>& x) {
    const auto t0 = clock_type::now();
    solve_result r;
    r.solver = krylov_method::direct;
    r.method = line.empty() ? "direct, gpu" : line;
    r.setup_seconds = t_setup;
    r.true_residual = std::nan("");
    if (b.size() != n)
      return r.message = "right-hand side has " + std::to_string(b.size()) + " entries, matrix has " + std::to_string(n) + " rows", r;
    if (st != solve_status::converged) return r.status = st, r.message = msg, r;
    const std::vector<T> hb = to_host(*ctx, b);
    for (index_t i = 0; i < n; ++i)
      if (!std::isfinite(static_cast<double>(hb[static_cast<std::size_t>(i)])))
        return r.status = solve_status::non_finite,
               r.message = "right-hand side holds a non-finite value at entry " + std::to_string(i + 1) + " (1-based)", r;
    if (x.size() != n) x = device_vector<T>(*ctx, n);
    const double bn = detail::safe_norm2(hb.data(), hb.size());
    if (bn == 0) {
      if (n > 0) LA_CUDA_TRY(cudaMemsetAsync(x.data(), 0, sizeof(T) * n, ctx->stream()));
      ctx->synchronize();
      r.status = solve_status::converged, r.residual = r.true_residual = 0;
      r.message = "b = 0, so x = 0 (nothing factored for it)";
      return r;
    }
    const double target = std::max(opt.rtol * bn, opt.atol);
    double rel = 0, be = 0;
    int steps = 0;
    // b far from 1 is solved as 2^s b (exact; x comes back as 2^s x): the GPU's norms of b and
    // the residual are sums of squares in double, which overflow past 1e154.
    const double bmax = direct_detail::inf_norm(hb.data(), n);
    const int s = bmax < 0x1p-400 || bmax > 0x1p400 ? -std::ilogb(bmax) : 0;
    auto load_b = [&] {  // x = 2^s b, the factors' solve's input
      if (n == 0) return;
      if (s == 0) {
        LA_CUDA_TRY(cudaMemcpyAsync(x.data(), b.data(), sizeof(T) * n, cudaMemcpyDeviceToDevice, ctx->stream()));
        return;
      }
      std::vector<T> sb(hb);
      for (T& v : sb) v = static_cast<T>(std::ldexp(static_cast<double>(v), s));
      LA_CUDA_TRY(cudaMemcpyAsync(x.data(), sb.data(), sizeof(T) * n, cudaMemcpyHostToDevice, ctx->stream()));
      ctx->synchronize();
    };
    load_b();
    if constexpr (std::is_same_v<T, double>) {
      if (sd) {
        const sparse_direct_report rep = sd->solve(x);
        rel = rep.relative_residual, be = rep.backward_error, steps = rep.refinement_steps;
        if (!(rel * bn <= target && be <= static_pivoting_backward)) {
          before = "the sparse LU reached relative residual " + short_number(rel) + " (backward error " + short_number(be) + "), so ";
          if (dense(false)) {
            load_b();
          } else if (st != solve_status::converged) {
            return r.status = st, r.message = msg, r;
          } else {
            before.clear();
          }
        }
      }
    }
    if (ds) {
      const dense_solve_report rep = ds->solve(x);
      rel = rep.relative_residual, be = rep.backward_error, steps = rep.refinement_steps;
    }
    std::vector<T> hx = to_host(*ctx, x);
    r.method = line;
    r.iterations = steps;
    r.iterate_seconds = since(t0);
    // The verdict from the residual recomputed here, in wider precision on the host copy of
    // (2^e) A, for the unscaled b (y = 2^-s x of the scaled solve): the GPU's own measures
    // steered the refinement; what is reported is checked.
    for (T& v : hx) v = static_cast<T>(std::ldexp(static_cast<double>(v), -s));
    std::vector<T> res(hx.size());
    double rinf = 0;
    const double rn = direct_detail::residual(ha, hb.data(), hx.data(), res, rinf);
    be = rinf / (ainf * direct_detail::inf_norm(hx.data(), n) + direct_detail::inf_norm(hb.data(), n));
    if (!direct_detail::scale_back(hx.data(), n, e, r)) return r;
    if (e != 0 || s != 0) x = to_device(*ctx, hx);
    r.residual = r.true_residual = rn / bn;
    direct_detail::column_report c;
    c.how = how, c.steps = steps, c.backward = be, c.condition = cond, c.exponent = e;
    c.no_condition = ", condition not estimated (the GPU's sparse LU has no transposed solve)";
    direct_detail::set_verdict(r, rn, target, c);
    return r;
  }
};

template <typename T, typename O>
device_direct<T, O>::device_direct(context& ctx, const device_csr<T, O>& a, const cg_options& opt)
    : p_(std::make_unique<impl>()) {
  p_->ctx = &ctx;
  p_->opt = opt;
  p_->setup(a);
}
template <typename T, typename O>
device_direct<T, O>::~device_direct() = default;
template <typename T, typename O>
device_direct<T, O>::device_direct(device_direct&&) noexcept = default;
template <typename T, typename O>
device_direct<T, O>& device_direct<T, O>::operator=(device_direct&&) noexcept = default;

template <typename T, typename O>
solve_result device_direct<T, O>::solve(const device_vector<T>& b, device_vector<T>& x) {
  return p_->column(b, x);
}
template <typename T, typename O>
void device_direct<T, O>::refactor(const device_csr<T, O>& a) {
  LA_EXPECTS(a.rows() == p_->n && a.cols() == p_->n && static_cast<std::size_t>(a.nnz()) == p_->ha.values().size(),
             "direct method: new values need A's pattern; a new pattern needs a new solver");
  impl& p = *p_;
  if constexpr (std::is_same_v<T, double>) {
    // The sparse solver kept: its refactor() runs the first factorization's steps on the new values.
    if (p.sd && p.st == solve_status::converged) {
      const auto t0 = clock_type::now();
      csr_matrix<T, count_t> h = to_csr<count_t>(to_host(*p.ctx, a));
      const direct_detail::screened s = direct_detail::screen(h);
      if (s.status == solve_status::converged && s.exponent == p.e && h.row_ptr() == p.ha.row_ptr() &&
          h.col_idx() == p.ha.col_idx()) {
        p.ha = p.e != 0 ? direct_detail::scaled(h, p.e) : std::move(h);
        p.ainf = direct_detail::inf_norm_of(p.ha);
        p.sd->refactor(p.ha);
        if (!p.sd->ok()) {
          p.fail(solve_status::breakdown, "A is singular: structurally, no ordering of its rows puts a nonzero on the diagonal of column " +
                                              std::to_string(p.sd->singular_column()));
          p.sd.reset();
        }
        p.t_setup = since(t0);
        return;
      }
    }
  }
  p.setup(a);
}
template <typename T, typename O>
solve_status device_direct<T, O>::status() const noexcept { return p_->st; }
template <typename T, typename O>
const std::string& device_direct<T, O>::message() const noexcept { return p_->msg; }
template <typename T, typename O>
double device_direct<T, O>::setup_seconds() const noexcept { return p_->t_setup; }

template class device_direct<float, int>;
template class device_direct<double, int>;
template class device_direct<float, std::int64_t>;
template class device_direct<double, std::int64_t>;

}  // namespace la
