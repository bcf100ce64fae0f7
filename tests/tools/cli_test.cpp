// The la command line, end to end: run the built binary and check output and exit status.
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include <unistd.h>

#include <la/formats/elasticity.hpp>
#include <la/formats/matrix_market.hpp>
#include "cli_util.hpp"
#include "test_util.hpp"

namespace {

using la::test::run;
using la::test::run_shell;
using la::test::contains;
using la::test::read_file;

const std::string data = LA_DATA_DIR;

TEST(Cli, HelpForEveryCommand) {
  for (const char* c : {"", "info ", "solve ", "convert ", "gemm ", "spmv "}) {
    const auto r = run(std::string(c) + "--help");
    EXPECT_EQ(r.status, 0) << c;
    EXPECT_TRUE(contains(r.output, "usage: la")) << r.output;
  }
  const auto none = run("");
  EXPECT_EQ(none.status, 2);
  const auto bad = run("frobnicate");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.output, "unknown command 'frobnicate'"));
}

TEST(Cli, Info) {
  const auto r = run("info " + data + "/gr_30_30.mtx");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "900 x 900")) << r.output;
  EXPECT_TRUE(contains(r.output, "nonzeros:        7744")) << r.output;
  EXPECT_TRUE(contains(r.output, "symmetric")) << r.output;
  EXPECT_TRUE(contains(r.output, "min 4  mean 8.60  max 9")) << r.output;
  EXPECT_TRUE(contains(r.output, "JDS:             9 jagged diagonals")) << r.output;
  EXPECT_TRUE(contains(r.output, "padding 4.4% of slots")) << r.output;
}

TEST(Cli, SolveBundledSystemConverges) {
  const std::string out = ::testing::TempDir() + "la_cli_x.mtx";
  const auto r = run("solve " + data + "/gr_30_30.mtx --device cpu --precond jacobi --format ell -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "converged")) << r.output;
  EXPECT_TRUE(contains(r.output, "true ||b-Ax||/||b||")) << r.output;
  EXPECT_TRUE(contains(r.output, "||x - ones||")) << r.output;
  EXPECT_TRUE(contains(r.output, "device:     cpu")) << r.output;
  const auto x = la::read_matrix_market_vector<double>(out);
  ASSERT_EQ(x.size(), 900u);
  for (double v : x) EXPECT_NEAR(v, 1.0, 1e-5);
  std::remove(out.c_str());
}

// An n x k --rhs: k solves (on the GPU with one setup), each column's result reported, and
// -o writes the n x k solutions; on the device the GPU gives (here whichever this machine has).
TEST(Cli, SeveralRightHandSides) {
  const std::string b = ::testing::TempDir() + "la_cli_b3.mtx", x = ::testing::TempDir() + "la_cli_x3.mtx";
  {
    std::string text = "%%MatrixMarket matrix array real general\n900 3\n";
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 900; ++i) text += std::to_string(1.0 + 0.25 * j + 0.01 * std::sin(double(i * (j + 1)))) + "\n";
    std::FILE* f = std::fopen(b.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  const auto r = run("solve " + data + "/gr_30_30.mtx --rhs " + b + " --precond amg -o " + x);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(3 columns: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "column 2:   converged")) << r.output;
  EXPECT_TRUE(contains(r.output, "column 3:   converged")) << r.output;
  const auto sol = la::to_csr(la::read_matrix_market<double>(x));
  ASSERT_EQ(sol.rows(), 900);
  ASSERT_EQ(sol.cols(), 3);
  std::remove(b.c_str());
  std::remove(x.c_str());
}

/// A Matrix Market array file of rows x cols from column-major values.
void write_array(const std::string& path, std::size_t rows, std::size_t cols, const std::vector<double>& v) {
  std::ofstream f(path);
  f << "%%MatrixMarket matrix array real general\n" << rows << " " << cols << "\n";
  f.precision(17);
  for (double x : v) f << x << "\n";
}

// AMG for systems: a gen:elasticity system carries its coordinates (the rigid-body modes, no
// option), --amg-near-null-space none turns them off and takes more iterations; the same
// system from files with --coordinates, --near-null-space (with and without
// --amg-block-size); wrong shapes and the files without --precond amg refused.
TEST(Cli, AmgNearNullSpace) {
  const auto iterations = [](const std::string& out) {
    std::smatch m;
    return std::regex_search(out, m, std::regex("converged after ([0-9]+) iterations")) ? std::stoi(m[1]) : -1;
  };
  const auto g = run("solve gen:elasticity2d:30 --precond amg --device cpu");
  EXPECT_EQ(g.status, 0) << g.output;
  EXPECT_TRUE(contains(g.output, "near-null space: 3 rigid-body modes from the coordinates, nodes of 2 unknowns")) << g.output;
  const auto off = run("solve gen:elasticity2d:30 --precond amg --amg-near-null-space none --device cpu");
  EXPECT_EQ(off.status, 0) << off.output;
  EXPECT_FALSE(contains(off.output, "near-null")) << off.output;
  EXPECT_LT(iterations(g.output) * 2, iterations(off.output)) << g.output << off.output;
  const auto s = la::elasticity<double>(2, 12);
  const std::size_t n = s.a.rows(), nodes = n / 2;
  const std::string dir = ::testing::TempDir(), a = dir + "la_el_a.mtx", x = dir + "la_el_x.mtx", b = dir + "la_el_b.mtx";
  la::write_matrix_market(a, s.a);
  std::vector<double> cm(nodes * 2);  // coordinates, column-major
  for (std::size_t p = 0; p < nodes; ++p) cm[p] = s.coordinates[2 * p], cm[nodes + p] = s.coordinates[2 * p + 1];
  write_array(x, nodes, 2, cm);
  write_array(b, n, 3, la::rigid_body_modes(s.coordinates, 2));
  const auto c = run("solve " + a + " --precond amg --coordinates " + x + " --device cpu");
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "3 rigid-body modes from the coordinates, nodes of 2 unknowns")) << c.output;
  const auto v = run("solve " + a + " --precond amg --near-null-space " + b + " --amg-block-size 2 --device cpu");
  EXPECT_EQ(v.status, 0) << v.output;
  EXPECT_TRUE(contains(v.output, "3 near-null vectors given, nodes of 2 unknowns")) << v.output;
  EXPECT_EQ(iterations(v.output), iterations(c.output)) << "the same hierarchy";
  const auto v1 = run("solve " + a + " --precond amg --near-null-space " + b + " --device cpu");
  EXPECT_EQ(v1.status, 0) << v1.output;
  EXPECT_TRUE(contains(v1.output, "3 near-null vectors given;")) << v1.output;
  const auto wrong = run("solve " + a + " --precond amg --coordinates " + b + " --device cpu");
  EXPECT_EQ(wrong.status, 2) << wrong.output;
  EXPECT_TRUE(contains(wrong.output, "it must be nodes x d with d = 2 or 3")) << wrong.output;
  const auto wrong_b = run("solve " + a + " --precond amg --near-null-space " + x + " --device cpu");
  EXPECT_EQ(wrong_b.status, 2) << wrong_b.output;
  EXPECT_TRUE(contains(wrong_b.output, "it must be n x k with n = " + std::to_string(n))) << wrong_b.output;
  const auto jac = run("solve " + a + " --precond jacobi --coordinates " + x + " --device cpu");
  EXPECT_EQ(jac.status, 2) << jac.output;
  EXPECT_TRUE(contains(jac.output, "--coordinates applies to --precond amg")) << jac.output;
  for (const std::string& f : {a, x, b}) std::remove(f.c_str());
}

