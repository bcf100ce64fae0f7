// A square matrix's numeric properties, which the method's and the preconditioner's choices
// read (method.hpp): the symmetry of its values and pattern, the signs of its diagonal,
// diagonal dominance, on the host (properties_of on the GPU: device_solve.hpp).
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
  bool symmetric() const noexcept { return rows == cols && max_asymmetry <= 1e-12; }
  bool looks_spd() const noexcept { return symmetric() && diag_negative == 0 && diag_zero == 0; }
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
  const bool mirror = square && !values_symmetric;
  // The largest |a_ij| first (a streaming pass), so that the scan knows what 1% of it is.
  double big = 0;
  if (for_choice && mirror)
    for (O k = 0; k < static_cast<O>(a.nnz()); ++k) big = std::max(big, std::abs(static_cast<double>(v[k])));
  std::atomic<bool> settled{false};  // for_choice: the answer is known (not nearly symmetric)
  struct part {
    double max_abs = 0, diff = 0, min_dominance = HUGE_VAL;
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
      double d = 0, off = 0;
      for (O k = rp[i]; k < rp[i + 1]; ++k) {
        const index_t j = ci[k];
        const double x = std::abs(static_cast<double>(v[k]));
        q.max_abs = std::max(q.max_abs, x);
        if (j == i) {
          d = static_cast<double>(v[k]);
          continue;
        }
        off += x;
        if (!look) continue;
        const index_t* b = ci + rp[j];
        const index_t* e = ci + rp[j + 1];
        const index_t* f = std::lower_bound(b, e, i);
        if (f != e && *f == i) q.diff = std::max(q.diff, std::abs(static_cast<double>(v[k]) -
                                                                 static_cast<double>(v[rp[j] + (f - b)])));
        else q.diff = std::max(q.diff, x), q.pattern_symmetric = false;
        // Not symmetric (past 1e-12) and not nearly symmetric (past 1%, or a one-sided entry).
        if (for_choice && (q.diff > 0.01 * big || (!q.pattern_symmetric && q.diff > 1e-12 * big))) {
          look = false;
          settled.store(true, std::memory_order_relaxed);
        }
      }
      if (i >= nd) continue;
      q.pos += d > 0, q.neg += d < 0, q.zero += d == 0;
      q.dominant += std::abs(d) >= off;
      if (off > 0) q.min_dominance = std::min(q.min_dominance, std::abs(d) / off);
    }
  });
  double diff = 0;
  p.min_dominance = HUGE_VAL;
  for (const part& q : parts) {
    p.max_abs = std::max(p.max_abs, q.max_abs), diff = std::max(diff, q.diff);
    p.min_dominance = std::min(p.min_dominance, q.min_dominance);
    p.pattern_symmetric = p.pattern_symmetric && q.pattern_symmetric;
    p.diag_positive += q.pos, p.diag_negative += q.neg, p.diag_zero += q.zero, p.dominant_rows += q.dominant;
  }
  if (!square) {
    p.pattern_symmetric = false, p.max_asymmetry = HUGE_VAL;
    return p;
  }
  p.max_asymmetry = p.max_abs > 0 ? diff / p.max_abs : 0;
  p.asymmetry_lower_bound = settled.load();
  return p;
}

/// One line for a person: "symmetric values, diagonal positive" and the like.
inline std::string describe(const matrix_properties& p) {
  std::string s = p.max_asymmetry == 0 ? "symmetric values"
                  : p.symmetric()      ? "symmetric values (to " + short_number(p.max_asymmetry) + ")"
                                       : "not symmetric (max |a_ij - a_ji| " +
                                        std::string(p.asymmetry_lower_bound ? ">= " : "= ") + short_number(p.max_asymmetry) +
                                        " of max |a_ij|" + (p.pattern_symmetric ? "" : ", pattern not symmetric") + ")";
  const index_t n = std::min(p.rows, p.cols);
  if (p.diag_positive == n) s += ", diagonal positive";
  else
    s += ", diagonal: " + std::to_string(p.diag_positive) + " positive, " + std::to_string(p.diag_negative) +
         " negative, " + std::to_string(p.diag_zero) + " zero or missing";
  return s;
}

}  // namespace la
