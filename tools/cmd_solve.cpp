#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <la/formats/convert.hpp>
#include <la/formats/elasticity.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/atomic_file.hpp>
#include <la/context.hpp>
#include <la/solvers/device_cg.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/device_solver.hpp>
#include <la/solvers/host_solver.hpp>
#include <la/solvers/method.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"
#include "run.hpp"
#include "solve_common.hpp"

#ifndef LA_DIST_MODULE
#define LA_DIST_MODULE "libla_cli_dist.so"
#endif

namespace la::cli {
namespace {
const char* usage_head =
    "usage: la solve A.mtx [options]\n"
    "       la solve gen:poisson2d:N | gen:poisson3d:N | gen:convdiff2d:N[:PECLET] |\n"
    "                gen:convdiff3d:N[:PECLET] | gen:elasticity2d:N | gen:elasticity3d:N [options]\n"
    "\n"
    "Solves A x = b by a Krylov method, on the GPU when there is one: conjugate gradients for\n"
    "a symmetric positive definite A, BiCGSTAB or GMRES for any other square one. A generated\n"
    "system is the 5- or 7-point Laplacian on an N^2 or N^3 grid, or upwinded convection-\n"
    "diffusion -lap u + PECLET (1,1[,1]).grad u on one (non-symmetric; PECLET an integer,\n"
    "default 100); N at most 46340 (2D) and 1290 (3D): the rows must fit 32-bit indices.\n";
// The registry's options (la/solvers/registry.hpp) go between: solve_options_help().
const char* usage_rest =
    "  --rhs b.mtx           right-hand side (n x 1 Matrix Market; an n x k array: k right-hand\n"
    "                        sides, solved one after another with one setup on the GPU, the\n"
    "                        preconditioner built once; -o then writes x as n x k); default b = A * ones,\n"
    "                        so the error against the known solution x = ones is printed\n"
    "  -o, --output x.mtx    write the solution (array n x 1) when the solve converged; checked\n"
    "                        before the solve and written through a temporary file, so a failed\n"
    "                        or interrupted run leaves x.mtx as it was. Refused when it is the\n"
    "                        matrix or right-hand side file, the --history file, or write-\n"
    "                        protected. Through a symbolic link, the file it names is written.\n"
    "  --write-unconverged   write -o also when the solve did not converge (the last iterate)\n"
    "  --near-null-space B.mtx  --precond amg: the near-null space, an n x k array (k at most 32:\n"
    "                        the coarse levels get k unknowns an aggregate); with --amg-block-size\n"
    "                        strength and aggregation work on nodes of that many unknowns\n"
    "  --coordinates X.mtx   --precond amg: node coordinates, a nodes x d array (d = 2 or 3,\n"
    "                        nodes of d unknowns, node-major): the rigid-body modes (3 in 2D, 6 in\n"
    "                        3D) are the near-null space. A gen:elasticity system carries its own;\n"
    "                        --amg-near-null-space none turns them off\n"
    "  --device D            auto (default: the GPU when one is present, except for a system\n"
    "                        the CPU solves before the GPU would have started: an estimated\n"
    "                        4 ns a stored entry an iteration for max(100, 2 sqrt(n)) iterations\n"
    "                        below 50 ms; the device line says which and why), cpu or gpu\n"
    "  --format F            storage for the solve: auto (default; on the GPU the format and\n"
    "                        kernel chosen from the row lengths, on the CPU csr), csr, coo,\n"
    "                        csc, ell, jds, hyb, sell, dense (on the GPU with the rule's\n"
    "                        kernel when the rule picks that format, else its default)\n"
    "  --precision P         double (default) or float\n"
    "  --path P              GPU iteration: auto (default: persistent for the kernels with a\n"
    "                        fused CG form, else graph), graph, persistent, plain\n"
    "  --history FILE.csv    the residual of every iteration (iteration,relative_residual),\n"
    "                        written whether or not the solve converged\n"
    "  --quiet               no progress line (shown only on a terminal, after about a second)\n"
    "  --gpus N              CG (only) on N GPUs of this process (a thread each; NCCL): the rows\n"
    "                        split in blocks balanced by nonzeros, a file read once and its parts\n"
    "                        uploaded, a gen: system made on each GPU part by part. Any --precond\n"
    "                        but amg (auto builds fsai): those other than jacobi built on each\n"
    "                        GPU's diagonal block (its\n"
    "                        rows and their columns), so more GPUs can take more iterations.\n"
    "                        Deterministic for a given N. CUDA_VISIBLE_DEVICES picks the GPUs\n"
    "  --mpi                 the same with one MPI rank a GPU (mpirun -n N la solve ... --mpi;\n"
    "                        each rank takes the GPU of its rank on its node), NCCL bootstrapped\n"
    "                        over MPI; rank 0 reads the file, reports and writes\n"
    "%s"
    "Complex systems (a file of field complex, gen:helmholtz2d:N[:PPW[:SHIFT]] or\n"
    "gen:helmholtz3d:...) are solved in complex double (--precision float: complex float, the\n"
    "Krylov methods), CSR, on the GPU (--device auto: where the host would not finish first) or\n"
    "the host: --method auto (CG with the Hermitian inner product for Hermitian values with a\n"
    "positive diagonal; else, at most --auto-direct-rows rows (on the GPU also at most 8192),\n"
    "the direct method first, then COCG for complex symmetric values or GMRES where it misses;\n"
    "larger: COCG or GMRES), direct (the host's sparse LDL^H or LDL^T for Hermitian or complex\n"
    "symmetric A, else its sparse LU with static pivoting; --ordering and\n"
    "--max-refinement; the GPU's dense Cholesky for Hermitian A with a positive diagonal, else\n"
    "its dense LU with partial pivoting, at most 8192 rows), cg, cocg, bicgstab or gmres;\n"
    "--precond auto, none, jacobi, ilu0 (after a matching where the diagonal has gaps; not with\n"
    "cg) or ic0 (Hermitian A; not with cocg), factored on the host; on the GPU the Krylov\n"
    "methods hold A as the complex SpMV rule picks; one right-hand side (real or complex);\n"
    "-o writes x as an array complex file. The other preconditioners, --format, --path,\n"
    "--history and --gpus do not take complex systems yet and are refused.\n"
    "The report goes to stdout, or to stderr when -o or --history is stdout itself.\n"
    "Exit status: 0 converged: the true residual ||b - Ax|| meets the tolerance within a factor\n"
    "of %g (la::cg_options::true_residual_factor); 1 not converged (iteration limit, breakdown\n"
    "(CG: A is not SPD; BiCGSTAB: rho, r0'v or omega = 0), non-finite values, stagnation, or precision_limit: the recurrence met\n"
    "the tolerance and the true residual did not); 2 bad usage or input (a malformed file, an\n"
    "option or method this matrix refuses, such as --method cg on non-symmetric values); 3 no usable GPU (with\n"
    "--device gpu), or a CUDA or internal failure.\n";

/// la::start_device on a thread of its own from construction on, so that the GPU starts while
/// the matrix is read; wait() joins it and returns the milliseconds the start took.
class device_start {
 public:
  device_start() : thread_([this] { (void)start_device(0); ms_ = ms_since(t0_); }) {}
  ~device_start() { wait(); }
  device_start(const device_start&) = delete;
  device_start& operator=(const device_start&) = delete;
  double wait() {
    if (thread_.joinable()) thread_.join();
    return ms_;
  }

