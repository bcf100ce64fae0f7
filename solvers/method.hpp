// Which Krylov method a matrix gets: its numeric properties (symmetry of the values, the
// signs of the diagonal, diagonal dominance), the rule that picks a method from them, and
// the solve that takes the method from cg_options on the host (solve_host; solve_device in
// device_solve.hpp takes it the same way).
//
// The rule (select_method): CG when the values are symmetric (the largest |a_ij - a_ji| at
// most 1e-12 of the largest |a_ij|) and every diagonal entry is positive; otherwise BiCGSTAB,
// which solved 4 of the 9 real non-symmetric matrices of the benchmark set where GMRES(30)
// solved 1 (PETSc's counts and la's, bench/RESULTS.md "Non-symmetric systems"). CG asked for on a matrix
// whose values are not symmetric is refused with the alternative named unless
// cg_options::force is set. When auto's BiCGSTAB breaks down (rho, r0'v or omega = 0: a
// symmetric indefinite matrix can do that at the first step), GMRES continues from its last
// iterate, and the result says so.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "../formats/convert.hpp"
#include "bicgstab.hpp"
#include "gmres.hpp"
#include "host_backend.hpp"

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
  bool symmetric() const noexcept { return rows == cols && max_asymmetry <= 1e-12; }
  bool looks_spd() const noexcept { return symmetric() && diag_negative == 0 && diag_zero == 0; }
};

/// The properties of A (CSR, sorted columns, no duplicates), on the host: one transpose
/// and one merge of each row with the same row of the transpose.
template <typename T, typename O>
matrix_properties properties_of(const csr_matrix<T, O>& a) {
  matrix_properties p;
  p.rows = a.rows(), p.cols = a.cols(), p.nnz = static_cast<std::int64_t>(a.nnz());
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  for (const T& x : v) p.max_abs = std::max(p.max_abs, std::abs(static_cast<double>(x)));
  p.min_dominance = HUGE_VAL;
  for (index_t i = 0; i < std::min(a.rows(), a.cols()); ++i) {
    double d = 0, off = 0;
    for (O k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] == i) d = static_cast<double>(v[k]);
      else off += std::abs(static_cast<double>(v[k]));
    p.diag_positive += d > 0, p.diag_negative += d < 0, p.diag_zero += d == 0;
    p.dominant_rows += std::abs(d) >= off;
    if (off > 0) p.min_dominance = std::min(p.min_dominance, std::abs(d) / off);
  }
  if (a.rows() != a.cols()) {
    p.pattern_symmetric = false, p.max_asymmetry = HUGE_VAL;
    return p;
  }
  const csc_matrix<T, O> t = to_csc<O>(a);  // column i of A is row i of A^T
  double diff = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    O x = rp[i], y = t.col_ptr()[i];
    const O xe = rp[i + 1], ye = t.col_ptr()[i + 1];
    while (x < xe || y < ye) {
      const index_t cx = x < xe ? ci[x] : max_index, cy = y < ye ? t.row_idx()[y] : max_index;
      double d;
      if (cx == cy) d = std::abs(static_cast<double>(v[x++]) - static_cast<double>(t.values()[y++]));
      else if (cx < cy) d = std::abs(static_cast<double>(v[x++])), p.pattern_symmetric = false;
      else d = std::abs(static_cast<double>(t.values()[y++])), p.pattern_symmetric = false;
      diff = std::max(diff, d);
    }
  }
  p.max_asymmetry = p.max_abs > 0 ? diff / p.max_abs : 0;
  return p;
}

/// One line for a person: "symmetric values, diagonal positive" and the like.
inline std::string describe(const matrix_properties& p) {
  std::string s = p.max_asymmetry == 0 ? "symmetric values"
                  : p.symmetric()      ? "symmetric values (to " + short_number(p.max_asymmetry) + ")"
                                       : "not symmetric (max |a_ij - a_ji| = " + short_number(p.max_asymmetry) +
                                        " of max |a_ij|" + (p.pattern_symmetric ? "" : ", pattern not symmetric") + ")";
  const index_t n = std::min(p.rows, p.cols);
  if (p.diag_positive == n) s += ", diagonal positive";
  else
    s += ", diagonal: " + std::to_string(p.diag_positive) + " positive, " + std::to_string(p.diag_negative) +
         " negative, " + std::to_string(p.diag_zero) + " zero or missing";
  return s;
}

