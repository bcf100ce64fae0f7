// IC(0) and ILU(0) on the host as the GPU builds and applies them (factored.cu), the oracle
// of every choice in factor_options:
//   factorization  exact (ilu.hpp: row by row, long double) or sweeps (ParIC/ParILU,
//                  factor_rows.hpp, in double);
//   trisolve       exact substitution, Jacobi sweeps on each triangle, or ISAI (two
//                  products with the approximate inverses);
//   matching       ILU(0) of Dr P A Dc (matching.hpp) where A's diagonal has zeros or gaps,
//                  applied to A as M^-1 = Dc (L U)^-1 Dr P, so the Krylov method still solves
//                  A x = b (its residuals and tolerance are A's).
// Each choice is a fixed linear operator, and for IC(0) a symmetric positive definite one:
// Jacobi's K sweeps on L^T are the transpose of its sweeps on L, and ISAI's M_U is M_L^T.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/kernels/reference/transpose.hpp>
#include <la/solvers/precond_options.hpp>
#include <la/solvers/precond/factor_rows.hpp>
#include <la/solvers/precond/ilu.hpp>
#include <la/solvers/matching/matching.hpp>
#include <la/solvers/precond/messages.hpp>

namespace la {

/// What trisolve::automatic resolves to, the measured rule (bench/RESULTS.md, "Incomplete
/// factorizations"): on the GPU, ISAI for factors computed by sweeps (the PDE-like matrices
/// the sweeps are chosen for: 0.8 SpMVs an apply, 1.3-1.4x faster to a solution than
/// jacobi:2), exact substitution for exactly computed ones (the matched and zero-diagonal
/// matrices, where ISAI and Jacobi took 17x and more iterations: west0479 1723 against 70);
/// on the host, exact substitution (fastest there).
/// On the GPU, automatic also probes (factored.cu): ISAI unless ||v - A M^-1 v|| / ||v|| with
/// it is over this factor times Jacobi's.
constexpr double isai_probe_factor = 2.0;
inline trisolve select_trisolve(bool gpu, factorization f) {
  return gpu && f == factorization::sweeps ? trisolve::isai : trisolve::exact;
}
/// What factorization::automatic resolves to: on the GPU, sweeps, except where the rows were
/// permuted by the matching (the matrix is then on the host already, and on those matrices the
/// sweeps measured unreliable: west0479 needs 1 or 8+ sweeps and fails with 2 to 6); on the
/// host, exact.
inline factorization select_factorization(bool gpu, bool matched = false) {
  return gpu && !matched ? factorization::sweeps : factorization::exact;
}

/// The position of each row's diagonal entry (la::invalid_argument naming the first row
/// without one).
template <typename T, typename O>
std::vector<O> diagonal_positions(const csr_matrix<T, O>& a) {
  std::vector<O> diag(static_cast<std::size_t>(a.rows()), -1);
  for (index_t i = 0; i < a.rows(); ++i) {
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i) diag[i] = k;
    LA_EXPECTS(diag[i] >= 0, detail::ilu0_missing_message(i));
  }
  return diag;
}

/// ParILU(0): `sweeps` sweeps from l_ij = a_ij / a_jj, u_ij = a_ij (the first sweep's values
/// when no products are subtracted; the iteration is invariant under diagonal scalings of A,
/// so no scaling is needed). L + U on A's pattern, as ilu0_factor returns them.
template <typename T, typename O>
csr_matrix<T, O> parilu0_factor(const csr_matrix<T, O>& a, int sweeps) {
  LA_EXPECTS(a.rows() == a.cols(), "ilu0: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; ILU(0) needs a square matrix");
  LA_EXPECTS(sweeps >= 1, "ilu0: the number of sweeps must be at least 1");
  const index_t n = a.rows();
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const std::vector<O> diag = diagonal_positions(a);
  std::vector<double> a0(a.values().begin(), a.values().end()), old(a0.size()), out(a0.size());
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k) old[k] = ci[k] < i ? a0[k] / a0[diag[ci[k]]] : a0[k];
  for (int s = 0; s < sweeps; ++s) {
    for (index_t i = 0; i < n; ++i) factor_rows::parilu_row(i, rp.data(), ci.data(), diag.data(), a0.data(), old.data(), out.data());
    std::swap(old, out);
  }
  for (index_t i = 0; i < n; ++i)
    LA_EXPECTS(old[diag[i]] != 0 && std::isfinite(old[diag[i]]), detail::ilu0_pivot_message(i, old[diag[i]]));
  std::vector<T> vals(old.size());
  for (std::size_t k = 0; k < old.size(); ++k) {
    LA_EXPECTS(std::isfinite(old[k]), detail::ilu0_pivot_message(-1, old[k]));
    vals[k] = static_cast<T>(old[k]);
  }
  return csr_matrix<T, O>(detail::trusted, n, n, a.row_ptr(), a.col_idx(), std::move(vals));
}

