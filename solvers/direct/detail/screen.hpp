// What the direct method checks of A before any work, on the host and the GPU alike: square,
// finite, no empty row or column (structurally singular at once, in O(n + nnz), whatever n),
// and the power of two that brings its largest entry near 1 (subnormal entries lose their
// digits in the pivots' products and the matching's scalings; huge ones overflow them).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la::direct_detail {

struct screened {
  solve_status status = solve_status::converged;  // converged: A may be factored
  std::string message;
  int exponent = 0;  // factor 2^exponent A (0: A as it is)
};

template <typename T>
screened screen(const csr_matrix<T, count_t>& a) {
  screened s;
  const index_t n = a.rows();
  auto fail = [&](solve_status st, std::string m) {
    s.status = st, s.message = std::move(m);
    return s;
  };
  if (a.rows() != a.cols())
    return fail(solve_status::invalid_input, "A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                                 "; the direct method needs a square matrix (least squares is not supported)");
  double amax = 0;
  for (std::size_t k = 0; k < a.values().size(); ++k) {
    const double v = std::abs(static_cast<double>(a.values()[k]));
    if (!std::isfinite(v))
      return fail(solve_status::non_finite, "matrix holds a non-finite value (" + std::to_string(double(a.values()[k])) +
                                                ") at stored entry " + std::to_string(k + 1) + " (1-based)");
    amax = std::max(amax, v);
  }
  std::vector<char> col_seen(static_cast<std::size_t>(n), 0);
  for (index_t i = 0; i < n; ++i) {
    bool any = false;
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.values()[k] != T(0)) any = true, col_seen[static_cast<std::size_t>(a.col_idx()[k])] = 1;
    if (!any) return fail(solve_status::breakdown, "A is singular: row " + std::to_string(i + 1) + " holds no nonzero entry");
  }
  for (index_t j = 0; j < n; ++j)
    if (!col_seen[static_cast<std::size_t>(j)])
      return fail(solve_status::breakdown, "A is singular: column " + std::to_string(j + 1) + " holds no nonzero entry");
  if (amax > 0 && (amax < 0x1p-60 || amax > 0x1p60)) s.exponent = -std::ilogb(amax);
  return s;
}

/// 2^e A (exact where no entry falls below the normal range).
template <typename T>
csr_matrix<T, count_t> scaled(const csr_matrix<T, count_t>& a, int e) {
  std::vector<T> v(a.values());
  for (T& x : v) x = static_cast<T>(std::ldexp(static_cast<double>(x), e));
  return csr_matrix<T, count_t>(a.rows(), a.cols(), std::vector<count_t>(a.row_ptr()), std::vector<index_t>(a.col_idx()),
                                std::move(v));
}

}  // namespace la::direct_detail