 private:
  clock_type::time_point t0_ = clock_type::now();
  double ms_ = 0;
  std::thread thread_;  // last: t0_ is set before the thread reads it
};

/// Calls f(matrix) with the CSR matrix converted to format `fmt` (same offset width); CSR
/// for "auto".
template <typename T, typename O, typename F>
auto with_format(const std::string& fmt, const csr_matrix<T, O>& a, F&& f) {
  switch (parse_format(fmt).value_or(format::csr)) {
    case format::coo: return f(to_coo(a));
    case format::csc: return f(to_csc<O>(a));
    case format::ell: return f(to_ell(a));
    case format::jds: return f(to_jds<O>(a));
    case format::hyb: return f(to_hyb(a));
    case format::sell: return f(to_sell<O>(a));
    case format::dense: return f(to_dense(a));
    case format::csr: break;
  }
  return f(a);
}

/// The values --format takes: auto and every format.
std::vector<std::string> format_choices() {
  std::vector<std::string> c{"auto"};
  for (format f : all_formats) c.emplace_back(to_string(f));
  return c;
}

cg_path path_option(const args& a) {
  const std::string p = a.get_choice("--path", "auto", {"auto", "graph", "persistent", "plain"});
  return p == "graph" ? cg_path::graph : p == "persistent" ? cg_path::persistent : p == "plain" ? cg_path::plain
                                                                                                 : cg_path::automatic;
}

template <typename T, typename O>
int solve(const args& a, bool gpu, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms,
          const solve_outputs& out, bool declared_symmetric);

/// Where A's first non-finite value is, for a person: "A(i,j) = nan, line L of FILE" (the
/// line found by reading the file again: an error path only). Empty when A is finite.
template <typename T, typename O>
std::string locate_non_finite(const csr_matrix<T, O>& A, const std::string& file) {
  for (index_t i = 0; i < A.rows(); ++i)
    for (O k = A.row_ptr()[i]; k < A.row_ptr()[i + 1]; ++k) {
      const double v = static_cast<double>(A.values()[k]);
      if (std::isfinite(v)) continue;
      const long long r = i + 1, c = A.col_idx()[k] + 1;
      std::string at = "A(" + std::to_string(r) + "," + std::to_string(c) + ") = " + (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
      if (is_gen(file)) return at;
      std::FILE* f = std::fopen(file.c_str(), "r");
      if (!f) return at;
      char line[512];
      long long n = 0;
      bool size_seen = false;
      while (std::fgets(line, sizeof line, f)) {
        ++n;
        if (line[0] == '%') continue;
        long long x = 0, y = 0;
        if (std::sscanf(line, "%lld %lld", &x, &y) != 2) continue;
        if (!size_seen) {  // the size line
          size_seen = true;
          continue;
        }
        if ((x == r && y == c) || (x == c && y == r)) {
          std::fclose(f);
          return at + ", line " + std::to_string(n) + " of " + printable(file);
        }
      }
      std::fclose(f);
      return at;
    }
  return {};
}

/// The generated systems la solve takes.
const std::vector<std::string> solve_kinds{"poisson2d", "poisson3d", "convdiff2d", "convdiff3d", "elasticity2d", "elasticity3d"};

/// A Matrix Market array (or coordinate) file as rows x cols, column-major, named by its flag.
std::vector<double> read_columns(const std::string& flag, const std::string& file, index_t& rows, index_t& cols) {
  const coo_matrix<double> m = read_matrix_market<double>(file);
  rows = m.rows(), cols = m.cols();
  std::vector<double> v(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), 0.0);
  for (count_t k = 0; k < m.nnz(); ++k) v[static_cast<std::size_t>(m.col_idx()[k]) * rows + m.row_idx()[k]] += m.values()[k];
  for (double x : v)
    if (!std::isfinite(x)) throw invalid_argument(flag + " " + printable(file) + ": holds a value that is not finite");
  return v;
}

/// --near-null-space and --coordinates into the AMG options (checked against A's n), and a
/// gen:elasticity system's own coordinates where --coordinates is not given.
void near_null_args(const args& a, cg_options& opt, index_t n) {
  amg_options& o = opt.precond_opt.amg;
  if (o.block_size > 1 && n % o.block_size != 0)
    throw invalid_argument("--amg-block-size " + std::to_string(o.block_size) + ": A's " + std::to_string(n) +
                           " rows are not nodes of " + std::to_string(o.block_size) + " unknowns");
  for (const char* f : {"--near-null-space", "--coordinates"})
    if (a.has(f) && opt.precond != preconditioner::amg)
      throw usage_error(std::string(f) + " applies to --precond amg (the near-null space of its coarse levels)");
  if (a.has("--near-null-space")) {
    index_t rows = 0, cols = 0;
    auto b = read_columns("--near-null-space", a.get("--near-null-space", ""), rows, cols);
    if (rows != n || cols < 1 || cols > 32)
      throw invalid_argument("--near-null-space " + printable(a.get("--near-null-space", "")) + " is " + std::to_string(rows) +
                             " x " + std::to_string(cols) + "; it must be n x k with n = " + std::to_string(n) +
                             " (A's rows) and k from 1 to 32");
    o.near_null = std::make_shared<const std::vector<double>>(std::move(b));
  }
  if (a.has("--coordinates")) {
    index_t nodes = 0, d = 0;
    const auto c = read_columns("--coordinates", a.get("--coordinates", ""), nodes, d);
    if (d < 2 || d > 3 || static_cast<std::int64_t>(nodes) * d != n)
      throw invalid_argument("--coordinates " + printable(a.get("--coordinates", "")) + " is " + std::to_string(nodes) + " x " +
                             std::to_string(d) + "; it must be nodes x d with d = 2 or 3 and nodes * d = " + std::to_string(n) +
                             " (A's rows: nodes of d unknowns, node-major)");
    std::vector<double> node_major(c.size());
    for (index_t p = 0; p < nodes; ++p)
      for (index_t k = 0; k < d; ++k) node_major[static_cast<std::size_t>(p) * d + k] = c[static_cast<std::size_t>(k) * nodes + p];
    o.coordinates = std::make_shared<const std::vector<double>>(std::move(node_major));
    o.coordinate_dim = d;
  } else if (is_gen(a.positional()[0])) {
    const gen_spec g = gen_option(a.positional()[0], solve_kinds);
    if (g.kind == "elasticity2d" || g.kind == "elasticity3d") {
      const int d = g.kind == "elasticity2d" ? 2 : 3;
      o.coordinates = std::make_shared<const std::vector<double>>(elasticity_coordinates(d, static_cast<index_t>(g.n[0])));
      o.coordinate_dim = d;
    }
  }
}


template <typename T>
int solve(const args& a, bool gpu, const std::string& device_line, const solve_outputs& out) {
  auto t0 = clock_type::now();
  mm_header h;  // filled by the reader before the callback runs
  return with_matrix<T>(
      a.positional()[0], a,
      [&](const auto& A) {
        return solve(a, gpu, device_line, A, ms_since(t0), out, h.symmetry == mm_symmetry::symmetric);
      },
      &h, solve_kinds);
}

template <typename T, typename O>
int solve(const args& a, bool gpu, const std::string& device_line, const csr_matrix<T, O>& A, double read_ms,
          const solve_outputs& out, bool declared_symmetric) {
  const std::string path = printable(a.positional()[0]);
  const std::string fmt =
      a.get_choice("--format", "auto", format_choices());
  std::FILE* rep = out.report;

  cg_options opt = cg_args(a);
  near_null_args(a, opt, A.rows());
  opt.known_symmetric = declared_symmetric;  // the reader expanded a symmetric file: no need to check
  opt.record_history = out.history != nullptr;
  progress_line progress(!a.has("--quiet"));
  opt.progress = [&](const cg_progress& p) { progress(p); };
  const cg_path cg_path_choice = path_option(a);
  if (!gpu && cg_path_choice != cg_path::automatic) throw usage_error("--path applies to the GPU solver (--device gpu)");
  if (!gpu && a.has("--sweeps") && opt.precond_opt.factor.method == factorization::automatic)
    throw usage_error("--sweeps: on the CPU, --factorization auto factorizes exactly (row by row), which takes no "
                      "sweeps; add --factorization sweeps to sweep");

  if (A.rows() != A.cols())
    throw invalid_argument("'" + path + "' is " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) + "; " +
                           (opt.method == krylov_method::direct ? "the direct method needs" : "the solvers need") +
                           " a square matrix (least squares is not supported)");
  const bool known = !a.has("--rhs");
  std::vector<T> b;
  std::vector<std::vector<T>> extra;  // right-hand sides 2..k of an n x k --rhs
  if (known) {
    b.assign(static_cast<std::size_t>(A.rows()), T(0));
    reference::spmv(T(1), A, std::vector<T>(b.size(), T(1)), T(0), b);
  } else {
    const coo_matrix<T> m = read_matrix_market<T>(a.get("--rhs", ""));
    if (m.cols() > 1 && m.rows() == A.rows()) {  // several right-hand sides: one setup, a solve each
      std::vector<std::vector<T>> cols(static_cast<std::size_t>(m.cols()), std::vector<T>(static_cast<std::size_t>(A.rows()), T(0)));
      for (count_t k = 0; k < m.nnz(); ++k) cols[m.col_idx()[k]][m.row_idx()[k]] += m.values()[k];
      b = std::move(cols[0]);
      extra.assign(std::make_move_iterator(cols.begin() + 1), std::make_move_iterator(cols.end()));
    } else {
      b = matrix_market_vector(m, a.get("--rhs", ""));
    }
    if (b.size() != static_cast<std::size_t>(A.rows()))
      throw invalid_argument("right-hand side has " + std::to_string(b.size()) + " entries but A has " +
                             std::to_string(A.rows()) + " rows (several right-hand sides: an n x k array)");
  }