TEST(Cli, SolveWithRhsFile) {
  const std::string b = ::testing::TempDir() + "la_cli_b.mtx";
  la::write_matrix_market_vector(b, std::vector<double>(48, 1.0));
  const auto r = run("solve " + data + "/bcsstk01.mtx --rhs " + b + " --tol 1e-10 --maxit 1000");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "||x - ones||"));
  const auto wrong = run("solve " + data + "/gr_30_30.mtx --rhs " + b);
  EXPECT_EQ(wrong.status, 2);
  EXPECT_TRUE(contains(wrong.output, "right-hand side has 48 entries but A has 900 rows")) << wrong.output;
  std::remove(b.c_str());
}

TEST(Cli, SolveInFloatOnEveryFormat) {
  std::vector<std::string> devices{"cpu"};
  if (la::cuda_available()) devices.push_back("gpu");
  for (const std::string& d : devices)
    for (const std::string f : {"csr", "coo", "csc", "ell", "jds", "hyb", "sell", "dense"}) {
      const auto r = run("solve " + data + "/gr_30_30.mtx --precision float --tol 1e-5 --device " + d + " --format " + f);
      EXPECT_EQ(r.status, 0) << f << "\n" << r.output;
      EXPECT_TRUE(contains(r.output, "float")) << r.output;
      EXPECT_TRUE(contains(r.output, d == "cpu" ? "solver:     cg, host, " + f + ", reference kernels" : ", " + f + "/"))
          << r.output;
    }
}

TEST(Cli, SolveWritesTheResidualHistory) {
  const std::string h = ::testing::TempDir() + "la_cli_history.csv";
  const auto r = run("solve " + data + "/gr_30_30.mtx --device cpu --quiet --history " + h);
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(h);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "iteration,relative_residual");
  int rows = 0;
  double last = 1;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(std::stoi(line.substr(0, line.find(','))), rows);
    last = std::stod(line.substr(line.find(',') + 1));
  }
  EXPECT_TRUE(contains(r.output, "converged after " + std::to_string(rows) + " iterations")) << r.output;
  EXPECT_LE(last, 1e-8);
  std::remove(h.c_str());
  // The history may not replace an input.
  const auto clash = run("solve " + data + "/gr_30_30.mtx --history " + data + "/gr_30_30.mtx");
  EXPECT_EQ(clash.status, 2) << clash.output;
  EXPECT_TRUE(contains(clash.output, "is an input file")) << clash.output;
  // --path is a GPU option.
  const auto path = run("solve " + data + "/gr_30_30.mtx --device cpu --path graph");
  EXPECT_EQ(path.status, 2) << path.output;
}

TEST(Cli, ProgressLineOnlyOnATerminal) {
  // A host solve of about two seconds; `script` gives it a terminal.
  if (run_shell("command -v script").status != 0) GTEST_SKIP() << "no 'script' command to provide a terminal";
  const std::string solve = std::string(LA_CLI_PATH) + " solve gen:poisson2d:800 --device cpu --tol 1e-12 --precond none";
  const auto tty = run_shell("script -qec '" + solve + "' /dev/null");
  ASSERT_EQ(tty.status, 0) << tty.output;
  EXPECT_TRUE(contains(tty.output, " it/s")) << tty.output;            // updated in place...
  EXPECT_TRUE(contains(tty.output, "\r\033[K")) << tty.output;        // ...and erased at the end
  const auto quiet = run_shell("script -qec '" + solve + " --quiet' /dev/null");
  EXPECT_FALSE(contains(quiet.output, " it/s")) << quiet.output;
  const auto redirected = run_shell(solve);  // stderr is a pipe here
  EXPECT_FALSE(contains(redirected.output, " it/s")) << redirected.output;
}