/// The method for `asked` (automatic resolved by the rule of the header comment) and why;
/// CG asked for on a matrix that is not symmetric is refused (`refused` says why) unless forced.
struct method_choice {
  krylov_method method = krylov_method::cg;
  std::string why;      // for a person
  std::string refused;  // non-empty: the request is refused, and this says why
};
inline method_choice select_method(krylov_method asked, const matrix_properties& p, bool force) {
  method_choice c;
  c.method = asked;
  if (asked == krylov_method::automatic) {
    if (p.looks_spd()) {
      c.method = krylov_method::cg;
      c.why = "auto: " + describe(p) + ", so it looks SPD: cg";
    } else {
      c.method = krylov_method::bicgstab;
      c.why = "auto: " + describe(p) + ", so not SPD: bicgstab";
    }
    return c;
  }
  c.why = std::string("asked for (") + describe(p) + ")";
  if (asked == krylov_method::cg && !p.symmetric() && !force)
    c.refused = "CG needs a symmetric positive definite matrix, and this one is " + describe(p) +
                ": use --method gmres or bicgstab (or auto), or --force to run CG anyway";
  return c;
}

/// Whether preconditioner `p` exists for a method that is not CG (the SPD-only ones do not).
inline std::string precond_for_method(preconditioner p, krylov_method m) {
  if (m == krylov_method::cg || m == krylov_method::automatic) return {};
  if (p == preconditioner::fsai || p == preconditioner::ic0 || p == preconditioner::block_jacobi)
    return std::string(to_string(p)) + " is built for symmetric positive definite matrices (CG); with " + to_string(m) +
           " use none, jacobi, ilu0 or amg (or auto)";
  return {};
}
/// What preconditioner::automatic means for a method that is not CG: AMG where A is nearly
/// symmetric (a symmetric pattern, max |a_ij - a_ji| at most 1% of max |a_ij|) and CG's rule
/// (select_preconditioner) would take AMG for its size; else ILU(0) (swept and applied by ISAI
/// or Jacobi sweeps on the GPU; on Dr P A Dc where the diagonal has gaps), and Jacobi where
/// ILU(0) does not exist (a structurally singular matrix, a zero pivot). Measured on an H100
/// (bench/RESULTS.md): BiCGSTAB with AMG 7x ILU(0) and 12x Jacobi on diffusion-dominated
/// convection-diffusion (Peclet 10, 1M rows), where convection-dominated grids (Peclet 100)
/// gain nothing from AMG or break it down; ILU(0) 1.1-1.4x faster than Jacobi to a solution on
/// convection-diffusion from 65K to 16M rows, 2.2x on adder_dcop_05, and it solves west0479
/// and impcol_a, where Jacobi diverges ("Incomplete factorizations"; fidapex6 is the
/// exception, 1.7x slower). `p` with rows = 0 (properties not computed): ILU(0).
inline preconditioner auto_precond_for(krylov_method m, preconditioner asked, const matrix_properties& p) {
  if (asked != preconditioner::automatic || m == krylov_method::cg) return asked;
  const bool nearly_symmetric = p.rows > 0 && p.pattern_symmetric && p.max_asymmetry <= 0.01;
  return nearly_symmetric && select_preconditioner(p.rows, p.nnz) == preconditioner::amg ? preconditioner::amg
                                                                                          : preconditioner::ilu0;
}

