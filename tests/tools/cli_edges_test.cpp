// The la command line at its edges: sizes that overflow, outputs that must not be lost or
// replaced, signals, files that change under la, answers that must not claim more than
// they are, messages and exit statuses. Each test reproduces a defect found by trying la
// as a new user would and by adversarial input.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <complex>
#include <regex>
#include <thread>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/context.hpp>
#include "cli_util.hpp"
#include "test_util.hpp"

namespace {

using la::test::contains;
using la::test::read_file;
using la::test::run;
using la::test::run_shell;
namespace fs = std::filesystem;

const std::string data = LA_DATA_DIR;
const std::string la_bin = LA_CLI_PATH;

/// A fresh directory for one test, removed at the end.
struct scratch_dir {
  std::string path;
  explicit scratch_dir(const std::string& name)
      : path(::testing::TempDir() + "la_edges_" + name + "_" + std::to_string(::getpid())) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return path + "/" + f; }
  /// Names in the directory that contain `part` (left-behind temporaries).
  int count(const std::string& part) const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(path)) n += contains(e.path().filename().string(), part);
    return n;
  }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// No message shows la's internals or a wrapped-around number.
void expect_no_internals(const std::string& out, const std::string& what) {
  for (const char* leak : {"failed check", "generate.hpp", ".cpp:", ".hpp:", "O = std::int64_t", "la::with_offsets",
                           "-9223372036854775808", "-2147483648", "insufficient for CUDA runtime"})
    EXPECT_FALSE(contains(out, leak)) << what << " leaks '" << leak << "':\n" << out;
}

// ---- 1, 17, 18: gen: numbers are range-checked integers ---------------------------------

TEST(CliEdges, GeneratedSizesAreRangeCheckedNotCutTo32Bits) {
  // Each of these was silently cut to 32 bits (a 0 x 0, 1 x 1 or 10 x 10 system) or crashed.
  for (const std::string spec :
       {"poisson2d:4294967296", "poisson2d:4294967297", "poisson3d:4194304", "poisson2d:46341", "poisson3d:1291",
        "poisson2d:-3", "poisson2d:+3", "poisson2d:3x", "poisson2d:", "random:4294967306:2", "random:10:11",
        "rmat:4294967297:1", "rmat:10:4294967297", "rmat:31:1", "denserows:4294967306:2:1:5", "denserows:10:2:11:5"}) {
    const auto r = run("info gen:" + spec);
    EXPECT_EQ(r.status, 2) << spec << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "gen:" + spec)) << "the message names the spec\n" << r.output;
    EXPECT_TRUE(contains(r.output, "out of range") || contains(r.output, "not a non-negative integer") ||
                contains(r.output, "expected"))
        << spec << "\n" << r.output;
    expect_no_internals(r.output, spec);
  }
  const auto r = run("solve gen:poisson2d:4294967297 --device cpu");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "at most 2147483647")) << r.output;
  const auto p3 = run("solve gen:poisson3d:4194304 --device cpu");
  EXPECT_EQ(p3.status, 2) << p3.output;  // it used to write past the row pointers
  EXPECT_TRUE(contains(p3.output, "[1, 1290]")) << p3.output;
  // The bench's specs are checked the same way, before a GPU is looked for.
  const auto b = run("bench spmv gen:random:4294967306:2");
  EXPECT_EQ(b.status, 2) << b.output;
  EXPECT_TRUE(contains(b.output, "out of range")) << b.output;
}

TEST(CliEdges, GeneratedSizesThatNeed64BitOffsetsSaySo) {
  // 30000^2 grid: 4.5e9 nonzeros. With --offsets 32 the answer names the way out; with auto or
  // 64 the offsets are 64-bit (here refused for memory, since the matrix needs 54 GB).
  const auto r = run("solve gen:poisson2d:30000 --offsets 32 --device cpu");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "4499880000 nonzeros")) << r.output;
  EXPECT_TRUE(contains(r.output, "--offsets 64")) << r.output;
  expect_no_internals(r.output, "poisson2d:30000");
  for (const char* w : {"auto", "64"}) {
    const auto m = run_shell("LA_HOST_MEMORY_LIMIT=1000000000 " + la_bin + " solve gen:poisson2d:30000 --device cpu --offsets " + w);
    EXPECT_EQ(m.status, 2) << m.output;
    EXPECT_TRUE(contains(m.output, "of host memory")) << m.output;
    EXPECT_FALSE(contains(m.output, "offsets")) << "--offsets " << w << " was not honoured:\n" << m.output;
  }
  // --offsets 64 is honoured for gen: inputs.
  const auto i = run("info gen:poisson2d:30 --offsets 64");
  EXPECT_EQ(i.status, 0) << i.output;
  EXPECT_TRUE(contains(i.output, "offsets:         64-bit")) << i.output;
  const auto s = run("solve gen:poisson2d:30 --offsets 64 --device cpu");
  EXPECT_EQ(s.status, 0) << s.output;
  EXPECT_TRUE(contains(s.output, "64-bit offsets")) << s.output;
}

