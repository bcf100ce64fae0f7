// The preconditioner registry as a family sees it: a test-only preconditioner
// (extra_precond.cu, one file plus one registration) is listed, parsed, shown in `la solve
// --help`'s option section and docs/options.md's tables, offered to Python by its keyword, and
// built and applied by the host and GPU solvers; and every entry a solver takes, la's and the
// test's, solves a real system on the host and on the GPU (the sweep).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <la/solvers/device_precond.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/host_solver.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/registry.hpp>

#include "solvers/extra_method.hpp"
#include "solvers/extra_precond.hpp"
#include "test_util.hpp"
#include "tools/solve_options.hpp"

using namespace la;

namespace {
const preconditioner extra = test::add_extra_preconditioner();
const krylov_method richardson = test::add_extra_method();

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

cli::args parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  std::set<std::string> valued, flags;
  for (const std::string& n : cli::solve_option_names(false)) valued.insert(n);
  for (const std::string& n : cli::solve_option_names(true)) flags.insert(n);
  return cli::args(static_cast<int>(argv.size()), argv.data(), 0, valued, flags);
}

cg_options with(krylov_method m, preconditioner p) {
  cg_options o;
  o.method = m;
  o.precond = p;
  o.rtol = 1e-8;
  o.max_iterations = 5000;
  return o;
}

/// The methods a preconditioner's entry serves, on an SPD system: CG where M^-1 is
/// symmetric, GMRES where the non-symmetric methods take it, FGMRES where M^-1 changes.
std::vector<krylov_method> methods_for(const preconditioner_entry& e) {
  if (!e.fixed) return {krylov_method::fgmres};  // an M^-1 that changes: the flexible method
  std::vector<krylov_method> m;
  if (e.symmetric_operator) m.push_back(krylov_method::cg);
  if (e.nonsymmetric_methods) m.push_back(krylov_method::gmres);
  return m;
}
}  // namespace

TEST(ExtraPreconditioner, IsListedWithItsOwnKindAndOption) {
  const preconditioner_entry* e = find_preconditioner(test::extra_precond_name);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, extra);
  EXPECT_GT(static_cast<int>(extra), static_cast<int>(preconditioner::automatic));
  EXPECT_EQ(&entry_of(extra), e);
  EXPECT_STREQ(to_string(extra), test::extra_precond_name);
  EXPECT_EQ(parse_preconditioner(test::extra_precond_name), extra);
  const std::vector<std::string> choices = choices_of(*find_option("precond"));
  EXPECT_NE(std::find(choices.begin(), choices.end(), test::extra_precond_name), choices.end());
  const option_spec* w = find_option(test::extra_precond_option);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(python_name(*w), "extra_weight");  // Python's keyword, as _la.solve_options() gives it
  // A second registration of the name is refused.
  EXPECT_THROW(add_preconditioner(*e), invalid_argument);
}

TEST(ExtraPreconditioner, AppearsInTheHelpAndTheOptionsTables) {
  const std::string help = cli::solve_options_help();  // what `la solve --help` prints of the registry
  EXPECT_TRUE(contains(help, test::extra_precond_name)) << help;
  EXPECT_TRUE(contains(help, "--extra-weight")) << help;
  const std::string md = cli::options_markdown();  // what `la options` writes into docs/options.md
  EXPECT_TRUE(contains(md, std::string("`") + test::extra_precond_name + "`")) << md;
  EXPECT_TRUE(contains(md, "--extra-weight")) << md;
}

TEST(ExtraPreconditioner, TheCliParserTakesItAndItsOption) {
  const cg_options o = cli::cg_args(parse({"--precond", test::extra_precond_name, "--extra-weight", "0.5"}));
  EXPECT_EQ(o.precond, extra);
  EXPECT_EQ(o.precond_opt.extra.at(test::extra_precond_option), 0.5);
  // Its option applies to it alone, and its range is checked, in the CLI's words.
  EXPECT_THROW(cli::cg_args(parse({"--precond", "jacobi", "--extra-weight", "0.5"})), cli::usage_error);
  EXPECT_THROW(cli::cg_args(parse({"--precond", test::extra_precond_name, "--extra-weight", "3"})), cli::usage_error);
}

