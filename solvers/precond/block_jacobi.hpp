// Block-Jacobi on the host: supervariable blocks (runs of consecutive rows with the same
// column pattern, cut at max_block rows), each diagonal block inverted by Cholesky in long
// double. The oracle of the GPU builder (solvers/precond/block_jacobi.cu).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/convert.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/precond/messages.hpp>

namespace la {

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


}  // namespace la
