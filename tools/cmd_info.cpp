#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la info A.mtx\n"
    "\n"
    "Prints the size, nonzeros, symmetry, row-length statistics (min/mean/max/stddev), empty\n"
    "rows, the ELL padding ratio, the number of JDS diagonals and the bytes each storage\n"
    "format needs (32-bit indices; double and float values; offsets as chosen).\n"
    "%s";

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%12.0f B  (%8.3f MiB)", bytes, bytes / 1048576.0);
  return buf;
}

template <typename O>
int print_info(const std::string& path, const mm_header& h, const csr_matrix<double, O>& m) {
  const index_t rows = m.rows();
  index_t mn = rows ? std::numeric_limits<index_t>::max() : 0, mx = 0, empty = 0;
  double sum = 0, sum2 = 0;
  for (index_t i = 0; i < rows; ++i) {
    const auto len = static_cast<index_t>(m.row_ptr()[i + 1] - m.row_ptr()[i]);
    mn = std::min(mn, len);
    mx = std::max(mx, len);
    empty += len == 0;
    sum += len;
    sum2 += double(len) * len;
  }
  const double mean = rows ? sum / rows : 0;
  const double stddev = rows ? std::sqrt(std::max(0.0, sum2 / rows - mean * mean)) : 0;
  std::size_t non_finite = 0;
  for (double v : m.values()) non_finite += !std::isfinite(v);
  const double nnz = static_cast<double>(m.nnz()), n = rows, c = m.cols(), ob = sizeof(O);
  const double slots = n * mx;

  std::printf("file:            %s\n", path.c_str());
  std::printf("banner:          matrix %s %s %s\n", to_string(h.format), to_string(h.field), to_string(h.symmetry));
  std::printf("size:            %d x %d\n", rows, m.cols());
  std::printf("stored entries:  %lld (in the file)\n", static_cast<long long>(h.entries));
  std::printf("nonzeros:        %lld (full storage, duplicates summed)\n", static_cast<long long>(m.nnz()));
  std::printf("offsets:         %d-bit%s\n", int(8 * sizeof(O)),
              needs_64bit_offsets(m.nnz()) ? " (more than 2^31 - 1 nonzeros)" : "");
  std::printf("row length:      min %d  mean %.2f  max %d  stddev %.2f\n", mn, mean, mx, stddev);
  std::printf("empty rows:      %d\n", empty);
  if (non_finite) std::printf("non-finite:      %zu values are NaN or Inf (the solver will refuse them)\n", non_finite);
  if (slots > 0)
    std::printf("ELL:             width %d, %.0f slots, padding %.1f%% of slots\n", mx, slots, 100.0 * (slots - nnz) / slots);
  else
    std::printf("ELL:             width 0 (no entries)\n");
  std::printf("JDS:             %d jagged diagonals\n", mx);
  std::printf("bytes (double values, 32-bit indices, %d-bit offsets):\n", int(8 * sizeof(O)));
  auto row = [&](const char* name, double idx_bytes, double values, const char* note = "") {
    std::printf("  %-6s %s   float: %s%s\n", name, mib(idx_bytes + 8 * values).c_str(),
                mib(idx_bytes + 4 * values).c_str(), note);
  };
  row("dense", 0, n * c);
  row("COO", 8 * nnz, nnz);
  row("CSR", ob * (n + 1) + 4 * nnz, nnz);
  row("CSC", ob * (c + 1) + 4 * nnz, nnz);
  row("ELL", 4 * slots, slots);
  row("JDS", 4 * n + ob * (mx + 1.0) + 4 * nnz, nnz);
  return 0;
}
}  // namespace

int cmd_info(int argc, char** argv) {
  args a(argc, argv, 2, {"--threads", "--offsets"}, {});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string path = a.positional()[0];
  mm_header h;
  return with_csr_file<double>(path, a, [&](const auto& m) { return print_info(path, h, m); }, &h);
}


}  // namespace la::cli
