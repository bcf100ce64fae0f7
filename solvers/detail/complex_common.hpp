// What the complex Krylov methods' host oracles (complex_krylov.hpp) and GPU forms
// (krylov/complex_device.cu) share: the option checks, the end's verdict, GMRES's Givens step.
// Private to la's sources.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/complex_krylov.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la::complex_krylov_detail {

template <typename T>
bool finite(const T& v) {
  return std::isfinite(v.real()) && std::isfinite(v.imag());
}

/// The end's verdict, the host's and the GPU's: non_finite for a non-finite x, converged where
/// the recurrence met the target and the true residual t is within true_residual_factor of it
/// (precision_limit where not), max_iterations where the loop ran out; a status the method set
/// (failed) is kept.
inline void verdict(solve_result& res, bool& failed, bool x_finite, bool met, double t, double target, const cg_options& o,
                    std::int64_t limit) {
  if (!x_finite && !failed) {
    failed = true;
    res.status = solve_status::non_finite;
    res.message = "the iterate holds a NaN or Inf value";
  } else if (met) {
    if (t <= std::max(target * o.true_residual_factor, target)) {
      res.status = solve_status::converged;
      res.message = "converged";
    } else {
      res.status = solve_status::precision_limit;
      res.message = "the recurrence residual met the tolerance, the true residual " + short_number(res.true_residual) +
                    " did not: the tolerance is below what the precision resolves";
    }
  } else if (!failed) {
    res.status = solve_status::max_iterations;
    res.message = "stopped at the iteration limit (" + std::to_string(limit) + ")";
  }
}

/// After x is scaled back by 2^e (b was scaled towards 1): a converged x that no longer fits
/// double's range is non_finite, never "converged".
inline void check_scaled_back(solve_result& r, bool x_finite, int e) {
  if (x_finite || r.status != solve_status::converged) return;
  r.status = solve_status::non_finite;
  r.message = "the scaled system converged, but x scaled back by 2^" + std::to_string(e) +
              " does not fit double's range; scale b (or A) towards 1";
}

/// The first stored entry (i, j) of A (square, CSR; duplicates summed) where a_ij differs from
/// conj(a_ji) (`conjugate`: Hermitian) or from a_ji (complex symmetric); {-1, -1} where there is
/// none. Every stored entry is checked, so one whose mirror is not stored counts.
template <typename T, typename O>
std::pair<index_t, index_t> first_asymmetry(const csr_matrix<T, O>& a, bool conjugate) {
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  const auto find = [&](index_t i, index_t j) -> T {  // a_ij, summed over duplicates
    T s(0);
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] == j) s += v[k];
    return s;
  };
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = rp[i]; k < rp[i + 1]; ++k) {
      const index_t j = ci[k];
      const T aji = find(j, i);
      if (find(i, j) != (conjugate ? std::conj(aji) : aji)) return {i, j};
    }
  return {-1, -1};
}

/// Whether A is Hermitian: "" or the first entry that breaks it.
template <typename T, typename O>
std::string hermitian_problem(const csr_matrix<T, O>& a) {
  const auto [i, j] = first_asymmetry(a, true);
  if (i < 0) return {};
  return "A is not Hermitian: a(" + std::to_string(i + 1) + "," + std::to_string(j + 1) + ") is not the conjugate of a(" +
         std::to_string(j + 1) + "," + std::to_string(i + 1) + ")";
}

/// Why the options cannot run ("" when they can).
inline std::string option_problem(const cg_options& o) {
  if (o.rtol < 0 || o.atol < 0 || !(o.rtol == o.rtol) || o.restart < 1 || o.restart > 1000)
    return "rtol and atol must be non-negative and restart in [1, 1000]";
  return {};
}

/// Why the preconditioner cannot run on complex values ("" when it can).
inline std::string precond_problem(const cg_options& o) {
  if (o.precond != preconditioner::none && o.precond != preconditioner::jacobi && o.precond != preconditioner::automatic &&
      o.precond != preconditioner::ilu0 && o.precond != preconditioner::ic0)
    return std::string("preconditioner '") + to_string(o.precond) + "' does not take complex values yet; use none, jacobi, ilu0 or ic0";
  return {};
}

/// Why the method cannot take the preconditioner ("" when it can): CG needs a Hermitian one,
/// COCG a complex symmetric one.
inline std::string precond_method_problem(complex_method m, const cg_options& o) {
  if (o.precond == preconditioner::ilu0 && m == complex_method::cg)
    return "CG needs a Hermitian preconditioner and ILU(0) is not one: use precond jacobi or ic0, or bicgstab or gmres with ilu0";
  if (o.precond == preconditioner::ic0 && m == complex_method::cocg)
    return "COCG needs a complex symmetric preconditioner and IC(0)'s L L^H is not one: use precond jacobi or ilu0, or cg, "
           "bicgstab or gmres with ic0";
  return {};
}

/// GMRES's Givens step on column j of the Hessenberg matrix H: the earlier rotations, then the
/// one that zeroes H[j+1][j] (c real, s complex), applied to it and to g. W: the host oracle's
/// complex<long double>, the GPU form's complex<double>.
template <typename W>
void givens(std::vector<std::vector<W>>& H, std::vector<W>& cs, std::vector<W>& sn, std::vector<W>& g, int j) {
  const std::size_t uj = static_cast<std::size_t>(j);
  for (std::size_t i = 0; i < uj; ++i) {
    const W t = cs[i] * H[i][uj] + sn[i] * H[i + 1][uj];
    H[i + 1][uj] = -std::conj(sn[i]) * H[i][uj] + cs[i] * H[i + 1][uj];
    H[i][uj] = t;
  }
  const W a = H[uj][uj], bb = H[uj + 1][uj];
  const auto aa = std::abs(a), ab = std::abs(bb);
  if (aa == 0) {
    cs[uj] = W(0), sn[uj] = W(1);
  } else {
    const auto t = std::hypot(aa, ab);
    cs[uj] = W(aa / t), sn[uj] = (a / aa) * std::conj(bb) / t;
  }
  H[uj][uj] = cs[uj] * a + sn[uj] * bb;
  H[uj + 1][uj] = W(0);
  g[uj + 1] = -std::conj(sn[uj]) * g[uj];
  g[uj] = cs[uj] * g[uj];
}

}  // namespace la::complex_krylov_detail