TEST(ExtraPreconditioner, TheHostSolversBuildAndApplyIt) {
  const csr_matrix<double> a = test::poisson_2d<double>(24);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  const long long before = test::extra_host_builds();
  for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres}) {
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, with(m, extra));
    EXPECT_EQ(r.status, solve_status::converged) << to_string(m) << ": " << r.message;
    EXPECT_LT(test::true_relres(a, b, x), 1e-7) << to_string(m);
    EXPECT_EQ(r.precond.kind, extra);
    EXPECT_EQ(r.precond.detail, "weight 1.000000");
  }
  EXPECT_EQ(test::extra_host_builds(), before + 3);
  // A matrix it does not exist for (an empty row) is a status with its own words.
  csr_matrix<double> empty(2, 2, {0, 1, 1}, {0}, {1.0});
  std::vector<double> x;
  const solve_result r = solve_host(empty, std::vector<double>{1, 0}, x, with(krylov_method::gmres, extra));
  EXPECT_NE(r.status, solve_status::converged);
  EXPECT_TRUE(contains(r.message, "extra-rowsum: row 2 of A is empty")) << r.message;
}

// The sweep: every preconditioner entry a method takes, la's and the test's, on an SPD system
// with CG where its M^-1 is symmetric and with GMRES where the non-symmetric methods take it.
TEST(PreconditionerSweep, EveryEntrySolvesOnTheHost) {
  const csr_matrix<double> a = test::poisson_2d<double>(20);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  int solved = 0;
  for (const preconditioner_entry& e : preconditioners())
    for (krylov_method m : methods_for(e)) {
      std::vector<double> x;
      const solve_result r = solve_host(a, b, x, with(m, e.kind));
      EXPECT_EQ(r.status, solve_status::converged) << e.name << " with " << to_string(m) << ": " << r.message;
      EXPECT_LT(test::true_relres(a, b, x), 1e-7) << e.name << " with " << to_string(m);
      ++solved;
    }
  EXPECT_GE(solved, static_cast<int>(preconditioners().size()));
}

TEST(PreconditionerSweep, EveryEntrySolvesOnTheGpu) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const csr_matrix<double> a = test::poisson_2d<double>(test::under_sanitizer() ? 12 : 20);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  const long long before = test::extra_device_builds();
  for (const preconditioner_entry& e : preconditioners())
    for (krylov_method m : methods_for(e)) {
      device_vector<double> dx;
      const solve_result r = solve_device(ctx, da, db, dx, with(m, e.kind));
      EXPECT_EQ(r.status, solve_status::converged) << e.name << " with " << to_string(m) << ": " << r.message;
      EXPECT_LT(test::true_relres(a, b, to_host(ctx, dx)), 1e-7) << e.name << " with " << to_string(m);
    }
  EXPECT_GT(test::extra_device_builds(), before) << "the GPU solvers did not build the added preconditioner";
}

// The test's device builder against its host builder (its oracle), on an awkward shape, in
// float and double: the same M^-1 r to rounding.
TEST(ExtraPreconditioner, TheDeviceBuilderMatchesTheHostOracle) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(7);
  for (index_t n : {1, 31, 33, 1000}) {
    const csr_matrix<double> a = test::random_nonsymmetric<double>(n, 4, g);
    const std::vector<double> r = test::random_vector<double>(static_cast<std::size_t>(n), g);
    precond_options opt;
    opt.extra[test::extra_precond_option] = 0.75;
    host_preconditioner<double> h(a, extra, opt);
    std::vector<double> want(r.size());
    h.apply(r, want);
    const auto da = to_device(ctx, a);
    device_preconditioner<double> d(ctx, da, extra, opt);
    const auto dr = to_device(ctx, r);
    device_vector<double> dz = to_device(ctx, std::vector<double>(r.size(), std::nan("")));
    d.apply(dr.data(), dz.data(), ctx.stream());
    const std::vector<double> got = to_host(ctx, dz);
    for (std::size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(got[i], want[i], 4e-16 * std::abs(want[i])) << n << " row " << i;
    EXPECT_EQ(d.report().kind, extra);
  }
}

