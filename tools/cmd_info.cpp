#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>

#include <la/formats/convert.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/solvers/complex_solve.hpp>
#include <la/solvers/method.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include "args.hpp"
#include "common.hpp"
#include "commands.hpp"
#include "solve_options.hpp"

namespace la::cli {
namespace {
const char* usage =
    "usage: la info A.mtx | gen:SPEC\n"
    "\n"
    "Prints the size, nonzeros, the banner's symmetry and the values' (exact, or the largest\n"
    "|a_ij - a_ji| relative to the largest entry; complex values: Hermitian, complex symmetric\n"
    "or neither, by |a_ij - conj(a_ji)| and |a_ij - a_ji|), the diagonal's signs, diagonal dominance\n"
    "and the method `la solve --method auto` would pick (from CSR; not for a file with more\n"
    "rows than entries), the sparse direct solver's predicted factor (the fill-reducing\n"
    "ordering with the smaller L of METIS and AMD where built: nnz(L), flops, bytes,\n"
    "supernodes; square matrices up to 2,000,000 rows), row-length statistics (min/mean/max/stddev), empty\n"
    "rows, the ELL padding ratio, the number of JDS diagonals and the bytes each storage\n"
    "format needs (dense, COO, CSR, CSC, ELL, JDS, HYB, SELL-32-sigma; 32-bit indices; double\n"
    "and float values; offsets as chosen). gen:SPEC: a generated matrix (poisson2d:N,\n"
    "poisson3d:N, convdiff2d:N[:PECLET], convdiff3d:N[:PECLET], random:ROWS:K,\n"
    "rmat:SCALE:EDGES_PER_VERTEX, denserows:ROWS:K:COUNT:LEN; complex: helmholtz2d:N[:PPW[:SHIFT]],\n"
    "helmholtz3d:N[:PPW[:SHIFT]], PPW grid points a wavelength (default 10), SHIFT the complex\n"
    "shift in percent (default 50)).\n"
    "%s";

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%12.0f B  (%8.3f MiB)", bytes, bytes / 1048576.0);
  return buf;
}

/// What info prints about rows, from CSR or from sorted COO entries.
struct row_stats {
  index_t rows = 0, cols = 0;
  count_t nnz = 0;  // after summing duplicates
  index_t min = 0, max = 0;
  count_t empty = 0;
  double sum2 = 0;  // sum of squared row lengths
  std::size_t non_finite = 0;
  int offset_bits = 32;
  bool layouts = false;           // HYB and SELL below were computed (from CSR)
  index_t hyb_width = 0;          // ELL part of HYB (la::to_hyb's automatic split)
  count_t hyb_coo = 0;            // entries past it
  index_t sell_sigma = 1;         // la::to_sell's automatic sorting window
  count_t sell_slots = 0;         // SELL-32-sigma slots, padding included
  std::optional<matrix_properties> props;  // numeric symmetry, the diagonal (from CSR)
  std::string fill;                        // the sparse direct solver's predicted factor (from CSR)
  std::string auto_host, auto_gpu;         // what `la solve --method auto` picks, with its defaults, on each side
  bool complex_values = false;             // the bytes then for complex double and complex float values
};

/// The largest matrix whose fill `la info` predicts (the analysis is O(nnz(L)) after the orderings).
constexpr index_t info_fill_rows = 2000000;

template <typename T, typename O>
row_stats stats_of(const csr_matrix<T, O>& m) {
  row_stats s;
  s.rows = m.rows(), s.cols = m.cols(), s.nnz = m.nnz();
  s.offset_bits = 8 * sizeof(O);
  s.props = properties_of(m);
  s.complex_values = is_complex_v<T>;
  std::shared_ptr<const sparse_analysis> an;
  if (m.rows() == m.cols() && m.rows() > 0 && m.rows() <= info_fill_rows) {
    if constexpr (is_complex_v<T>)  // the pattern is what the analysis reads
      an = std::make_shared<sparse_analysis>(analyze_pattern(
          csr_matrix<double, O>(m.rows(), m.cols(), m.row_ptr(), m.col_idx(), std::vector<double>(m.values().size(), 1.0))));
    else
      an = std::make_shared<sparse_analysis>(analyze_pattern(m));
    s.fill = an->summary();
  }
  // What la solve's auto does with its defaults: solve_by_method's rules (the method from the
  // properties, then the direct-first rules, which read the analysis), on the host and the GPU.
  if constexpr (is_complex_v<T>) {  // la solve's complex choice (complex_solve.hpp), complex double
    if (m.rows() == m.cols())
      for (bool gpu : {false, true}) {
        const complex_choice c = choose_complex("auto", *s.props, m.rows(), cg_options{}, gpu, true);
        (gpu ? s.auto_gpu : s.auto_host) = std::string(c.direct ? "direct" : to_string(c.krylov)) + " (" + c.why + ")";
      }
  } else if (m.rows() == m.cols()) {
    const method_choice mc = select_method(krylov_method::automatic, *s.props, false);
    for (bool gpu : {false, true}) {
      cg_options o;
      o.method = krylov_method::automatic;
      const std::string first =
          detail::direct_first_why(krylov_method::automatic, mc, o, *s.props, m.rows(), true, true, [&] { return an; }, gpu);
      (gpu ? s.auto_gpu : s.auto_host) = first.empty() ? mc.why : first;
    }
  }
  s.min = m.rows() ? std::numeric_limits<index_t>::max() : 0;
  for (index_t i = 0; i < m.rows(); ++i) {
    const auto len = static_cast<index_t>(m.row_ptr()[i + 1] - m.row_ptr()[i]);
    s.min = std::min(s.min, len);
    s.max = std::max(s.max, len);
    s.empty += len == 0;
    s.sum2 += double(len) * len;
  }
  for (const T& v : m.values()) {
    if constexpr (is_complex_v<T>) s.non_finite += !std::isfinite(v.real()) || !std::isfinite(v.imag());
    else s.non_finite += !std::isfinite(v);
  }
  // HYB and SELL as la::to_hyb and la::to_sell lay them out, from the row lengths alone.
  s.layouts = true;
  std::vector<count_t> hist(static_cast<std::size_t>(s.max) + 1, 0);
  std::vector<index_t> len(static_cast<std::size_t>(m.rows()));
  for (index_t i = 0; i < m.rows(); ++i) len[i] = detail::row_length(m, i), ++hist[len[i]];
  s.hyb_width = m.rows() ? detail::hyb_width(hist, m.rows()) : 0;
  for (index_t l : len) s.hyb_coo += std::max<count_t>(0, count_t(l) - s.hyb_width);
  constexpr index_t C = 32;
  s.sell_sigma = detail::sell_auto_sigma(m.nnz(), detail::unsorted_sell_slots(m, C), C);
  if (s.sell_sigma > 1)
    for (std::size_t w = 0; w < len.size(); w += static_cast<std::size_t>(s.sell_sigma))
      std::sort(len.begin() + w, len.begin() + std::min(len.size(), w + s.sell_sigma), std::greater<index_t>());
  for (std::size_t b = 0; b < len.size(); b += C)
    s.sell_slots += count_t(C) * *std::max_element(len.begin() + b, len.begin() + std::min(len.size(), b + C));
  return s;
}

/// The same from COO, in O(nnz log nnz) time and O(nnz) memory: no array over the rows, so
/// a matrix with far more rows than entries (2e9 x 2e9 with one entry) costs nothing.
row_stats stats_of(const coo_matrix<double>& m, offset_width width) {
  row_stats s;
  s.rows = m.rows(), s.cols = m.cols();
  std::vector<std::size_t> order(static_cast<std::size_t>(m.nnz()));
  std::iota(order.begin(), order.end(), std::size_t(0));
  const auto& r = m.row_idx();
  const auto& c = m.col_idx();
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return r[x] != r[y] ? r[x] < r[y] : c[x] < c[y]; });
  index_t row_len = 0, rows_with_entries = 0;
  s.min = std::numeric_limits<index_t>::max();
  double value = 0;
  auto close_entry = [&] { s.non_finite += !std::isfinite(value); };
  auto close_row = [&] {
    s.min = std::min(s.min, row_len);
    s.max = std::max(s.max, row_len);
    s.sum2 += double(row_len) * row_len;
    ++rows_with_entries;
  };
  for (std::size_t q = 0; q < order.size(); ++q) {
    const std::size_t k = order[q];
    const bool same_row = q > 0 && r[order[q - 1]] == r[k];
    const bool same_entry = same_row && c[order[q - 1]] == c[k];
    if (same_entry) {
      value += m.values()[k];  // duplicates summed in input order, as to_csr does
      continue;
    }
    if (q > 0) close_entry();
    if (q > 0 && !same_row) close_row(), row_len = 0;
    ++row_len;
    ++s.nnz;
    value = m.values()[k];
  }
  if (!order.empty()) close_entry(), close_row();
  s.empty = static_cast<count_t>(m.rows()) - rows_with_entries;
  if (s.empty > 0 || m.rows() == 0) s.min = 0;
  s.offset_bits = width == offset_width::b64 || (width == offset_width::automatic && needs_64bit_offsets(s.nnz)) ? 64 : 32;
  return s;
}