// ---- 2, 3: boundary sizes in files, and the memory estimate -------------------------------

TEST(CliEdges, BoundarySizesInEverySymmetryFailAtOnce) {
  scratch_dir d("boundary");
  struct file_case {
    std::string name, text;
  };
  const std::string max = "2147483647";
  std::vector<file_case> cases = {
      {"rows", "%%MatrixMarket matrix coordinate real general\n" + max + " 1 0\n"},
      {"cols", "%%MatrixMarket matrix coordinate real general\n1 " + max + " 0\n"},
      {"both", "%%MatrixMarket matrix coordinate real general\n" + max + " " + max + " 1\n" + max + " " + max + " 1\n"},
      {"sym", "%%MatrixMarket matrix coordinate real symmetric\n" + max + " " + max + " 1\n2 1 1\n"},
      {"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n" + max + " " + max + " 1\n2 1 1\n"},
      {"pattern", "%%MatrixMarket matrix coordinate pattern symmetric\n" + max + " " + max + " 0\n"},
      {"entries", "%%MatrixMarket matrix coordinate real general\n1 1 " + max + "\n1 1 1\n"},
  };
  for (const auto& c : cases) {
    const std::string f = d / (c.name + ".mtx");
    write(f, c.text);
    for (const std::string cmd : {"convert " + f + " -o " + f + ".out", "solve " + f + " --device cpu"}) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = run_shell("LA_HOST_MEMORY_LIMIT=4000000000 " + la_bin + " " + cmd);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // 1 x (2^31 - 1) with no entries is small and converts; every other case needs row arrays
      // of 2^31 entries or more and is refused at once (the solve also refuses non-square).
      const bool small = c.name == "cols" && cmd[0] == 'c';
      EXPECT_EQ(r.status, small ? 0 : 2) << c.name << ": " << cmd << "\n" << r.output;
      EXPECT_LT(s, 10.0) << c.name << ": " << cmd << " did not fail at once";
      expect_no_internals(r.output, c.name);
      if (c.name == "entries") EXPECT_TRUE(contains(r.output, "entries")) << r.output;
    }
    EXPECT_EQ(fs::exists(f + ".out"), c.name == "cols") << c.name;
    EXPECT_EQ(d.count(".la-tmp-"), 0);
  }
  // What the refusal says: the size and what it needs.
  const auto r = run_shell("LA_HOST_MEMORY_LIMIT=4000000000 " + la_bin + " convert " + (d / "rows.mtx") + " -o " + (d / "o.mtx"));
  EXPECT_TRUE(contains(r.output, "2147483647 x 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "of host memory")) << r.output;
}

/// "needs 1.2 GB of host memory" -> bytes.
double needed_bytes(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("needs ([0-9.]+) (B|kB|MB|GB|TB) of host memory"))) return -1;
  const double scale = m[2] == "B" ? 1 : m[2] == "kB" ? 1e3 : m[2] == "MB" ? 1e6 : m[2] == "GB" ? 1e9 : 1e12;
  return std::stod(m[1]) * scale;
}

TEST(CliEdges, ConversionMemoryEstimateIsWithinTwiceThePeak) {
  // The estimate is what la says it needs when refused (a limit of 1 byte); the peak is the
  // resident memory of the same conversion run to the end. A hypersparse file (row arrays
  // dominate) and an ordinary one (entries and the output text dominate).
  scratch_dir d("estimate");
  write(d / "hyper.mtx", "%%MatrixMarket matrix coordinate real general\n30000000 30000000 3\n1 1 1\n7 9 2\n29999999 3 3\n");
  ASSERT_EQ(run("convert gen:random:300000:12 -o " + (d / "random.mtx")).status, 0);
  for (const std::string f : {"hyper.mtx", "random.mtx"}) {
    const std::string in = d / f, out = d / (f + ".out");
    const auto refused = la::test::measure_la({"convert", in, "-o", out}, {"LA_HOST_MEMORY_LIMIT=1"});
    ASSERT_EQ(refused.status, 2);
    const auto msg = run_shell("LA_HOST_MEMORY_LIMIT=1 " + la_bin + " convert " + in + " -o " + out);
    const double estimate = needed_bytes(msg.output);
    ASSERT_GT(estimate, 0) << msg.output;
    const auto full = la::test::measure_la({"convert", in, "-o", out, "--threads", "2"});
    ASSERT_EQ(full.status, 0);
    const auto base = la::test::measure_la({"--help"});  // the process itself, without the work
    const double peak = full.max_rss_bytes - base.max_rss_bytes;
    EXPECT_LE(estimate, 2 * peak) << f << ": estimate " << estimate << " B, peak " << peak << " B";
    EXPECT_GE(estimate, peak / 2) << f << ": estimate " << estimate << " B, peak " << peak << " B";
    // At the boundary: a limit just above the estimate (la keeps 10% free) passes, one a
    // tenth of it is refused.
    const std::string above = std::to_string(static_cast<long long>(estimate / 0.9 * 1.1));
    EXPECT_EQ(la::test::measure_la({"convert", in, "-o", out}, {"LA_HOST_MEMORY_LIMIT=" + above}).status, 0) << f;
    const std::string below = std::to_string(static_cast<long long>(estimate / 10));
    EXPECT_EQ(la::test::measure_la({"convert", in, "-o", out}, {"LA_HOST_MEMORY_LIMIT=" + below}).status, 2) << f;
  }
}