/// One ParIC(0) attempt (as ic0_attempt): `sweeps` sweeps on the scaled, shifted triangle
/// from L = that triangle with sqrt(1 + shift) on the diagonal, in double; D^1/2 L's values
/// into v, or the first row whose pivot was not positive in some sweep (0 for a non-finite
/// entry).
template <typename T, typename O>
index_t paric0_attempt(const csr_matrix<T, O>& low, double shift, int sweeps, std::vector<double>& v) {
  const index_t n = low.rows();
  const auto& rp = low.row_ptr();
  const auto& ci = low.col_idx();
  std::vector<double> d(static_cast<std::size_t>(n)), a0(low.values().size()), out(a0.size());
  v.resize(a0.size());
  for (index_t i = 0; i < n; ++i) d[i] = low.values()[rp[i + 1] - 1];
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k) {
      a0[k] = ci[k] == i ? 1 + shift : static_cast<double>(low.values()[k]) / std::sqrt(d[i] * d[ci[k]]);
      v[k] = ci[k] == i ? std::sqrt(1 + shift) : a0[k];
    }
  index_t bad = -1;
  for (int s = 0; s < sweeps; ++s) {
    for (index_t i = 0; i < n; ++i)
      if (!factor_rows::paric_row(i, rp.data(), ci.data(), a0.data(), v.data(), out.data()) && bad < 0) bad = i;
    std::swap(v, out);
  }
  for (std::size_t k = 0; k < v.size() && bad < 0; ++k)
    if (!std::isfinite(v[k])) bad = 0;
  if (bad >= 0) return bad;
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k) v[k] *= std::sqrt(d[i]);
  return -1;
}

/// ParIC(0): paric0_attempt with the shifts of ic0_shifts until every pivot of every sweep is
/// positive.
template <typename T, typename O>
ic0_factorization<T, O> paric0_factor(const csr_matrix<T, O>& a, double max_shift, int sweeps) {
  LA_EXPECTS(sweeps >= 1, "ic0: the number of sweeps must be at least 1");
  std::vector<double> v;
  return ic0_with_shifts(a, max_shift, v, [&](const csr_matrix<T, O>& low, double shift, std::vector<double>& w) {
    return paric0_attempt(low, shift, sweeps, w);
  });
}

/// A's diagonal entries that are missing (first) and stored zeros (second).
template <typename T, typename O>
std::pair<index_t, index_t> diagonal_gaps(const csr_matrix<T, O>& a) {
  std::pair<index_t, index_t> g{0, 0};
  for (index_t i = 0; i < a.rows(); ++i) {
    int state = 0;
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i) state = a.values()[k] != T(0) ? 2 : 1;
    if (state == 0) ++g.first;
    else if (state == 1) ++g.second;
  }
  return g;
}

