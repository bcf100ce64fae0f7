// la::host_direct (host_direct.hpp): the public calls over impl (detail/host_direct_impl.hpp: the
// chain's steps), and k columns through the factors together (solve_columns).
#include <la/solvers/direct/detail/host_direct_impl.hpp>

namespace la {

template <typename T>
host_direct<T>::host_direct(const csr_matrix<T, count_t>& a, const cg_options& opt) : p_(std::make_unique<impl>()) {
  p_->given = &a;
  p_->opt = opt;
  p_->setup();
}
template <typename T>
host_direct<T>::~host_direct() = default;
template <typename T>
host_direct<T>::host_direct(host_direct&&) noexcept = default;
template <typename T>
host_direct<T>& host_direct<T>::operator=(host_direct&&) noexcept = default;

template <typename T>
solve_result host_direct<T>::solve(const std::vector<T>& b, std::vector<T>& x) {
  solve_result r;
  r.solver = krylov_method::direct;
  r.method = "direct, host";
  r.true_residual = std::nan("");
  if (b.size() != static_cast<std::size_t>(p_->n)) {
    r.message = "right-hand side has " + std::to_string(b.size()) + " entries, matrix has " + std::to_string(p_->n) + " rows";
    return r;
  }
  x.resize(b.size());
  return p_->column(b.data(), x.data());
}

template <typename T>
std::vector<solve_result> host_direct<T>::solve_columns(const std::vector<T>& b, std::vector<T>& x, index_t k) {
  const index_t n = p_->n;
  LA_EXPECTS(k >= 0 && b.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(k),
             "direct method: b has " + std::to_string(b.size()) + " entries for " + std::to_string(k) + " columns of " +
                 std::to_string(n));
  x.resize(b.size());
  std::vector<solve_result> out(static_cast<std::size_t>(k));
  if (k == 0) return out;
  const std::size_t nn = static_cast<std::size_t>(n);
  if constexpr (std::is_same_v<T, double>) {
    bool plain = p_->st == solve_status::converged && p_->used != impl::kind::dense_lu && n > 0;
    for (std::size_t i = 0; i < b.size() && plain; ++i) plain = std::isfinite(b[i]);
    for (index_t c = 0; c < k && plain; ++c) plain = detail::safe_norm2(b.data() + nn * static_cast<std::size_t>(c), nn) > 0;
    if (plain) {
      // Every column through the kept factors in one call (the fronts read once for all k),
      // then each column's checks and verdict from its own residual; a column whose static
      // pivoting fell short turns to the dense LU there, and the later columns with it.
      const auto t0 = clock_type::now();
      std::vector<double> all(b);
      std::vector<int> steps(static_cast<std::size_t>(k), 0);
      if (p_->used == impl::kind::suitesparse) {
        // CHOLMOD or UMFPACK: every column in one solve, refined by block steps (the shared rule).
        p_->ss->solve_columns(all.data(), k);
        std::vector<double> be(static_cast<std::size_t>(k)), rel(be.size());
        std::vector<char> open(static_cast<std::size_t>(k), 1);
        steps = detail::refine_columns(
            p_->rule(), nn, static_cast<std::size_t>(k), all, be, rel, open,
            [&](std::size_t c, double* r, double& cbe, double& crel) {
              std::vector<double> rc(nn);
              p_->measure(b.data() + c * nn, all.data() + c * nn, rc, cbe, crel);
              std::copy(rc.begin(), rc.end(), r);
            },
            [&](double* r) { p_->ss->solve_columns(r, k); });
      } else {
        const sparse_direct_report rep = p_->sd->solve(all, k);
        std::fill(steps.begin(), steps.end(), rep.refinement_steps);
      }
      const double each = since(t0) / double(k);
      p_->solve_hint = 2 * each;  // one column alone reads the factors once for itself: about twice its share
      for (index_t c = 0; c < k; ++c) {
        const auto at = nn * static_cast<std::size_t>(c);
        std::copy(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + nn),
                  x.begin() + static_cast<std::ptrdiff_t>(at));
        const bool kept = p_->used != impl::kind::dense_lu;  // an earlier column may have turned to the dense LU
        out[static_cast<std::size_t>(c)] = p_->column(b.data() + at, x.data() + at, kept ? steps[static_cast<std::size_t>(c)] : -1);
        if (kept) out[static_cast<std::size_t>(c)].iterate_seconds += each;
      }
      p_->solve_hint = 0;
      return out;
    }
  }
  p_->solve_hint = 0;
  // One column after another, each with the whole chain's checks and fallbacks.
  for (index_t c = 0; c < k; ++c)
    out[static_cast<std::size_t>(c)] = p_->column(b.data() + nn * static_cast<std::size_t>(c), x.data() + nn * static_cast<std::size_t>(c));
  return out;
}

template <typename T>
void host_direct<T>::refactor(const csr_matrix<T, count_t>& a) {
  LA_EXPECTS(a.rows() == p_->given->rows() && a.cols() == p_->given->cols() && a.row_ptr() == p_->given->row_ptr() &&
                 a.col_idx() == p_->given->col_idx(),
             "direct method: new values need A's pattern (the same row pointers and column indices); a new pattern needs "
             "a new solver");
  impl& p = *p_;
  if constexpr (std::is_same_v<T, double>) {
    // The sparse solver kept: its refactor() runs the first factorization's steps on the new
    // values (the SPD path's symbols kept, the matched LU's matching and scalings made again).
    const direct_detail::screened s = direct_detail::screen(a);
    if (p.sd && p.st == solve_status::converged && s.status == solve_status::converged && s.exponent == p.e) {
      const auto t0 = clock_type::now();
      p.given = &a;
      if (p.e != 0) p.scaled = direct_detail::scaled(a, p.e);
      p.ainf = direct_detail::inf_norm_of(p.a());
      const bool looks_spd = properties_of(p.a(), false, true).looks_spd();
      p.sd->refactor(p.a());
      p.cond_done = false;
      p.sparse_factored(looks_spd);
      p.t_setup = since(t0);
      return;
    }
  }
  p.given = &a;
  p.setup();  // the pattern's analysis (opt.spd_analysis) still holds
}

template <typename T>
solve_status host_direct<T>::status() const noexcept { return p_->st; }
template <typename T>
const std::string& host_direct<T>::message() const noexcept { return p_->msg; }
template <typename T>
double host_direct<T>::setup_seconds() const noexcept { return p_->t_setup; }
template <typename T>
std::string host_direct<T>::description() const { return p_->how; }

template class host_direct<float>;
template class host_direct<double>;

}  // namespace la