TEST(ExtraMethod, IsListedWithItsOwnKindAndOption) {
  const method_entry* e = find_method(test::extra_method_name);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, richardson);
  EXPECT_GT(static_cast<int>(richardson), static_cast<int>(krylov_method::fgmres));
  EXPECT_STREQ(to_string(richardson), test::extra_method_name);
  EXPECT_EQ(parse_method(test::extra_method_name), richardson);
  const std::vector<std::string> choices = choices_of(*find_option("method"));
  EXPECT_NE(std::find(choices.begin(), choices.end(), test::extra_method_name), choices.end());
  ASSERT_NE(find_option(test::extra_method_option), nullptr);
  EXPECT_EQ(python_name(*find_option(test::extra_method_option)), "richardson_weight");
  EXPECT_THROW(add_method(*e), invalid_argument);
  const std::string help = cli::solve_options_help();
  EXPECT_TRUE(contains(help, test::extra_method_name)) << help;
  EXPECT_TRUE(contains(help, "--richardson-weight")) << help;
  EXPECT_TRUE(contains(cli::options_markdown(), std::string("`") + test::extra_method_name + "`"));
  const cg_options o = cli::cg_args(parse({"--method", test::extra_method_name, "--richardson-weight", "0.8"}));
  EXPECT_EQ(o.method, richardson);
  EXPECT_EQ(o.extra.at(test::extra_method_option), 0.8);
  EXPECT_THROW(cli::cg_args(parse({"--method", "cg", "--richardson-weight", "0.8"})), cli::usage_error);
}

TEST(ExtraMethod, SolveHostRunsItInEveryValueTypeAndFormat) {
  const long long before = test::extra_method_host_runs();
  const csr_matrix<double> a = test::poisson_2d<double>(10);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  for (preconditioner p : {preconditioner::none, preconditioner::jacobi, preconditioner::amg, extra}) {
    cg_options o = with(richardson, p);
    o.extra[test::extra_method_option] = p == preconditioner::none ? 0.25 : 1.0;  // w < 2 / lambda_max
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << to_string(p) << ": " << r.message;
    EXPECT_EQ(r.solver, richardson);
    EXPECT_LT(test::true_relres(a, b, x), 1e-7) << to_string(p);
  }
  // float, and a format that is not CSR (converted for the method's CSR solver).
  const csr_matrix<float> af = test::poisson_2d<float>(10);
  std::vector<float> xf;
  cg_options of = with(richardson, preconditioner::jacobi);
  of.rtol = 1e-5;
  EXPECT_TRUE(solve_host(af, std::vector<float>(static_cast<std::size_t>(af.rows()), 1.0f), xf, of).converged());
  std::vector<double> xe;
  EXPECT_TRUE(solve_host(to_ell(a), b, xe, with(richardson, preconditioner::jacobi)).converged());
  EXPECT_EQ(test::extra_method_host_runs(), before + 6);
  // A preconditioner only CG takes is refused, naming the ones it does take.
  std::vector<double> x;
  const solve_result r = solve_host(a, b, x, with(richardson, preconditioner::fsai));
  EXPECT_EQ(r.status, solve_status::invalid_input);
  EXPECT_TRUE(contains(r.message, "with extra-richardson use none, jacobi, ilu0, amg or extra-rowsum")) << r.message;
}

