// The SpMV comparison behind `la bench spmv` and bench/spmv_bench: every la kernel that runs
// on a sparse format and the cuSPARSE peers, on one matrix, side by side in one process.
// Each is validated (y poisoned with NaN first, every row against the host reference) and
// then timed (median of `reps` CUDA-event timings). Effective bandwidth uses one stated
// model for every kernel: the minimum bytes of CSR SpMV (row pointers, column indices and
// values read once, x read once, y written once), so GB/s compare work, not formats.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/context.hpp>

#include <la/formats/detail/gen_spec.hpp>

namespace la {
class vendor_handles;
}

namespace la::cli {

struct spmv_row {
  std::string matrix, precision, kernel, format;
  bool vendor = false;        // a cuSPARSE peer
  bool automatic = false;     // the auto-selected la kernel
  index_t rows = 0;
  count_t nnz = 0;
  double ms = 0, gbs = 0;     // median time; GB/s under the CSR minimum-bytes model
  double copy_share = 0;      // gbs over the measured copy bandwidth
  double vs_alg1 = 0;         // cuSPARSE CSR ALG1 time / this time
  double error = 0;           // worst error over the row tolerance (<= 1 passes)
  bool ok = false;
  std::string note;           // why a kernel was skipped or failed
};

struct spmv_bench_options {
  int reps = 20;
  double copy_gbs = 0;  // measured once per run (copy_bandwidth_gbs)
  bool progress = false;  // a progress line on stderr (a terminal)
  std::string progress_prefix;
};

/// Device-to-device copy of 1 GiB (or a quarter of free memory), bytes read + written per
/// second, median of 10: the bandwidth ceiling the shares are measured against.
double copy_bandwidth_gbs(context& ctx);

/// Every kernel and peer on `a`; rows in a fixed order, cuSPARSE CSR ALG1 first.
template <typename T, typename O>
std::vector<spmv_row> bench_spmv(context& ctx, vendor_handles& vh, const std::string& name, const csr_matrix<T, O>& a,
                                 const spmv_bench_options& opt);

/// The standard set of `la bench spmv` (2D Poisson 4000^2, 3D Poisson 256^3, random 16/row, R-MAT,
/// dense rows).
std::vector<std::string> standard_generated();

/// The table (stdout) and the winner per matrix.
void print_spmv_table(const std::vector<spmv_row>& rows, double copy_gbs, const std::string& device);
/// JSON (.json) or CSV (anything else); written atomically.
void write_spmv_rows(const std::vector<spmv_row>& rows, const std::string& path, double copy_gbs,
                     const std::string& device);

}  // namespace la::cli
