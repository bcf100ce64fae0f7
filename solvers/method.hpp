// Which Krylov method a matrix gets: its numeric properties (symmetry of the values, the
// signs of the diagonal, diagonal dominance), the rule that picks a method from them, and
// the solve that takes the method from cg_options on the host (solve_host; solve_device in
// device_solve.hpp takes it the same way). The properties themselves: matrix_properties.hpp.
//
// The rule (select_method): CG when the values are symmetric (the largest |a_ij - a_ji| at
// most 1e-12 of the largest |a_ij|) and every diagonal entry is positive; otherwise BiCGSTAB,
// which solved 4 of the 9 real non-symmetric matrices of the benchmark set where GMRES(30)
// solved 1 (PETSc's counts and la's, bench/RESULTS.md "Non-symmetric systems"). CG asked for on a matrix
// whose values are not symmetric is refused with the alternative named unless
// cg_options::force is set. When auto's BiCGSTAB breaks down (rho, r0'v or omega = 0: a
// symmetric indefinite matrix can do that at the first step), stagnates or diverges, or auto's
// CG breaks down (p'Ap <= 0), GMRES continues, and the result says so (detail::falls_back).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>

#include <la/formats/convert.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/matrix_properties.hpp>
#include <la/solvers/precond.hpp>
#include <la/solvers/registry.hpp>
#include <la/solvers/sparse_analysis.hpp>

namespace la {

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
                ": use {method} gmres or bicgstab (or auto), or {force} to run CG anyway";
  return c;
}