// ---- 4: a file that changes under la ------------------------------------------------------

/// Starts `la info f`, waits until f is mapped into it (/proc/PID/maps), truncates f, and
/// returns la's exit status (-1: killed by a signal) and its stderr; `seen` is false when la
/// finished before the mapping was seen.
int truncate_while_mapped(const std::string& f, const std::string& err_path, bool& seen) {
  seen = false;
  const pid_t pid = la::test::spawn_la({"info", f, "--threads", "2"}, {}, err_path);
  if (pid < 0) return -2;
  const std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  int st = 0;
  for (int polls = 0; polls < 50000; ++polls) {
    if (contains(read_file(maps), f)) {
      seen = true;
      fs::resize_file(f, 4096);
      break;
    }
    if (::waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(CliEdges, AFileTruncatedWhileReadGivesACleanError) {
  // The file is truncated while la has it mapped (it used to die with SIGBUS): a clean error
  // that names the change.
  scratch_dir d("truncate");
  const std::string master = d / "master.mtx", f = d / "big.mtx", err = d / "err.txt";
  ASSERT_EQ(run("convert gen:random:200000:10 -o " + master).status, 0);
  int truncated = 0;
  for (int attempt = 0; attempt < 4 && truncated < 2; ++attempt) {
    fs::copy_file(master, f, fs::copy_options::overwrite_existing);
    bool seen = false;
    const int status = truncate_while_mapped(f, err, seen);
    const std::string out = read_file(err);
    EXPECT_NE(status, -1) << "la was killed by a signal:\n" << out;
    if (!seen) continue;  // la finished before the mapping was seen: try again
    ++truncated;
    // Truncated after the parse had read everything, la may have finished cleanly.
    EXPECT_TRUE(status == 2 || status == 0) << out;
    if (status == 2) EXPECT_TRUE(contains(out, "changed while it was being read")) << out;
  }
  EXPECT_GT(truncated, 0) << "la never had the file mapped long enough to truncate it";
}

// ---- 5, 6, 8, 9, 10: outputs -----------------------------------------------------------

TEST(CliEdges, AFailedSolveLeavesTheOutputAsItWas) {
  scratch_dir d("failed");
  const std::string prev = d / "prev.mtx", b = d / "b.mtx";
  write(prev, "previous contents\n");
  std::vector<double> rhs(900, 1.0);
  rhs[9] = std::nan("");
  la::write_matrix_market_vector(b, rhs);
  auto r = run("solve " + data + "/gr_30_30.mtx --device cpu --rhs " + b + " -o " + prev);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "at entry 10 (1-based)")) << r.output;  // 13: the 10th entry
  EXPECT_EQ(read_file(prev), "previous contents\n");
  EXPECT_TRUE(contains(r.output, "not written")) << r.output;
  // Breakdown (not SPD), and the iteration limit: the same.
  write(d / "indef.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 -1\n");
  r = run("solve " + (d / "indef.mtx") + " --device cpu --method cg -o " + prev);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "breakdown")) << r.output;
  EXPECT_EQ(read_file(prev), "previous contents\n");
  r = run("solve " + data + "/gr_30_30.mtx --device cpu --maxit 3 -o " + prev);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(read_file(prev), "previous contents\n");
  EXPECT_EQ(d.count(".la-tmp-"), 0);
  // Asked for explicitly, the last iterate is written.
  r = run("solve " + data + "/gr_30_30.mtx --device cpu --maxit 3 --write-unconverged -o " + prev);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(la::read_matrix_market_vector<double>(prev).size(), 900u);
  // --help says what happens.
  const auto help = run("solve --help");
  EXPECT_TRUE(contains(help.output, "--write-unconverged")) << help.output;
}

