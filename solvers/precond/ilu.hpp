// Incomplete factorizations on the host: IC(0) on tril(A) of the symmetrically scaled
// matrix with the shifts of ic0_shifts, ILU(0) on A's whole pattern, and the level schedules
// the triangular solves and the GPU factorization (solvers/precond/ilu.cu) run in.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/precond/messages.hpp>

namespace la {

// ---- IC(0) ---------------------------------------------------------------------------------

/// The shifts IC(0) tries, in order, up to max_shift.
inline std::vector<double> ic0_shifts(double max_shift) {
  std::vector<double> s{0};
  for (double v : {1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0})
    if (v <= max_shift) s.push_back(v);
  return s;
}

/// tril(A) with the diagonal last in each row: the pattern of L. A missing or non-positive
/// diagonal throws la::invalid_argument.
template <typename T, typename O>
csr_matrix<T, O> lower_triangle(const csr_matrix<T, O>& a, const char* who) {
  std::vector<O> ptr{0};
  std::vector<index_t> idx;
  std::vector<T> val;
  for (index_t i = 0; i < a.rows(); ++i) {
    bool diag = false;
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] <= i) {
        idx.push_back(a.col_idx()[k]), val.push_back(a.values()[k]);
        if (a.col_idx()[k] == i) diag = a.values()[k] > T(0);
      }
    LA_EXPECTS(diag, detail::bad_diagonal_message(who, i));
    ptr.push_back(static_cast<O>(idx.size()));
  }
  return csr_matrix<T, O>(detail::trusted, a.rows(), a.cols(), std::move(ptr), std::move(idx), std::move(val));
}

/// One IC(0) attempt on the scaled, shifted matrix, in long double: the factor's values
/// (unscaled back to D^1/2 L) or, when a pivot is not positive, its row (>= 0).
template <typename T, typename O>
index_t ic0_attempt(const csr_matrix<T, O>& low, double shift, std::vector<long double>& v) {
  const index_t n = low.rows();
  const auto& rp = low.row_ptr();
  const auto& ci = low.col_idx();
  std::vector<long double> d(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) d[i] = low.values()[rp[i + 1] - 1];
  v.resize(low.values().size());
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      v[k] = ci[k] == i ? 1 + shift : low.values()[k] / std::sqrt(d[i] * d[ci[k]]);
  for (index_t i = 0; i < n; ++i) {
    const O diag = rp[i + 1] - 1;
    for (O k = rp[i]; k < diag; ++k) {
      const index_t j = ci[k];
      long double s = v[k];
      // Columns below j that rows i and j share.
      O a = rp[i], b = rp[j];
      const O bend = rp[j + 1] - 1;
      while (a < k && b < bend) {
        if (ci[a] == ci[b]) s -= v[a++] * v[b++];
        else if (ci[a] < ci[b]) ++a;
        else ++b;
      }
      v[k] = s / v[bend];
    }
    long double s = v[diag];
    for (O k = rp[i]; k < diag; ++k) s -= v[k] * v[k];
    if (!(s > 0) || !std::isfinite(static_cast<double>(s))) return i;
    v[diag] = std::sqrt(s);
  }
  for (index_t i = 0; i < n; ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k) v[k] *= std::sqrt(d[i]);
  return -1;
}

template <typename T, typename O>
struct ic0_factorization {
  csr_matrix<T, O> l;  // D^1/2 L, lower triangular, the diagonal last in each row
  double shift = 0;
  int attempts = 0;
};

/// IC(0) with the first shift of ic0_shifts(max_shift) for which `attempt(low, shift, v)`
/// returns -1 (v then holds D^1/2 L's values on low = tril(A)'s pattern); else the row it
/// returned, in la::invalid_argument. The shift loop of the exact factorization and of the
/// sweeps (factored.hpp).
template <typename T, typename O, typename V, typename Attempt>
ic0_factorization<T, O> ic0_with_shifts(const csr_matrix<T, O>& a, double max_shift, std::vector<V>& v,
                                        Attempt&& attempt) {
  LA_EXPECTS(a.rows() == a.cols(), "ic0: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; IC(0) needs a square (SPD) matrix");
  LA_EXPECTS(max_shift >= 0 && std::isfinite(max_shift), "ic0: the largest shift must be finite and non-negative");
  const csr_matrix<T, O> low = lower_triangle(a, "ic0");
  ic0_factorization<T, O> f;
  index_t bad = -1;
  for (double shift : ic0_shifts(max_shift)) {
    ++f.attempts;
    bad = attempt(low, shift, v);
    if (bad < 0) {
      std::vector<T> vals(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) vals[k] = static_cast<T>(v[k]);
      auto [p, i, unused] = low.arrays();
      f.l = csr_matrix<T, O>(detail::trusted, a.rows(), a.cols(), p, i, std::move(vals));
      f.shift = shift;
      return f;
    }
  }
  throw invalid_argument(detail::ic0_no_shift_message(bad, max_shift));
}

