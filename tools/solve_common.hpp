// What `la solve` shares between its one-GPU (or CPU) and several-GPU forms: the files a
// solve writes and the progress line.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <la/atomic_file.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/cg.hpp>
#include "args.hpp"

namespace la::cli {

/// The progress line: on stderr when it is a terminal, from about a second in, at most a
/// few times a second; erased when the solve ends. It reads what the solver's loop read
/// anyway (the control block between chunks), so it costs the device nothing.
class progress_line {
 public:
  explicit progress_line(bool on) : on_(on && isatty(2)) {}
  ~progress_line() { clear(); }
  void operator()(const cg_progress& p) {
    if (!on_ || p.seconds < 1.0 || p.seconds - shown_ < 0.25) return;
    shown_ = p.seconds;
    std::fprintf(stderr, "\r\033[Kiteration %lld  residual %.3e  %.0f it/s", static_cast<long long>(p.iteration),
                 p.residual, p.iteration / p.seconds);
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
    drawn_ = false;
  }

 private:
  bool on_;
  bool drawn_ = false;
  double shown_ = -1;
};

/// The files a solve writes, each opened (its temporary created) before anything is read.
struct solve_outputs {
  atomic_file* x = nullptr;        // -o
  atomic_file* history = nullptr;  // --history
  std::FILE* report = stdout;      // stderr when an output is stdout
  // Waits for the GPU's start-up, begun while the matrix was read, and returns the
  // milliseconds it took (empty: nothing was begun).
  std::function<double()> gpu_started;
};

/// Writes --history (every residual) and -o (the solution, when the solve converged or
/// --write-unconverged asks), and reports each on `rep`.
template <typename T>
void write_outputs(const args& a, const solve_result& r, const std::vector<T>& x, const solve_outputs& out,
                   index_t columns = 1) {
  std::FILE* rep = out.report;
  if (atomic_file* history = out.history) {
    std::string csv = "iteration,relative_residual\n";
    char line[64];
    for (std::size_t i = 0; i < r.history.size(); ++i)
      csv.append(line, std::snprintf(line, sizeof line, "%zu,%.17g\n", i + 1, r.history[i]));
    history->write(csv);
    history->commit();
    std::fprintf(rep, "history:    %zu residuals written to %s\n", r.history.size(), printable(history->path()).c_str());
  }
  if (!out.x) return;
  if (r.converged() || (a.has("--write-unconverged") && r.status != solve_status::invalid_input)) {
    out.x->write(format_matrix_market_vector(x, columns));  // n x k: the columns one after another
    out.x->commit();
    std::fprintf(rep, "solution:   written to %s%s\n", printable(out.x->path()).c_str(),
                 r.converged() ? "" : " (not converged: the last iterate, as --write-unconverged asks)");
  } else {
    std::fprintf(rep, "solution:   not written: the solve did not converge, so %s is left as it was "
                      "(--write-unconverged writes the last iterate)\n",
                 printable(out.x->path()).c_str());
  }
}

/// --factorization, --sweeps, --trisolve and --matching (ic0 and ilu0 only).
inline void factor_args(const args& a, const std::string& pc, factor_options& f) {
  if (a.has("--matching") && pc != "ilu0") throw usage_error("--matching applies to --precond ilu0");
  for (const char* o : {"--factorization", "--sweeps", "--trisolve"})
    if (a.has(o) && pc != "ic0" && pc != "ilu0") throw usage_error(std::string(o) + " applies to --precond ic0 or ilu0");
  const std::string fm = a.get_choice("--factorization", "auto", {"auto", "exact", "sweeps"});
  f.method = fm == "exact" ? factorization::exact : fm == "sweeps" ? factorization::sweeps : factorization::automatic;
  f.sweeps = static_cast<int>(a.get_int("--sweeps", 0, 1, 1000));
  if (a.has("--sweeps") && f.method == factorization::exact)
    throw usage_error("--sweeps applies to --factorization sweeps (or auto, which sweeps on the GPU)");
  const std::string ts = a.get("--trisolve", "auto");
  if (ts.rfind("jacobi", 0) == 0) {
    f.solve = trisolve::jacobi;
    if (ts.size() > 6) {
      const std::string k = ts.substr(ts[6] == ':' ? 7 : 6);
      char* end = nullptr;
      const long v = ts[6] == ':' && !k.empty() ? std::strtol(k.c_str(), &end, 10) : -1;
      if (v < 1 || v > 1000 || (end && *end))
        throw usage_error("option --trisolve jacobi:K needs K an integer in [1, 1000], got '" + printable(ts) + "'");
      f.jacobi_steps = static_cast<int>(v);
    }
  } else {
    const std::string c = a.get_choice("--trisolve", "auto", {"auto", "exact", "jacobi", "jacobi:K", "isai"});
    f.solve = c == "exact" ? trisolve::exact : c == "isai" ? trisolve::isai : trisolve::automatic;
  }
  const std::string m = a.get_choice("--matching", "auto", {"auto", "on", "off"});
  f.matching = m == "on" ? matching_mode::on : m == "off" ? matching_mode::off : matching_mode::automatic;
}

/// --amg-strength, --amg-degree, --amg-coarse, --amg-levels, --amg-cycle, --amg-smoother (amg only).
inline void amg_args(const args& a, const std::string& pc, amg_options& m) {
  for (const char* o : {"--amg-strength", "--amg-degree", "--amg-coarse", "--amg-levels", "--amg-cycle", "--amg-smoother"})
    if (a.has(o) && pc != "amg") throw usage_error(std::string(o) + " applies to --precond amg");
  m.strength = a.get_double("--amg-strength", m.strength, 0.0, 1.0);
  m.smoother_degree = static_cast<int>(a.get_int("--amg-degree", m.smoother_degree, 1, 10));
  m.coarse_size = static_cast<index_t>(a.get_int("--amg-coarse", m.coarse_size, 1, amg_dense_limit));
  m.max_levels = static_cast<int>(a.get_int("--amg-levels", m.max_levels, 1, 100));
  const std::string cy = a.get_choice("--amg-cycle", "v", {"v", "w", "f"});
  m.cycle = cy == "w" ? amg_cycle::w : cy == "f" ? amg_cycle::f : amg_cycle::v;
  m.smoother = a.get_choice("--amg-smoother", "chebyshev", {"chebyshev", "l1-jacobi"}) == "l1-jacobi"
                   ? amg_smoother::l1_jacobi
                   : amg_smoother::chebyshev;
}

/// The CG options every form of `la solve` reads the same way: tolerances, the iteration
/// limit, the preconditioner and its options (each refused where it does not apply).
inline cg_options cg_args(const args& a) {
  cg_options opt;
  opt.rtol = a.get_double("--tol", 1e-8, 0.0);
  opt.atol = a.get_double("--atol", 0, 0.0);
  opt.max_iterations = a.get_int("--maxit", -1, 0, std::numeric_limits<std::int64_t>::max());
  opt.method = *parse_method(a.get_choice("--method", "auto", {"auto", "cg", "bicgstab", "gmres", "fgmres"}));
  opt.restart = static_cast<int>(a.get_int("--restart", 30, 1, 500));
  if (a.has("--restart") && opt.method != krylov_method::gmres && opt.method != krylov_method::fgmres &&
      opt.method != krylov_method::automatic)
    throw usage_error("--restart applies to --method gmres or fgmres (or auto, when it picks gmres)");
  opt.force = a.has("--force");
  const std::string pc = a.get_choice("--precond", "auto", {"none", "jacobi", "block-jacobi", "fsai", "ic0", "ilu0", "amg", "auto"});
  opt.precond = *parse_preconditioner(pc);
  const bool fsai = pc == "fsai" || pc == "auto";
  for (const char* o : {"--fsai-pattern", "--fsai-drop", "--fsai-max-row"})
    if (a.has(o) && !fsai) throw usage_error(std::string(o) + " applies to --precond fsai (or auto)");
  if (a.has("--ic-shift") && pc != "ic0") throw usage_error("--ic-shift applies to --precond ic0");
  if (a.has("--block-size") && pc != "block-jacobi") throw usage_error("--block-size applies to --precond block-jacobi");
  opt.precond_opt.fsai.pattern = a.get_choice("--fsai-pattern", "lower", {"lower", "squared"}) == "squared"
                                     ? fsai_pattern::lower_squared
                                     : fsai_pattern::lower;
  opt.precond_opt.fsai.drop = a.get_double("--fsai-drop", 0, 0.0);
  opt.precond_opt.fsai.max_row = static_cast<int>(a.get_int("--fsai-max-row", 64, 0, 100000));
  if (a.has("--fsai-drop") && opt.precond_opt.fsai.pattern != fsai_pattern::lower_squared)
    throw usage_error("--fsai-drop applies to --fsai-pattern squared");
  opt.precond_opt.max_shift = a.get_double("--ic-shift", 1, 0.0);
  factor_args(a, pc, opt.precond_opt.factor);
  amg_args(a, pc, opt.precond_opt.amg);
  opt.precond_opt.max_block = static_cast<int>(a.get_int("--block-size", 32, 1, 32));
  return opt;
}

/// la solve's options (cmd_solve.cpp, and the multi-GPU module, which parses them again).
inline args solve_args(int argc, char** argv) {
  return args(argc, argv, 2,
              {"--rhs", "-o", "--output", "--tol", "--atol", "--maxit", "--method", "--restart", "--precond", "--device", "--format",
               "--precision", "--threads", "--offsets", "--path", "--history", "--fsai-pattern", "--fsai-drop",
               "--ic-shift", "--block-size", "--gpus", "--fsai-max-row", "--factorization", "--sweeps", "--trisolve",
               "--matching", "--amg-strength", "--amg-degree", "--amg-coarse", "--amg-levels", "--amg-cycle", "--amg-smoother"},
              {"--force", "--quiet", "--write-unconverged", "--mpi"});
}

/// The distributed solve (solve_dist.cpp): `--gpus N` (one process, N GPUs) or `--mpi` (one
/// rank per GPU). It opens the output files itself, on rank 0 only (the rank that writes).
int solve_distributed(const args& a, const std::vector<std::string>& inputs);

}  // namespace la::cli