namespace detail {
/// auto's BiCGSTAB broke down (rho, r0'v or omega = 0): GMRES, which does not break down,
/// continues from its last iterate.
inline bool falls_back(krylov_method asked, const solve_result& r) {
  return asked == krylov_method::automatic && r.solver == krylov_method::bicgstab &&
         r.status == solve_status::breakdown && r.iterations > 0;
}
inline cg_options fallback_options(cg_options o, const solve_result& first) {
  o.method = krylov_method::gmres;
  if (o.max_iterations >= 0) o.max_iterations = std::max<std::int64_t>(0, o.max_iterations - first.iterations);
  return o;
}
inline solve_result after_fallback(solve_result first, solve_result second) {
  second.message = "bicgstab broke down after " + std::to_string(first.iterations) + " iterations (" + first.message +
                   "), so auto continued with gmres from its last iterate: " + second.message;
  second.method = "bicgstab then " + second.method;
  second.iterations += first.iterations;
  second.setup_seconds += first.setup_seconds;
  second.iterate_seconds += first.iterate_seconds;
  first.history.insert(first.history.end(), second.history.begin(), second.history.end());
  second.history = std::move(first.history);
  return second;
}

/// What solve_host and solve_device share: the method's choice from the matrix's properties
/// (`properties()` computes them, on the host or the device, only when the choice needs
/// them), the refusals (a matrix that is not square, CG on non-symmetric values, an SPD-only
/// preconditioner for another method), precond auto's meaning, and the fallback from a
/// broken-down auto BiCGSTAB to GMRES. `run(opt)` solves by opt.method; `where` names the
/// side in a refusal's result.
template <typename Properties, typename Run>
solve_result solve_by_method(index_t rows, index_t cols, cg_options opt, const char* where, Properties&& properties,
                             Run&& run) {
  const krylov_method asked = opt.method;
  const bool needs_props = opt.method == krylov_method::automatic || (opt.method == krylov_method::cg && !opt.force) ||
                           opt.precond == preconditioner::automatic;
  matrix_properties props;
  if (needs_props && rows == cols) props = properties();
  const method_choice mc =
      needs_props ? select_method(opt.method, props, opt.force) : method_choice{opt.method, "asked for", {}};
  solve_result r;
  r.solver = mc.method;
  r.method = where;
  if (rows != cols) {
    r.message = "matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                "; the Krylov solvers need a square matrix";
    return r;
  }
  if (!mc.refused.empty()) return r.message = mc.refused, r;
  if (std::string why = precond_for_method(opt.precond, mc.method); !why.empty()) return r.message = why, r;
  const bool auto_pc = opt.precond == preconditioner::automatic;
  opt.precond = auto_precond_for(mc.method, opt.precond, props);
  opt.method = mc.method;
  r = run(opt);
  if (auto_pc && opt.precond == preconditioner::ilu0 && r.status == solve_status::breakdown && r.iterations == 0 &&
      r.message.find("ilu0:") != std::string::npos) {  // ILU(0) does not exist: Jacobi, which does
    const std::string why = r.message;
    opt.precond = preconditioner::jacobi;
    r = run(opt);
    r.precond.detail = "auto: ILU(0) does not exist (" + why + "), so jacobi" +
                       (r.precond.detail.empty() ? std::string() : "; " + r.precond.detail);
  }
  if (falls_back(asked, r)) r = after_fallback(std::move(r), run(fallback_options(opt, r)));
  r.solver_choice = mc.why;
  return r;
}
}  // namespace detail

/// Solves A x = b on the host by opt.method (automatic: the rule above); x holds the initial
/// guess (resized to n zeros if empty). A refused method or preconditioner is invalid_input.
template <typename Matrix, typename T>
solve_result solve_host(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& opt) {
  auto properties = [&] {
    if constexpr (Matrix::kind == format::csr) return properties_of(a);
    else return properties_of(to_csr<count_t>(a));
  };
  return detail::solve_by_method(a.rows(), a.cols(), opt, "", properties, [&](const cg_options& o) {
    switch (o.method) {
      case krylov_method::bicgstab: return bicgstab_host(a, b, x, o);
      case krylov_method::gmres: return gmres_host(a, b, x, o, false);
      case krylov_method::fgmres: return gmres_host(a, b, x, o, true);
      default: {
        solve_result c = cg_host(a, b, x, o);
        c.method = "cg, " + c.method;
        return c;
      }
    }
  });
}

}  // namespace la