TEST(CliEdges, TwoOutputsThatAreOneFileAreRefused) {
  scratch_dir d("same");
  const std::string f = d / "F", link = d / "link", hard = d / "hard";
  write(f, "keep\n");
  fs::create_symlink(f, link);
  fs::create_hard_link(f, hard);
  for (const auto& [h, o] : std::vector<std::pair<std::string, std::string>>{{f, f}, {f, link}, {link, hard}, {d / "new", d / "new"}}) {
    const auto r = run("solve " + data + "/gr_30_30.mtx --device cpu --history " + h + " -o " + o);
    EXPECT_EQ(r.status, 2) << h << " " << o << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "are the same file")) << r.output;
    EXPECT_FALSE(contains(r.output, "status:")) << "it solved first:\n" << r.output;
  }
  EXPECT_EQ(read_file(f), "keep\n");
  EXPECT_FALSE(fs::exists(d / "new"));
  // A dangling link to a new name and that name are one output too.
  fs::create_symlink(d / "target", d / "dangling");
  const auto r = run("solve " + data + "/gr_30_30.mtx --device cpu --history " + (d / "dangling") + " -o " + (d / "target"));
  EXPECT_EQ(r.status, 2) << r.output;
}

TEST(CliEdges, WriteProtectedTargetsNeedForce) {
  scratch_dir d("readonly");
  const std::string f = d / "ro.mtx";
  write(f, "read only\n");
  fs::permissions(f, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  for (const std::string cmd : {"convert " + data + "/bcsstk01.mtx -o " + f, "solve " + data + "/bcsstk01.mtx --device cpu -o " + f}) {
    const auto r = run(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "write-protected")) << r.output;
    EXPECT_TRUE(contains(r.output, "--force")) << r.output;
    EXPECT_EQ(read_file(f), "read only\n");
  }
  const auto forced = run("convert " + data + "/bcsstk01.mtx -o " + f + " --force");
  EXPECT_EQ(forced.status, 0) << forced.output;
  EXPECT_EQ(la::read_matrix_market<double>(f).rows(), 48);
  EXPECT_EQ(fs::status(f).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);  // its mode kept
  EXPECT_EQ(d.count(".la-tmp-"), 0);
}

TEST(CliEdges, OutputThroughASymbolicLinkWritesItsTarget) {
  scratch_dir d("links");
  const std::string target = d / "target.mtx", link = d / "link.mtx";
  write(target, "old\n");
  fs::create_symlink(target, link);
  ASSERT_EQ(run("convert " + data + "/bcsstk01.mtx -o " + link).status, 0);
  EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(la::read_matrix_market<double>(target).rows(), 48);
  // A dangling link: the file it names is created, the link stays.
  const std::string dangling = d / "dangling.mtx", named = d / "sub_named.mtx";
  fs::create_symlink("sub_named.mtx", dangling);  // relative to the link's folder
  const auto r = run("convert " + data + "/bcsstk01.mtx -o " + dangling);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(dangling)) << "the dangling link was replaced by a file";
  ASSERT_TRUE(fs::exists(named));
  EXPECT_EQ(la::read_matrix_market<double>(named).rows(), 48);
  EXPECT_EQ(d.count(".la-tmp-"), 0);
}

TEST(CliEdges, StdoutAsTheOutputCarriesOnlyData) {
  scratch_dir d("stdout");
  const std::string f = d / "f.mtx";
  auto r = run_shell(la_bin + " convert " + data + "/bcsstk01.mtx -o /dev/stdout 2>/dev/null | cat > " + f);
  EXPECT_EQ(r.status, 0) << r.output;
  const auto info = run("info " + f);
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_FALSE(contains(read_file(f), "wrote")) << read_file(f).substr(0, 200);
  r = run_shell(la_bin + " solve " + data + "/bcsstk01.mtx --device cpu --maxit 1000 -o /dev/stdout 2>/dev/null | cat > " + f);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(la::read_matrix_market_vector<double>(f).size(), 48u) << read_file(f).substr(0, 300);
}

// ---- 7: signals -------------------------------------------------------------------------

