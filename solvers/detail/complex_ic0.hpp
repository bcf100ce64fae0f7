// IC(0) for Hermitian positive definite complex matrices on the host (issue 69): the host
// Krylov oracles' preconditioner ic0 (M = L L^H), as the real IC(0) (precond/ilu.hpp) in
// complex form: on tril(A)'s pattern of the symmetrically scaled matrix D^-1/2 A D^-1/2 + shift
// I, the shifts of ic0_shifts tried in order, in complex<long double>. Private to la's sources.
#pragma once

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/detail/complex_common.hpp>
#include <la/solvers/precond/ilu.hpp>

namespace la::complex_krylov_detail {

/// L lower triangular (the diagonal last in each row, real and positive) with M = L L^H.
template <typename T, typename O>
struct ic0_factors {
  csr_matrix<T, O> l;
  double shift = 0;
  mutable std::vector<wider_t<T>> work;

  /// y = (L L^H)^-1 x, sums in wider_t: L w = x by rows, then L^H y = w by L's rows backwards.
  void solve(const std::vector<T>& x, std::vector<T>& y) const {
    using W = wider_t<T>;
    const index_t n = l.rows();
    const auto& rp = l.row_ptr();
    const auto& ci = l.col_idx();
    const auto& v = l.values();
    work.resize(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
      W s = widen(x[i]);
      const O diag = rp[i + 1] - 1;
      for (O k = rp[i]; k < diag; ++k) s -= widen(v[k]) * work[ci[k]];
      work[i] = s / widen(v[diag]);
    }
    for (index_t i = n - 1; i >= 0; --i) {
      const O diag = rp[i + 1] - 1;
      work[i] /= widen(v[diag]);  // real diagonal: its conjugate is itself
      for (O k = rp[i]; k < diag; ++k) work[ci[k]] -= std::conj(widen(v[k])) * work[i];
    }
    y.resize(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) y[i] = static_cast<T>(work[i]);
  }

  /// IC(0) of a Hermitian A with a positive real diagonal, with the first shift of
  /// ic0_shifts(max_shift) whose pivots are all positive. "" or why it does not exist.
  std::string build(const csr_matrix<T, O>& a, double max_shift) {
    using L = std::complex<long double>;
    if (std::string why = hermitian_problem(a); !why.empty()) return why + " (IC(0) takes Hermitian positive definite A)";
    const index_t n = a.rows();
    std::vector<O> ptr{0};
    std::vector<index_t> idx;
    std::vector<T> low;
    std::vector<long double> d(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {  // tril(A), the diagonal last (columns ascend in CSR rows)
      T diag(0);
      bool has = false;
      for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
        const index_t j = a.col_idx()[k];
        if (j < i) idx.push_back(j), low.push_back(a.values()[k]);
        if (j == i) diag += a.values()[k], has = true;
      }
      if (!has || !(diag.real() > 0) || diag.imag() != 0)
        return "row " + std::to_string(i + 1) + " has no positive real diagonal entry (IC(0) takes Hermitian positive definite A)";
      idx.push_back(i), low.push_back(diag);
      d[i] = static_cast<long double>(diag.real());
      ptr.push_back(static_cast<O>(idx.size()));
    }
    std::vector<L> v(low.size());
    for (double s : ic0_shifts(max_shift)) {
      for (index_t i = 0; i < n; ++i)
        for (O k = ptr[i]; k < ptr[i + 1]; ++k)
          v[k] = idx[k] == i ? L(1 + s) : L(widen(low[k])) / std::sqrt(d[i] * d[idx[k]]);
      bool ok = true;
      for (index_t i = 0; i < n && ok; ++i) {
        const O diag = ptr[i + 1] - 1;
        for (O k = ptr[i]; k < diag; ++k) {  // l_ij = (v_ij - sum_p l_ip conj(l_jp)) / l_jj
          const index_t j = idx[k];
          L acc = v[k];
          O p = ptr[i], q = ptr[j];
          const O qend = ptr[j + 1] - 1;
          while (p < k && q < qend) {
            if (idx[p] == idx[q]) acc -= v[p++] * std::conj(v[q++]);
            else if (idx[p] < idx[q]) ++p;
            else ++q;
          }
          v[k] = acc / v[qend];
        }
        long double s2 = v[diag].real();
        for (O k = ptr[i]; k < diag; ++k) s2 -= std::norm(v[k]);
        ok = s2 > 0 && std::isfinite(static_cast<double>(s2));
        if (ok) v[diag] = L(std::sqrt(s2));
      }
      if (!ok) continue;
      std::vector<T> vals(v.size());
      for (index_t i = 0; i < n; ++i)
        for (O k = ptr[i]; k < ptr[i + 1]; ++k) vals[k] = static_cast<T>(v[k] * std::sqrt(d[i]));
      l = csr_matrix<T, O>(detail::trusted, n, n, std::move(ptr), std::move(idx), std::move(vals));
      shift = s;
      return {};
    }
    return "no shift up to " + short_number(max_shift) + " gives positive pivots (A is not positive definite, or IC(0) "
           "breaks down on it)";
  }
};

}  // namespace la::complex_krylov_detail