TEST(Cli, SolveAGeneratedPoissonSystem) {
  const auto r = run("solve gen:poisson3d:12 --device cpu --precond jacobi");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(1728 x 1728, 11232 nonzeros")) << r.output;
  const auto bad = run("solve gen:random:100:4");
  EXPECT_EQ(bad.status, 2) << bad.output;
}

TEST(Cli, SolveOnTheGpu) {
  LA_SKIP_WITHOUT_GPU();
  for (const char* p : {"auto", "persistent", "graph", "plain"})
    for (const char* pc : {"none", "jacobi"}) {
      const auto r = run("solve " + data + "/gr_30_30.mtx --path " + p + " --precond " + pc);
      EXPECT_EQ(r.status, 0) << r.output;
      EXPECT_TRUE(contains(r.output, "device:     gpu")) << r.output;
      EXPECT_TRUE(contains(r.output, std::string(p) == "auto" ? "persistent path" : std::string(p) + " path")) << r.output;
      EXPECT_TRUE(contains(r.output, "||x - ones|| / ||ones|| = ")) << r.output;
      // Every part of the time is in a figure: GPU start-up and transfers apart from the solve.
      EXPECT_TRUE(std::regex_search(r.output, std::regex("ms iterating \\([0-9.]+ us/iteration\\), ([0-9.]+ ms checking A for auto, )?[0-9.]+ ms solver setup, "
                                                          "[0-9.]+ ms GPU start-up \\([0-9.]+ ms of it while the matrix "
                                                          "was read\\), [0-9.]+ ms transfers")))
          << r.output;
    }
  // Dense storage on the GPU: converted on the device, dense_gemv, the graph path.
  // (--device gpu: auto would solve a system this small on the host.)
  const auto dense = run("solve " + data + "/gr_30_30.mtx --format dense --device gpu --precond none");
  EXPECT_EQ(dense.status, 0) << dense.output;
  EXPECT_TRUE(contains(dense.output, "dense/dense_gemv then p'Ap, graph path")) << dense.output;
}

TEST(Cli, SolveWithEachPreconditionerReportsWhatItBuilt) {
  // On the CPU here (the GPU below when there is one): each preconditioner converges on
  // bcsstk09 and prints its line: the kind, the pattern, shift or blocks, setup time, memory.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"block-jacobi", "block-jacobi: 1083 blocks of up to 1 rows"},
      {"fsai", "fsai: pattern tril(A), 9760 nonzeros in G"},
      {"fsai --fsai-pattern squared", "fsai: pattern tril(|A|^2)"},
      {"fsai --fsai-pattern squared --fsai-drop 0.5", "fsai: pattern tril(|A|^2)"},
      // exact: the factorization both devices compute (the GPU sweeps by default, which find
      // shift 0 here).
      {"ic0 --factorization exact", "ic0: shift 0.1 (attempt 6)"},
      {"ic0 --factorization exact --ic-shift 0.01", "every diagonal shift up to 0.01"},
      {"auto", "fsai (auto): pattern tril(A)"}};
  for (const std::string device : {"cpu", "gpu"}) {
    if (device == "gpu" && !la::cuda_available()) continue;
    for (const auto& [pc, words] : cases) {
      const auto r = run("solve " + data + "/bcsstk09.mtx --device " + device + " --precond " + pc);
      const bool refused = contains(words, "every diagonal shift");
      EXPECT_EQ(r.status, refused ? 1 : 0) << r.output;
      EXPECT_TRUE(contains(r.output, words)) << pc << ": " << r.output;
      if (refused) EXPECT_TRUE(contains(r.output, "breakdown")) << r.output;
      else EXPECT_TRUE(std::regex_search(r.output, std::regex("M\\^-1: .*; setup [0-9.]+ ms, [0-9.]+ MB"))) << r.output;
    }
  }
  // Options that do not apply to the preconditioner chosen are refused, not ignored.
  for (const std::string bad : {"--precond jacobi --fsai-pattern squared", "--precond fsai --ic-shift 0.1",
                                "--precond ic0 --block-size 4", "--precond fsai --fsai-drop 0.1",
                                "--precond block-jacobi --block-size 33", "--precond fsai --fsai-pattern cubed"}) {
    const auto r = run("solve " + data + "/bcsstk09.mtx --device cpu " + bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
  }
}

TEST(Cli, NotConvergedExitsOne) {
  const auto r = run("solve " + data + "/gr_30_30.mtx --maxit 2");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "max_iterations")) << r.output;
}

TEST(Cli, NonSpdReportsBreakdown) {
  const std::string f = ::testing::TempDir() + "la_cli_indef.mtx";
  std::ofstream(f) << "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 -1\n";
  const auto r = run("solve " + f + " --method cg");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "breakdown")) << r.output;
  EXPECT_TRUE(contains(r.output, "not symmetric positive definite")) << r.output;
  EXPECT_TRUE(contains(r.output, "--method auto")) << r.output;
  // auto sees the negative diagonal and takes BiCGSTAB (the direct method first off), which
  // breaks down at once on this symmetric indefinite matrix (r0'A r0 = 0); GMRES continues
  // and solves it. With its default, auto solves this small system directly first.
  const auto a = run("solve " + f + " --precond none --auto-direct-rows 0");
  EXPECT_EQ(a.status, 0) << a.output;
  EXPECT_TRUE(contains(a.output, "(auto: symmetric values, diagonal: 1 positive, 1 negative")) << a.output;
  EXPECT_TRUE(contains(a.output, "so auto continued with gmres")) << a.output;
  const auto d = run("solve " + f);
  EXPECT_EQ(d.status, 0) << d.output;
  EXPECT_TRUE(contains(d.output, "and 2 rows (at most 20000, --auto-direct-rows): the direct method first")) << d.output;
  EXPECT_EQ(run("solve " + f + " --method cg --force --auto-direct-rows 5").status, 2) << "auto's option with cg";
  std::remove(f.c_str());
}