// Every method, la's and the test's, on an SPD system with Jacobi, on the host and the GPU.
TEST(MethodSweep, EveryMethodSolvesOnTheHost) {
  const csr_matrix<double> a = test::poisson_2d<double>(10);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  for (const method_entry& e : methods()) {
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, with(e.kind, preconditioner::jacobi));
    EXPECT_EQ(r.status, solve_status::converged) << e.name << ": " << r.message;
    EXPECT_LT(test::true_relres(a, b, x), 1e-7) << e.name;
  }
}

TEST(MethodSweep, EveryMethodSolvesOnTheGpu) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const csr_matrix<double> a = test::poisson_2d<double>(10);
  const std::vector<double> b(static_cast<std::size_t>(a.rows()), 1.0);
  const auto da = to_device(ctx, a);
  const auto db = to_device(ctx, b);
  const long long before = test::extra_method_device_runs();
  for (const method_entry& e : methods())
    for (preconditioner p : {preconditioner::jacobi, preconditioner::amg}) {
      if (!e.on_gpu) continue;
      device_vector<double> dx;
      const solve_result r = solve_device(ctx, da, db, dx, with(e.kind, p));
      EXPECT_EQ(r.status, solve_status::converged) << e.name << " with " << to_string(p) << ": " << r.message;
      EXPECT_LT(test::true_relres(a, b, to_host(ctx, dx)), 1e-7) << e.name << " with " << to_string(p);
    }
  EXPECT_GT(test::extra_method_device_runs(), before) << "solve_device did not run the added method";
}

// Setup, then solve: host_solver builds M^-1 once (the added preconditioner's builder runs once
// for three solves), and each solve matches solve_host's, which builds its own, bit for bit.
TEST(HostSolver, BuildsThePreconditionerOnceAndSolvesAsSolveHost) {
  const csr_matrix<double> a = test::poisson_2d<double>(16);
  std::mt19937 g(3);
  const long long before = test::extra_host_builds();
  host_solver<csr_matrix<double>> s(a, with(krylov_method::cg, extra));
  EXPECT_EQ(test::extra_host_builds(), before + 1);
  ASSERT_NE(s.report(), nullptr);
  EXPECT_EQ(s.report()->kind, extra);
  for (int k = 0; k < 3; ++k) {
    const std::vector<double> b = test::random_vector<double>(static_cast<std::size_t>(a.rows()), g);
    std::vector<double> x, y;
    const solve_result r = s.solve(b, x);
    EXPECT_EQ(r.status, solve_status::converged) << r.message;
    const long long built = test::extra_host_builds();
    const solve_result q = solve_host(a, b, y, with(krylov_method::cg, extra));
    EXPECT_EQ(test::extra_host_builds(), built + 1);
    EXPECT_EQ(r.iterations, q.iterations);
    EXPECT_EQ(x, y);
  }
  EXPECT_EQ(test::extra_host_builds(), before + 4);  // one for the solver, one for each solve_host
  // A preconditioner that does not exist for A is refused at setup, in the builder's words.
  csr_matrix<double> empty(2, 2, {0, 1, 1}, {0}, {1.0});
  EXPECT_THROW((host_solver<csr_matrix<double>>(empty, with(krylov_method::gmres, extra))), invalid_argument);
}

