// The la command line, end to end: run the built binary and check output and exit status.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include <la/formats/matrix_market.hpp>
#include "test_util.hpp"

namespace {

struct run_result {
  int status;
  std::string output;  // stdout and stderr together
};

run_result run(const std::string& args) {
  const std::string cmd = std::string(LA_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::string data = LA_DATA_DIR;

TEST(Cli, HelpForEveryCommand) {
  for (const char* c : {"", "info ", "solve ", "convert ", "gemm "}) {
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
  const auto r = run("solve " + data + "/gr_30_30.mtx --precond jacobi --format ell -o " + out);
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
  for (const char* f : {"csr", "coo", "csc", "ell", "jds", "dense"}) {
    const auto r = run("solve " + data + "/gr_30_30.mtx --precision float --tol 1e-5 --format " + f);
    EXPECT_EQ(r.status, 0) << f << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string(f) + ", float")) << r.output;
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
  const auto r = run("solve " + f);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "breakdown")) << r.output;
  EXPECT_TRUE(contains(r.output, "not symmetric positive definite")) << r.output;
  std::remove(f.c_str());
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
  EXPECT_TRUE(contains(r.output, "--precond must be one of none|jacobi")) << r.output;
  r = run("solve " + data + "/gr_30_30.mtx --tol abc");
  EXPECT_EQ(r.status, 2);
  r = run("solve " + data + "/gr_30_30.mtx --bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "unknown option --bogus")) << r.output;
  r = run("solve " + data + "/gr_30_30.mtx --device gpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.output, "no GPU CG solver")) << r.output;
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
  }
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

}  // namespace