// ILU(0) where the diagonal has gaps: refused with --matching off (naming the fix), solved
// with the default (the rows permuted and scaled, said in the report); the factorization and
// trisolve options are checked where they do not apply.
TEST(Cli, IncompleteFactorizationOptions) {
  const std::string m = std::string(LA_DATA_DIR) + "/west0479.mtx";
  const auto off = run("solve " + m + " --method gmres --precond ilu0 --matching off --device cpu");
  EXPECT_EQ(off.status, 1) << off.output;
  EXPECT_TRUE(contains(off.output, "is not stored, so ILU(0) has no pivot there (--matching on")) << off.output;
  const auto on = run("solve " + m + " --method gmres --precond ilu0 --device cpu");
  EXPECT_EQ(on.status, 0) << on.output;
  EXPECT_TRUE(contains(on.output, "rows permuted and scaled to a heavy diagonal")) << on.output;
  const auto sw = run("solve gen:poisson2d:30 --precond ic0 --factorization sweeps --sweeps 2 --trisolve jacobi:3 --device cpu");
  EXPECT_EQ(sw.status, 0) << sw.output;
  EXPECT_TRUE(contains(sw.output, "2 sweeps, applied by jacobi:3")) << sw.output;
  for (const std::string bad : {"--precond jacobi --sweeps 2", "--precond ic0 --trisolve jacobi:0",
                                "--precond ic0 --trisolve gauss", "--precond ic0 --matching on",
                                "--precond ic0 --factorization exact --sweeps 3"}) {
    const auto r = run("solve gen:poisson2d:10 " + bad + " --device cpu");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
  }
}

// --precond amg and its options: a W-cycle with degree 3 on the CPU (the host hierarchy) says
// its levels and complexities and converges in few iterations; the options are refused
// without amg, and out of range.
TEST(Cli, AmgOptions) {
  const auto r = run("solve gen:poisson2d:60 --precond amg --amg-cycle w --amg-degree 3 --amg-coarse 50 --device cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "levels (3600 ")) << r.output;
  EXPECT_TRUE(contains(r.output, "W-cycle, Chebyshev degree 3")) << r.output;
  EXPECT_TRUE(contains(r.output, "operator complexity")) << r.output;
  for (const std::string bad : {"--precond jacobi --amg-degree 2", "--precond amg --amg-degree 0",
                                "--precond amg --amg-cycle g", "--precond amg --amg-coarse 9000",
                                "--precond amg --amg-strength 2", "--precond amg --amg-smoother gauss",
                                "--precond fsai --amg-smoother l1-jacobi"}) {
    const auto b = run("solve gen:poisson2d:10 " + bad + " --device cpu");
    EXPECT_EQ(b.status, 2) << bad << ": " << b.output;
  }
  // The F-cycle: GMRES takes it; CG refuses it (not a symmetric operator).
  const auto fg = run("solve gen:poisson2d:60 --method gmres --precond amg --amg-cycle f --device cpu");
  EXPECT_EQ(fg.status, 0) << fg.output;
  EXPECT_TRUE(contains(fg.output, "F-cycle")) << fg.output;
  const auto fc = run("solve gen:poisson2d:60 --method cg --precond amg --amg-cycle f --device cpu");
  EXPECT_EQ(fc.status, 2) << fc.output;  // a conflict known before solving: usage
  EXPECT_TRUE(contains(fc.output, "F-cycle is not a symmetric operator")) << fc.output;
  const auto l1 = run("solve gen:poisson2d:60 --precond amg --amg-smoother l1-jacobi --device cpu");
  EXPECT_EQ(l1.status, 0) << l1.output;
  EXPECT_TRUE(contains(l1.output, "V-cycle, L1-Jacobi sweeps 2")) << l1.output;
  const auto z = run("solve " + std::string(LA_DATA_DIR) + "/west0479.mtx --method gmres --precond amg --device cpu");
  EXPECT_EQ(z.status, 1) << z.output;
  EXPECT_TRUE(contains(z.output, "is zero or missing; the smoother and the prolongator divide by the diagonal")) << z.output;
}

TEST(Cli, MethodsOnANonSymmetricSystem) {
  const std::string m = std::string(LA_DATA_DIR) + "/adder_dcop_05.mtx";
  // CG is refused on a matrix whose values are not symmetric, naming the alternatives ...
  const auto cg = run("solve " + m + " --method cg --device cpu");
  EXPECT_EQ(cg.status, 2) << cg.output;
  EXPECT_TRUE(contains(cg.output, "invalid_input")) << cg.output;
  EXPECT_TRUE(contains(cg.output, "use --method gmres or bicgstab")) << cg.output;
  // ... auto solves it directly first (1,813 rows, not SPD) ...
  const auto d = run("solve " + m + " --device cpu");
  EXPECT_EQ(d.status, 0) << d.output;
  EXPECT_TRUE(contains(d.output, "picked:     direct (auto: not symmetric")) << d.output;
  EXPECT_TRUE(contains(d.output, "the direct method first")) << d.output;
  // ... and without that picks BiCGSTAB with ILU(0) (on the rows permuted to a heavy diagonal:
  // 12 diagonal entries are missing), says why, and converges; Jacobi takes the zeros as 1.
  const auto a = run("solve " + m + " --precond auto --device cpu --auto-direct-rows 0");
  EXPECT_EQ(a.status, 0) << a.output;
  EXPECT_TRUE(contains(a.output, "picked:     bicgstab (auto: not symmetric")) << a.output;
  EXPECT_TRUE(contains(a.output, "ilu0 (auto): exact, applied by exact")) << a.output;
  EXPECT_TRUE(contains(a.output, "12 zero or missing diagonal entries")) << a.output;
  const auto j = run("solve " + m + " --precond jacobi --device cpu --auto-direct-rows 0");
  EXPECT_EQ(j.status, 0) << j.output;
  EXPECT_TRUE(contains(j.output, "12 zero or missing diagonal entries taken as 1")) << j.output;
  // Where ILU(0) does not exist (structurally singular: an empty column), auto says so and
  // runs Jacobi.
  const std::string sing = ::testing::TempDir() + "la_singular.mtx";
  {
    std::ofstream f(sing);
    f << "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n2 1 1\n2 2 3\n3 2 1\n";
  }
  const auto s1 = run("solve " + sing + " --method gmres --precond auto --device cpu");
  EXPECT_TRUE(contains(s1.output, "ILU(0) does not exist (ilu0: the matrix is structurally singular")) << s1.output;
  EXPECT_TRUE(contains(s1.output, "so jacobi")) << s1.output;
  std::remove(sing.c_str());
  const auto g = run("solve gen:convdiff2d:40 --method gmres --restart 20 --precond ilu0 --device cpu");
  EXPECT_EQ(g.status, 0) << g.output;
  EXPECT_TRUE(contains(g.output, "gmres(20), host")) << g.output;
  const auto bad = run("solve gen:convdiff2d:40 --method cg --restart 20");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--restart applies to")) << bad.output;
  const auto fsai = run("solve gen:convdiff2d:40 --method bicgstab --precond fsai --device cpu");
  EXPECT_EQ(fsai.status, 2) << fsai.output;
  EXPECT_TRUE(contains(fsai.output, "fsai is built for symmetric positive definite")) << fsai.output;
  const auto info = run("info " + m);
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_TRUE(contains(info.output, "symmetry:        not symmetric: max |a_ij - a_ji| = 0.00217")) << info.output;
  EXPECT_TRUE(contains(info.output, "diagonal:        1801 positive, 0 negative, 12 zero or not stored")) << info.output;
  const auto dist = run("solve " + m + " --method gmres --gpus 2");
  EXPECT_EQ(dist.status, 2) << dist.output;
  EXPECT_TRUE(contains(dist.output, "--gpus and --mpi run CG only")) << dist.output;
}

TEST(Cli, MalformedAndMissingFiles) {
  const auto bad = run("solve " + std::string(LA_TEST_DATA_DIR) + "/edge/invalid_index_out_of_range.mtx");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.output, "invalid_index_out_of_range.mtx:5: row index 5000 is beyond")) << bad.output;
  const auto missing = run("info /nonexistent/A.mtx");
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(contains(missing.output, "cannot open '/nonexistent/A.mtx'")) << missing.output;
  const auto rect = run("solve " + std::string(LA_TEST_DATA_DIR) + "/edge/row_3by4_integer.mtx");
  EXPECT_EQ(rect.status, 2);
  EXPECT_TRUE(contains(rect.output, "square")) << rect.output;
}

