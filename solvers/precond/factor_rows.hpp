// The per-row steps of the incomplete factorizations by sweeps and of the incomplete sparse
// approximate inverses of their factors: one definition, compiled for the host (the oracles,
// factored.hpp) and for the GPU (factored.cu), so both do the same operations in the same
// order (they differ only where nvcc contracts a multiply and an add into one FMA).
//
// Storage. ILU(0)'s factors share A's pattern (L strictly left of the diagonal, unit
// diagonal implied; U from the diagonal right), the diagonal's position of row i in diag[i].
// IC(0)'s L is tril(A) with the diagonal last in each row. A `triangle` names one factor in
// either storage: its off-diagonal range and diagonal in row i.
//
// Sweeps (Chow and Patel, "Fine-grained parallel incomplete LU factorization", 2015). The
// factors are the fixed point of the ILU equations restricted to the pattern,
//   l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj   (i > j),   u_ij = a_ij - sum_{k<i} l_ik u_kj,
// and one sweep evaluates every entry's right-hand side from the previous sweep's values
// (Jacobi-style: `old` in, `out` written), so the result does not depend on the order the
// entries are visited in, and the GPU's is the same run to run.
#pragma once

#include <cmath>

#include <la/types.hpp>

#ifdef __CUDACC__
#define LA_FACTOR_HD __host__ __device__
#else
#define LA_FACTOR_HD
#endif