  std::fprintf(rep, "matrix:     %s (%d x %d, %lld nonzeros, %d-bit offsets), %s\n", path.c_str(), A.rows(), A.cols(),
               static_cast<long long>(A.nnz()), int(8 * sizeof(O)), sizeof(T) == 8 ? "double" : "float");
  std::fprintf(rep, "device:     %s\n", device_line.c_str());
  std::fprintf(rep, "rhs:        %s%s\n",
               known ? "b = A * ones (known solution x = ones)" : printable(a.get("--rhs", "")).c_str(),
               extra.empty() ? "" : (" (" + std::to_string(extra.size() + 1) + " columns: " +
                                     "one setup, then the columns through it)").c_str());
  const std::int64_t n = A.rows();
  const std::string maxit =
      opt.max_iterations >= 0           ? std::to_string(opt.max_iterations)
      : opt.method == krylov_method::cg ? "2n = " + std::to_string(default_max_iterations(n, true))
      : opt.method == krylov_method::automatic
          ? std::to_string(default_max_iterations(n, true)) + " (2n) for cg, " +
                std::to_string(default_max_iterations(n, false)) + " (max(2n, 20000)) for bicgstab and gmres"
          : "max(2n, 20000) = " + std::to_string(default_max_iterations(n, false));
  std::fprintf(rep, "method:     %s, precond %s, tol %g, maxit %s\n", to_string(opt.method), to_string(opt.precond),
               opt.rtol, maxit.c_str());
  std::fflush(rep);