TEST(Cli, BadOptions) {
  auto r = run("solve " + data + "/gr_30_30.mtx --precond ilu");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--precond must be one of none|jacobi|block-jacobi|fsai|ic0|ilu0|amg|inner|auto")) << r.output;
  r = run("solve " + data + "/gr_30_30.mtx --tol abc");
  EXPECT_EQ(r.status, 2);
  r = run("solve " + data + "/gr_30_30.mtx --bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "unknown option --bogus")) << r.output;
  r = run("solve " + data + "/gr_30_30.mtx --path fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--path must be one of auto|graph|persistent|plain")) << r.output;
  if (!la::cuda_available()) {  // --device gpu without one: status 3 (no usable GPU), not a silent CPU run
    r = run("solve " + data + "/gr_30_30.mtx --device gpu");
    EXPECT_EQ(r.status, 3);
    EXPECT_TRUE(contains(r.output, "--device gpu: ")) << r.output;
    EXPECT_TRUE(contains(r.output, "run with --device cpu or auto")) << r.output;
  }
}

TEST(Cli, GemmValidatesArgumentsAndNeedsAGpu) {
  auto r = run("gemm 10 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "expected M N K")) << r.output;
  r = run("gemm 10 x 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "integers in [1, 2147483647]")) << r.output;
  r = run("gemm 65 63 127 --algo reg_tiled --reps 3");
  if (!la::cuda_available()) {
    EXPECT_EQ(r.status, 3);
    EXPECT_TRUE(contains(r.output, "needs a GPU")) << r.output;
  } else {
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "validation:  max sampled error")) << r.output;
    EXPECT_TRUE(contains(r.output, ": ok")) << r.output;
    r = run("gemm 64 64 64 --algo cutlass");
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(contains(r.output, "unknown GEMM algorithm")) << r.output;
    // 16-bit inputs through auto: the bf16 choice, validated against the bf16-rounded inputs.
    r = run("gemm 65 63 127 --input bf16 --reps 3");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "(bf16, chosen by auto)")) << r.output;
    EXPECT_TRUE(contains(r.output, ": ok")) << r.output;
    // Alternating rounds: the median ratio and its range.
    r = run("gemm 65 63 127 --algo reg_tiled --reps 3 --rounds 3");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("median of 3 alternating rounds, range [0-9.]+-[0-9.]+x"))) << r.output;
  }
}