/// Whether preconditioner `p` serves method `m` with these options: what its entry refuses
/// (AMG's F-cycle for CG; an inner solve for a method that is not flexible), and for a method
/// that is not CG whether the non-symmetric methods take it; the refusal names those that do.
inline std::string precond_for_method(preconditioner p, krylov_method m, const cg_options& opt) {
  const preconditioner_entry& pe = entry_of(p);
  if (pe.refuses)
    if (std::string why = pe.refuses(m, opt); !why.empty()) return why;
  if (!pe.fixed) return {};  // a changing M^-1: refuses() said which methods take it
  if (m == krylov_method::cg || m == krylov_method::automatic || pe.nonsymmetric_methods) return {};
  std::vector<std::string_view> taken;
  for (const preconditioner_entry& e : preconditioners())
    if (e.nonsymmetric_methods && e.fixed && e.kind != preconditioner::automatic) taken.push_back(e.name);
  std::string list;
  for (std::size_t i = 0; i < taken.size(); ++i)
    list += (i == 0 ? "" : i + 1 == taken.size() ? " or " : ", ") + std::string(taken[i]);
  return std::string(to_string(p)) + " is built for symmetric positive definite matrices (CG); with " + to_string(m) +
         " use " + list + " (or auto)";
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
inline preconditioner auto_precond_for(krylov_method m, preconditioner asked, const matrix_properties& p,
                                       bool gpu = true) {
  if (asked != preconditioner::automatic || m == krylov_method::cg) return asked;
  const bool nearly_symmetric = p.rows > 0 && p.pattern_symmetric && p.max_asymmetry <= 0.01;
  return nearly_symmetric && select_preconditioner(p.rows, p.nnz, gpu) == preconditioner::amg ? preconditioner::amg
                                                                                               : preconditioner::ilu0;
}

/// Where `--device auto` (and Python's device='auto') solves when a GPU is present: on the host
/// when the host's estimated time is below the GPU's start-up (115-150 ms on an H100 or H200 for
/// the context, before any work; bench/history/defaults-the-host-solver-and-the-sanitiz.md, "Defaults on the host"), since the host then
/// has the answer before the GPU is ready. The estimate: 4 ns per stored entry an iteration (the
/// host's FSAI-CG measured 3.5, unpreconditioned CG 1.7) times max(100, 2 sqrt(n)) iterations,
/// and the host is taken below 50 ms, a third of the start-up, for the iterations it misjudges.
struct device_choice {
  bool host = false;
  double host_estimate_ms = 0;
  std::string why;  // for a person, when host
};
/// The host's Krylov time estimate (seconds): 4 ns per stored entry and iteration.
inline double host_krylov_seconds(std::int64_t nnz, double iterations) { return 4e-9 * static_cast<double>(nnz) * iterations; }
inline device_choice choose_device(std::int64_t rows, std::int64_t nnz) {
  device_choice c;
  const double iterations = std::max(100.0, 2 * std::sqrt(static_cast<double>(std::max<std::int64_t>(rows, 0))));
  c.host_estimate_ms = 1e3 * host_krylov_seconds(nnz, iterations);
  c.host = c.host_estimate_ms < 50;
  if (c.host)
    c.why = "a GPU is present, but this system is small: the host's estimated " + short_number(c.host_estimate_ms) +
            " ms is below the GPU's start-up of about 150 ms ({device} gpu uses it anyway)";
  return c;
}

namespace detail {
/// auto's BiCGSTAB broke down (rho, r0'v or omega = 0), stagnated or diverged, or auto's CG
/// broke down (p'Ap <= 0: a symmetric matrix with a positive diagonal that is not positive
/// definite): GMRES, whose residual never grows and which breaks down only on a singular A,
/// continues. A skew-symmetric A (r0'A r0 = 0 to rounding) shows as a divergence, not as an
/// exact breakdown.
inline bool falls_back(krylov_method asked, const solve_result& r) {
  if (asked != krylov_method::automatic || r.iterations == 0 || r.precond_failed) return false;
  if (r.solver == krylov_method::cg) return r.status == solve_status::breakdown;
  return r.solver == krylov_method::bicgstab &&
         (r.status == solve_status::breakdown || r.status == solve_status::stagnation);
}
/// Whether GMRES continues from the first method's last iterate (BiCGSTAB broke down, or
/// stagnated with the residual no larger than ||b||) or from the initial guess (BiCGSTAB
/// diverged; CG's iterate on an indefinite A minimizes nothing).
inline bool continues_from_iterate(const solve_result& r) {
  if (r.solver == krylov_method::cg) return false;
  return r.status == solve_status::breakdown || (std::isfinite(r.residual) && r.residual <= 1);
}
inline std::string what_happened(const solve_result& r) {
  if (r.solver == krylov_method::cg) return "broke down (A is not positive definite)";
  return r.status == solve_status::breakdown ? "broke down"
         : continues_from_iterate(r)         ? "stagnated"
                                             : "diverged";
}
/// GMRES's options after the first method: the iterations left, and a preconditioner GMRES
/// takes (auto's rule for it where the first had auto's pick or an SPD-only one).
inline cg_options fallback_options(cg_options o, const solve_result& first, bool auto_pc,
                                   const matrix_properties& props, bool gpu) {
  o.method = krylov_method::gmres;
  if (auto_pc || !precond_for_method(o.precond, krylov_method::gmres, o).empty())
    o.precond = auto_precond_for(krylov_method::gmres, preconditioner::automatic, props, gpu);
  if (o.max_iterations >= 0) o.max_iterations = std::max<std::int64_t>(0, o.max_iterations - first.iterations);
  return o;
}
inline solve_result after_fallback(solve_result first, solve_result second) {
  const std::string name = to_string(first.solver);
  second.message = name + " " + what_happened(first) + " after " + std::to_string(first.iterations) +
                   " iterations (" + first.message + "), so auto continued with gmres from " +
                   (continues_from_iterate(first) ? "its last iterate" : "the initial guess") + ": " + second.message;
  second.method = name + " then " + second.method;
  second.handed_over_from = first.solver;
  second.iterations += first.iterations;
  second.setup_seconds += first.setup_seconds;
  second.iterate_seconds += first.iterate_seconds;
  first.history.insert(first.history.end(), second.history.begin(), second.history.end());
  second.history = std::move(first.history);
  return second;
}

/// The most rows for which auto, its Krylov methods having stopped short, solves directly.
/// double (the sparse direct solver; its analysis checks that the factor fits, and a factor
/// that does not leaves the Krylov result as it was): 1,000,000 rows on the GPU (a 1M-row 2D
/// grid factors in 1.7 s on an H200), 200,000 on the host. float (A's dense form): n^2
/// values three times in GPU memory (32,768 rows: 26 GB), 16,384 on the host (O(n^3) on a few
/// cores).
inline index_t auto_direct_rows(bool gpu, bool sparse = false) {
  return sparse ? (gpu ? 1000000 : 200000) : (gpu ? 32768 : 16384);
}
/// Whether auto continues with the direct method: the Krylov result did not converge (an
/// iteration limit only when it was the default one, not the caller's; not where a
/// preconditioner asked for by name does not exist, which the caller hears about), and A fits.
inline bool direct_after_krylov(krylov_method asked, const cg_options& opt, const solve_result& r, index_t rows, bool gpu,
                                bool auto_precond, bool sparse = false) {
  if (asked != krylov_method::automatic || rows > auto_direct_rows(gpu, sparse) || (r.precond_failed && !auto_precond))
    return false;
  switch (r.status) {
    case solve_status::breakdown:
    case solve_status::stagnation:
    case solve_status::precision_limit: return true;
    case solve_status::max_iterations: return opt.max_iterations < 0;
    default: return false;  // converged, invalid input, non-finite input or solution
  }
}

/// The sparse analysis of A's pattern for auto's direct-first rule on small SPD systems (its
/// predicted multiply-adds), ordered as the host's direct method orders (its flop rate); null
/// where no analysis is possible (a build without ordering libraries).
template <typename Matrix>
std::shared_ptr<const sparse_analysis> spd_analysis_of(const Matrix& a) {
  try {
    const double rate = 1e9 * thread_count();  // direct_host's
    if constexpr (Matrix::kind == format::csr) return std::make_shared<sparse_analysis>(analyze_pattern(a, fill_ordering::automatic, rate));
    else return std::make_shared<sparse_analysis>(analyze_pattern(to_csr<count_t>(a), fill_ordering::automatic, rate));
  } catch (const error&) {
    return nullptr;
  }
}

/// The preconditioner a kept solver (host_solver, device_solver) applies for a run of o: auto
/// resolved as the solvers resolve it for CG (select_preconditioner), and where auto's pick
/// (`resolved`) did not exist for A at setup, what the setup built instead (`built`). Whether
/// the kept one serves is `result == built`.
inline preconditioner kept_precond(const cg_options& o, std::int64_t rows, std::int64_t nnz, bool gpu, preconditioner resolved,
                                   preconditioner built) {
  preconditioner k = o.precond;
  if (k == preconditioner::automatic && o.method == krylov_method::cg) k = select_preconditioner(rows, nnz, gpu);
  return k == resolved && resolved != built ? built : k;
}

/// What host_solver and device_solver share once they have A's properties (`needs`: the
/// method's choice reads them): the method's choice and refusals (la::invalid_argument with the
/// solvers' words), precond auto resolved by the rule for `gpu`, and build(), retried where
/// auto's pick does not exist for A with Jacobi, or none for CG, as solve_by_method's auto.
/// opt then holds the method and the preconditioner built (force set: checked here); returns
/// why that method.
template <typename Build>
std::string set_up(cg_options& opt, const matrix_properties& props, bool needs, bool gpu, Build&& build) {
  const method_choice mc = needs ? select_method(opt.method, props, opt.force) : method_choice{opt.method, "asked for", {}};
  if (!mc.refused.empty()) throw invalid_argument(mc.refused);
  if (std::string why = precond_for_method(opt.precond, mc.method, opt); !why.empty()) throw invalid_argument(why);
  opt.method = mc.method;
  opt.force = true;  // the solves skip the properties
  const bool auto_pc = opt.precond == preconditioner::automatic;
  opt.precond = auto_precond_for(mc.method, opt.precond, props, gpu);
  if (opt.precond == preconditioner::automatic) opt.precond = select_preconditioner(props.rows, props.nnz, gpu);
  if (opt.max_iterations == 0) opt.precond = preconditioner::none;  // no iteration applies it
  try {
    build();
  } catch (const invalid_argument&) {
    if (!auto_pc) throw;
    opt.precond = mc.method == krylov_method::cg ? preconditioner::none : preconditioner::jacobi;
    build();
  }
  return mc.why;
}

/// The most nonzeros of an SPD A for which auto asks the sparse analysis (cg_options::
/// auto_direct_flops): its time is wasted where CG then runs (0.26 ms on gr_30_30's 7,744
/// nonzeros on the 2-core host, a third of CG's whole solve; every SPD system measured where
/// direct won has at most 4,356).
constexpr std::int64_t auto_direct_spd_nnz = 5000;
/// The most nonzeros of a non-SPD A that auto's direct-first rule takes without asking the
/// analysis what the factorization costs (below it the factor is cheap whatever the pattern).
constexpr std::int64_t direct_cost_nnz = 20000;

/// auto's direct-first rules (solve_by_method's comment says what was measured): why the
/// direct method goes first for this A, or "" where it does not. Where the SPD rule takes it,
/// opt.spd_analysis holds the analysis it made (the direct method's setup reuses it).
/// `spd_analysis()` analyzes A's pattern (null: no ordering library).
template <typename SpdAnalysis>
std::string direct_first_why(krylov_method asked, const method_choice& mc, cg_options& opt, const matrix_properties& props,
                             index_t rows, bool sparse_direct, bool auto_pc, SpdAnalysis&& spd_analysis, bool gpu) {
  if (asked != krylov_method::automatic || !sparse_direct || !auto_pc) return {};
  if (mc.method != krylov_method::cg && rows <= opt.auto_direct_rows) {
    const std::string why = mc.why.substr(0, mc.why.rfind(':')) + ", and " + std::to_string(rows) + " rows (at most " +
                            std::to_string(opt.auto_direct_rows) + ", {auto-direct-rows})";
    // Unless the analysis predicts the factorization far dearer than the Krylov methods' usual
    // cost (choose_device's estimate): a 3D convection-diffusion grid of 19,683 rows factored
    // in 0.38 s on the 2-core host where BiCGSTAB took 0.03 s. Only where A's own pattern
    // predicts the factor's (a zero-free diagonal: the matching keeps it) and A is big enough
    // for the analysis to matter (more than direct_cost_nnz entries).
    if (props.diag_zero == 0 && props.nnz > direct_cost_nnz) {
      std::shared_ptr<const sparse_analysis> an = spd_analysis();
      if (an) {
        // The LU's multiply-adds (twice the symmetric count) at 1e10 a second on the host
        // (UMFPACK and CHOLMOD on OpenBLAS, 2 cores: 1.4e10 measured) or 2e11 on the GPU.
        // The Krylov methods' iterations: choose_device's max(100, 2 sqrt(n)), or 30 where every
        // row is diagonally dominant (BiCGSTAB took 12 on convdiff3d:27, whose rows all are).
        const double direct_s = 2 * an->factor_flops / (gpu ? 2e11 : 1e10);
        const bool dominant = props.dominant_rows == rows;
        const double its = dominant ? 30.0 : std::max(100.0, 2 * std::sqrt(static_cast<double>(rows)));
        const double krylov_s = gpu ? 2e-10 * double(props.nnz) * its + 2e-5 * its : host_krylov_seconds(props.nnz, its);
        if (direct_s > 2 * krylov_s)
          return {};  // (solve_by_method's Krylov path, direct still its fallback)
      }
    }
    return why + ": the direct method first";
  }
  if (mc.method == krylov_method::cg && opt.auto_direct_flops > 0 && props.nnz <= auto_direct_spd_nnz) {
    std::shared_ptr<const sparse_analysis> an = spd_analysis();  // null: no analysis (no ordering library)
    if (an && an->factor_flops <= opt.auto_direct_flops) {
      std::string why = mc.why.substr(0, mc.why.rfind(':')) + ", and the analysis predicts its factorization at " +
                        short_number(an->factor_flops) + " multiply-adds (at most " + short_number(opt.auto_direct_flops) +
                        ", {auto-direct-flops}): the direct method first";
      opt.spd_analysis = std::move(an);
      return why;
    }
  }
  return {};
}

/// What solve_host and solve_device share: the method's choice from the matrix's properties
/// (`properties()` computes them, on the host or the device, only when the choice needs
/// them), the refusals (a matrix that is not square, CG on non-symmetric values, an SPD-only
/// preconditioner for another method), precond auto's meaning, and the fallback from a
/// broken-down auto BiCGSTAB to GMRES. `run(opt)` solves by opt.method; `where` names the
/// side in a refusal's result; `spd_analysis()` analyzes A's pattern (spd_analysis_of) for
/// the direct-first rule on small SPD systems.
template <typename Properties, typename Run, typename KeepGuess, typename SpdAnalysis>
solve_result solve_by_method(index_t rows, index_t cols, cg_options opt, const char* where, Properties&& properties,
                             Run&& run, KeepGuess&& keep_guess, SpdAnalysis&& spd_analysis, bool sparse_direct = false) {
  const krylov_method asked = opt.method;
  const bool needs_props = opt.method == krylov_method::automatic || (opt.method == krylov_method::cg && !opt.force) ||
                           opt.precond == preconditioner::automatic;
  matrix_properties props;
  const auto t_analysis = std::chrono::steady_clock::now();
  if (needs_props && rows == cols) props = properties();
  const double analysis_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_analysis).count();
  const method_choice mc =
      needs_props ? select_method(opt.method, props, opt.force) : method_choice{opt.method, "asked for", {}};
  solve_result r;
  r.solver = mc.method;
  r.method = where;
  if (rows != cols) {
    r.message = "matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + "; " +
                (asked == krylov_method::direct ? std::string("the direct method needs") : std::string("the solvers need")) +
                " a square matrix (least squares is not supported)";
    return r;
  }
  if (!mc.refused.empty()) return r.message = mc.refused, r;
  if (std::string why = precond_for_method(opt.precond, mc.method, opt); !why.empty()) return r.message = why, r;
  const bool auto_pc = opt.precond == preconditioner::automatic;
  opt.precond = auto_precond_for(mc.method, opt.precond, props, where[0] != '\0');
  opt.method = mc.method;
  // No iteration applies M^-1 under {maxit} 0 (the initial residual only): none is built (an
  // ILU(0) matching or AMG setup would be time spent on nothing).
  if (opt.max_iterations == 0) opt.precond = preconditioner::none;
  // auto's first method may hand over to GMRES from the initial guess: keep it (restore() puts it back).
  if (asked == krylov_method::automatic) keep_guess(false);
  // auto on a small double A that does not look SPD (at most opt.auto_direct_rows rows): the
  // direct method first; where it does not solve A (singular, a factor that does not fit),
  // the Krylov methods as before. Measured on an H200 and a 2-core host (bench/RESULTS.md,
  // "Sparse direct solver"): on every real non-symmetric system of up to 13,436 rows direct
  // was 2-280x faster than auto's Krylov methods (west2021 7.8 ms against 2.2 s, bayer10 80
  // ms against 1.8 s, adder_dcop_05 8 ms against 82 ms); where the Krylov methods won (arrow,
  // 46,500 rows; convection-diffusion 512^2) A was larger. An SPD A stays with CG, which won
  // on the SPD systems above 1,000 rows, except where it is small (at most auto_direct_spd_nnz
  // nonzeros) and the sparse analysis predicts its factorization at most
  // opt.auto_direct_flops multiply-adds: measured on the H200 machine (bench/RESULTS.md), auto's
  // CG took 1.3-2.5x direct's time on the SPD systems predicted at 1e3-1e5 (bcsstk01-05,
  // 494_bus, 662_bus, Trefethen_20b: CG's setup dominates) and was ahead from 4e5 (gr_30_30,
  // bcsstk10 and up; Trefethen_2000, 6.8e8, 9x). A preconditioner asked for by name means a
  // Krylov solve: neither rule applies then.
  std::string direct_first;
  double direct_first_seconds = 0;  // charged to the Krylov result where the direct method did not solve A
  const std::string direct_why = direct_first_why(asked, mc, opt, props, rows, sparse_direct, auto_pc, spd_analysis, where[0] != '\0');
  if (!direct_why.empty()) {
    cg_options d = opt;
    d.method = krylov_method::direct;
    opt.spd_analysis.reset();
    std::string why;
    try {
      solve_result dr = run(d);
      if (dr.status == solve_status::converged) {
        dr.solver_choice = direct_why;
        dr.analysis_seconds = analysis_seconds;
        return dr;
      }
      why = std::string(to_string(dr.status)) + ": " + dr.message;
      direct_first_seconds = dr.setup_seconds + dr.iterate_seconds;
    } catch (const error& e) {  // out_of_memory (GPU) or insufficient_memory (host): the factor does not fit
      if (!dynamic_cast<const out_of_memory*>(&e) && !dynamic_cast<const insufficient_memory*>(&e)) throw;
      why = e.what();
    }
    keep_guess(true);
    direct_first = "; the direct method, tried first (" +
                   std::string(mc.method == krylov_method::cg ? "{auto-direct-flops}" : "{auto-direct-rows}") +
                   "), did not solve A (" + why + "), so " + to_string(mc.method);
  }
  r = run(opt);
  r.setup_seconds += direct_first_seconds;
  if (auto_pc && r.precond_failed && r.iterations == 0) {
    // What auto picked does not exist for A (ILU(0) with a zero pivot, FSAI on a matrix that
    // is not SPD): Jacobi for the methods that take a zero diagonal as 1, none for CG, whose
    // own breakdown then says what A is.
    const std::string why = r.message;
    const preconditioner tried = opt.precond != preconditioner::automatic
                                     ? opt.precond
                                     : select_preconditioner(props.rows, props.nnz, where[0] != '\0');
    const std::string name(entry_of(tried).title);
    opt.precond = mc.method == krylov_method::cg ? preconditioner::none : preconditioner::jacobi;
    const double tried_seconds = r.setup_seconds;
    r = run(opt);
    r.setup_seconds += tried_seconds;
    r.precond.detail = "auto: " + name + " does not exist (" + why + "; " + short_number(1e3 * tried_seconds) +
                       " ms spent finding out), so " + to_string(opt.precond) +
                       (r.precond.detail.empty() ? std::string() : "; " + r.precond.detail);
  }
  std::string then;
  if (falls_back(asked, r)) {
    then = "; " + std::string(to_string(r.solver)) + " " + what_happened(r) + ", so gmres(" +
           std::to_string(opt.restart) + ") continued";
    if (!continues_from_iterate(r)) keep_guess(true);
    r = after_fallback(std::move(r), run(fallback_options(opt, r, auto_pc, props, where[0] != '\0')));
  }
  then = direct_first + then;
  if (direct_first.empty() && direct_after_krylov(asked, opt, r, rows, where[0] != '\0', auto_pc, sparse_direct)) {
    // auto's Krylov methods did not solve it: the direct method, which solves every
    // non-singular system whose factor it can hold (bayer10, rajat19, west2021: the Krylov
    // methods fail where a direct solve takes milliseconds; bench/RESULTS.md). A factor that
    // does not fit leaves the Krylov result, saying so.
    const solve_result first = r;
    cg_options d = opt;
    d.method = krylov_method::direct;
    keep_guess(false);  // the Krylov iterate, put back where the factor does not fit (direct ignores x's guess)
    try {
      r = run(d);
    } catch (const error& e) {  // out_of_memory (GPU) or insufficient_memory (host): the factor does not fit
      if (!dynamic_cast<const out_of_memory*>(&e) && !dynamic_cast<const insufficient_memory*>(&e)) throw;
      keep_guess(true);
      r = first;
      r.solver_choice = mc.why + then + "; " + std::string(to_string(first.solver)) + " stopped and the direct method's factor " +
                        "does not fit (" + e.what() + ")";
      return r;
    }
    then += "; " + std::string(to_string(first.solver)) + " stopped (" + to_string(first.status) + " after " +
            std::to_string(first.iterations) + " iterations), and " +
            (sparse_direct ? std::string("its sparse factor fits") : "A's dense form fits (" + std::to_string(rows) + " rows)") +
            ", so auto solved it directly";
    r.message = "auto's " + first.method + " stopped: " + first.message + "; solved directly: " + r.message;
    r.method = first.method + " then " + r.method;
    r.handed_over_from = first.solver;
    r.setup_seconds += first.setup_seconds;
    r.iterate_seconds += first.iterate_seconds;
  }
  r.solver_choice = mc.why + then;
  r.analysis_seconds = analysis_seconds;
  return r;
}
}  // namespace detail

