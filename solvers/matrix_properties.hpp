// A square matrix's numeric properties, which the method's and the preconditioner's choices
// read (method.hpp): the symmetry of its values and pattern, the signs of its diagonal,
// diagonal dominance, on the host (properties_of on the GPU: device_solve.hpp). For complex
// values also how far A is from Hermitian (A = A^H) besides how far from complex symmetric
// (A = A^T).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>

#include <la/error.hpp>
#include <la/formats/csr.hpp>
#include <la/parallel.hpp>
#include <la/solvers/krylov_options.hpp>  // short_number

namespace la {

/// What a solver needs to know of a square matrix's values.
struct matrix_properties {
  index_t rows = 0, cols = 0;
  std::int64_t nnz = 0;  // stored entries
  bool pattern_symmetric = true;
  double max_asymmetry = 0;   // max |a_ij - a_ji| / max |a_ij| (0: symmetric values)
  double max_abs = 0;         // max |a_ij|
  index_t diag_positive = 0, diag_negative = 0, diag_zero = 0;  // zero: zero or not stored
  index_t dominant_rows = 0;  // rows with |a_ii| >= sum_{j != i} |a_ij|
  double min_dominance = 0;   // min over rows of |a_ii| / sum_{j != i} |a_ij| (inf for a diagonal matrix)
  bool asymmetry_lower_bound = false;  // the scan stopped once A was known not nearly symmetric
  // Complex values: max_asymmetry is then A's distance from complex symmetric (A = A^T), this
  // its distance from Hermitian: max |a_ij - conj(a_ji)| / max |a_ij|, the diagonal's
  // imaginary parts included (a_ii against conj(a_ii)); the diagonal's signs are its real
  // parts' (an entry with a zero real part and an imaginary one counts in none of them). For
  // real values both are the same number.
  // hermitian() reads max_asymmetry for real values, so a matrix_properties filled without
  // this field (the GPU's properties_of, device_solve.cu) answers as before.
  bool complex_values = false;
  double max_non_hermitian = 0;
  bool symmetric() const noexcept { return rows == cols && max_asymmetry <= 1e-12; }
  bool hermitian() const noexcept { return rows == cols && (complex_values ? max_non_hermitian : max_asymmetry) <= 1e-12; }
  /// Symmetric (complex values: Hermitian) with a positive diagonal.
  bool looks_spd() const noexcept { return hermitian() && diag_negative == 0 && diag_zero == 0; }
};

/// The properties of A (CSR, sorted columns, no duplicates), on the host: each entry a_ij
/// meets its mirror a_ji by a binary search in row j (no transpose is built), on several
/// threads from 1M entries (la::thread_count). `values_symmetric`: the caller knows the values
/// are symmetric (a Matrix Market file declared symmetric, expanded by the reader), so only
/// the diagonal and dominance are computed.
///
/// `for_choice`: only what the method's and the preconditioner's choice need. The mirror scan
/// then stops at the first entry that makes A neither symmetric nor nearly symmetric (a
/// one-sided entry past 1e-12 of max |a_ij|, or |a_ij - a_ji| past 1%), and max_asymmetry is what it had
/// found by then (a lower bound, so marked): on a general 10M-entry file the check took about
/// as long as reading it, where the answer was known at its first rows.
template <typename T, typename O>
matrix_properties properties_of(const csr_matrix<T, O>& a, bool values_symmetric = false, bool for_choice = false) {
  matrix_properties p;
  p.rows = a.rows(), p.cols = a.cols(), p.nnz = static_cast<std::int64_t>(a.nnz());
  const O* rp = a.row_ptr().data();
  const index_t* ci = a.col_idx().data();
  const T* v = a.values().data();
  const bool square = a.rows() == a.cols();
  // A complex file declared symmetric may be complex symmetric or not Hermitian: scanned always.
  const bool mirror = square && (!values_symmetric || is_complex_v<T>);
  // The largest |a_ij| first (a streaming pass), so that the scan knows what 1% of it is.
  // |x| as a double, and x's conjugate (x itself for real values).
  const auto mag = [](const T& x) { return static_cast<double>(std::abs(x)); };
  // |x - y|, for real values in double (as before complex values came: float differences unrounded).
  const auto gap = [](const T& x, const T& y) {
    if constexpr (is_complex_v<T>) return static_cast<double>(std::abs(x - y));
    else return std::abs(static_cast<double>(x) - static_cast<double>(y));
  };
  const auto conj_of = [](const T& x) {
    if constexpr (is_complex_v<T>) return std::conj(x);
    else return x;
  };
  double big = 0;
  if (for_choice && mirror)
    for (O k = 0; k < static_cast<O>(a.nnz()); ++k) big = std::max(big, mag(v[k]));
  std::atomic<bool> settled{false};  // for_choice: the answer is known (not nearly symmetric)
  struct part {
    double max_abs = 0, diff = 0, diff_h = 0, min_dominance = HUGE_VAL;
    bool pattern_symmetric = true;
    index_t pos = 0, neg = 0, zero = 0, dominant = 0;
  };
  const index_t n = a.rows(), nd = std::min(a.rows(), a.cols());
  const int threads = p.nnz >= 1000000 ? thread_count() : 1;
  std::vector<part> parts(static_cast<std::size_t>(threads));
  detail::parallel_for(threads, [&](int t) {
    part& q = parts[static_cast<std::size_t>(t)];
    const index_t r0 = static_cast<index_t>(std::int64_t(n) * t / threads);
    const index_t r1 = static_cast<index_t>(std::int64_t(n) * (t + 1) / threads);
    bool look = mirror;  // the mirror scan still runs in this slice
    for (index_t i = r0; i < r1; ++i) {
      if (for_choice && look && (i & 1023) == 0 && settled.load(std::memory_order_relaxed)) look = false;
      double d = 0, d_abs = 0, off = 0;
      for (O k = rp[i]; k < rp[i + 1]; ++k) {
        const index_t j = ci[k];
        const double x = mag(v[k]);
        q.max_abs = std::max(q.max_abs, x);
        if (j == i) {
          if constexpr (is_complex_v<T>) {
            d = static_cast<double>(v[k].real()), d_abs = x;
            if (mirror) q.diff_h = std::max(q.diff_h, 2 * std::abs(static_cast<double>(v[k].imag())));  // |a_ii - conj(a_ii)|
          } else {
            d = static_cast<double>(v[k]), d_abs = x;
          }
          continue;
        }
        off += x;
        if (!look) continue;
        const index_t* b = ci + rp[j];
        const index_t* e = ci + rp[j + 1];
        const index_t* f = std::lower_bound(b, e, i);
        if (f != e && *f == i) {
          const T m = v[rp[j] + (f - b)];
          q.diff = std::max(q.diff, gap(v[k], m));
          if constexpr (is_complex_v<T>) q.diff_h = std::max(q.diff_h, gap(v[k], conj_of(m)));
        } else {
          q.diff = std::max(q.diff, x), q.diff_h = std::max(q.diff_h, x), q.pattern_symmetric = false;
        }
        // Not symmetric (past 1e-12) and not nearly symmetric (past 1%, or a one-sided entry);
        // complex values: neither symmetric nor Hermitian so.
        const double near = is_complex_v<T> ? std::min(q.diff, q.diff_h) : q.diff;
        if (for_choice && (near > 0.01 * big || (!q.pattern_symmetric && near > 1e-12 * big))) {
          look = false;
          settled.store(true, std::memory_order_relaxed);
        }
      }
      if (i >= nd) continue;
      q.pos += d > 0, q.neg += d < 0, q.zero += d_abs == 0;
      q.dominant += d_abs >= off;
      if (off > 0) q.min_dominance = std::min(q.min_dominance, d_abs / off);
    }
  });
  double diff = 0, diff_h = 0;
  p.min_dominance = HUGE_VAL;
  p.complex_values = is_complex_v<T>;
  for (const part& q : parts) {
    p.max_abs = std::max(p.max_abs, q.max_abs), diff = std::max(diff, q.diff), diff_h = std::max(diff_h, q.diff_h);
    p.min_dominance = std::min(p.min_dominance, q.min_dominance);
    p.pattern_symmetric = p.pattern_symmetric && q.pattern_symmetric;
    p.diag_positive += q.pos, p.diag_negative += q.neg, p.diag_zero += q.zero, p.dominant_rows += q.dominant;
  }
  if (!square) {
    p.pattern_symmetric = false, p.max_asymmetry = p.max_non_hermitian = HUGE_VAL;
    return p;
  }
  p.max_asymmetry = p.max_abs > 0 ? diff / p.max_abs : 0;
  p.max_non_hermitian = is_complex_v<T> ? (p.max_abs > 0 ? diff_h / p.max_abs : 0) : p.max_asymmetry;
  p.asymmetry_lower_bound = settled.load();
  return p;
}

/// One line for a person: "symmetric values, diagonal positive" and the like.
inline std::string describe(const matrix_properties& p) {
  const std::string bound = p.asymmetry_lower_bound ? ">= " : "= ";
  const std::string pattern = p.pattern_symmetric ? "" : ", pattern not symmetric";
  std::string s;
  if (p.complex_values)
    s = p.max_non_hermitian == 0 ? "Hermitian values"
        : p.hermitian()          ? "Hermitian values (to " + short_number(p.max_non_hermitian) + ")"
        : p.max_asymmetry == 0   ? "complex symmetric values"
        : p.symmetric()          ? "complex symmetric values (to " + short_number(p.max_asymmetry) + ")"
                                 : "neither Hermitian nor complex symmetric (max |a_ij - conj(a_ji)| " + bound +
                                       short_number(p.max_non_hermitian) + ", max |a_ij - a_ji| " + bound +
                                       short_number(p.max_asymmetry) + " of max |a_ij|" + pattern + ")";
  else
    s = p.max_asymmetry == 0 ? "symmetric values"
        : p.symmetric()      ? "symmetric values (to " + short_number(p.max_asymmetry) + ")"
                             : "not symmetric (max |a_ij - a_ji| " + bound + short_number(p.max_asymmetry) + " of max |a_ij|" +
                                   pattern + ")";
  const std::string diagonal = p.complex_values ? "diagonal's real parts" : "diagonal";
  const index_t n = std::min(p.rows, p.cols);
  if (p.diag_positive == n) s += ", " + diagonal + " positive";
  else
    s += ", " + diagonal + ": " + std::to_string(p.diag_positive) + " positive, " + std::to_string(p.diag_negative) +
         " negative, " + std::to_string(p.diag_zero) + " zero or missing";
  return s;
}

}  // namespace la