TEST(Cli, SpmvValidatesAndTimesOrNeedsAGpu) {
  const auto bad = run("spmv " + data + "/bcsstk01.mtx --kernel nope");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "unknown SpMV kernel 'nope'")) << bad.output;
  const auto both = run("spmv " + data + "/bcsstk01.mtx --kernel ell --tune");
  EXPECT_EQ(both.status, 2) << both.output;
  EXPECT_TRUE(contains(both.output, "--tune chooses the kernel")) << both.output;
  for (const char* k : {"auto", "csr_scalar", "csr_vector", "csr_balanced", "coo_atomic", "coo_segmented", "csc_atomic",
                        "ell", "jds", "hyb", "sell", "auto --tune"}) {
    const auto r = run("spmv " + data + "/bcsstk09.mtx --reps 3 --kernel " + k);
    if (!la::cuda_available()) {
      EXPECT_EQ(r.status, 3) << r.output;
      EXPECT_TRUE(contains(r.output, "needs a GPU")) << r.output;
      continue;
    }
    EXPECT_EQ(r.status, 0) << k << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "validation:  max error")) << r.output;
    EXPECT_TRUE(contains(r.output, ": ok")) << r.output;
    EXPECT_TRUE(contains(r.output, "GB/s")) << r.output;
  }
}

TEST(Cli, BenchSpmvChecksItsArgumentsAndWritesItsTable) {
  auto r = run("bench gemm");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "expected 'la bench spmv")) << r.output;
  // gesv --batch: its usage checked before the GPU is looked for.
  r = run("bench gesv --batch --count 5,6");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--count: one count for every size, or one for all (6 sizes)")) << r.output;
  r = run("bench gesv --count 5");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--count needs --batch")) << r.output;
  r = run("bench dgemm --batch");
  EXPECT_EQ(r.status, 2);
  r = run("bench gesv --batch --sizes 0");
  EXPECT_EQ(r.status, 2);
  r = run("bench spmv");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no matrices")) << r.output;
  r = run("bench spmv gen:poisson2d --reps 2");  // checked before the GPU is looked for
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "expected gen:poisson2d:N")) << r.output;
  const std::string out = ::testing::TempDir() + "la_bench.csv";
  r = run("bench spmv gen:poisson2d:30 " + data + "/bcsstk01.mtx --reps 2 --precision both --out " + out);
  if (!la::cuda_available()) {
    EXPECT_EQ(r.status, 3) << r.output;
    EXPECT_TRUE(contains(r.output, "needs a GPU")) << r.output;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* s : {"cusparse_csr_alg1", "cusparse_sell", "auto (", "fastest la kernel", "poisson2d:30 float"})
    EXPECT_TRUE(contains(r.output, s)) << s << "\n" << r.output;
  std::ifstream f(out);
  std::string header;
  std::getline(f, header);
  EXPECT_TRUE(contains(header, "matrix,precision,rows,nnz,kernel")) << header;
  std::remove(out.c_str());
}

TEST(Cli, ConvertSymmetricToGeneralAndBack) {
  const std::string g = ::testing::TempDir() + "la_cli_g.mtx", s = ::testing::TempDir() + "la_cli_s.mtx";
  auto r = run("convert " + data + "/bcsstk01.mtx -o " + g);
  ASSERT_EQ(r.status, 0) << r.output;
  la::mm_header h = la::read_matrix_market_header(g);
  EXPECT_EQ(h.symmetry, la::mm_symmetry::general);
  EXPECT_EQ(h.entries, 400);  // 224 stored, expanded
  r = run("convert " + g + " -o " + s + " --symmetry symmetric");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(la::read_matrix_market_header(s).entries, 224);
  const auto a = la::to_csr(la::read_matrix_market<double>(data + "/bcsstk01.mtx"));
  EXPECT_EQ(la::to_csr(la::read_matrix_market<double>(s)), a);
  r = run("convert " + std::string(LA_TEST_DATA_DIR) + "/edge/west0067_jumbled.mtx -o " + s + " --symmetry symmetric");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "not exactly symmetric")) << r.output;
  r = run("convert " + data + "/bcsstk01.mtx -o " + g + " --to array");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(la::read_matrix_market_header(g).format, la::mm_format::array);
  EXPECT_EQ(la::to_dense(la::read_matrix_market<double>(g)), la::to_dense(a));
  std::remove(g.c_str());
  std::remove(s.c_str());
}


// ---- complex matrices (issue 69): la info and la convert read them, the solvers refuse ----

TEST(Cli, InfoTellsHermitianComplexSymmetricAndNeither) {
  auto r = run("info " + data + "/mhd1280b.mtx");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "banner:          matrix coordinate complex hermitian")) << r.output;
  EXPECT_TRUE(contains(r.output, "symmetry:        Hermitian values (exact)")) << r.output;
  EXPECT_TRUE(contains(r.output, "nonzeros:        22778")) << r.output;
  EXPECT_TRUE(contains(r.output, "real parts 1280 positive")) << r.output;
  EXPECT_TRUE(contains(r.output, "bytes (complex double values")) << r.output;
  r = run("info " + data + "/w156.mtx");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "neither Hermitian nor complex symmetric")) << r.output;
  EXPECT_TRUE(contains(r.output, "(pattern not symmetric)")) << r.output;
  const std::string cs = ::testing::TempDir() + "la_cli_cs.mtx";
  {
    std::ofstream f(cs);
    f << "%%MatrixMarket matrix coordinate complex symmetric\n3 3 3\n1 1 1 1\n2 1 2 3\n3 3 4 -1\n";
  }
  r = run("info " + cs);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "complex symmetric values (exact; not Hermitian)")) << r.output;
  std::remove(cs.c_str());
}