namespace detail {
/// Runs o.method itself on the host through its registry entry's host solver, on A's own
/// format (no auto rules: solve_by_method applies them; auto itself has no solver).
template <typename Matrix, typename T>
solve_result run_host_method(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  const host_method_solver<T> f = entry_of(o.method).solvers.host<T>();
  LA_EXPECTS(f != nullptr, std::string("{method} ") + to_string(o.method) + " has no host solver (auto is resolved first)");
  return f(host_matrix_ref<T>(a), b, x, o);
}
}  // namespace detail

/// Solves A x = b on the host by opt.method (automatic: the rule above); x holds the initial
/// guess (resized to n zeros if empty). A refused method or preconditioner is invalid_input.
/// Thread safety: calls on different data may run at once on different threads (each call
/// owns its workspace; the registry is read only).
template <typename Matrix, typename T>
solve_result solve_host(const Matrix& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& opt) {
  auto properties = [&] {
    if constexpr (Matrix::kind == format::csr) return properties_of(a, opt.known_symmetric, true);
    else return properties_of(to_csr<count_t>(a), opt.known_symmetric, true);
  };
  std::vector<T> x0;
  return detail::solve_by_method(
      a.rows(), a.cols(), opt, "", properties, [&](const cg_options& o) { return detail::run_host_method(a, b, x, o); },
      [&](bool restore) {
        if (restore) x = x0.empty() ? std::vector<T>(b.size(), T(0)) : x0;
        else x0 = x;
      },
      [&] { return detail::spd_analysis_of(a); }, std::is_same_v<T, double>);
}

}  // namespace la
