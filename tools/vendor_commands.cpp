// The commands that time la against cuBLAS and cuSPARSE (la gemm, la bench), built as a
// module that the la executable loads only for them: the vendor libraries take about
// 250 MB and half a second to map, which no other command should pay.
#include <string>

#include "commands.hpp"
#include "run.hpp"

extern "C" __attribute__((visibility("default"))) int la_cli_vendor_main(int argc, char** argv) {
  const std::string cmd = argv[1];
  return la::cli::run_command(cmd, [&] {
    if (cmd == "gemm") return la::cli::cmd_gemm(argc, argv);
    return la::cli::cmd_bench(argc, argv);
  });
}