/// How ILU(0) meets A's diagonal, the one rule of host_factors and the GPU's builder: the
/// matching at once where the diagonal has missing entries (or where it is `on`); with stored
/// zeros only, plain ILU(0) first, computed exactly when the factorization is automatic (the
/// sweeps' start divides by the diagonal; exact rows update a zero before it is a pivot:
/// fidapex6 converges so and diverges matched), and the matching if a pivot is still zero.
struct ilu_route {
  bool match_now = false;
  factorization first = factorization::exact;  // the plain attempt's factorization
  bool match_on_failure = false;
};
inline ilu_route route_ilu(const factor_options& fo, factorization f, long long missing, long long zeros) {
  const bool automatic = fo.matching == matching_mode::automatic;
  ilu_route r;
  r.match_now = fo.matching == matching_mode::on || (automatic && missing > 0);
  r.first = zeros > 0 && fo.method == factorization::automatic ? factorization::exact : f;
  r.match_on_failure = automatic && zeros > 0;
  return r;
}

/// The matching's gather and scalings as M^-1 = Dc (L U)^-1 Dr P applies them, in T:
/// dr[j] = Dr[perm[j]] (row j of P A is row perm[j] of A), dc[j] = Dc[j].
template <typename T>
void matching_scales(const diagonal_matching& m, std::vector<T>& dr, std::vector<T>& dc) {
  dr.resize(m.perm.size()), dc.resize(m.perm.size());
  for (std::size_t j = 0; j < m.perm.size(); ++j)
    dr[j] = static_cast<T>(m.row_scale[m.perm[j]]), dc[j] = static_cast<T>(m.col_scale[j]);
}

/// Dr P A Dc (matching.hpp's conventions: row j is row perm[j] of A times Dr[perm[j]], column
/// c times Dc[c]); a structurally singular A (columns left unmatched) is la::invalid_argument.
template <typename T, typename O>
csr_matrix<T, O> matched_matrix(const csr_matrix<T, O>& a, const diagonal_matching& m) {
  for (index_t i = 0; i < a.rows(); ++i)  // the plainest cause first: a row with no entry at all
    if (a.row_ptr()[i] == a.row_ptr()[i + 1])
      throw invalid_argument("ilu0: row " + std::to_string(i + 1) + " of the matrix is empty, so A is singular "
                             "and no LU factorization exists");
  if (m.unmatched > 0)
    throw invalid_argument("ilu0: the matrix is structurally singular: no permutation of its rows puts a nonzero "
                           "on the diagonal of column " + std::to_string(m.first_unmatched + 1) + " (" +
                           std::to_string(m.unmatched) + " columns unmatched), so no LU factorization exists");
  const index_t n = a.rows();
  std::vector<O> ptr{0};
  std::vector<index_t> idx;
  std::vector<T> val;
  idx.reserve(a.col_idx().size()), val.reserve(a.col_idx().size());
  for (index_t j = 0; j < n; ++j) {
    const index_t r = m.perm[j];
    for (O k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k) {
      idx.push_back(a.col_idx()[k]);
      val.push_back(static_cast<T>(m.row_scale[r] * static_cast<double_of_t<T>>(a.values()[k]) * m.col_scale[a.col_idx()[k]]));
    }
    ptr.push_back(static_cast<O>(idx.size()));
  }
  return csr_matrix<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), std::move(val));
}

namespace detail {
/// The words of a built factorization's report (host and GPU alike).
inline std::string factor_detail(bool ilu, factorization f, int sweeps, trisolve t, int steps, double shift, int attempts,
                                 long long nnz) {
  std::string s = ilu ? "" : "shift " + short_number(shift) + " (attempt " + std::to_string(attempts) + "), ";
  s += f == factorization::sweeps ? std::to_string(sweeps) + (sweeps == 1 ? " sweep" : " sweeps") : std::string("exact");
  s += ", applied by ";
  s += t == trisolve::jacobi ? "jacobi:" + std::to_string(steps) : std::string(to_string(t));
  s += ", " + std::to_string(nnz) + (ilu ? " nonzeros in L + U" : " nonzeros in L");
  return s;
}
inline std::string matching_detail(long long gaps, double seconds) {
  return "; rows permuted and scaled to a heavy diagonal (max-product matching, " + std::to_string(gaps) +
         " zero or missing diagonal entr" + (gaps == 1 ? "y" : "ies") + ", " + short_number(seconds * 1e3) + " ms)";
}
}  // namespace detail

