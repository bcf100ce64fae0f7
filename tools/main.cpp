// la: command-line front end. Exit status: 0 success, 1 the solver did not converge,
// 2 bad usage or unreadable/invalid input, 3 a CUDA or library failure.
#include <cstdio>
#include <cstring>
#include <string>

#include <la/la/error.hpp>
#include "args.hpp"
#include "commands.hpp"

namespace {
const char* usage =
    "usage: la <command> [options]\n"
    "\n"
    "commands:\n"
    "  info     A.mtx                 size, nonzeros, row statistics, storage per format\n"
    "  solve    A.mtx [options]       conjugate gradients on a symmetric positive definite system\n"
    "  convert  IN.mtx -o OUT.mtx     rewrite a Matrix Market file (expanded, duplicates summed)\n"
    "  gemm     M N K [--algo NAME]   run, validate and time one GPU GEMM against cuBLAS\n"
    "  spmv     A.mtx [--kernel NAME] run, validate and time one GPU SpMV kernel\n"
    "  bench    spmv [A.mtx|gen:SPEC]...  every SpMV kernel beside cuSPARSE, validated and timed\n"
    "\n"
    "'la <command> --help' describes each command.\n";
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "info") return la::cli::cmd_info(argc, argv);
    if (cmd == "solve") return la::cli::cmd_solve(argc, argv);
    if (cmd == "convert") return la::cli::cmd_convert(argc, argv);
    if (cmd == "gemm") return la::cli::cmd_gemm(argc, argv);
    if (cmd == "spmv") return la::cli::cmd_spmv(argc, argv);
    if (cmd == "bench") return la::cli::cmd_bench(argc, argv);
    std::fprintf(stderr, "la: unknown command '%s'\n\n%s", cmd.c_str(), usage);
    return 2;
  } catch (const la::cli::usage_error& e) {
    std::fprintf(stderr, "la %s: %s (see 'la %s --help')\n", cmd.c_str(), e.what(), cmd.c_str());
    return 2;
  } catch (const la::device_error& e) {  // CUDA runtime, cuBLAS, cuSPARSE
    std::fprintf(stderr, "la %s: %s\n", cmd.c_str(), e.what());
    return 3;
  } catch (const la::error& e) {
    std::fprintf(stderr, "la %s: error: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "la %s: error: out of host memory\n", cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "la %s: internal error: %s\n", cmd.c_str(), e.what());
    return 3;
  }
}
