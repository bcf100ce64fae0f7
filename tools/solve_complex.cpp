// la solve on a complex system (a file of field complex, or gen:helmholtz2d/3d): the Krylov
// methods of <la/solvers/complex_krylov.hpp> in complex double, CSR, on the GPU
// (solve_complex_device) or the host (solve_complex_host); --device auto takes the host for a
// system it solves before the GPU would have started (choose_device), as for real systems.
// The direct method, the other preconditioners and several right-hand sides do not take
// complex values yet; asking for them is refused in the command line's words.
#include <cmath>
#include <complex>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/complex_solve.hpp>
#include <la/solvers/matrix_properties.hpp>
#include <la/solvers/method.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"
#include "solve_common.hpp"
#include "solve_options.hpp"

namespace la::cli {
namespace {
using z = std::complex<double>;

/// The options of la solve that complex systems do not take yet, and why.
void refuse_what_does_not_apply(const args& a) {
  const char* why = nullptr;
  std::string flag;
  if (a.has("--format") && a.get("--format", "") != "auto" && a.get("--format", "") != "csr")
    flag = "--format " + a.get("--format", ""), why = "complex systems are solved on CSR so far";
  else if (a.has("--path")) flag = "--path", why = "it chooses the real GPU CG's iteration; complex systems have one form so far";
  else if (a.has("--history")) flag = "--history", why = "the complex solvers do not record the residual history yet";
  if (why) throw usage_error(flag + ": " + why);
}

}  // namespace

bool complex_input(const std::string& input) {
  if (is_gen(input)) return complex_gen_kind(parse_gen(input.substr(4)).kind);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(input, ec)) return false;
  return read_matrix_market_header(input).field == mm_field::complex;
}

namespace {
/// The solve in complex<float> or complex<double> (--precision).
template <typename T>
int solve_complex_as(const args& a, const std::string& device, const solve_outputs& out, bool have_gpu) {
  std::FILE* rep = out.report;
  const std::string input = a.positional()[0], path = printable(input);
  // The registry's options but --method (cocg is not a real method), read as for real systems.
  const cg_options opt = cg_args(a, "method");
  if (opt.precond != preconditioner::none && opt.precond != preconditioner::jacobi && opt.precond != preconditioner::automatic &&
      opt.precond != preconditioner::ilu0 && opt.precond != preconditioner::ic0)
    throw usage_error(std::string("--precond ") + to_string(opt.precond) +
                      ": complex systems take none, jacobi, ilu0, ic0 (Hermitian A) or auto (Jacobi where the diagonal has no "
                      "zero) so far");
  const auto t_read = clock_type::now();
  csr_matrix<T> A = is_gen(input) ? generate<T, index_t>(gen_option(input)) : read_matrix_market_csr<T>(input, nullptr, read_options(a));
  const double read_ms = ms_since(t_read);
  if (A.rows() != A.cols())
    throw invalid_argument("'" + path + "' is " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) +
                           "; the solvers need a square matrix (least squares is not supported)");
  const bool known = !a.has("--rhs");
  std::vector<T> b;
  if (known) {
    b.assign(static_cast<std::size_t>(A.rows()), T(0));
    reference::spmv(T(1), A, std::vector<T>(b.size(), T(1)), T(0), b);
  } else {
    const coo_matrix<T> m = read_matrix_market<T>(a.get("--rhs", ""));
    if (m.cols() > 1 && m.rows() == A.rows())
      throw usage_error("--rhs: " + std::to_string(m.cols()) + " columns; complex systems take one right-hand side so far");
    b = matrix_market_vector(m, a.get("--rhs", ""));
    if (b.size() != static_cast<std::size_t>(A.rows()))
      throw invalid_argument("--rhs has " + std::to_string(b.size()) + " entries, the matrix " + std::to_string(A.rows()) + " rows");
  }
  const auto t_check = clock_type::now();
  const matrix_properties p = properties_of(A);
  const double check_ms = ms_since(t_check);
  const device_choice small = choose_device(A.rows(), A.nnz());
  const bool gpu = device == "gpu" || (device == "auto" && have_gpu && !small.host);
  const complex_choice choice = choose_complex(a.get("--method", "auto"), p, A.rows(), opt, gpu, std::is_same_v<T, z>);
  std::fprintf(rep, "matrix:     %s: %d x %d, %lld nonzeros, complex %s\n", path.c_str(), A.rows(), A.cols(),
               static_cast<long long>(A.nnz()), std::is_same_v<T, z> ? "double" : "float");
  std::string line = gpu ? "gpu " + cuda_status() : "cpu";
  if (device == "auto")
    line += gpu ? " (auto: a GPU is present)" : have_gpu ? " (auto: " + cli_words(small.why) + ")" : " (auto: " + cuda_status() + ")";
  else line += " (asked for)";
  std::fprintf(rep, "device:     %s\n", line.c_str());
  std::fprintf(rep, "picked:     %s (%s)\n", choice.direct ? "direct" : to_string(choice.krylov), cli_words(choice.why).c_str());
  std::vector<T> x;
  std::optional<context> ctx;
  if (gpu) ctx.emplace();
  const auto t0 = clock_type::now();
  std::string note;
  solve_result r = la::solve_complex(gpu ? &*ctx : nullptr, A, b, x, choice, opt, &note);
  if (!note.empty()) std::fprintf(rep, "direct:     %s\n", cli_words(note).c_str());
  const double solve_ms = ms_since(t0);
  r.message = cli_words(r.message);
  std::fprintf(rep, "solver:     %s\n", r.method.c_str());
  report_outcome(rep, r, known, x);
  std::fprintf(rep, "time:       %.3f ms solving, %.3f ms checking A for auto; %.3f ms reading or generating the matrix\n",
               solve_ms, check_ms, read_ms);
  write_outputs(a, r, x, out);
  return r.converged() ? 0 : r.status == solve_status::invalid_input ? 2 : 1;
}
}  // namespace

int solve_complex(const args& a, const std::string& device, const solve_outputs& out) {
  refuse_what_does_not_apply(a);
  const bool have_gpu = device != "cpu" && cuda_available();
  if (device == "gpu" && !have_gpu) throw no_gpu_error("--device gpu: " + cuda_status() + "; run with --device cpu or auto");
  return a.get("--precision", "double") == "float" ? solve_complex_as<std::complex<float>>(a, device, out, have_gpu)
                                                   : solve_complex_as<z>(a, device, out, have_gpu);
}

}  // namespace la::cli