TEST(Cli, ConvertKeepsComplexValuesAndChecksHermitian) {
  const std::string h = ::testing::TempDir() + "la_cli_h.mtx", g = ::testing::TempDir() + "la_cli_hg.mtx";
  auto r = run("convert " + data + "/mhd1280b.mtx -o " + g);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "coordinate complex general")) << r.output;
  r = run("convert " + g + " -o " + h + " --symmetry hermitian");
  ASSERT_EQ(r.status, 0) << r.output;
  la::mm_header hh = la::read_matrix_market_header(h);
  EXPECT_EQ(hh.field, la::mm_field::complex);
  EXPECT_EQ(hh.symmetry, la::mm_symmetry::hermitian);
  EXPECT_EQ(hh.entries, 12029);
  using zd = std::complex<double>;
  EXPECT_EQ(la::read_matrix_market_csr<zd>(h), la::read_matrix_market_csr<zd>(data + "/mhd1280b.mtx"));
  r = run("convert " + data + "/w156.mtx -o " + h + " --symmetry hermitian");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "not exactly Hermitian")) << r.output;
  r = run("convert " + data + "/mhd1280b.mtx -o " + h + " --symmetry symmetric");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "not exactly symmetric (A != A^T)")) << r.output;
  r = run("convert " + data + "/bcsstk01.mtx -o " + h + " --symmetry hermitian");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "--symmetry hermitian is for complex matrices")) << r.output;
  EXPECT_EQ(la::read_matrix_market_header(h).symmetry, la::mm_symmetry::hermitian);  // the refused runs left it as it was
  r = run("convert " + data + "/w156.mtx -o " + g + " --to array");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(la::to_dense(la::read_matrix_market<zd>(g)), la::to_dense(la::read_matrix_market<zd>(data + "/w156.mtx")));
  std::remove(h.c_str());
  std::remove(g.c_str());
}

TEST(Cli, SolveComplexSystems) {
  // auto picks by the values: Hermitian positive definite -> CG, complex symmetric -> COCG, else GMRES.
  auto r = run("solve " + data + "/mhd1280b.mtx");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     cg (auto: Hermitian values")) << r.output;
  EXPECT_TRUE(contains(r.output, "status:     converged")) << r.output;
  r = run("solve gen:helmholtz2d:40 --auto-direct-rows 0");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     cocg (auto: complex symmetric values")) << r.output;
  r = run("solve gen:helmholtz2d:40");  // small enough for the direct method first
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     direct (auto: complex symmetric values")) << r.output;
  const std::string x = ::testing::TempDir() + "la_cli_zx.mtx", b = ::testing::TempDir() + "la_cli_zb.mtx";
  r = run("solve " + data + "/arrowc.mtx --device cpu --auto-direct-rows 0 -o " + x);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     gmres (auto: neither Hermitian nor complex symmetric")) << r.output;
  using zd = std::complex<double>;
  const auto xs = la::read_matrix_market_vector<zd>(x);
  ASSERT_EQ(xs.size(), 100u);
  for (const zd& v : xs) EXPECT_NEAR(std::abs(v - zd(1)), 0, 1e-8);
  // A complex right-hand side, and an explicit method.
  la::write_matrix_market_vector(b, std::vector<zd>(100, zd(0.5, -2)));
  r = run("solve " + data + "/arrowc.mtx --rhs " + b + " --method bicgstab --tol 1e-10");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "solver:     bicgstab + jacobi")) << r.output;
  // w156 (no diagonal at all, condition 9.6e8): auto takes the direct method first (the host's
  // sparse LU with static pivoting after a matching), checked like every method.
  r = run("solve " + data + "/w156.mtx --device cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     direct (auto:")) << r.output;
  EXPECT_TRUE(contains(r.output, "solver:     direct (sparse LU, static pivoting), host")) << r.output;
  r = run("solve " + data + "/arrowc.mtx --method direct --device cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  // --auto-direct-rows 0: the Krylov method straight away.
  r = run("solve " + data + "/arrowc.mtx --auto-direct-rows 0 --device cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "picked:     gmres (auto:")) << r.output;
  // What complex systems do not take yet is refused in the command line's words.
  r = run("solve " + data + "/arrowc.mtx --precision float --method gmres --tol 1e-5");  // complex float
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "complex float")) << r.output;
  r = run("solve " + data + "/arrowc.mtx --precision float --method direct");
  EXPECT_EQ(r.status, 2) << r.output;
  r = run("solve " + data + "/w156.mtx --method gmres --precond ilu0");  // the host's ILU(0), after the matching
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "gmres + ilu0 (matched), host")) << r.output;
  r = run("solve " + data + "/mhd1280b.mtx --method cg --precond ic0 --tol 1e-10");  // Hermitian: the host's IC(0)
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "cg + ic0")) << r.output;
  EXPECT_TRUE(contains(r.output, "host")) << r.output;
  r = run("solve " + data + "/arrowc.mtx --method gmres --precond ic0");  // not Hermitian: IC(0) does not exist
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "not Hermitian")) << r.output;
  for (const std::string& bad : std::vector<std::string>{"--precond fsai", "--format ell",
                                 "--gpus 2", "--history " + ::testing::TempDir() + "h.csv"}) {
    r = run("solve " + data + "/arrowc.mtx " + bad);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "complex")) << bad << "\n" << r.output;
  }
  if (!la::cuda_available()) {  // --device gpu without one: the CLI's no-GPU exit
    r = run("solve " + data + "/arrowc.mtx --device gpu");
    EXPECT_EQ(r.status, 3) << r.output;
  } else {  // on the GPU: the dense LU, and a Krylov method
    r = run("solve " + data + "/w156.mtx --device gpu");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "direct (dense LU, partial pivoting), gpu")) << r.output;
    r = run("solve " + data + "/mhd1280b.mtx --device gpu");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "solver:     cg + jacobi, gpu")) << r.output;
    r = run("solve gen:helmholtz2d:100 --device gpu --method cocg");
    EXPECT_EQ(r.status, 0) << r.output;
  }
  std::remove(x.c_str());
  std::remove(b.c_str());
}


