#pragma once

namespace la::cli {
int cmd_info(int argc, char** argv);
int cmd_solve(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_gemm(int argc, char** argv);
int cmd_spmv(int argc, char** argv);
int cmd_bench(int argc, char** argv);
}  // namespace la::cli