namespace la::factor_rows {

/// The position of column c in ci[b, e) (sorted), or -1.
template <typename O>
LA_FACTOR_HD inline O find_col(const index_t* ci, O b, O e, index_t c) {
  O lo = b, hi = e;
  while (lo < hi) {
    const O m = lo + (hi - lo) / 2;
    if (ci[m] < c) lo = m + 1;
    else hi = m;
  }
  return lo < e && ci[lo] == c ? lo : O(-1);
}

/// One ParILU(0) sweep of entry k = (i, j) on A's pattern: out[k] from `old` (a0: A's
/// values): s = a_ij - sum over row i's columns c < min(i, j) of l_ic u_cj (u_cj looked up in
/// row c right of its diagonal), then l_ij = s / u_jj or u_ij = s.
template <typename O>
LA_FACTOR_HD inline void parilu_entry(index_t i, O k, const O* rp, const index_t* ci, const O* diag, const double* a0,
                                      const double* old, double* out) {
  const O end = rp[i + 1];
  const index_t j = ci[k];
  const index_t lim = j < i ? j : i;
  double s = a0[k];
  for (O p = rp[i]; p < end && ci[p] < lim; ++p) {
    const index_t c = ci[p];
    const O q = find_col(ci, diag[c] + 1, rp[c + 1], j);
    if (q >= 0) s -= old[p] * old[q];
  }
  out[k] = j < i ? s / old[diag[j]] : s;
}
/// The sweep of a whole row (the host's order; the GPU runs an entry a thread).
template <typename O>
LA_FACTOR_HD inline void parilu_row(index_t i, const O* rp, const index_t* ci, const O* diag, const double* a0,
                                    const double* old, double* out) {
  for (O k = rp[i]; k < rp[i + 1]; ++k) parilu_entry(i, k, rp, ci, diag, a0, old, out);
}

/// One ParIC(0) sweep of entry k = (i, j) of L (tril, diagonal last): l_ij = (a_ij - sum_{c<j}
/// l_ic l_jc) / l_jj, l_ii = sqrt(a_ii - sum_{c<i} l_ic^2). False when the pivot is not
/// positive and finite (it is then written as 1, so the sweep goes on and a flag decides).
template <typename O>
LA_FACTOR_HD inline bool paric_entry(index_t i, O k, const O* rp, const index_t* ci, const double* a0, const double* old,
                                     double* out) {
  const index_t j = ci[k];
  double s = a0[k];
  O p = rp[i], q = rp[j];
  const O qend = rp[j + 1] - 1;  // row j's entries left of its diagonal
  while (p < k && q < qend) {
    const index_t cp = ci[p], cq = ci[q];
    if (cp == cq) s -= old[p++] * old[q++];
    else if (cp < cq) ++p;
    else ++q;
  }
  if (j < i) {
    out[k] = s / old[qend];
    return true;
  }
  const bool ok = s > 0 && std::isfinite(s);
  out[k] = ok ? std::sqrt(s) : 1.0;
  return ok;
}
template <typename O>
LA_FACTOR_HD inline bool paric_row(index_t i, const O* rp, const index_t* ci, const double* a0, const double* old,
                                   double* out) {
  bool ok = true;
  for (O k = rp[i]; k < rp[i + 1]; ++k) ok = paric_entry(i, k, rp, ci, a0, old, out) && ok;
  return ok;
}

/// One triangular factor: row i's off-diagonal entries are [begin, end) and its diagonal at
/// d (diag[i] when the rows hold both factors; else last in a lower, first in an upper row).
template <typename T, typename O>
struct triangle {
  const O* rp;
  const index_t* ci;
  const T* v;
  const O* diag;  // null: the diagonal is last (lower) or first (upper) in the row
  bool lower;
  bool unit;      // a unit diagonal, not read (ILU(0)'s L)
  LA_FACTOR_HD void range(index_t i, O& begin, O& end, O& d) const {
    const O first = rp[i], last = rp[i + 1];
    d = diag ? diag[i] : lower ? last - 1 : first;
    if (lower) begin = first, end = d;
    else begin = d + 1, end = last;
  }
  LA_FACTOR_HD T diagonal(O d) const { return unit ? T(1) : v[d]; }
  /// The entry (r, c) of the factor (c off r's diagonal), or 0 when not stored.
  LA_FACTOR_HD T at(index_t r, index_t c) const {
    O b, e, d;
    range(r, b, e, d);
    const O q = find_col(ci, b, e, c);
    return q >= 0 ? v[q] : T(0);
  }
};

/// Rows with more off-diagonal entries than this keep only the diagonal in their ISAI row
/// (its setup costs about p^2 searches for p entries).
constexpr int isai_max_row = 256;

/// Row i of the incomplete sparse approximate inverse M of triangle t on t's own pattern
/// (Anzt et al., "Incomplete sparse approximate inverses for parallel preconditioning",
/// 2018): (M t)_ij = delta_ij for every column j of row i's pattern, a small triangular
/// system solved by substitution. m has t's layout (values at t's positions; the diagonal's
/// written unless t is unit, whose M has a unit diagonal too). False when the row was past
/// isai_max_row and kept the diagonal only.
template <typename T, typename O>
LA_FACTOR_HD inline bool isai_row(const triangle<T, O>& t, index_t i, T* m) {
  O b, e, d;
  t.range(i, b, e, d);
  const double md = 1.0 / static_cast<double>(t.diagonal(d));
  if (!t.unit) m[d] = static_cast<T>(md);
  if (e - b > isai_max_row) {
    for (O a = b; a < e; ++a) m[a] = T(0);
    return false;
  }
  if (t.lower) {  // unknowns right to left: m_a = -(l_i,pa m_d + sum_{b>a} l_pb,pa m_b) / l_pa,pa
    for (O a = e; a-- > b;) {
      const index_t pa = t.ci[a];
      double s = static_cast<double>(t.v[a]) * md;
      for (O q = a + 1; q < e; ++q) s += static_cast<double>(t.at(t.ci[q], pa)) * static_cast<double>(m[q]);
      O pb, pe, pd;
      t.range(pa, pb, pe, pd);
      m[a] = static_cast<T>(-s / static_cast<double>(t.diagonal(pd)));
    }
  } else {  // left to right: m_a = -(u_i,qa m_d + sum_{b<a} u_qb,qa m_b) / u_qa,qa
    for (O a = b; a < e; ++a) {
      const index_t qa = t.ci[a];
      double s = static_cast<double>(t.v[a]) * md;
      for (O q = b; q < a; ++q) s += static_cast<double>(t.at(t.ci[q], qa)) * static_cast<double>(m[q]);
      O pb, pe, pd;
      t.range(qa, pb, pe, pd);
      m[a] = static_cast<T>(-s / static_cast<double>(t.diagonal(pd)));
    }
  }
  return true;
}

}  // namespace la::factor_rows
