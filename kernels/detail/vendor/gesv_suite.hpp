// la's dense factorizations and fp64 GEMM beside cuSOLVER and cuBLAS in one process (`la
// bench gesv`, `la bench dgemm`): each result validated (the GEMMs against each other, the
// solves by their backward error in double), then timed by wall clock around a device sync.
#pragma once

#include <string>
#include <vector>

#include <la/kernels/detail/vendor/vendor.hpp>
#include <la/types.hpp>

namespace la {

struct gesv_row {
  std::string what;  // dgemm, getrf, potrf, gesv-mixed
  index_t n = 0;
  std::string impl;  // la:..., cusolver:..., cublas
  double ms = 0;     // the factorization (getrf, potrf), the product (dgemm), factor + solve (gesv)
  double solve_ms = 0;
  double tflops = 0;  // the factorization's (or product's) nominal flops over ms
  double backward_error = 0;
  int refinement_steps = 0;
  bool ok = false;
  std::string note;
};

struct gesv_bench_options {
  std::vector<index_t> sizes;
  int reps = 3;
  bool mixed = true;  // the mixed-precision solves beside cuSOLVER's fp64 and IRS ones
  bool lu = true, cholesky = true;
  bool progress = false;
  bool ablate = false;  // also la's fp64 factorization without look-ahead (la:fp64-no-lookahead, n > 512) and
                        // with the memory pool keeping freed memory (la:fp64-pool-kept, n <= 1024)
};

std::vector<gesv_row> bench_dgemm(context& ctx, vendor_handles& vh, const gesv_bench_options& o);
std::vector<gesv_row> bench_gesv(context& ctx, vendor_handles& vh, const gesv_bench_options& o);
/// Batches of small systems (`la bench gesv --batch`): for each n of o.sizes, `counts` systems
/// (the same index; default 10,000 up to n = 64, 1,000 above), factor + solve of one right-hand
/// side each: la::batched_dense_solver (LU; and Cholesky on SPD batches) beside cuBLAS's
/// getrfBatched + getrsBatched and cuSOLVER's potrfBatched + potrsBatched. Every system's
/// backward error is recomputed on the host in long double for every row: the worst must be
/// at most 1e-13, or the row says NO.
std::vector<gesv_row> bench_gesv_batched(context& ctx, vendor_handles& vh, const gesv_bench_options& o,
                                         const std::vector<index_t>& counts);
/// The table on stdout, la's ratio to the cuSOLVER/cuBLAS row of the same size and kind.
void print_gesv_table(const std::vector<gesv_row>& rows, const std::string& device, double fp64_peak_tflops);
void write_gesv_csv(const std::vector<gesv_row>& rows, const std::string& path, const std::string& device);

}  // namespace la
