#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/la/atomic_file.hpp>
#include <la/la/context.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/host_backend.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"
#include "spmv_suite.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la solve A.mtx [options]\n"
    "       la solve gen:poisson2d:N | gen:poisson3d:N [options]\n"
    "\n"
    "Solves A x = b by conjugate gradients (A symmetric positive definite), on the GPU when\n"
    "there is one. A generated system is the 5- or 7-point Laplacian on an N^2 or N^3 grid.\n"
    "  --rhs b.mtx           right-hand side (n x 1 Matrix Market); default b = A * ones,\n"
    "                        so the error against the known solution x = ones is printed\n"
    "  -o, --output x.mtx    write the solution (array n x 1); checked before the solve, written\n"
    "                        through a temporary file (a failed run leaves x.mtx as it was);\n"
    "                        refused when it is the matrix or right-hand side file\n"
    "  --force               allow -o to replace the matrix or right-hand side file\n"
    "  --tol T               relative residual tolerance ||r|| <= T ||b|| (default 1e-8)\n"
    "  --atol T              absolute residual floor (default 0)\n"
    "  --maxit N             iteration limit (default 2n)\n"
    "  --precond P           none (default) or jacobi\n"
    "  --device D            auto (default: the GPU when one is present), cpu or gpu\n"
    "  --format F            storage for the solve: auto (default; on the GPU the format and\n"
    "                        kernel chosen from the row lengths, on the CPU csr), csr, coo,\n"
    "                        csc, ell, jds, hyb, sell, dense\n"
    "  --precision P         double (default) or float\n"
    "  --path P              GPU iteration: auto (default: persistent when the system fits in\n"
    "                        half the L2 cache, else graph), graph, persistent, plain\n"
    "  --history FILE.csv    write the residual of every iteration (iteration,relative_residual)\n"
    "  --quiet               no progress line (shown only on a terminal, after about a second)\n"
    "%s"
    "Exit status: 0 converged; 1 not converged (iteration limit, breakdown because A is not\n"
    "SPD, non-finite values); 2 bad usage or input; 3 CUDA or internal failure.\n";

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// Calls f(matrix) with the CSR matrix converted to the named format (same offset width).
template <typename T, typename O, typename F>
auto with_format(const std::string& fmt, const csr_matrix<T, O>& a, F&& f) {
  if (fmt == "coo") return f(to_coo(a));
  if (fmt == "csc") return f(to_csc<O>(a));
  if (fmt == "ell") return f(to_ell(a));
  if (fmt == "jds") return f(to_jds<O>(a));
  if (fmt == "hyb") return f(to_hyb(a));
  if (fmt == "sell") return f(to_sell<O>(a));
  if (fmt == "dense") return f(to_dense(a));
  return f(a);
}

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

cg_path path_option(const args& a) {
  const std::string p = a.get_choice("--path", "auto", {"auto", "graph", "persistent", "plain"});
  return p == "graph" ? cg_path::graph : p == "persistent" ? cg_path::persistent : p == "plain" ? cg_path::plain
                                                                                                 : cg_path::automatic;
}

/// The files a solve writes, each opened (its temporary created) before anything is read.
struct solve_outputs {
  atomic_file* x = nullptr;        // -o
  atomic_file* history = nullptr;  // --history
};

template <typename T, typename O>
int solve(const args& a, bool gpu, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms,
          const solve_outputs& out);

template <typename T>
int solve(const args& a, bool gpu, const std::string& device_line, const solve_outputs& out) {
  auto t0 = clock_type::now();
  const std::string& in = a.positional()[0];
  if (in.rfind("gen:", 0) == 0) {  // a generated SPD system: gen:poisson2d:N, gen:poisson3d:N
    const std::string spec = in.substr(4);
    if (spec.rfind("poisson", 0) != 0)
      throw usage_error("'" + in + "': la solve generates gen:poisson2d:N and gen:poisson3d:N (SPD)");
    return solve(a, gpu, device_line, generated_matrix<T>(spec), ms_since(t0), out);
  }
  return with_csr_file<T>(a.positional()[0], a,
                          [&](const auto& A) { return solve(a, gpu, device_line, A, ms_since(t0), out); });
}

