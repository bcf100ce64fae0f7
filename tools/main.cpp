// la: command-line front end. Exit statuses: tools/run.hpp (one rule for every command).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <la/atomic_file.hpp>
#include <la/error.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include "args.hpp"
#include "commands.hpp"
#include "run.hpp"

#ifndef LA_VERSION
#define LA_VERSION "unknown"
#endif
#ifndef LA_VENDOR_MODULE
#define LA_VENDOR_MODULE "libla_cli_vendor.so"
#endif
#ifndef LA_VENDOR_MODULE_FROM_BIN
#define LA_VENDOR_MODULE_FROM_BIN "../lib"
#endif

namespace {
const char* usage =
    "usage: la <command> [options]\n"
    "       la --version\n"
    "\n"
    "commands:\n"
    "  info     A.mtx | gen:SPEC      size, nonzeros, row statistics, storage per format\n"
    "  solve    A.mtx [options]       conjugate gradients on a symmetric positive definite system\n"
    "  options                        la solve's options, methods and preconditioners as a Markdown\n"
    "                                 table, from the registry (docs/options.md is its output)\n"
    "  convert  IN.mtx -o OUT.mtx     rewrite a Matrix Market file (expanded, duplicates summed)\n"
    "  gemm     M N K [--algo NAME]   run, validate and time one GPU GEMM against cuBLAS\n"
    "  spmv     A.mtx [--kernel NAME] run, validate and time one GPU SpMV kernel\n"
    "  bench    spmv [A.mtx|gen:SPEC]...  every SpMV kernel beside cuSPARSE, validated and timed\n"
    "  bench    gesv|dgemm [--sizes N,...] dense LU/Cholesky beside cuSOLVER, fp64 GEMM beside cuBLAS\n"
    "\n"
    "Exit status: 0 success; 1 the command ran but its result is not good (the solve did not\n"
    "converge, a kernel failed validation); 2 bad usage or input (options, files, sizes,\n"
    "LA_THREADS, LA_HOST_MEMORY_LIMIT); 3 no usable GPU, or a CUDA or internal failure.\n"
    "'la <command> --help' describes each command.\n";

std::string exe_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  std::string p(buf.data(), static_cast<std::size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

}  // namespace

namespace la::cli {
int run_module(const char* file, const char* entry, const char* what, int argc, char** argv, bool global) {
  const std::string dir = exe_dir();
  std::string tried;
  for (const std::string& path : {dir + "/" + file, dir + "/" + LA_VENDOR_MODULE_FROM_BIN + "/" + file}) {
    // RTLD_GLOBAL for a module whose libraries load plugins of their own that need its
    // symbols (an MPI's components).
    void* h = ::dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h) {
      tried += std::string("\n  ") + ::dlerror();
      continue;
    }
    using entry_fn = int (*)(int, char**);
    auto f = reinterpret_cast<entry_fn>(::dlsym(h, entry));
    if (!f) {
      tried += "\n  " + la::printable(path) + ": no entry point " + entry;
      continue;
    }
    return f(argc, argv);  // the module stays loaded until exit
  }
  std::fprintf(stderr, "la %s: the module with %s cannot be loaded:%s\n", argv[1], what, tried.c_str());
  return exit_device;
}
}  // namespace la::cli

namespace {
/// gemm and bench live in a module loaded at run time (tools/vendor_commands.cpp).
int run_vendor_command(int argc, char** argv) {
  return la::cli::run_module(LA_VENDOR_MODULE, "la_cli_vendor_main", "the cuBLAS/cuSPARSE comparisons", argc, argv,
                             false);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? la::cli::exit_usage : la::cli::exit_ok;
  }
  if (!std::strcmp(argv[1], "--version")) return std::printf("la %s\n", LA_VERSION), la::cli::exit_ok;
  const std::string cmd = argv[1];
  la::atomic_file::install_cleanup_on_signals();  // an interrupted run leaves no temporary behind
  // The environment is checked like options, before any work.
  const int env = la::cli::run_command(cmd, [] {
    (void)la::thread_count();
    (void)la::host_memory_available();
    return la::cli::exit_ok;
  });
  if (env != la::cli::exit_ok) return env;
  if (cmd == "gemm" || cmd == "bench") return run_vendor_command(argc, argv);
  return la::cli::run_command(cmd, [&] {
    if (cmd == "info") return la::cli::cmd_info(argc, argv);
    if (cmd == "solve") return la::cli::cmd_solve(argc, argv);
    if (cmd == "options") return la::cli::cmd_options(argc, argv);
    if (cmd == "convert") return la::cli::cmd_convert(argc, argv);
    if (cmd == "spmv") return la::cli::cmd_spmv(argc, argv);
    std::fprintf(stderr, "la: unknown command '%s'\n\n%s", la::printable(cmd).c_str(), usage);
    return la::cli::exit_usage;
  });
}