/// Starts `la convert big -o tgt`, waits until the temporary beside tgt exists and is empty
/// (`writing` false: la is reading and converting) or holds data (`writing` true: la is
/// writing it), then sends `sig`. Returns how la ended ("signal N", "exit N") and whether
/// the phase was reached before la finished.
std::pair<std::string, bool> interrupt(const scratch_dir& d, const std::string& big, const std::string& tgt, int sig,
                                       bool writing) {
  const pid_t pid = la::test::spawn_la({"convert", big, "-o", tgt, "--threads", "2"});
  if (pid < 0) return {"spawn failed", false};
  bool reached = false;
  for (int polls = 0; polls < 20000 && !reached; ++polls) {
    for (const auto& e : fs::directory_iterator(d.path)) {
      if (!contains(e.path().filename().string(), ".la-tmp-")) continue;
      std::error_code ec;
      const auto size = fs::file_size(e.path(), ec);
      if (!ec && (writing ? size > 0 : size == 0)) reached = true;
    }
    if (reached) ::kill(pid, sig);
    else std::this_thread::sleep_for(std::chrono::microseconds(200));
    int st = 0;
    if (!reached && ::waitpid(pid, &st, WNOHANG) == pid) return {"finished first", false};
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return {WIFSIGNALED(st) ? "signal " + std::to_string(WTERMSIG(st)) : "exit " + std::to_string(WEXITSTATUS(st)), reached};
}

TEST(CliEdges, SignalsLeaveNoTemporaryAndTheTargetAsItWas) {
  // SIGINT and SIGTERM while la reads and converts (the temporary exists, empty) and while it
  // writes (the temporary holds data): the process ends by the signal, the temporary is
  // gone and the target is as it was.
  scratch_dir d("signals");
  const std::string big = d / "big.mtx", tgt = d / "tgt.mtx";
  ASSERT_EQ(run("convert gen:random:200000:10 -o " + big).status, 0);
  for (int sig : {SIGINT, SIGTERM})
    for (bool writing : {false, true}) {
      write(tgt, "target before\n");
      const auto [how, reached] = interrupt(d, big, tgt, sig, writing);
      const std::string phase = std::string(writing ? "writing" : "reading") + ", signal " + std::to_string(sig);
      EXPECT_EQ(d.count(".la-tmp-"), 0) << phase << ": a temporary was left behind";
      if (!reached) {
        ADD_FAILURE() << phase << ": la " << how << " before the phase was seen";
        continue;
      }
      if (how == "signal " + std::to_string(sig)) {
        EXPECT_EQ(read_file(tgt), "target before\n") << phase;
      } else {  // the signal came as la renamed the finished file: the whole output, exit 0
        EXPECT_EQ(how, "exit 0") << phase;
        EXPECT_EQ(la::read_matrix_market<double>(tgt).rows(), 200000) << phase;
      }
    }
}

// ---- 11, 12: what a status claims ------------------------------------------------------

TEST(CliEdges, FloatCannotClaimADoubleTolerance) {
  const auto r = run("solve gen:poisson3d:30 --precision float --device cpu");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "precision_limit")) << r.output;
  EXPECT_TRUE(contains(r.output, "the true residual")) << r.output;
  // In double the same system converges, and exit 0 means the true residual met it.
  const auto d = run("solve gen:poisson3d:30 --device cpu");
  EXPECT_EQ(d.status, 0) << d.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d.output, m, std::regex("true \\|\\|b-Ax\\|\\|/\\|\\|b\\|\\| = ([0-9.e+-]+)")));
  EXPECT_LE(std::stod(m[1]), 100 * 1e-8);
}

TEST(CliEdges, TolerancesPrintShortAndUnderflowIsNamed) {
  const auto z = run("solve " + data + "/bcsstk01.mtx --device cpu --tol 0 --maxit 200");
  for (const auto& word : {std::regex("[0-9]{30,}")}) EXPECT_FALSE(std::regex_search(z.output, word)) << z.output;
  const auto u = run("solve " + data + "/bcsstk01.mtx --device cpu --tol 1e-400");
  EXPECT_EQ(u.status, 2) << u.output;
  EXPECT_TRUE(contains(u.output, "underflows")) << u.output;
  EXPECT_FALSE(contains(u.output, "not finite")) << u.output;
}

// ---- 14, 15, 16: exit statuses and messages ------------------------------------------------

TEST(CliEdges, OneExitStatusRuleForNoGpu) {
  if (la::cuda_available()) GTEST_SKIP() << "a GPU is present: this checks the answer on a machine without one";
  for (const std::string cmd : {"solve " + data + "/bcsstk01.mtx --device gpu", "spmv " + data + "/bcsstk01.mtx",
                                std::string("gemm 64 64 64"), "bench spmv " + data + "/bcsstk01.mtx"}) {
    const auto r = run(cmd);
    EXPECT_EQ(r.status, 3) << cmd << "\n" << r.output;
    EXPECT_TRUE(la::test::says_why_no_gpu(r.output)) << r.output;
    expect_no_internals(r.output, cmd);
  }
  const auto help = run("--help");
  EXPECT_TRUE(contains(help.output, "3 no usable GPU")) << help.output;
}