// ---- hardening -----------------------------------------------------------------------------

TEST(Cli, NumericOptionsAreRangeCheckedBeforeNarrowing) {
  const std::string m = data + "/bcsstk01.mtx";
  for (const char* big : {"99999999999", "4294967296", "2147483648"}) {
    const auto r = run("solve " + m + " --maxit " + big);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, std::string("maxit ") + big)) << r.output;  // not wrapped
  }
  // Each bad value: usage error (exit 2), and the message says what is wrong and the range.
  const std::pair<std::string, std::string> bad[] = {
      {"solve " + m + " --maxit -1", "--maxit needs an integer in [0, 9223372036854775807], got '-1'"},
      {"solve " + m + " --maxit 99999999999999999999", "in [0, 9223372036854775807]"},
      {"solve " + m + " --tol inf", "--tol = inf is not finite"},
      {"solve " + m + " --tol nan", "--tol is not a number (nan)"},
      {"solve " + m + " --tol -1e-3", "is out of range; it needs a finite number in [0,"},
      {"info " + m + " --threads 1000", "--threads needs an integer in [0, 256]"},
      {"gemm 8 8 8 --reps 0", "--reps needs an integer in [1, 100000]"},
      {"gemm 8 8 8 --input f64", "--input must be f32, f16 or bf16, got 'f64'"},
      {"gemm 8 8 8 --input bf16 --algo wmma_f16", "--input chooses what auto picks for; --algo wmma_f16 brings its own"},
  };
  for (const auto& [args, message] : bad) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  }
}

TEST(Cli, SolveRefusesToOverwriteItsInput) {
  const std::string dir = ::testing::TempDir() + "la_cli_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string a = dir + "/A.mtx", link = dir + "/link.mtx";
  std::filesystem::copy_file(data + "/bcsstk01.mtx", a);
  std::filesystem::create_symlink(a, link);
  const std::string before = read_file(a);
  for (const std::string& out : {a, link}) {  // the same file under another name, too
    const auto r = run("solve " + a + " -o " + out);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "is an input file")) << r.output;
    EXPECT_TRUE(contains(r.output, "--force")) << r.output;
    EXPECT_EQ(read_file(a), before);
  }
  const auto forced = run("solve " + a + " -o " + a + " --force --maxit 1000");
  EXPECT_EQ(forced.status, 0) << forced.output;
  EXPECT_EQ(la::read_matrix_market_vector<double>(a).size(), 48u);  // the solution replaced it, as asked
  std::filesystem::remove_all(dir);
}

TEST(Cli, UnwritableOutputFailsBeforeTheSolve) {
  const auto r = run("solve " + data + "/1138_bus.mtx -o /no/such/dir/x.mtx");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot create a file in '/no/such/dir'")) << r.output;
  EXPECT_FALSE(contains(r.output, "status:")) << "it solved first:\n" << r.output;
}

TEST(Cli, ConvertInPlaceAndOnAFullDiskLosesNothing) {
  const std::string dir = ::testing::TempDir() + "la_conv_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string f = dir + "/F.mtx";
  std::filesystem::copy_file(data + "/1138_bus.mtx", f);
  const std::string before = read_file(f);
  // A file-size limit below the output's size (array form, ~10 MB) stands in for a nearly
  // full disk: the write fails part way.
  const auto full = run_shell("ulimit -f 64; trap \"\" XFSZ; " + std::string(LA_CLI_PATH) + " convert " + f + " -o " + f + " --to array");
  const std::string out = full.output;
  EXPECT_NE(full.status, 0) << out;
  EXPECT_EQ(read_file(f), before) << "the input was damaged: " << out;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1)
      << "a temporary was left behind";
  // In place without the limit: the file becomes the converted matrix.
  const auto ok = run("convert " + f + " -o " + f);
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_EQ(la::to_csr(la::read_matrix_market<double>(f)), la::to_csr(la::read_matrix_market<double>(data + "/1138_bus.mtx")));
  std::filesystem::remove_all(dir);
}

TEST(Cli, HugeDeclaredSizesAnswerAtOnce) {
  const std::string path = ::testing::TempDir() + "la_cli_huge.mtx";
  { std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n"; }
  const auto info = run("info " + path);  // counted without row-sized arrays
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_TRUE(contains(info.output, "empty rows:      1999999999")) << info.output;
  for (const std::string cmd : {"solve " + path, "convert " + path + " -o " + path + ".out"}) {
    const auto r = run_shell("LA_HOST_MEMORY_LIMIT=1000000000 " + std::string(LA_CLI_PATH) + " " + cmd);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "needs 24.0 GB of host memory; 1.0 GB are available")) << r.output;
  }
  std::remove(path.c_str());
}

}  // namespace

namespace {
// A NaN in the matrix is named by its row, column and the file's line, whatever the storage
// format the solve ran on.
TEST(Cli, NonFiniteMatrixEntryNamedByRowColumnAndLine) {
  const std::string m = std::string(LA_TEST_DATA_DIR) + "/edge/west0067_nan.mtx";
  for (const char* fmt : {"csr", "coo", "dense"}) {
    const auto r = run("solve " + m + " --device cpu --format " + fmt);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "A(1,1) = nan, line 6 of")) << fmt << ": " << r.output;
  }
}
}  // namespace