int print_info(const std::string& path, const mm_header& h, const row_stats& st) {
  const index_t rows = st.rows, mn = st.min, mx = st.max;
  const count_t empty = st.empty;
  const double sum = static_cast<double>(st.nnz), sum2 = st.sum2;
  const std::size_t non_finite = st.non_finite;
  const double mean = rows ? sum / rows : 0;
  const double stddev = rows ? std::sqrt(std::max(0.0, sum2 / rows - mean * mean)) : 0;
  const double nnz = static_cast<double>(st.nnz), n = rows, c = st.cols, ob = st.offset_bits / 8.0;
  const double slots = n * mx;

  std::printf("file:            %s\n", printable(path).c_str());
  std::printf("banner:          matrix %s %s %s\n", to_string(h.format), to_string(h.field), to_string(h.symmetry));
  std::printf("size:            %d x %d\n", rows, st.cols);
  if (const auto& p = st.props) {
    if (p->rows != p->cols)
      std::printf("symmetry:        not square\n");
    else if (p->complex_values && p->max_non_hermitian == 0)
      std::printf("symmetry:        Hermitian values (exact)\n");
    else if (p->complex_values && p->hermitian())
      std::printf("symmetry:        Hermitian values to rounding: max |a_ij - conj(a_ji)| = %.3g of max |a_ij|\n",
                  p->max_non_hermitian);
    else if (p->complex_values && p->max_asymmetry == 0)
      std::printf("symmetry:        complex symmetric values (exact; not Hermitian)\n");
    else if (p->complex_values)
      std::printf("symmetry:        %s: max |a_ij - a_ji| = %.3g, max |a_ij - conj(a_ji)| = %.3g of max |a_ij|%s\n",
                  p->symmetric() ? "complex symmetric values to rounding" : "neither Hermitian nor complex symmetric",
                  p->max_asymmetry, p->max_non_hermitian,
                  p->pattern_symmetric ? " (pattern symmetric)" : " (pattern not symmetric)");
    else if (p->max_asymmetry == 0)
      std::printf("symmetry:        symmetric values (exact)\n");
    else
      std::printf("symmetry:        %s: max |a_ij - a_ji| = %.3g of max |a_ij|%s\n",
                  p->symmetric() ? "symmetric values to rounding" : "not symmetric", p->max_asymmetry,
                  p->pattern_symmetric ? " (pattern symmetric)" : " (pattern not symmetric)");
    std::printf(p->complex_values ? "diagonal:        real parts %d positive, %d negative; %d zero or not stored\n"
                                  : "diagonal:        %d positive, %d negative, %d zero or not stored\n",
                p->diag_positive, p->diag_negative, p->diag_zero);
    std::printf("dominance:       %d of %d rows diagonally dominant; min |a_ii| / sum_j!=i |a_ij| = %.3g\n",
                p->dominant_rows, std::min(p->rows, p->cols), p->min_dominance);
    if (st.auto_host == st.auto_gpu)
      std::printf("solver:          %s\n", cli_words(st.auto_host).c_str());
    else
      std::printf("solver:          on the host %s; on the GPU %s\n", cli_words(st.auto_host).c_str(), cli_words(st.auto_gpu).c_str());
  }
  if (!st.fill.empty()) std::printf("direct fill:     %s (symmetrized pattern)\n", st.fill.c_str());
  std::printf("stored entries:  %lld (in the file)\n", static_cast<long long>(h.entries));
  std::printf("nonzeros:        %lld (full storage, duplicates summed)\n", static_cast<long long>(st.nnz));
  std::printf("offsets:         %d-bit%s\n", st.offset_bits,
              needs_64bit_offsets(st.nnz) ? " (more than 2^31 - 1 nonzeros)" : "");
  std::printf("row length:      min %d  mean %.2f  max %d  stddev %.2f\n", mn, mean, mx, stddev);
  std::printf("empty rows:      %lld\n", static_cast<long long>(empty));
  if (non_finite) std::printf("non-finite:      %zu values are NaN or Inf (the solver will refuse them)\n", non_finite);
  if (slots > 0)
    std::printf("ELL:             width %d, %.0f slots, padding %.1f%% of slots\n", mx, slots, 100.0 * (slots - nnz) / slots);
  else
    std::printf("ELL:             width 0 (no entries)\n");
  std::printf("JDS:             %d jagged diagonals\n", mx);
  const double vb = st.complex_values ? 16 : 8;  // the double (complex double) value's bytes
  std::printf("bytes (%s values, 32-bit indices, %d-bit offsets):\n", st.complex_values ? "complex double" : "double",
              st.offset_bits);
  auto row = [&](const char* name, double idx_bytes, double values, const char* note = "") {
    std::printf("  %-6s %s   %s: %s%s\n", name, mib(idx_bytes + vb * values).c_str(),
                st.complex_values ? "complex float" : "float", mib(idx_bytes + vb / 2 * values).c_str(), note);
  };
  row("dense", 0, n * c);
  row("COO", 8 * nnz, nnz);
  row("CSR", ob * (n + 1) + 4 * nnz, nnz);
  row("CSC", ob * (c + 1) + 4 * nnz, nnz);
  row("ELL", 4 * slots, slots);
  row("JDS", 4 * n + ob * (mx + 1.0) + 4 * nnz, nnz);
  if (st.layouts) {
    const double ell = n * st.hyb_width, coo = double(st.hyb_coo);
    char note[96];
    std::snprintf(note, sizeof note, "   ELL width %d, %.0f entries in COO", st.hyb_width, coo);
    row("HYB", 4 * ell + 8 * coo, ell + coo, note);
    const double slots = double(st.sell_slots), slices = std::ceil(n / 32);
    std::snprintf(note, sizeof note, "   C 32, sigma %d, padding %.1f%% of slots", st.sell_sigma,
                  slots > 0 ? 100.0 * (slots - nnz) / slots : 0.0);
    row("SELL", 4 * n + ob * (slices + 1) + 4 * slots, slots, note);
  } else {
    std::printf("  HYB, SELL: not computed for a matrix with more rows than entries\n");
  }
  return 0;
}
}  // namespace