// One method preconditioning another: FGMRES with K iterations of an inner method (GMRES(K),
// BiCGSTAB, or the tests' own Richardson added at run time) as M^-1, on a non-symmetric
// system, on the host and the GPU, the inner method reached through its registry entry; the
// methods that are not flexible refuse it, and so does an inner auto or direct.
TEST(Inner, AnyRegisteredMethodPreconditionsFgmresOnTheHostAndTheGpu) {
  std::mt19937 g(11);
  // Under a sanitizer: a smaller A, and on the GPU only the cases that reach kernels the other
  // GPU tests do not (GMRES as an inner solve with ILU(0), and a method added at run time).
  const bool light = test::under_sanitizer();
  const index_t n = light ? 120 : 500;
  const csr_matrix<double> a = test::random_nonsymmetric<double>(n, 6, g);
  const std::vector<double> b = test::random_vector<double>(n, g);
  const krylov_method extra = test::add_extra_method();
  struct inner_case {
    krylov_method method;
    preconditioner precond;
    const char* named;
  };
  for (const inner_case& c : {inner_case{krylov_method::gmres, preconditioner::jacobi, "gmres(5)"},
                              inner_case{krylov_method::gmres, preconditioner::ilu0, "gmres(5)"},
                              inner_case{krylov_method::bicgstab, preconditioner::ilu0, "bicgstab, 5"},
                              inner_case{extra, preconditioner::jacobi, "extra-richardson, 5"}}) {
    cg_options o = with(krylov_method::fgmres, preconditioner::inner);
    o.precond_opt.inner_method = c.method;
    o.precond_opt.inner_iterations = 5;
    o.precond_opt.inner_precond = c.precond;
    const long long host_runs = test::extra_method_host_runs();
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::converged) << c.named << ": " << r.message;
    EXPECT_LT(test::true_relres(a, b, x), 1e-7) << c.named;
    EXPECT_TRUE(contains(r.precond.detail, c.named)) << r.precond.detail;
    EXPECT_TRUE(contains(r.precond.detail, std::string("preconditioned by ") + to_string(c.precond))) << r.precond.detail;
    if (c.method == extra) EXPECT_GT(test::extra_method_host_runs(), host_runs + r.iterations - 1);  // one an application
    if (!cuda_available() || (light && c.precond == preconditioner::jacobi && c.method != extra) ||
        (light && c.method == krylov_method::bicgstab))
      continue;
    context ctx;
    device_vector<double> dx;
    const long long device_runs = test::extra_method_device_runs();
    const solve_result d = solve_device(ctx, to_device(ctx, a), to_device(ctx, b), dx, o);
    EXPECT_EQ(d.status, solve_status::converged) << c.named << ": " << d.message;
    EXPECT_LT(test::true_relres(a, b, to_host(ctx, dx)), 1e-7) << c.named;
    EXPECT_TRUE(contains(d.method, "plain path")) << d.method;  // an inner solve is not captured
    if (c.method == extra) EXPECT_GT(test::extra_method_device_runs(), device_runs);
  }
  for (krylov_method m : {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres, krylov_method::automatic}) {
    cg_options o = with(m, preconditioner::inner);
    o.force = true;  // CG on these values: the preconditioner's refusal, not the matrix's
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::invalid_input) << to_string(m);
    EXPECT_TRUE(contains(r.message, "only a flexible method takes: use {method} fgmres")) << r.message;
  }
  for (krylov_method inner : {krylov_method::direct, krylov_method::automatic}) {
    cg_options o = with(krylov_method::fgmres, preconditioner::inner);
    o.precond_opt.inner_method = inner;
    std::vector<double> x;
    const solve_result r = solve_host(a, b, x, o);
    EXPECT_EQ(r.status, solve_status::invalid_input) << to_string(inner);
    EXPECT_TRUE(contains(r.message, std::string("{inner-method} ") + to_string(inner) + " cannot be an inner solve"))
        << r.message;
  }
}

// Every method is reached through its registry entry: each of la's own has both solvers, and
// auto (a rule, resolved before a solve) has none.
TEST(Registry, EveryMethodHasItsSolvers) {
  for (const method_entry& e : methods()) {
    if (e.kind == krylov_method::automatic) {
      EXPECT_FALSE(e.solvers.hf || e.solvers.hd || e.solvers.f32 || e.solvers.f64 || e.solvers.d32 || e.solvers.d64);
      continue;
    }
    EXPECT_TRUE(e.solvers.complete()) << e.name;
  }
}