  std::vector<T> x(b.size(), T(0));
  std::vector<solve_result> column_results;  // right-hand sides 2..k (extra holds their solutions after)
  double startup_ms = 0, startup_wait_ms = 0, startup_overlap_ms = 0, transfer_ms = 0;
  const auto t0 = clock_type::now();
  solve_result r;
  if (gpu) {
    auto t = clock_type::now();
    const double started_ms = out.gpu_started ? out.gpu_started() : 0;  // begun while the matrix was read
    const double joined_ms = ms_since(t);
    context ctx;
    ctx.synchronize();  // the device is up: what follows is not start-up
    startup_wait_ms = ms_since(t);
    startup_ms = started_ms + (startup_wait_ms - joined_ms);
    startup_overlap_ms = std::max(0.0, started_ms - joined_ms);
    t = clock_type::now();
    const auto dA = to_device_async(ctx, A);
    const auto db = to_device_async(ctx, b);
    auto dx = to_device(ctx, x);
    ctx.synchronize();
    transfer_ms = ms_since(t);
    device_cg_options d;
    d.path = cg_path_choice;
    if (fmt != "auto") d.choice = cg_choice_for(fmt, row_stats(A));  // auto: the solver's own rule
    if (extra.empty()) {
      r = solve_device(ctx, dA, db, dx, opt, d);
    } else {  // the setup (method, preconditioner) once, then a solve per column
      device_solver<T, O> solver(ctx, dA, opt, d);
      r = solver.solve(db, dx);
      for (auto& col : extra) {
        const auto dc = to_device(ctx, col);
        device_vector<T> dy;
        column_results.push_back(solver.solve(dc, dy));
        col = to_host(ctx, dy);
      }
    }
    t = clock_type::now();
    x = to_host(ctx, dx);
    transfer_ms += ms_since(t);
  } else if (extra.empty()) {
    r = with_format(fmt, A, [&](const auto& M) { return solve_host(M, b, x, opt); });
  } else {  // the setup (method, preconditioner or factors) once, then the columns through it
    r = with_format(fmt, A, [&](const auto& M) {
      host_solver<std::decay_t<decltype(M)>> solver(M, opt);
      const std::size_t nn = b.size();
      std::vector<T> all(nn * (extra.size() + 1)), xs;
      std::copy(b.begin(), b.end(), all.begin());
      for (std::size_t c = 0; c < extra.size(); ++c) std::copy(extra[c].begin(), extra[c].end(), all.begin() + static_cast<std::ptrdiff_t>(nn * (c + 1)));
      std::vector<solve_result> res = solver.solve_columns(all, xs, static_cast<index_t>(extra.size() + 1));
      std::copy(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(nn), x.begin());
      for (std::size_t c = 0; c < extra.size(); ++c) {
        extra[c].assign(xs.begin() + static_cast<std::ptrdiff_t>(nn * (c + 1)), xs.begin() + static_cast<std::ptrdiff_t>(nn * (c + 2)));
        column_results.push_back(std::move(res[c + 1]));
      }
      return std::move(res[0]);
    });
  }
  const double solve_ms = ms_since(t0);
  progress.clear();
  in_cli_words(r);
  for (solve_result& c : column_results) in_cli_words(c);
  // The solvers name a stored entry (or the GPU CG its storage index); the file's terms are
  // the row, the column and the line.
  if (r.status == solve_status::non_finite && r.message.rfind("matrix holds", 0) == 0)
    if (const std::string at = locate_non_finite(A, a.positional()[0]); !at.empty())
      r.message = "matrix holds a non-finite value: " + at;