template <typename T, typename O>
int solve(const args& a, bool gpu, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms,
          const solve_outputs& out) {
  const std::string path = a.positional()[0];
  const std::string fmt =
      a.get_choice("--format", "auto", {"auto", "csr", "coo", "csc", "ell", "jds", "hyb", "sell", "dense"});

  cg_options opt;
  opt.rtol = a.get_double("--tol", 1e-8, 0.0);
  opt.atol = a.get_double("--atol", 0, 0.0);
  opt.max_iterations = a.get_int("--maxit", -1, 0, std::numeric_limits<std::int64_t>::max());
  opt.precond = a.get_choice("--precond", "none", {"none", "jacobi"}) == "jacobi" ? preconditioner::jacobi
                                                                                 : preconditioner::none;
  opt.record_history = out.history != nullptr;
  progress_line progress(!a.has("--quiet"));
  opt.progress = [&](const cg_progress& p) { progress(p); };
  const cg_path cg_path_choice = path_option(a);

  if (A.rows() != A.cols())
    throw invalid_argument("'" + path + "' is " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) +
                           "; CG needs a square (symmetric positive definite) matrix");
  const bool known = !a.has("--rhs");
  std::vector<T> b;
  if (known) {
    b.assign(static_cast<std::size_t>(A.rows()), T(0));
    reference::spmv(T(1), A, std::vector<T>(b.size(), T(1)), T(0), b);
  } else {
    b = read_matrix_market_vector<T>(a.get("--rhs", ""));
    if (b.size() != static_cast<std::size_t>(A.rows()))
      throw invalid_argument("right-hand side has " + std::to_string(b.size()) + " entries but A has " +
                             std::to_string(A.rows()) + " rows");
  }

  std::printf("matrix:     %s (%d x %d, %lld nonzeros, %d-bit offsets), %s\n", path.c_str(), A.rows(), A.cols(),
              static_cast<long long>(A.nnz()), int(8 * sizeof(O)), sizeof(T) == 8 ? "double" : "float");
  std::printf("device:     %s\n", device_line.c_str());
  std::printf("rhs:        %s\n", known ? "b = A * ones (known solution x = ones)" : a.get("--rhs", "").c_str());
  std::printf("precond:    %s, tol %g, maxit %s\n", to_string(opt.precond), opt.rtol,
              opt.max_iterations < 0 ? "2n" : std::to_string(opt.max_iterations).c_str());

  std::fflush(stdout);

  std::vector<T> x(b.size(), T(0));
  const auto t0 = clock_type::now();
  solve_result r;
  if (gpu) {
    context ctx;
    const auto dA = to_device_async(ctx, A);
    const auto db = to_device_async(ctx, b);
    auto dx = to_device(ctx, x);
    device_cg_options d;
    d.path = cg_path_choice;
    if (fmt != "auto") d.choice = cg_choice_for(fmt, row_stats(A));  // auto: the solver's own rule
    r = cg_device(ctx, dA, db, dx, opt, d);
    x = to_host(ctx, dx);
  } else {
    if (cg_path_choice != cg_path::automatic) throw usage_error("--path applies to the GPU solver (--device gpu)");
    r = with_format(fmt, A, [&](const auto& M) { return cg_host(M, b, x, opt); });
  }
  const double solve_ms = ms_since(t0);
  progress.clear();

  std::printf("solver:     %s\n", r.method.c_str());
  std::printf("status:     %s after %lld iterations (%s)\n", to_string(r.status), static_cast<long long>(r.iterations),
              r.message.c_str());
  std::printf("residual:   %.3e relative (recurrence), true ||b-Ax||/||b|| = %.3e\n", r.residual, r.true_residual);
  if (known && r.status != solve_status::invalid_input) {
    double e2 = 0;
    for (T v : x) e2 += (double(v) - 1.0) * (double(v) - 1.0);
    std::printf("error:      ||x - ones|| / ||ones|| = %.3e\n", x.empty() ? 0.0 : std::sqrt(e2 / double(x.size())));
  }
  std::printf("time:       %.3f ms solve (%.3f ms setup, %.3f ms iterating", solve_ms, 1e3 * r.setup_seconds,
              1e3 * r.iterate_seconds);
  if (r.iterations > 0) std::printf(", %.2f us/iteration", 1e6 * r.iterate_seconds / double(r.iterations));
  std::printf("), %.3f ms read\n", read_ms);
  if (atomic_file* history = out.history) {
    std::string csv = "iteration,relative_residual\n";
    char line[64];
    for (std::size_t i = 0; i < r.history.size(); ++i)
      csv.append(line, std::snprintf(line, sizeof line, "%zu,%.17g\n", i + 1, r.history[i]));
    history->write(csv);
    history->commit();
    std::printf("history:    %zu residuals written to %s\n", r.history.size(), history->path().c_str());
  }
  if (out.x) {
    out.x->write(format_matrix_market_vector(x));
    out.x->commit();
    std::printf("solution:   written to %s\n", out.x->path().c_str());
  }
  return r.converged() ? 0 : 1;
}
}  // namespace

int cmd_solve(int argc, char** argv) {
  args a(argc, argv, 2,
         {"--rhs", "-o", "--output", "--tol", "--atol", "--maxit", "--precond", "--device", "--format", "--precision",
          "--threads", "--offsets", "--path", "--history"},
         {"--force", "--quiet"});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string device = a.get_choice("--device", "auto", {"auto", "cpu", "gpu"});
  const bool have_gpu = cuda_available();
  if (device == "gpu" && !have_gpu) throw usage_error("--device gpu: " + cuda_status() + "; use --device cpu or auto");
  const bool gpu = device == "gpu" || (device == "auto" && have_gpu);
  std::string line = gpu ? "gpu " + cuda_status() : "cpu";
  if (device == "auto") line += gpu ? " (auto: a GPU is present)" : " (auto: " + cuda_status() + ")";
  const std::string prec = a.get_choice("--precision", "double", {"double", "float"});
  // The outputs are checked (and their temporaries created) before anything is read or solved.
  std::vector<std::string> inputs{a.positional()[0]};
  if (a.has("--rhs")) inputs.push_back(a.get("--rhs", ""));
  auto input_named = [&](const std::string& path) -> const std::string* {
    for (const auto& in : inputs)
      if (same_file(path, in)) return &in;
    return nullptr;
  };
  std::unique_ptr<atomic_file> x_file, history_file;
  if (a.has("--history")) {
    const std::string path = a.get("--history", "");
    if (const std::string* in = input_named(path))
      throw usage_error("--history '" + *in + "' is an input file; choose another name for the residual history");
    history_file = std::make_unique<atomic_file>(path);
  }
  if (a.has("-o") || a.has("--output")) {
    const std::string path = a.get("-o", a.get("--output", ""));
    if (const std::string* in = input_named(path); in && !a.has("--force"))
      throw usage_error("the output '" + path + "' is the input file '" + *in +
                        "'; writing the solution would replace it: choose another output, or pass --force");
    x_file = std::make_unique<atomic_file>(path);
  }
  const solve_outputs out{x_file.get(), history_file.get()};
  return prec == "float" ? solve<float>(a, gpu, line, out) : solve<double>(a, gpu, line, out);
}

}  // namespace la::cli
