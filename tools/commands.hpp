#pragma once

namespace la::cli {
int cmd_info(int argc, char** argv);
int cmd_solve(int argc, char** argv);
int cmd_options(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_gemm(int argc, char** argv);
int cmd_spmv(int argc, char** argv);
int cmd_bench(int argc, char** argv);
/// Loads module `file` (beside the executable, or in the install's lib/la) and returns
/// entry(argc, argv); exit status 3 with the loader's reasons when it cannot.
int run_module(const char* file, const char* entry, const char* what, int argc, char** argv, bool global);
}  // namespace la::cli