  if (!r.solver_choice.empty()) {
    std::string picked = to_string(r.solver);
    if (r.solver == krylov_method::gmres || r.solver == krylov_method::fgmres)
      picked += "(" + std::to_string(opt.restart) + ")";
    if (r.handed_over_from != krylov_method::automatic)
      picked = std::string(to_string(r.handed_over_from)) + ", then " + picked;
    std::fprintf(rep, "picked:     %s (%s)\n", picked.c_str(), r.solver_choice.c_str());
  }
  std::fprintf(rep, "solver:     %s\n", r.method.c_str());
  if (form_of(opt.precond) != precond_form::identity &&
      (form_of(r.precond.kind) != precond_form::identity || !r.precond.detail.empty()))
    std::fprintf(rep, "M^-1:       %s%s%s%s; setup %.3f ms, %.3f MB\n", to_string(r.precond.kind),
                 opt.precond == preconditioner::automatic ? " (auto)" : "", r.precond.detail.empty() ? "" : ": ",
                 r.precond.detail.c_str(), 1e3 * r.precond.setup_seconds, r.precond.bytes / 1e6);
  report_outcome(rep, r, known, x);
  std::fprintf(rep, "time:       %.3f ms iterating", 1e3 * r.iterate_seconds);
  if (r.iterations > 0) std::fprintf(rep, " (%.2f us/iteration)", 1e6 * r.iterate_seconds / double(r.iterations));
  if (r.analysis_seconds > 0) std::fprintf(rep, ", %.3f ms checking A for auto", 1e3 * r.analysis_seconds);
  std::fprintf(rep, ", %.3f ms solver setup", 1e3 * r.setup_seconds);
  if (gpu)
    std::fprintf(rep, ", %.3f ms GPU start-up (%.3f ms of it while the matrix was read), %.3f ms transfers", startup_ms,
                 startup_overlap_ms, transfer_ms);
  const double other =
      solve_ms - startup_wait_ms - transfer_ms - 1e3 * (r.analysis_seconds + r.setup_seconds + r.iterate_seconds);
  std::fprintf(rep, ", %.3f ms other; %.3f ms reading or generating the matrix\n", std::max(0.0, other), read_ms);
  if (!extra.empty()) {
    bool all = r.converged();
    for (std::size_t j = 0; j < column_results.size(); ++j) {
      const solve_result& c = column_results[j];
      all = all && c.converged();
      const std::string tr = std::isnan(c.true_residual) ? "not computed" : short_number(c.true_residual);
      std::fprintf(rep, "column %zu:   %s after %lld iterations, true ||b-Ax||/||b|| = %s, %.3f ms iterating, %.3f ms setup%s%s\n",
                   j + 2, to_string(c.status), static_cast<long long>(c.iterations), tr.c_str(),
                   1e3 * c.iterate_seconds, 1e3 * c.setup_seconds, c.converged() ? "" : ": ", c.converged() ? "" : c.message.c_str());
    }
    // The solutions as one n x k array (written when every column converged, or as asked).
    solve_result all_r = r;
    if (!all && r.converged()) all_r.status = solve_status::max_iterations;
    std::vector<T> flat(x);
    for (const auto& col : extra) flat.insert(flat.end(), col.begin(), col.end());
    write_outputs(a, all_r, flat, out, static_cast<index_t>(extra.size() + 1));
    bool invalid = r.status == solve_status::invalid_input;
    for (const solve_result& c : column_results) invalid = invalid || c.status == solve_status::invalid_input;
    return all ? 0 : invalid ? 2 : 1;
  }
  write_outputs(a, r, x, out);
  // A request refused before any iteration (CG on non-symmetric values, an option that does
  // not apply to this matrix) is bad usage or input: exit 2, as the CLI's other refusals.
  return r.converged() ? 0 : r.status == solve_status::invalid_input ? 2 : 1;
}
}  // namespace