TEST(CliEdges, ArgumentsAreCheckedBeforeTheGpu) {
  auto r = run("gemm 256 256 256 --algo bogus");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown GEMM algorithm 'bogus'")) << r.output;
  r = run("gemm 256 256 256 --rounds 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "option --rounds needs an integer in [1, 1000], got '0'")) << r.output;
  r = run("spmv gen:bogus:3");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown generated matrix")) << r.output;
  r = run("spmv " + data + "/bcsstk01.mtx --kernel bogus");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(contains(r.output, "dense_gemv")) << "it lists a kernel it refuses:\n" << r.output;
  EXPECT_TRUE(contains(run("spmv " + data + "/bcsstk01.mtx --kernel dense_gemv").output, "unknown SpMV kernel"));
  r = run("solve gen:poisson4d:3");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "gen:poisson2d:N")) << r.output;
  EXPECT_FALSE(contains(r.output, "random:")) << "solve suggests what it refuses:\n" << r.output;
  for (const auto& out : {run("spmv x.mtx").output, run("gemm 1 1 1").output, run("bench spmv x.mtx").output}) {
    EXPECT_FALSE(contains(out, "la spmv: la spmv")) << out;
    EXPECT_FALSE(contains(out, "la gemm: la gemm")) << out;
    EXPECT_FALSE(contains(out, "la bench: la bench")) << out;
  }
}

TEST(CliEdges, EnvironmentIsCheckedLikeOptions) {
  for (const std::string env : {"LA_HOST_MEMORY_LIMIT=garbage", "LA_HOST_MEMORY_LIMIT=-1", "LA_THREADS=x",
                                "LA_THREADS=999", "LA_THREADS=0"}) {
    const auto r = run_shell(env + " " + la_bin + " info " + data + "/bcsstk01.mtx");
    EXPECT_EQ(r.status, 2) << env << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, env.substr(0, env.find('=')))) << r.output;
  }
  EXPECT_EQ(run_shell("LA_THREADS=3 LA_HOST_MEMORY_LIMIT=100000000000 " + la_bin + " info " + data + "/bcsstk01.mtx").status, 0);
}

TEST(CliEdges, FileNamesAreEscapedInMessages) {
  const auto r = run(std::string("info '") + "bad\x1b[31mname\nline.mtx'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(contains(r.output, "\x1b")) << "a raw escape byte reached the terminal";
  EXPECT_TRUE(contains(r.output, "bad\\x1b[31mname\\x0aline.mtx")) << r.output;
}

TEST(CliEdges, InfoAndConvertTakeGeneratedMatricesAndInfoShowsEveryFormat) {
  scratch_dir d("gen");
  const auto i = run("info gen:poisson2d:5");
  EXPECT_EQ(i.status, 0) << i.output;
  EXPECT_TRUE(contains(i.output, "25 x 25")) << i.output;
  for (const char* f : {"dense", "COO", "CSR", "CSC", "ELL", "JDS", "HYB", "SELL"})
    EXPECT_TRUE(std::regex_search(i.output, std::regex(std::string("\n  ") + f + " +[0-9]+ B"))) << f << "\n" << i.output;
  const auto c = run("convert gen:poisson2d:5 -o " + (d / "p.mtx"));
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(la::read_matrix_market<double>(d / "p.mtx").nnz(), 105);  // 5 n^2 - 4 n
  const auto v = run("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_TRUE(std::regex_search(v.output, std::regex("^la [0-9]+\\.[0-9]+\\.[0-9]+\n$"))) << v.output;
}

TEST(CliEdges, GeneratedHelmholtzIsComplexForInfoConvertAndSolve) {
  scratch_dir d("helmholtz");
  const auto i = run("info gen:helmholtz3d:6");
  EXPECT_EQ(i.status, 0) << i.output;
  EXPECT_TRUE(contains(i.output, "216 x 216")) << i.output;
  EXPECT_TRUE(contains(i.output, "matrix coordinate complex general")) << i.output;
  EXPECT_TRUE(contains(i.output, "complex symmetric values (exact; not Hermitian)")) << i.output;
  const auto c = run("convert gen:helmholtz2d:7:12:25 -o " + (d / "h.mtx") + " --symmetry symmetric");
  EXPECT_EQ(c.status, 0) << c.output;
  using z = std::complex<double>;
  const auto want = la::helmholtz<z>(2, 7, la::helmholtz_kappa(7, 12), 0.25);
  // The shortest round-trip text reads back exactly, and the generator computes the same bits
  // in every build.
  EXPECT_EQ(la::read_matrix_market_csr<z>(d / "h.mtx"), want);
  for (const std::string spec : {"helmholtz2d:0", "helmholtz2d:5:1", "helmholtz2d:5:10:100001", "helmholtz3d:1291",
                                 "helmholtz2d:5:10:50:1", "helmholtz2d:5:-3"}) {
    const auto r = run("info gen:" + spec);
    EXPECT_EQ(r.status, 2) << spec << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "gen:" + spec)) << r.output;
    expect_no_internals(r.output, spec);
  }
  const auto s = run("solve gen:helmholtz2d:5 --device cpu --method cocg");  // on the host, as complex
  EXPECT_EQ(s.status, 0) << s.output;
  EXPECT_TRUE(contains(s.output, "picked:     cocg")) << s.output;
}