int cmd_info(int argc, char** argv) {
  args a(argc, argv, 2, {"--threads", "--offsets"}, {});
  if (a.help()) return std::printf(usage, reader_usage), 0;
  if (a.positional().size() != 1) throw usage_error("expected exactly one matrix file");
  const std::string path = a.positional()[0];
  mm_header h;
  if (is_gen(path)) {
    if (complex_gen_kind(gen_option(path).kind))
      return with_matrix<std::complex<double>>(path, a, [&](const auto& m) { return print_info(path, h, stats_of(m)); }, &h);
    return with_matrix<double>(path, a, [&](const auto& m) { return print_info(path, h, stats_of(m)); }, &h);
  }
  // More rows than entries (hypersparse): count from the entries, with no array over the
  // rows; otherwise through CSR, whose arrays are then no larger than the entries'.
  std::error_code ec;
  const mm_header pre = std::filesystem::is_regular_file(path, ec) ? read_matrix_market_header(path) : mm_header{};
  if (pre.field == mm_field::complex) {  // complex values: Hermitian, complex symmetric or neither
    if (pre.rows > max_stored_entries(pre))
      throw not_supported("'" + printable(path) + "' is a complex matrix with more rows than entries; la info reads "
                          "such hypersparse files as real matrices only");
    return with_csr_file<std::complex<double>>(path, a, [&](const auto& m) { return print_info(path, h, stats_of(m)); }, &h);
  }
  if (pre.rows > max_stored_entries(pre)) {
    const coo_matrix<double> coo = read_matrix_market<double>(path, &h, read_options(a));
    return print_info(path, h, stats_of(coo, offsets_option(a)));
  }
  return with_csr_file<double>(path, a, [&](const auto& m) { return print_info(path, h, stats_of(m)); }, &h);
}

}  // namespace la::cli
