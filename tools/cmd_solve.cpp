#include <chrono>
#include <memory>
#include <cmath>
#include <cstdio>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/la/atomic_file.hpp>
#include <la/la/context.hpp>
#include <la/solvers/host_backend.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la solve A.mtx [options]\n"
    "\n"
    "Solves A x = b by conjugate gradients (A symmetric positive definite).\n"
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
    "  --device D            auto (default), cpu or gpu\n"
    "  --format F            storage for the solve: csr (default), coo, csc, ell, jds, hyb,\n"
    "                        sell, dense\n"
    "  --precision P         double (default) or float\n"
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

template <typename T, typename O>
int solve(const args& a, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms, atomic_file* out);

template <typename T>
int solve(const args& a, const std::string& device_line, atomic_file* out) {
  auto t0 = clock_type::now();
  return with_csr_file<T>(a.positional()[0], a, [&](const auto& A) { return solve(a, device_line, A, ms_since(t0), out); });
}

template <typename T, typename O>
int solve(const args& a, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms, atomic_file* out) {
  const std::string path = a.positional()[0];
  const std::string fmt = a.get_choice("--format", "csr", {"csr", "coo", "csc", "ell", "jds", "hyb", "sell", "dense"});
  cg_options opt;
  opt.rtol = a.get_double("--tol", 1e-8, 0.0);
  opt.atol = a.get_double("--atol", 0, 0.0);
  opt.max_iterations = a.get_int("--maxit", -1, 0, std::numeric_limits<std::int64_t>::max());
  opt.precond = a.get_choice("--precond", "none", {"none", "jacobi"}) == "jacobi" ? preconditioner::jacobi
                                                                                 : preconditioner::none;

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

  std::printf("matrix:     %s (%d x %d, %lld nonzeros, %d-bit offsets), %s, %s\n", path.c_str(), A.rows(), A.cols(),
              static_cast<long long>(A.nnz()), int(8 * sizeof(O)), fmt.c_str(), sizeof(T) == 8 ? "double" : "float");
  std::printf("device:     %s\n", device_line.c_str());
  std::printf("rhs:        %s\n", known ? "b = A * ones (known solution x = ones)" : a.get("--rhs", "").c_str());
  std::printf("precond:    %s, tol %g, maxit %s\n", to_string(opt.precond), opt.rtol,
              opt.max_iterations < 0 ? "2n" : std::to_string(opt.max_iterations).c_str());

  std::vector<T> x(b.size(), T(0));
  const auto t0 = clock_type::now();
  const solve_result r = with_format(fmt, A, [&](const auto& M) { return cg_host(M, b, x, opt); });
  const double solve_ms = ms_since(t0);

  std::printf("status:     %s after %lld iterations (%s)\n", to_string(r.status), static_cast<long long>(r.iterations),
              r.message.c_str());
  std::printf("residual:   %.3e relative (recurrence), true ||b-Ax||/||b|| = %.3e\n", r.residual, r.true_residual);
  if (known && r.status != solve_status::invalid_input) {
    double e2 = 0;
    for (T v : x) e2 += (double(v) - 1.0) * (double(v) - 1.0);
    std::printf("error:      ||x - ones|| / ||ones|| = %.3e\n", x.empty() ? 0.0 : std::sqrt(e2 / double(x.size())));
  }
  std::printf("time:       %.3f ms solve, %.3f ms read\n", solve_ms, read_ms);
  if (out) {
    out->write(format_matrix_market_vector(x));
    out->commit();
    std::printf("solution:   written to %s\n", out->path().c_str());
  }
  return r.converged() ? 0 : 1;
}
}  // namespace

int cmd_solve(int argc, char** argv) {
  args a(argc, argv, 2,
         {"--rhs", "-o", "--output", "--tol", "--atol", "--maxit", "--precond", "--device", "--format", "--precision",
          "--threads", "--offsets"},
         {"--force"});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string device = a.get_choice("--device", "auto", {"auto", "cpu", "gpu"});
  // The GPU CG solver is not part of this build yet: --device gpu is refused rather than
  // silently run on the host, and auto says where it ran and why.
  if (device == "gpu")
    throw usage_error("--device gpu: this build has no GPU CG solver yet; use --device cpu or auto");
  std::string line = "cpu";
  if (device == "auto")
    line = "cpu (auto: " + (cuda_available() ? "GPU " + cuda_status() + " present, but this build has no GPU CG solver yet"
                                             : cuda_status()) + ")";
  const std::string prec = a.get_choice("--precision", "double", {"double", "float"});
  // The output is checked (and its temporary created) before anything is read or solved.
  std::unique_ptr<atomic_file> out;
  if (a.has("-o") || a.has("--output")) {
    const std::string path = a.get("-o", a.get("--output", ""));
    std::vector<std::string> inputs{a.positional()[0]};
    if (a.has("--rhs")) inputs.push_back(a.get("--rhs", ""));
    for (const auto& in : inputs)
      if (same_file(path, in) && !a.has("--force"))
        throw usage_error("the output '" + path + "' is the input file '" + in +
                          "'; writing the solution would replace it: choose another output, or pass --force");
    out = std::make_unique<atomic_file>(path);
  }
  return prec == "float" ? solve<float>(a, line, out.get()) : solve<double>(a, line, out.get());
}

}  // namespace la::cli
