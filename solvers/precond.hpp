// Preconditioners on the host: the builders that are the oracles for the GPU setup
// (device_precond.hpp), and host_preconditioner, which the host CG backend applies.
//
//   block-Jacobi  supervariable_blocks: runs of consecutive rows with the same column
//                 pattern (the unknowns of one node in a structural model), cut at
//                 max_block rows; each diagonal block inverted by Cholesky (long double).
//   FSAI          fsai_factor (fsai.hpp); M^-1 = G^T G, applied as two products.
//   IC(0)         ic0_factor: incomplete Cholesky on the pattern of tril(A), computed on
//                 the symmetrically scaled matrix D^-1/2 A D^-1/2 + shift I with the shifts
//                 of ic0_shifts tried in order; the factor is stored with the scaling
//                 folded in (D^1/2 L), so M = (D^1/2 L)(D^1/2 L)^T. Applied as two
//                 triangular solves.
//   ILU(0)        ilu0_factor: incomplete LU on A's whole pattern (IKJ, no pivoting, no
//                 shift); L (unit diagonal) and U share A's pattern. Applied as a unit-lower
//                 and an upper solve.
// level_schedule is the dependency order both triangular solves and the GPU factorization
// run in: row i is on level 1 + the largest level of the rows it depends on.
//
// A preconditioner that does not exist for the matrix (a non-positive diagonal, a block that
// is not positive definite, IC(0) with no shift in range, a zero ILU(0) pivot) is
// la::invalid_argument naming
// the row; the solvers turn it into a breakdown status (cg.hpp's rule).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../formats/convert.hpp"
#include "../formats/csr.hpp"
#include "cg.hpp"
#include "fsai.hpp"
#include "precond_options.hpp"