int cmd_solve(int argc, char** argv) {
  const args a = solve_args(argc, argv);
  if (a.help())
    return std::fputs(usage_head, stdout), std::fputs(solve_options_help().c_str(), stdout),
           std::printf(usage_rest, reader_usage, cg_options{}.true_residual_factor), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string device = a.get_choice("--device", "auto", {"auto", "cpu", "gpu"});
  const std::string prec = a.get_choice("--precision", "double", {"double", "float"});
  const std::string& input = a.positional()[0];
  if (is_gen(input)) {
    std::vector<std::string> kinds = solve_kinds;  // and the complex ones, solved on the host
    kinds.insert(kinds.end(), {"helmholtz2d", "helmholtz3d"});
    (void)gen_option(input, kinds);
  }
  const bool complex_values = complex_input(input);
  for (const char* f : {"--near-null-space", "--coordinates"})
    if (a.has(f) && a.get("--precond", "auto") != "amg")
      throw usage_error(std::string(f) + " applies to --precond amg (the near-null space of its coarse levels)");
  // The outputs are checked (and their temporaries created) before anything is read or solved.
  std::vector<std::string> inputs{input};
  if (a.has("--rhs")) inputs.push_back(a.get("--rhs", ""));
  if (a.has("--gpus") || a.has("--mpi")) {
    if (complex_values) throw usage_error(std::string(a.has("--gpus") ? "--gpus" : "--mpi") +
                                          ": complex systems are solved on one GPU or the host so far (drop it)");
    if (a.has("--gpus") && a.has("--mpi"))
      throw usage_error("--gpus N (one process driving N GPUs) and --mpi (one MPI rank a GPU) are two launch "
                        "modes: pick one");
    const std::string m = a.get("--method", "auto");
    if (m != "auto" && m != "cg")
      throw usage_error("--method " + m + ": --gpus and --mpi run CG only (the distributed non-symmetric methods are "
                        "not built yet); solve on one GPU (drop --gpus/--mpi), or use --method cg for an SPD matrix");
    if (a.has("--restart")) throw usage_error("--restart applies to gmres/fgmres, which --gpus and --mpi do not run");
    if (a.get("--precond", "auto") == "amg")
      throw usage_error("--precond amg: --gpus and --mpi do not build AMG (its setup works on one GPU's whole "
                        "matrix); use --precond auto or fsai (built on each GPU's diagonal block), or solve on one GPU");
    // NCCL and MPI live in a module that only these runs load (solve_dist.cpp).
    return run_module(LA_DIST_MODULE, "la_cli_dist_main", "the multi-GPU solver (NCCL, MPI)", argc, argv, true);
  }
  outputs files(a, inputs);
  solve_outputs out;
  if (a.has("--history")) out.history = files.open("--history", a.get("--history", ""), outputs::input_policy::refuse);
  if (a.has("-o") || a.has("--output"))
    out.x = files.open(a.has("-o") ? "-o" : "--output", a.get("-o", a.get("--output", "")),
                       outputs::input_policy::unless_forced);
  out.report = report_stream(files.paths());
  if (complex_values) return solve_complex(a, device, out);
  const bool have_gpu = device != "cpu" && cuda_available();
  if (device == "gpu" && !have_gpu)
    throw no_gpu_error("--device gpu: " + cuda_status() + "; run with --device cpu or auto");
  // --device auto: the host for a system it solves before the GPU would have started.
  std::optional<device_choice> small;
  if (device == "auto" && have_gpu && !a.has("--path")) {
    std::int64_t rows = -1, entries = -1;
    std::error_code ec;
    if (is_gen(input)) {
      const gen_spec g = gen_option(input, solve_kinds);
      rows = g.rows, entries = g.max_nnz;
    } else if (std::filesystem::is_regular_file(input, ec)) {
      const mm_header h = read_matrix_market_header(input);
      rows = h.rows, entries = max_stored_entries(h);
    }
    if (rows >= 0)
      if (const device_choice c = choose_device(rows, entries); c.host) small = c;
  }
  const bool gpu = device == "gpu" || (device == "auto" && have_gpu && !small);
  std::string line = gpu ? "gpu " + cuda_status() : "cpu";
  if (device == "auto")
    line += gpu ? " (auto: a GPU is present)" : small ? " (auto: " + cli_words(small->why) + ")" : " (auto: " + cuda_status() + ")";
  // The GPU starts while the matrix is read or generated (after cuda_status, whose queries
  // would otherwise wait on the start's driver lock).
  std::optional<device_start> started;
  if (gpu) {
    started.emplace();
    out.gpu_started = [&started] { return started->wait(); };
  }
  return prec == "float" ? solve<float>(a, gpu, line, out) : solve<double>(a, gpu, line, out);
}

/// la options: the registry's options, methods and preconditioners as Markdown (docs/options.md).
int cmd_options(int argc, char** argv) {
  const args a(argc, argv, 2, {}, {});
  if (a.help() || !a.positional().empty()) {
    std::fputs("usage: la options\nPrints la solve's options, methods and preconditioners as Markdown tables, from the "
               "registry (la/solvers/registry.hpp); docs/options.md is this output.\n",
               a.help() ? stdout : stderr);
    return a.help() ? exit_ok : exit_usage;
  }
  std::fputs(options_markdown().c_str(), stdout);
  return exit_ok;
}

}  // namespace la::cli
