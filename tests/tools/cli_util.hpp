// Running the built la binary from tests: output and exit status, peak memory and time.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace la::test {

struct run_result {
  int status;          // exit status; -1 when the process did not exit (killed by a signal)
  std::string output;  // stdout and stderr together
};

/// Runs a shell command line; stdout and stderr together.
inline run_result run_shell(const std::string& cmd_line) {
  const std::string cmd = "{ " + cmd_line + "\n} 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

/// Runs the la binary with these arguments (a shell line: quote what needs it).
inline run_result run(const std::string& args) { return run_shell(std::string(LA_CLI_PATH) + " " + args); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct usage_result {
  int status = -1;
  double max_rss_bytes = 0;  // the child's peak resident memory
  double seconds = 0;        // wall time
};

/// Starts la with `argv` (no shell) and returns its pid (-1 when it cannot start): stdout
/// discarded, stderr to `stderr_path`, `extra_env` ("NAME=value") ahead of the environment.
inline pid_t spawn_la(std::vector<std::string> argv, const std::vector<std::string>& extra_env = {},
                      const std::string& stderr_path = "/dev/null") {
  argv.insert(argv.begin(), LA_CLI_PATH);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_store(extra_env);
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  std::vector<char*> env;
  for (auto& e : env_store) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

/// Runs la with `argv` (no shell), output discarded; its exit status, peak memory and time.
inline usage_result measure_la(std::vector<std::string> argv, const std::vector<std::string>& extra_env = {}) {
  usage_result r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn_la(std::move(argv), extra_env);
  if (pid < 0) return r;
  int st = 0;
  struct rusage ru {};
  wait4(pid, &st, 0, &ru);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.max_rss_bytes = double(ru.ru_maxrss) * 1024.0;
  return r;
}

}  // namespace la::test