/// IC(0) of an SPD matrix with the first shift of ic0_shifts(max_shift) that gives positive
/// pivots; la::invalid_argument when none does (or the diagonal is not positive).
template <typename T, typename O>
ic0_factorization<T, O> ic0_factor(const csr_matrix<T, O>& a, double max_shift = 1) {
  std::vector<long double> v;
  return ic0_with_shifts(a, max_shift, v, [](const csr_matrix<T, O>& low, double shift, std::vector<long double>& w) {
    return ic0_attempt(low, shift, w);
  });
}

// ---- ILU(0) --------------------------------------------------------------------------------

/// ILU(0) of a square matrix on its own pattern (IKJ order, no pivoting), in long double:
/// the strictly lower part holds L (unit diagonal implied), the rest U. A missing diagonal or
/// a zero (or non-finite) pivot throws la::invalid_argument naming the row.
template <typename T, typename O>
csr_matrix<T, O> ilu0_factor(const csr_matrix<T, O>& a) {
  LA_EXPECTS(a.rows() == a.cols(), "ilu0: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; ILU(0) needs a square matrix");
  const index_t n = a.rows();
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  std::vector<long double> v(a.values().begin(), a.values().end());
  std::vector<O> diag(static_cast<std::size_t>(n), -1);
  for (index_t i = 0; i < n; ++i) {
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] == i) diag[i] = k;
    LA_EXPECTS(diag[i] >= 0, detail::ilu0_missing_message(i));
  }
  for (index_t i = 0; i < n; ++i) {
    for (O k = rp[i]; k < diag[i]; ++k) {
      const index_t j = ci[k];
      v[k] /= v[diag[j]];
      // Row i's entries right of column j, less l_ij times row j's upper part (a merge).
      O a2 = k + 1, b = diag[j] + 1;
      while (a2 < rp[i + 1] && b < rp[j + 1]) {
        if (ci[a2] == ci[b]) v[a2++] -= v[k] * v[b++];
        else if (ci[a2] < ci[b]) ++a2;
        else ++b;
      }
    }
    LA_EXPECTS(v[diag[i]] != 0 && std::isfinite(static_cast<double>(v[diag[i]])),
               detail::ilu0_pivot_message(i, static_cast<double>(v[diag[i]])));
  }
  std::vector<T> vals(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) vals[k] = static_cast<T>(v[k]);
  return csr_matrix<T, O>(detail::trusted, n, n, a.row_ptr(), a.col_idx(), std::move(vals));
}

// ---- level schedules -----------------------------------------------------------------------

/// Rows in the order a triangular solve may run them: level k is order[ptr[k] .. ptr[k+1]),
/// rows in increasing order within a level.
struct level_schedule {
  std::vector<index_t> order;
  std::vector<index_t> ptr{0};
  index_t levels() const { return static_cast<index_t>(ptr.size()) - 1; }
};

/// Rows bucketed by level (a counting sort: rows stay in increasing order within a level).
inline level_schedule schedule_of(const std::vector<index_t>& level, index_t most) {
  const index_t n = static_cast<index_t>(level.size());
  level_schedule s;
  s.ptr.assign(static_cast<std::size_t>(most + 2), 0);
  for (index_t i = 0; i < n; ++i) ++s.ptr[level[i] + 1];
  for (std::size_t l = 1; l < s.ptr.size(); ++l) s.ptr[l] += s.ptr[l - 1];
  s.order.resize(static_cast<std::size_t>(n));
  std::vector<index_t> next(s.ptr.begin(), s.ptr.end() - 1);
  for (index_t i = 0; i < n; ++i) s.order[next[level[i]]++] = i;
  return s;
}

/// Levels of the forward solve with the lower part of a square matrix (row i waits for the
/// columns j < i of its row). L^T's solve is levels_of_upper on L^T.
template <typename O>
level_schedule levels_of_lower(index_t n, const O* rp, const index_t* ci) {
  std::vector<index_t> level(static_cast<std::size_t>(n), 0);
  index_t most = -1;
  for (index_t i = 0; i < n; ++i) {
    index_t l = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] < i) l = std::max(l, level[ci[k]] + 1);
    level[i] = l, most = std::max(most, l);
  }
  return schedule_of(level, most);
}

/// Levels of the backward solve with the upper part of a square matrix (row i waits for the
/// columns j > i of its row).
template <typename O>
level_schedule levels_of_upper(index_t n, const O* rp, const index_t* ci) {
  std::vector<index_t> level(static_cast<std::size_t>(n), 0);
  index_t most = -1;
  for (index_t i = n; i-- > 0;) {
    index_t l = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] > i) l = std::max(l, level[ci[k]] + 1);
    level[i] = l, most = std::max(most, l);
  }
  return schedule_of(level, most);
}


}  // namespace la