namespace la {

namespace detail {
// The words of each way a preconditioner can fail to exist, one place for the host and GPU
// builders (row numbers 0-based in, 1-based out, as in a Matrix Market file).
inline std::string bad_diagonal_message(const char* who, long long row) {
  return std::string(who) + ": A(" + std::to_string(row + 1) + "," + std::to_string(row + 1) +
         ") is missing or not positive, so the matrix is not symmetric positive definite";
}
/// Jacobi: a diagonal that is not positive (for CG, which needs an SPD M^-1) or is zero.
inline std::string jacobi_message(long long row, double v, bool spd) {
  const std::string at = "Jacobi preconditioner: diagonal entry A(" + std::to_string(row + 1) + "," +
                         std::to_string(row + 1) + ") = " + std::to_string(v);
  if (spd) return at + " is not positive, so the matrix is not symmetric positive definite";
  return at + " (zero or not stored), so diag(A)^-1 does not exist: use --precond none, or a method and "
              "preconditioner that do not divide by the diagonal";
}
/// Jacobi for the methods other than CG: how many zero or missing diagonal entries were taken as 1.
inline std::string jacobi_zero_note(long long count) {
  return std::to_string(count) + " zero or missing diagonal entr" + (count == 1 ? "y" : "ies") +
         " taken as 1 (as PETSc's PCJACOBI)";
}
inline std::string block_not_spd_message(long long first, long long end) {
  return "block-jacobi: the diagonal block of rows " + std::to_string(first + 1) + ".." + std::to_string(end) +
         " is not positive definite, so the matrix is not symmetric positive definite";
}
inline std::string ic0_no_shift_message(long long row, double max_shift) {
  return "ic0: a pivot is not positive (row " + std::to_string(row + 1) + ") with every diagonal shift up to " +
         short_number(max_shift) +
         ", so IC(0) does not exist for this matrix in that range (a larger --ic-shift, or fsai, which exists for "
         "every SPD matrix)";
}
}  // namespace detail

// ---- block-Jacobi ---------------------------------------------------------------------------

/// Block starts (and n last) of the supervariable blocks: a row joins the block of the row
/// above when their column patterns are equal and the block has fewer than max_block rows.
/// The block starts (and n last) from same[i] = "row i has row i - 1's pattern": the rule
/// supervariable_blocks and the GPU builder share.
inline std::vector<index_t> blocks_from_flags(const std::vector<unsigned char>& same, int max_block) {
  LA_EXPECTS(max_block >= 1 && max_block <= 32, "block-jacobi: the largest block must be 1 to 32 rows");
  const index_t n = static_cast<index_t>(same.size());
  std::vector<index_t> starts{0};
  for (index_t i = 1; i < n; ++i)
    if (!same[i] || i - starts.back() >= max_block) starts.push_back(i);
  if (n > 0) starts.push_back(n);
  return starts;
}

template <typename T, typename O>
std::vector<index_t> supervariable_blocks(const csr_matrix<T, O>& a, int max_block) {
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  std::vector<unsigned char> same(static_cast<std::size_t>(a.rows()), 0);
  for (index_t i = 1; i < a.rows(); ++i)
    same[i] = rp[i + 1] - rp[i] == rp[i] - rp[i - 1] &&
              std::equal(ci.begin() + rp[i], ci.begin() + rp[i + 1], ci.begin() + rp[i - 1]);
  return blocks_from_flags(same, max_block);
}

/// Inverts the SPD s x s matrix m (row-major, long double) in place by Cholesky; false when
/// a pivot is not positive.
inline bool spd_inverse(std::vector<long double>& m, std::size_t s) {
  std::vector<long double> l(s * s, 0);
  for (std::size_t c = 0; c < s; ++c) {
    long double d = m[c * s + c];
    for (std::size_t k = 0; k < c; ++k) d -= l[c * s + k] * l[c * s + k];
    if (!(d > 0) || !std::isfinite(static_cast<double>(d))) return false;
    l[c * s + c] = std::sqrt(d);
    for (std::size_t r = c + 1; r < s; ++r) {
      long double v = m[r * s + c];
      for (std::size_t k = 0; k < c; ++k) v -= l[r * s + k] * l[c * s + k];
      l[r * s + c] = v / l[c * s + c];
    }
  }
  // Column c of the inverse: L y = e_c, then L^T x = y.
  std::vector<long double> y(s);
  for (std::size_t c = 0; c < s; ++c) {
    for (std::size_t r = 0; r < s; ++r) {
      long double v = r == c ? 1 : 0;
      for (std::size_t k = 0; k < r; ++k) v -= l[r * s + k] * y[k];
      y[r] = v / l[r * s + r];
    }
    for (std::size_t r = s; r-- > 0;) {
      long double v = y[r];
      for (std::size_t k = r + 1; k < s; ++k) v -= l[k * s + r] * y[k];
      y[r] = v / l[r * s + r];
    }
    for (std::size_t r = 0; r < s; ++r) m[r * s + c] = y[r];
  }
  return true;
}

/// The inverses of the diagonal blocks A[b, b], row-major, one after another (block k at
/// sum over earlier blocks of size^2).
template <typename T, typename O>
std::vector<T> block_inverses(const csr_matrix<T, O>& a, const std::vector<index_t>& starts) {
  std::vector<T> out;
  std::vector<long double> m;
  for (std::size_t b = 0; b + 1 < starts.size(); ++b) {
    const index_t s0 = starts[b];
    const std::size_t s = static_cast<std::size_t>(starts[b + 1] - s0);
    m.assign(s * s, 0);
    for (std::size_t r = 0; r < s; ++r)
      for (O k = a.row_ptr()[s0 + r]; k < a.row_ptr()[s0 + r + 1]; ++k) {
        const index_t c = a.col_idx()[k] - s0;
        if (c >= 0 && static_cast<std::size_t>(c) < s) m[r * s + c] = a.values()[k];
      }
    LA_EXPECTS(spd_inverse(m, s), detail::block_not_spd_message(s0, static_cast<long long>(s0 + s)));
    for (long double v : m) out.push_back(static_cast<T>(v));
  }
  return out;
}

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

/// IC(0) of an SPD matrix with the first shift of ic0_shifts(max_shift) that gives positive
/// pivots; la::invalid_argument when none does (or the diagonal is not positive).
template <typename T, typename O>
ic0_factorization<T, O> ic0_factor(const csr_matrix<T, O>& a, double max_shift = 1) {
  LA_EXPECTS(a.rows() == a.cols(), "ic0: the matrix is " + std::to_string(a.rows()) + " x " +
                                       std::to_string(a.cols()) + "; IC(0) needs a square (SPD) matrix");
  LA_EXPECTS(max_shift >= 0 && std::isfinite(max_shift), "ic0: the largest shift must be finite and non-negative");
  csr_matrix<T, O> low = lower_triangle(a, "ic0");
  std::vector<long double> v;
  ic0_factorization<T, O> f;
  index_t bad = -1;
  for (double shift : ic0_shifts(max_shift)) {
    ++f.attempts;
    bad = ic0_attempt(low, shift, v);
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
    LA_EXPECTS(diag[i] >= 0, "ilu0: A(" + std::to_string(i + 1) + "," + std::to_string(i + 1) +
                                 ") is not stored, so ILU(0) has no pivot there");
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
               "ilu0: the pivot of row " + std::to_string(i + 1) + " is " +
                   std::to_string(static_cast<double>(v[diag[i]])) + ", so ILU(0) does not exist for this matrix");
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

/// Levels of the solve with lower-triangular L (`forward`: row i waits for the columns j < i
/// of its row), or of the solve with L^T (row i waits for the rows j > i that have column i).
template <typename O>
level_schedule levels_of_lower(index_t n, const O* rp, const index_t* ci, bool forward) {
  std::vector<index_t> level(static_cast<std::size_t>(n), 0);
  index_t most = -1;
  if (forward) {
    for (index_t i = 0; i < n; ++i) {
      index_t l = 0;
      for (O k = rp[i]; k < rp[i + 1]; ++k)
        if (ci[k] < i) l = std::max(l, level[ci[k]] + 1);
      level[i] = l, most = std::max(most, l);
    }
  } else {
    for (index_t j = n; j-- > 0;) {  // row j of L feeds column j of L^T's rows ci[k] < j
      most = std::max(most, level[j]);
      for (O k = rp[j]; k < rp[j + 1]; ++k)
        if (ci[k] < j) level[ci[k]] = std::max(level[ci[k]], level[j] + 1);
    }
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

// ---- the host preconditioner ---------------------------------------------------------------

/// What preconditioner::automatic resolves to, on the host and the GPU alike: FSAI, which
/// exists for every SPD matrix and applies as two products.
inline preconditioner select_preconditioner() { return preconditioner::fsai; }

/// M^-1 for the host CG backend, built from CSR (any offset type), applied in wider_t.
template <typename T>
class host_preconditioner {
 public:
  /// Builds M^-1 from A (converted to 64-bit offsets unless it has them).
  template <typename O>
  host_preconditioner(const csr_matrix<T, O>& a, preconditioner kind, const precond_options& opt) {
    if constexpr (std::is_same_v<O, count_t>) build(a, kind, opt);
    else build(to_csr<count_t>(a), kind, opt);
  }

  const precond_report& report() const { return rep_; }

  /// z = M^-1 r.
  void apply(const std::vector<T>& r, std::vector<T>& z) const {
    using W = wider_t<T>;
    const index_t n = static_cast<index_t>(r.size());
    switch (rep_.kind) {
      case preconditioner::block_jacobi: {
        std::size_t off = 0;
        for (std::size_t b = 0; b + 1 < starts_.size(); ++b) {
          const index_t s0 = starts_[b], s = starts_[b + 1] - s0;
          for (index_t i = 0; i < s; ++i) {
            W v = 0;
            for (index_t j = 0; j < s; ++j) v += static_cast<W>(inv_[off + i * s + j]) * r[s0 + j];
            z[s0 + i] = static_cast<T>(v);
          }
          off += static_cast<std::size_t>(s) * s;
        }
        break;
      }
      case preconditioner::fsai:  // t = G r, z = G^T t
        t_.resize(r.size());
        for (index_t i = 0; i < n; ++i) t_[i] = static_cast<T>(row_dot(g_, i, r.data()));
        for (index_t i = 0; i < n; ++i) z[i] = static_cast<T>(row_dot(gt_, i, t_.data()));
        break;
      case preconditioner::ic0: {  // L y = r (diagonal last), then L^T z = y (diagonal first)
        t_.resize(r.size());
        for (index_t i = 0; i < n; ++i) {
          const count_t d = g_.row_ptr()[i + 1] - 1;
          W v = r[i];
          for (count_t k = g_.row_ptr()[i]; k < d; ++k) v -= static_cast<W>(g_.values()[k]) * t_[g_.col_idx()[k]];
          t_[i] = static_cast<T>(v / g_.values()[d]);
        }
        for (index_t i = n; i-- > 0;) {
          const count_t d = gt_.row_ptr()[i];
          W v = t_[i];
          for (count_t k = d + 1; k < gt_.row_ptr()[i + 1]; ++k) v -= static_cast<W>(gt_.values()[k]) * z[gt_.col_idx()[k]];
          z[i] = static_cast<T>(v / gt_.values()[d]);
        }
        break;
      }
      case preconditioner::ilu0: {  // L y = r (unit diagonal), then U z = y
        t_.resize(r.size());
        const auto& rp = g_.row_ptr();
        const auto& ci = g_.col_idx();
        const auto& v = g_.values();
        for (index_t i = 0; i < n; ++i) {
          W s = r[i];
          for (count_t k = rp[i]; k < rp[i + 1] && ci[k] < i; ++k) s -= static_cast<W>(v[k]) * t_[ci[k]];
          t_[i] = static_cast<T>(s);
        }
        for (index_t i = n; i-- > 0;) {
          W s = t_[i];
          count_t d = rp[i + 1];
          for (count_t k = rp[i]; k < rp[i + 1]; ++k)
            if (ci[k] > i) s -= static_cast<W>(v[k]) * z[ci[k]];
            else if (ci[k] == i) d = k;
          z[i] = static_cast<T>(s / v[d]);
        }
        break;
      }
      default: break;
    }
  }

 private:
  void build(const csr_matrix<T, count_t>& a, preconditioner kind, const precond_options& opt) {
    if (kind == preconditioner::automatic) kind = select_preconditioner();
    rep_.kind = kind;
    switch (kind) {
      case preconditioner::block_jacobi: {
        starts_ = supervariable_blocks(a, opt.max_block);
        inv_ = block_inverses(a, starts_);
        std::size_t largest = 0;
        for (std::size_t b = 0; b + 1 < starts_.size(); ++b)
          largest = std::max<std::size_t>(largest, starts_[b + 1] - starts_[b]);
        rep_.detail = std::to_string(starts_.size() - 1) + " blocks of up to " + std::to_string(largest) + " rows";
        rep_.bytes = double(inv_.size()) * sizeof(T) + double(starts_.size()) * sizeof(index_t);
        break;
      }
      case preconditioner::fsai:
        g_ = fsai_factor(a, opt.fsai);
        gt_ = transpose(g_);
        rep_.detail = std::string("pattern ") + to_string(opt.fsai.pattern) + ", " + std::to_string(g_.nnz()) +
                      " nonzeros in G";
        rep_.bytes = 2.0 * g_.nnz() * (sizeof(T) + sizeof(index_t));
        break;
      case preconditioner::ic0: {
        auto f = ic0_factor(a, opt.max_shift);
        g_ = std::move(f.l);
        gt_ = transpose(g_);
        rep_.shift = f.shift;
        rep_.detail = "shift " + short_number(f.shift) + " (attempt " + std::to_string(f.attempts) + "), " +
                      std::to_string(g_.nnz()) + " nonzeros in L";
        rep_.bytes = 2.0 * g_.nnz() * (sizeof(T) + sizeof(index_t));
        break;
      }
      case preconditioner::ilu0:
        g_ = ilu0_factor(a);
        rep_.detail = std::to_string(g_.nnz()) + " nonzeros in L + U";
        rep_.bytes = double(g_.nnz()) * (sizeof(T) + sizeof(index_t));
        break;
      default: throw invalid_argument(std::string("host_preconditioner: ") + to_string(kind) + " is built elsewhere");
    }
  }

  static csr_matrix<T, count_t> transpose(const csr_matrix<T, count_t>& m) {
    const csc_matrix<T, count_t> c = to_csc<count_t>(m);
    auto [p, i, v] = c.arrays();
    return csr_matrix<T, count_t>(detail::trusted, m.cols(), m.rows(), p, i, v);
  }
  static wider_t<T> row_dot(const csr_matrix<T, count_t>& m, index_t i, const T* x) {
    wider_t<T> v = 0;
    for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      v += static_cast<wider_t<T>>(m.values()[k]) * x[m.col_idx()[k]];
    return v;
  }

  precond_report rep_;
  std::vector<index_t> starts_;
  std::vector<T> inv_;
  csr_matrix<T, count_t> g_, gt_;  // FSAI: G and G^T; IC(0): L and L^T; ILU(0): L + U in g_
  mutable std::vector<T> t_;
};

}  // namespace la
