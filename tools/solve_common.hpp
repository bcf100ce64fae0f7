// What `la solve` shares between its one-GPU (or CPU) and several-GPU forms: the files a
// solve writes and the progress line.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <complex>
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
#include "solve_options.hpp"

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

/// The report's status, residual and (b = A * ones, `known`) error lines, for real and complex x.
template <typename T>
void report_outcome(std::FILE* rep, const solve_result& r, bool known, const std::vector<T>& x) {
  std::fprintf(rep, "status:     %s after %lld iterations (%s)\n", to_string(r.status),
               static_cast<long long>(r.iterations), r.message.c_str());
  if (std::isnan(r.true_residual))
    std::fprintf(rep, "residual:   not computed (%s)\n", to_string(r.status));
  else
    std::fprintf(rep, "residual:   %.3e relative (recurrence), true ||b-Ax||/||b|| = %.3e\n", r.residual,
                 r.true_residual);
  if (known && r.status != solve_status::invalid_input) {
    double e2 = 0;
    for (const T& v : x) {
      if constexpr (is_complex_v<T>) e2 += std::norm(std::complex<double>(v) - 1.0);
      else e2 += (double(v) - 1.0) * (double(v) - 1.0);
    }
    std::fprintf(rep, "error:      ||x - ones|| / ||ones|| = %.3e\n", x.empty() ? 0.0 : std::sqrt(e2 / double(x.size())));
  }
}

/// la solve's options (cmd_solve.cpp, and the multi-GPU module, which parses them again).
inline args solve_args(int argc, char** argv) {
  return args(argc, argv, 2, solve_option_names(false), solve_option_names(true));
}

/// The distributed solve (solve_dist.cpp): `--gpus N` (one process, N GPUs) or `--mpi` (one
/// rank per GPU). It opens the output files itself, on rank 0 only (the rank that writes).
int solve_distributed(const args& a, const std::vector<std::string>& inputs);

using clock_type = std::chrono::steady_clock;
inline double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// True for a complex input: a file of field complex, or gen:helmholtz2d/3d (solve_complex.cpp).
bool complex_input(const std::string& input);
/// la solve on a complex input, on the host (solve_complex.cpp); the exit status.
int solve_complex(const args& a, const std::string& device, const solve_outputs& out);

}  // namespace la::cli