TEST(CliEdges, SymmetricOutputComparesValuesAsNumbers) {
  scratch_dir d("symmetry");
  write(d / "zeros.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 -0.0\n2 1 0.0\n2 2 1\n");
  auto r = run("convert " + (d / "zeros.mtx") + " -o " + (d / "z.mtx") + " --symmetry symmetric");
  EXPECT_EQ(r.status, 0) << "0 and -0 are equal:\n" << r.output;
  write(d / "nan.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 nan\n2 1 nan\n2 2 1\n");
  r = run("convert " + (d / "nan.mtx") + " -o " + (d / "n.mtx") + " --symmetry symmetric");
  EXPECT_EQ(r.status, 2) << "a NaN equals nothing:\n" << r.output;
  EXPECT_TRUE(contains(r.output, "NaN")) << r.output;
}

// ---- 20: start-up -----------------------------------------------------------------------

TEST(CliEdges, HelpIsSmallAndQuick) {
  // la --help used to map cuBLAS, cuBLASLt and cuSPARSE: about 257 MB and up to 0.5 s.
  // Best of three, so that one slow start on a busy machine does not decide.
  double rss = 1e300, secs = 1e300;
  for (int k = 0; k < 3; ++k) {
    const auto u = la::test::measure_la({"--help"});
    ASSERT_EQ(u.status, 0);
    rss = std::min(rss, u.max_rss_bytes), secs = std::min(secs, u.seconds);
  }
  RecordProperty("help_max_rss_bytes", std::to_string(rss));
  RecordProperty("help_seconds", std::to_string(secs));
  std::printf("la --help: %.1f MB peak resident memory, %.1f ms\n", rss / 1e6, secs * 1e3);
  EXPECT_LT(rss, 30e6);
  EXPECT_LT(secs, 0.05);
  // The commands that do not time the vendor libraries do not load them.
  const auto info = la::test::measure_la({"info", data + "/bcsstk01.mtx"});
  EXPECT_LT(info.max_rss_bytes, 30e6);
}

TEST(CliEdges, SeveralGpusRefuseWhatTheyCannotDoBeforeAnyWork) {
  // --gpus / --mpi: options of the one-GPU or CPU solve, the two modes together, and a
  // preconditioner's option without its preconditioner are usage errors (exit 2), named, whether or not
  // this build has NCCL or the machine a GPU; the output file is not created.
  struct c {
    std::string args, says;
  };
  const std::string out = ::testing::TempDir() + "la_dist_refused.mtx";
  std::remove(out.c_str());
  for (const c& k : {c{"--gpus 2 --mpi", "pick one"}, c{"--gpus 2 --precond jacobi --ic-shift 1", "--ic-shift applies"},
                     c{"--gpus 2 --path graph", "--path applies"}, c{"--gpus 2 --device cpu", "--device cpu"},
                     c{"--gpus 0", "--gpus"}, c{"--gpus 2 --format ell", "--format"}}) {
    SCOPED_TRACE(k.args);
    const auto r = run("solve gen:poisson2d:10 " + k.args + " -o " + out);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(k.says), std::string::npos) << r.output;
    EXPECT_FALSE(std::ifstream(out).good());
  }
}

// ---- defaults that solve, answers that are right or say why ---------------------------------