/// IC(0) or ILU(0) on the host, built and applied as factor_options say (the oracle of the
/// GPU's factored_impl).
template <typename T>
class host_factors {
 public:
  host_factors(const csr_matrix<T, count_t>& a, bool ilu, const precond_options& opt) : ilu_(ilu) {
    const factor_options& fo = opt.factor;
    steps_ = fo.jacobi_steps > 0 ? fo.jacobi_steps : default_jacobi_steps;
    const int sweeps = fo.sweeps > 0 ? fo.sweeps : default_sweeps;
    LA_EXPECTS(ilu || fo.matching != matching_mode::on, "ic0: {matching} applies to ilu0 (a permuted SPD matrix is not symmetric)");
    std::string match_note;
    factorization f = fo.method == factorization::automatic ? select_factorization(false) : fo.method;
    if (ilu) {
      const auto [missing, zeros] = a.rows() == a.cols() ? diagonal_gaps(a) : std::pair<index_t, index_t>{0, 0};
      const ilu_route route = route_ilu(fo, f, missing, zeros);
      bool match = route.match_now;
      if (!match) {
        try {
          f = route.first;
          lu_ = f == factorization::sweeps ? parilu0_factor(a, sweeps) : ilu0_factor(a);
        } catch (const invalid_argument&) {
          if (!route.match_on_failure) throw;
          match = true;
        }
      }
      if (match) {
        const auto t0 = std::chrono::steady_clock::now();
        const diagonal_matching m = [&] {
          try {
            return max_product_matching(a, ilu_matching_budget(a.nnz()));
          } catch (const invalid_argument& e) {  // in the preconditioner's words
            throw invalid_argument(std::string("ilu0: ") + e.what() + "; use {matching} off or another preconditioner");
          }
        }();
        const csr_matrix<T, count_t> matched = matched_matrix(a, m);
        perm_ = m.perm;
        matching_scales(m, dr_, dc_);
        match_note = detail::matching_detail(missing + zeros, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (fo.method == factorization::automatic) f = select_factorization(false, true);
        lu_ = f == factorization::sweeps ? parilu0_factor(matched, sweeps) : ilu0_factor(matched);
      }
      diag_ = diagonal_positions(lu_);
    } else {
      ic0_factorization<T, count_t> fac = f == factorization::sweeps ? paric0_factor(a, opt.max_shift, sweeps)
                                                                     : ic0_factor(a, opt.max_shift);
      lu_ = std::move(fac.l);
      lt_ = reference::transpose(lu_);
      rep_.shift = fac.shift;
      attempts_ = fac.attempts;
    }
    solve_ = fo.solve == trisolve::automatic ? select_trisolve(false, f) : fo.solve;
    if (solve_ == trisolve::isai) {
      m_lo_.assign(lu_.values().size(), T(0));
      const auto lo = lower();
      for (index_t i = 0; i < lu_.rows(); ++i) isai_short_ += factor_rows::isai_row(lo, i, m_lo_.data()) ? 0 : 1;
      if (ilu) {
        const auto up = upper();
        for (index_t i = 0; i < lu_.rows(); ++i) isai_short_ += factor_rows::isai_row(up, i, m_lo_.data()) ? 0 : 1;
      } else {
        auto [p, i, unused] = lu_.arrays();
        m_up_ = reference::transpose(csr_matrix<T, count_t>(detail::trusted, lu_.rows(), lu_.cols(), p, i, m_lo_)).values();
      }
    }
    rep_.kind = ilu ? preconditioner::ilu0 : preconditioner::ic0;
    rep_.detail = detail::factor_detail(ilu, f, sweeps, solve_, steps_, rep_.shift, attempts_, lu_.nnz()) + match_note;
    if (isai_short_ > 0)
      rep_.detail += "; " + std::to_string(isai_short_) + " ISAI rows past " + std::to_string(factor_rows::isai_max_row) +
                     " entries kept the diagonal only";
    rep_.bytes = (ilu ? 1.0 : 2.0) * lu_.nnz() * (sizeof(T) + sizeof(index_t)) * (solve_ == trisolve::isai ? 1.5 : 1.0);
  }

  const precond_report& report() const { return rep_; }

  /// z = M^-1 r.
  void apply(const std::vector<T>& r, std::vector<T>& z) const {
    const std::size_t n = r.size();
    y_.resize(n), w_.resize(n);
    const T* in = r.data();
    if (!perm_.empty()) {
      t_.resize(n);
      for (std::size_t j = 0; j < n; ++j) t_[j] = dr_[j] * r[perm_[j]];
      in = t_.data();
    }
    solve(lower(), m_lo_.data(), in, y_.data());
    solve(upper(), ilu_ ? m_lo_.data() : m_up_.data(), y_.data(), z.data());
    if (!perm_.empty())
      for (std::size_t j = 0; j < n; ++j) z[j] *= dc_[j];
  }

 private:
  using tri = factor_rows::triangle<T, count_t>;
  tri lower() const {
    return {lu_.row_ptr().data(), lu_.col_idx().data(), lu_.values().data(), ilu_ ? diag_.data() : nullptr, true, ilu_};
  }
  tri upper() const {
    if (ilu_) return {lu_.row_ptr().data(), lu_.col_idx().data(), lu_.values().data(), diag_.data(), false, false};
    return {lt_.row_ptr().data(), lt_.col_idx().data(), lt_.values().data(), nullptr, false, false};
  }

  /// x = t^-1 b as solve_ says (m: the ISAI values on t's pattern).
  void solve(const tri& t, const T* m, const T* b, T* x) const {
    using W = wider_t<T>;
    const index_t n = lu_.rows();
    count_t lo, hi, d;
    if (solve_ == trisolve::exact) {
      for (index_t s = 0; s < n; ++s) {
        const index_t i = t.lower ? s : n - 1 - s;
        t.range(i, lo, hi, d);
        W v = b[i];
        for (count_t k = lo; k < hi; ++k) v -= static_cast<W>(t.v[k]) * x[t.ci[k]];
        x[i] = static_cast<T>(v / static_cast<W>(t.diagonal(d)));
      }
    } else if (solve_ == trisolve::isai) {
      const tri mt{t.rp, t.ci, m, t.diag, t.lower, t.unit};
      for (index_t i = 0; i < n; ++i) {
        mt.range(i, lo, hi, d);
        W v = static_cast<W>(mt.diagonal(d)) * b[i];
        for (count_t k = lo; k < hi; ++k) v += static_cast<W>(m[k]) * b[t.ci[k]];
        x[i] = static_cast<T>(v);
      }
    } else {  // Jacobi: x = D^-1 b, then steps_ sweeps x <- D^-1 (b - N x)
      for (index_t i = 0; i < n; ++i) t.range(i, lo, hi, d), x[i] = static_cast<T>(static_cast<W>(b[i]) / static_cast<W>(t.diagonal(d)));
      for (int s = 0; s < steps_; ++s) {
        for (index_t i = 0; i < n; ++i) {
          t.range(i, lo, hi, d);
          W v = b[i];
          for (count_t k = lo; k < hi; ++k) v -= static_cast<W>(t.v[k]) * x[t.ci[k]];
          w_[i] = static_cast<T>(v / static_cast<W>(t.diagonal(d)));
        }
        std::copy(w_.begin(), w_.begin() + n, x);
      }
    }
  }

  bool ilu_;
  trisolve solve_ = trisolve::exact;
  int steps_ = default_jacobi_steps;
  int attempts_ = 1;
  index_t isai_short_ = 0;
  precond_report rep_;
  csr_matrix<T, count_t> lu_;  // ILU(0): L + U on A's pattern; IC(0): L
  csr_matrix<T, count_t> lt_;  // IC(0): L^T
  std::vector<count_t> diag_;  // ILU(0): the diagonal's positions
  std::vector<T> m_lo_, m_up_;  // ISAI on lu_'s pattern (ILU(0): M_L and M_U together) and lt_'s
  std::vector<index_t> perm_;   // matching: row perm[j] of A is row j of P A
  std::vector<T> dr_, dc_;      // matching: Dr[perm[j]] and Dc[j]
  mutable std::vector<T> t_, y_, w_;
};

}  // namespace la