// The default preconditioner is auto: systems of ../shared/data/spd that failed without one
// (bcsstk01 among them, bundled here) converge with the defaults, and the report says what
// auto built.
TEST(Defaults, TheDefaultPreconditionerIsAuto) {
  for (const char* m : {"gr_30_30.mtx", "bcsstk09.mtx", "bcsstk21.mtx"}) {  // (bcsstk01: direct first, direct_test)
    const auto s = run("solve " + data + "/" + m + " --device cpu --quiet");
    EXPECT_EQ(s.status, 0) << m << ":\n" << s.output;
    EXPECT_TRUE(contains(s.output, "precond auto")) << s.output;
    EXPECT_TRUE(contains(s.output, "(auto)")) << s.output;
  }
  // On the host, auto takes AMG on a 2D grid from 64^2 rows (measured on the host).
  const auto g = run("solve gen:poisson2d:100 --device cpu --quiet");
  EXPECT_EQ(g.status, 0) << g.output;
  EXPECT_TRUE(contains(g.output, "M^-1:       amg (auto)")) << g.output;
  // The iteration limit as it applies, and the time line names the check auto ran.
  EXPECT_TRUE(contains(g.output, "maxit 20000 (2n) for cg, 20000 (max(2n, 20000)) for bicgstab and gmres")) << g.output;
  EXPECT_TRUE(contains(g.output, "checking A for auto")) << g.output;
}

// A solution beyond double's range is not exit 0; a subnormal b is solved.
TEST(Defaults, SolutionsOutsideDoublesRangeFail) {
  scratch_dir d("range");
  write(d / "a.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e-300\n");
  write(d / "b.mtx", "%%MatrixMarket matrix array real general\n1 1\n1e300\n");
  const auto r = run("solve " + d / "a.mtx" + " --rhs " + d / "b.mtx" + " --device cpu -o " + d / "x.mtx");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "does not fit in double")) << r.output;
  EXPECT_FALSE(fs::exists(d / "x.mtx"));
  write(d / "eye.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  write(d / "tiny.mtx", "%%MatrixMarket matrix array real general\n2 1\n4e-320\n4e-320\n");
  const auto t = run("solve " + d / "eye.mtx" + " --rhs " + d / "tiny.mtx" + " --device cpu");
  EXPECT_EQ(t.status, 0) << t.output;
  EXPECT_FALSE(contains(t.output, "initial guess")) << t.output;
}

// A NaN column among several right-hand sides has no true residual to print, and says so.
TEST(Defaults, NanColumnHasNoTrueResidual) {
  scratch_dir d("nancol");
  write(d / "a.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 2 3\n");
  write(d / "b.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n1\nnan\n1\n");
  const auto r = run("solve " + d / "a.mtx" + " --rhs " + d / "b.mtx" + " --device cpu");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "column 2:   non_finite")) << r.output;
  EXPECT_TRUE(contains(r.output, "true ||b-Ax||/||b|| = not computed")) << r.output;
  EXPECT_FALSE(contains(r.output, "= 0.000e+00")) << r.output;
}

// Conflicts known before solving are usage (exit 2), and the messages agree with each other.
TEST(Defaults, ConflictsAreUsageAndMessagesAgree) {
  const auto cg = run("solve " + data + "/west0479.mtx --method cg --device cpu");
  EXPECT_EQ(cg.status, 2) << cg.output;
  const auto m = run("solve " + data + "/bcsstk09.mtx --precond jacobi --matching on --device cpu");
  EXPECT_EQ(m.status, 2) << m.output;
  EXPECT_TRUE(contains(m.output, "--matching applies to --precond ilu0")) << m.output;
  const auto sw = run("solve " + data + "/west0479.mtx --precond ilu0 --sweeps 5 --device cpu");
  EXPECT_EQ(sw.status, 2) << sw.output;
  EXPECT_TRUE(contains(sw.output, "--factorization sweeps")) << sw.output;
  for (const char* pe : {"3000000000", "99999999999999999999"}) {
    const auto p = run(std::string("solve gen:convdiff2d:10:") + pe + " --device cpu");
    EXPECT_EQ(p.status, 2) << p.output;
    EXPECT_TRUE(contains(p.output, "[0, 1000000000]")) << p.output;
  }
  const auto amg = run("solve gen:poisson2d:10 --gpus 2 --precond amg");
  EXPECT_EQ(amg.status, 2) << amg.output;
  EXPECT_TRUE(contains(amg.output, "do not build AMG")) << amg.output;
}

// GMRES on a singular matrix says A is singular.
TEST(Defaults, SingularMatrixIsNamed) {
  scratch_dir d("singular");
  write(d / "a.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 4\n1 1 1\n2 2 1\n4 4 1\n5 5 1\n");
  write(d / "b.mtx", "%%MatrixMarket matrix array real general\n5 1\n1\n1\n1\n1\n1\n");  // not in A's range
  const auto r = run("solve " + d / "a.mtx" + " --rhs " + d / "b.mtx" + " --method gmres --precond none --device cpu");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "A is singular")) << r.output;
  EXPECT_FALSE(contains(r.output, "rounding")) << r.output;
}

}  // namespace
