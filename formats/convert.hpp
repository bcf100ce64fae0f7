// Host conversions between every pair of the eight formats. CSR is the hub: each format has
// an exact conversion to and from CSR, and every other pair goes through it. Values are
// never changed; duplicates in COO are summed (in input order); converting a dense matrix
// to a sparse format keeps its nonzero entries (an explicit zero in a sparse matrix does
// not survive a trip through dense).
//
// Every conversion is O(nnz + rows + cols) (histograms of row or column lengths, an
// exclusive scan and a scatter) with two exceptions: COO rows are sorted where the input
// was not already sorted (a comparison sort of each such row), and SELL-C-sigma sorts rows
// by length inside windows of sigma rows (std::stable_sort per window, O(rows log sigma)).
// No global comparison sort.
//
// Targets with offsets (CSR, CSC, JDS) take the offset type first: to_csr<std::int64_t>(a).
// The default is 32-bit; a matrix whose nonzeros do not fit throws la::size_overflow
// (never truncates). with_offsets() (la/types.hpp) picks the width by size.
#pragma once

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <utility>

#include <la/memory.hpp>
#include <la/formats/coo.hpp>
#include <la/formats/csc.hpp>
#include <la/formats/csr.hpp>
#include <la/formats/dense.hpp>
#include <la/formats/ell.hpp>
#include <la/formats/hyb.hpp>
#include <la/formats/jds.hpp>
#include <la/formats/sell.hpp>

namespace la {

/// True for the eight host formats.
template <typename M> struct is_format : std::bool_constant<is_host_matrix_v<M>> {};

namespace detail {
/// The same offsets in another width; the last (largest) one is range-checked.
template <typename O, typename OI>
std::vector<O> convert_offsets(const std::vector<OI>& p, const char* what) {
  if constexpr (std::is_same_v<O, OI>) {
    return p;
  } else {
    if (!p.empty()) checked_offset<O>(static_cast<std::int64_t>(p.back()), what);
    return std::vector<O>(p.begin(), p.end());
  }
}

/// Transposes compressed storage: (ptr over n_major, idx in n_minor) -> (ptr over n_minor,
/// idx in n_major). A counting sort, so the output's indices come out sorted.
template <typename O, typename OI, typename T>
void transpose_compressed(index_t n_major, index_t n_minor, const std::vector<OI>& ptr, const std::vector<index_t>& idx,
                          const std::vector<T>& val, std::vector<O>& out_ptr, std::vector<index_t>& out_idx,
                          std::vector<T>& out_val) {
  checked_offset<O>(static_cast<std::int64_t>(idx.size()), "nonzeros");
  check_host_memory(2.0 * sizeof(O) * (double(n_minor) + 1) + double(idx.size()) * (sizeof(index_t) + sizeof(T)),
                    "transposing compressed storage (" + std::to_string(n_minor) + " pointers, " +
                        std::to_string(idx.size()) + " entries)");
  out_ptr.assign(static_cast<std::size_t>(n_minor) + 1, 0);
  for (index_t j : idx) ++out_ptr[j + 1];
  std::partial_sum(out_ptr.begin(), out_ptr.end(), out_ptr.begin());
  out_idx.resize(idx.size());
  out_val.resize(val.size());
  std::vector<O> next(out_ptr.begin(), out_ptr.end() - 1);
  for (index_t i = 0; i < n_major; ++i)
    for (OI k = ptr[i]; k < ptr[i + 1]; ++k) {
      const O dst = next[idx[k]]++;
      out_idx[dst] = i;
      out_val[dst] = val[k];
    }
}

/// The length of row i of a CSR matrix.
template <typename T, typename O>
index_t row_length(const csr_matrix<T, O>& a, index_t i) {
  return static_cast<index_t>(a.row_ptr()[i + 1] - a.row_ptr()[i]);
}

/// The HYB split from the row-length histogram (hist[L] = rows of length L, L = 0..longest):
/// ELL slot k is kept while at least a third of the rows (at least one) reach it, the rule
/// of Bell & Garland (SC'09, "relative speed" 3 of ELL over COO per entry). Shared by the
/// host and device conversions, so both split alike.
inline index_t hyb_width(const std::vector<count_t>& hist, index_t rows) {
  const count_t keep = std::max<count_t>(1, rows / 3);
  count_t longer = rows;  // rows longer than k
  index_t k = 0;
  for (; k + 1 < static_cast<index_t>(hist.size()); ++k) {
    longer -= hist[k];
    if (longer < keep) break;
  }
  return k;
}

/// SELL's automatic sorting window: none (sigma = 1) when slices of unsorted rows pad the
/// entries by at most 20% (uniform rows such as stencils: no permutation to read), else
/// about 1024 rows (Kreutzer et al. sort windows of 2^10..2^14 rows). Shared by the host
/// and device conversions.
inline index_t sell_auto_sigma(count_t nnz, count_t unsorted_slots, index_t slice_height) {
  if (unsorted_slots <= nnz + nnz / 5) return 1;
  return (1024 + slice_height - 1) / slice_height * slice_height;
}

/// Slots of SELL-C with sigma = 1 (each slice of C rows padded to its longest row).
template <typename T, typename O>
count_t unsorted_sell_slots(const csr_matrix<T, O>& a, index_t c) {
  count_t slots = 0;
  for (index_t s = 0; s < a.rows(); s += c) {
    index_t w = 0;
    for (index_t i = s; i < std::min<count_t>(a.rows(), count_t(s) + c); ++i) w = std::max(w, row_length(a, i));
    slots += count_t(w) * c;
  }
  return slots;
}
}  // namespace detail

/// SELL-C-sigma parameters: slice height C (32: one warp per slice) and the sorting window
/// sigma (0: chosen from the matrix, see detail::sell_auto_sigma).
struct sell_options {
  index_t slice_height = 32;
  index_t sigma = 0;
};

// ---- to CSR (the hub) --------------------------------------------------------------------

template <typename O = index_t, typename T, typename OI>
csr_matrix<T, O> to_csr(const csr_matrix<T, OI>& a) {
  if constexpr (std::is_same_v<O, OI>) return a;
  else return {a.rows(), a.cols(), detail::convert_offsets<O>(a.row_ptr(), "CSR nonzeros"), a.col_idx(), a.values()};
}

namespace detail {
/// A run of COO entries (one part of a matrix parsed in parallel).
template <typename T>
struct coo_span {
  const index_t* row_idx;
  const index_t* col_idx;
  const T* values;
  std::size_t size;
};

/// Threads spans_to_csr uses for `parts` parts: each keeps a counter per row, so with more
/// rows than entries (hypersparse) extra threads would cost more memory than the matrix
/// itself, and one is used.
inline int csr_build_threads(std::int64_t rows, std::int64_t entries, int parts) {
  return rows > entries ? 1 : std::max(1, parts);
}
/// Bytes spans_to_csr allocates for `entries` COO entries: a counter per row for each thread,
/// the row starts, the row pointers (`offset_bytes` each), and the column and value arrays.
inline double csr_build_bytes(std::int64_t rows, std::int64_t entries, int threads, std::size_t offset_bytes,
                              std::size_t value_bytes) {
  const double counter = entries <= max_index ? 4.0 : 8.0;
  return (double(rows) + 1) * (double(offset_bytes) + counter * (threads + 1)) +
         double(entries) * double(sizeof(index_t) + value_bytes);
}

/// CSR from COO entries given as consecutive parts (one thread per part; the order of the
/// parts is the entry order). Indices must be in range (not checked).
template <typename O, typename T>
csr_matrix<T, O> spans_to_csr(index_t rows, index_t cols, const std::vector<coo_span<T>>& parts);
extern template csr_matrix<float, std::int32_t> spans_to_csr<std::int32_t, float>(index_t, index_t, const std::vector<coo_span<float>>&);
extern template csr_matrix<float, std::int64_t> spans_to_csr<std::int64_t, float>(index_t, index_t, const std::vector<coo_span<float>>&);
extern template csr_matrix<double, std::int32_t> spans_to_csr<std::int32_t, double>(index_t, index_t, const std::vector<coo_span<double>>&);
extern template csr_matrix<double, std::int64_t> spans_to_csr<std::int64_t, double>(index_t, index_t, const std::vector<coo_span<double>>&);

/// COO -> CSR on all host threads (la::thread_count()), in formats/convert.cpp for float
/// and double: histograms, a scan, a scatter, rows sorted only where they are not already,
/// duplicates summed in input order.
template <typename O, typename T>
csr_matrix<T, O> coo_to_csr(const coo_matrix<T>& a);
extern template csr_matrix<float, std::int32_t> coo_to_csr<std::int32_t, float>(const coo_matrix<float>&);
extern template csr_matrix<float, std::int64_t> coo_to_csr<std::int64_t, float>(const coo_matrix<float>&);
extern template csr_matrix<double, std::int32_t> coo_to_csr<std::int32_t, double>(const coo_matrix<double>&);
extern template csr_matrix<double, std::int64_t> coo_to_csr<std::int64_t, double>(const coo_matrix<double>&);
}  // namespace detail

/// Sorted by row and column, duplicates summed in input order (see detail::coo_to_csr).
template <typename O = index_t, typename T>
csr_matrix<T, O> to_csr(const coo_matrix<T>& a) {
  return detail::coo_to_csr<O, T>(a);
}

template <typename O = index_t, typename T, typename OI>
csr_matrix<T, O> to_csr(const csc_matrix<T, OI>& a) {
  std::vector<O> p;
  std::vector<index_t> i;
  std::vector<T> v;
  detail::transpose_compressed(a.cols(), a.rows(), a.col_ptr(), a.row_idx(), a.values(), p, i, v);
  return {a.rows(), a.cols(), std::move(p), std::move(i), std::move(v)};
}

template <typename O = index_t, typename T>
csr_matrix<T, O> to_csr(const ell_matrix<T>& a) {
  const index_t m = a.rows();
  const std::size_t rows = static_cast<std::size_t>(m);
  std::vector<O> row_ptr(rows + 1, 0);
  std::int64_t total = 0;
  for (index_t i = 0; i < m; ++i) {
    index_t len = 0;
    while (len < a.width() && a.col_idx()[static_cast<std::size_t>(len) * rows + i] != ell_padding) ++len;
    total += len;
    row_ptr[i + 1] = static_cast<O>(total);
  }
  checked_offset<O>(total, "CSR nonzeros");
  std::vector<index_t> col_idx(static_cast<std::size_t>(total));
  std::vector<T> values(col_idx.size());
  for (index_t i = 0; i < m; ++i)
    for (O k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const std::size_t s = static_cast<std::size_t>(k - row_ptr[i]) * rows + i;
      col_idx[k] = a.col_idx()[s];
      values[k] = a.values()[s];
    }
  return {m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values)};
}

template <typename O = index_t, typename T, typename OI>
csr_matrix<T, O> to_csr(const jds_matrix<T, OI>& a) {
  const index_t m = a.rows();
  const auto& dp = a.diag_ptr();
  std::vector<index_t> len(static_cast<std::size_t>(m), 0);  // by sorted row
  for (index_t d = 0; d < a.num_diagonals(); ++d)
    for (OI k = 0; k < dp[d + 1] - dp[d]; ++k) ++len[k];
  std::vector<O> row_ptr(static_cast<std::size_t>(m) + 1, 0);
  for (index_t k = 0; k < m; ++k) row_ptr[a.perm()[k] + 1] = len[k];
  checked_offset<O>(a.nnz(), "CSR nonzeros");
  std::partial_sum(row_ptr.begin(), row_ptr.end(), row_ptr.begin());
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(col_idx.size());
  for (index_t d = 0; d < a.num_diagonals(); ++d)
    for (OI k = 0; k < dp[d + 1] - dp[d]; ++k) {
      const O dst = row_ptr[a.perm()[k]] + d;
      col_idx[dst] = a.col_idx()[dp[d] + k];
      values[dst] = a.values()[dp[d] + k];
    }
  return {m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values)};
}

template <typename O = index_t, typename T>
csr_matrix<T, O> to_csr(const hyb_matrix<T>& a) {
  const index_t m = a.rows();
  const std::size_t rows = static_cast<std::size_t>(m);
  const auto& ec = a.ell().col_idx();
  const auto& cr = a.coo().row_idx();
  std::vector<O> row_ptr(rows + 1, 0);
  for (index_t i = 0; i < m; ++i) {
    index_t len = 0;
    while (len < a.width() && ec[static_cast<std::size_t>(len) * rows + i] != ell_padding) ++len;
    row_ptr[i + 1] = len;
  }
  for (index_t r : cr) ++row_ptr[r + 1];
  checked_offset<O>(a.nnz(), "CSR nonzeros");
  std::partial_sum(row_ptr.begin(), row_ptr.end(), row_ptr.begin());
  std::vector<index_t> col_idx(static_cast<std::size_t>(row_ptr.back()));
  std::vector<T> values(col_idx.size());
  std::vector<O> next(row_ptr.begin(), row_ptr.end() - 1);
  for (index_t i = 0; i < m; ++i)
    for (index_t k = 0; k < a.width(); ++k) {
      const std::size_t s = static_cast<std::size_t>(k) * rows + i;
      if (ec[s] == ell_padding) break;
      col_idx[next[i]] = ec[s];
      values[next[i]++] = a.ell().values()[s];
    }
  for (std::size_t k = 0; k < cr.size(); ++k) {  // row-sorted, after the row's ELL entries
    col_idx[next[cr[k]]] = a.coo().col_idx()[k];
    values[next[cr[k]]++] = a.coo().values()[k];
  }
  return {m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values)};
}

template <typename O = index_t, typename T, typename OI>
csr_matrix<T, O> to_csr(const sell_matrix<T, OI>& a) {
  const index_t m = a.rows();
  const count_t C = a.slice_height();
  const auto& sp = a.slice_ptr();
  std::vector<O> row_ptr(static_cast<std::size_t>(m) + 1, 0);
  auto slot = [&](index_t k, count_t d) { return static_cast<std::size_t>(sp[k / C] + d * C + k % C); };
  auto width = [&](index_t k) { return (static_cast<count_t>(sp[k / C + 1]) - sp[k / C]) / C; };
  for (index_t k = 0; k < m; ++k) {
    index_t len = 0;
    while (len < width(k) && a.col_idx()[slot(k, len)] != ell_padding) ++len;
    row_ptr[a.perm()[k] + 1] = len;
  }
  checked_offset<O>(a.nnz(), "CSR nonzeros");
  std::partial_sum(row_ptr.begin(), row_ptr.end(), row_ptr.begin());
  std::vector<index_t> col_idx(static_cast<std::size_t>(row_ptr.back()));
  std::vector<T> values(col_idx.size());
  for (index_t k = 0; k < m; ++k) {
    const index_t i = a.perm()[k];
    for (O q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
      col_idx[q] = a.col_idx()[slot(k, q - row_ptr[i])];
      values[q] = a.values()[slot(k, q - row_ptr[i])];
    }
  }
  return {m, a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values)};
}

template <typename O = index_t, typename T>
csr_matrix<T, O> to_csr(const dense_matrix<T>& a) {
  std::vector<O> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < a.rows(); ++i) {
    for (index_t j = 0; j < a.cols(); ++j)
      if (a(i, j) != T(0)) {  // NaN != 0, so NaN entries are kept
        col_idx.push_back(j);
        values.push_back(a(i, j));
      }
    row_ptr[i + 1] = checked_offset<O>(static_cast<std::int64_t>(col_idx.size()), "nonzeros of dense matrix");
  }
  return {a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values)};
}

// ---- from CSR ----------------------------------------------------------------------------

template <typename T, typename O>
coo_matrix<T> to_coo(const csr_matrix<T, O>& a) {
  check_host_memory(double(a.nnz()) * (2 * sizeof(index_t) + sizeof(T)), "converting to COO");
  std::vector<index_t> ri(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    std::fill(ri.begin() + a.row_ptr()[i], ri.begin() + a.row_ptr()[i + 1], i);
  return {a.rows(), a.cols(), std::move(ri), a.col_idx(), a.values()};
}

template <typename O = index_t, typename T, typename OI>
csc_matrix<T, O> to_csc(const csr_matrix<T, OI>& a) {
  std::vector<O> p;
  std::vector<index_t> i;
  std::vector<T> v;
  detail::transpose_compressed(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), a.values(), p, i, v);
  return {a.rows(), a.cols(), std::move(p), std::move(i), std::move(v)};
}

template <typename T, typename O>
ell_matrix<T> to_ell(const csr_matrix<T, O>& a) {
  const index_t m = a.rows();
  index_t width = 0;
  for (index_t i = 0; i < m; ++i) width = std::max(width, detail::row_length(a, i));
  const std::size_t rows = static_cast<std::size_t>(m);
  check_host_memory(double(rows) * width * (sizeof(index_t) + sizeof(T)),
                    "converting to ELL (" + std::to_string(rows) + " rows x " + std::to_string(width) +
                        " slots, the longest row)");
  std::vector<index_t> col_idx(rows * static_cast<std::size_t>(width), ell_padding);
  std::vector<T> values(col_idx.size(), T(0));
  for (index_t i = 0; i < m; ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const std::size_t s = static_cast<std::size_t>(k - a.row_ptr()[i]) * rows + i;
      col_idx[s] = a.col_idx()[k];
      values[s] = a.values()[k];
    }
  return {m, a.cols(), width, std::move(col_idx), std::move(values)};
}

/// Rows ordered by length with a counting sort (longest first, ties in row order).
template <typename O = index_t, typename T, typename OI>
jds_matrix<T, O> to_jds(const csr_matrix<T, OI>& a) {
  const index_t m = a.rows();
  const auto& rp = a.row_ptr();
  checked_offset<O>(a.nnz(), "JDS nonzeros");
  check_host_memory(double(m) * 3 * sizeof(index_t) + double(a.nnz()) * (sizeof(index_t) + sizeof(T)),
                    "converting to JDS");
  index_t nd = 0;  // longest row = number of jagged diagonals
  for (index_t i = 0; i < m; ++i) nd = std::max(nd, detail::row_length(a, i));
  // first[len]: position in perm of the first row of that length (longer rows come first).
  std::vector<index_t> first(static_cast<std::size_t>(nd) + 2, 0);
  for (index_t i = 0; i < m; ++i) ++first[nd - detail::row_length(a, i) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<index_t> perm(static_cast<std::size_t>(m));
  for (index_t i = 0; i < m; ++i) perm[first[nd - detail::row_length(a, i)]++] = i;

  std::vector<O> diag_ptr(static_cast<std::size_t>(nd) + 1, 0);
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(col_idx.size());
  O pos = 0;
  index_t rows_in_diag = m;
  for (index_t d = 0; d < nd; ++d) {
    while (rows_in_diag > 0 && detail::row_length(a, perm[rows_in_diag - 1]) <= d) --rows_in_diag;
    for (index_t k = 0; k < rows_in_diag; ++k, ++pos) {
      col_idx[pos] = a.col_idx()[rp[perm[k]] + d];
      values[pos] = a.values()[rp[perm[k]] + d];
    }
    diag_ptr[d + 1] = pos;
  }
  return {m, a.cols(), std::move(perm), std::move(diag_ptr), std::move(col_idx), std::move(values)};
}

/// ELL for the first `width` entries of each row, COO (row-sorted) for the rest; width < 0
/// chooses it from the row-length histogram (detail::hyb_width).
template <typename T, typename O>
hyb_matrix<T> to_hyb(const csr_matrix<T, O>& a, index_t width = -1) {
  const index_t m = a.rows();
  const std::size_t rows = static_cast<std::size_t>(m);
  if (width < 0) {
    std::vector<count_t> hist(1, 0);
    for (index_t i = 0; i < m; ++i) {
      const index_t len = detail::row_length(a, i);
      if (static_cast<std::size_t>(len) >= hist.size()) hist.resize(static_cast<std::size_t>(len) + 1, 0);
      ++hist[len];
    }
    width = detail::hyb_width(hist, m);
  }
  count_t overflow = 0;
  for (index_t i = 0; i < m; ++i) overflow += std::max<index_t>(0, detail::row_length(a, i) - width);
  check_host_memory(double(rows) * width * (sizeof(index_t) + sizeof(T)) +
                        double(overflow) * (2 * sizeof(index_t) + sizeof(T)),
                    "converting to HYB (" + std::to_string(rows) + " rows x " + std::to_string(width) +
                        " ELL slots, " + std::to_string(overflow) + " COO entries)");
  std::vector<index_t> ec(rows * static_cast<std::size_t>(width), ell_padding), cr, cc;
  std::vector<T> ev(ec.size(), T(0)), cv;
  cr.reserve(static_cast<std::size_t>(overflow));
  cc.reserve(cr.capacity());
  cv.reserve(cr.capacity());
  for (index_t i = 0; i < m; ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const auto d = static_cast<index_t>(k - a.row_ptr()[i]);
      if (d < width) {
        ec[static_cast<std::size_t>(d) * rows + i] = a.col_idx()[k];
        ev[static_cast<std::size_t>(d) * rows + i] = a.values()[k];
      } else {
        cr.push_back(i), cc.push_back(a.col_idx()[k]), cv.push_back(a.values()[k]);
      }
    }
  return {m, a.cols(), width, std::move(ec), std::move(ev), std::move(cr), std::move(cc), std::move(cv)};
}

/// SELL-C-sigma: rows stably sorted by length (longest first) inside windows of sigma rows
/// (std::stable_sort per window), slices of C sorted rows padded to their longest row.
template <typename O = index_t, typename T, typename OI>
sell_matrix<T, O> to_sell(const csr_matrix<T, OI>& a, sell_options opt = {}) {
  const index_t m = a.rows(), C = opt.slice_height;
  index_t sigma = opt.sigma;
  if (sigma == 0) {
    detail::check_sell_shape(m, a.cols(), C, 1);
    sigma = detail::sell_auto_sigma(a.nnz(), detail::unsorted_sell_slots(a, C), C);
  }
  detail::check_sell_shape(m, a.cols(), C, sigma);
  std::vector<index_t> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  if (sigma > 1)
    for (index_t w = 0; w < m; w += sigma) {
      const auto b = perm.begin() + w, e = perm.begin() + std::min<count_t>(m, count_t(w) + sigma);
      std::stable_sort(b, e, [&](index_t x, index_t y) { return detail::row_length(a, x) > detail::row_length(a, y); });
    }
  const count_t slices = (static_cast<count_t>(m) + C - 1) / C;
  std::vector<O> slice_ptr(static_cast<std::size_t>(slices) + 1, 0);
  count_t total = 0;
  for (count_t s = 0; s < slices; ++s) {
    index_t w = 0;
    for (count_t k = s * C; k < std::min<count_t>(m, (s + 1) * C); ++k) w = std::max(w, detail::row_length(a, perm[k]));
    total += count_t(w) * C;
    slice_ptr[s + 1] = checked_offset<O>(total, "SELL slots");
  }
  check_host_memory(double(total) * (sizeof(index_t) + sizeof(T)) + double(m) * sizeof(index_t),
                    "converting to SELL (" + std::to_string(total) + " slots)");
  std::vector<index_t> col_idx(static_cast<std::size_t>(total), ell_padding);
  std::vector<T> values(col_idx.size(), T(0));
  for (index_t k = 0; k < m; ++k) {
    const index_t i = perm[k];
    for (OI q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) {
      const auto slot = static_cast<std::size_t>(slice_ptr[k / C] + count_t(q - a.row_ptr()[i]) * C + k % C);
      col_idx[slot] = a.col_idx()[q];
      values[slot] = a.values()[q];
    }
  }
  return {m, a.cols(), C, sigma, std::move(perm), std::move(slice_ptr), std::move(col_idx), std::move(values)};
}

template <typename T, typename O>
dense_matrix<T> to_dense(const csr_matrix<T, O>& a) {
  check_host_memory(double(a.rows()) * a.cols() * sizeof(T),
                    "converting a " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " matrix to dense");
  dense_matrix<T> d(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) d(i, a.col_idx()[k]) = a.values()[k];
  return d;
}

// ---- identities and offset-width changes -------------------------------------------------

template <typename T>
coo_matrix<T> to_coo(const coo_matrix<T>& a) { return a; }
template <typename O = index_t, typename T, typename OI>
csc_matrix<T, O> to_csc(const csc_matrix<T, OI>& a) {
  if constexpr (std::is_same_v<O, OI>) return a;
  else return {a.rows(), a.cols(), detail::convert_offsets<O>(a.col_ptr(), "CSC nonzeros"), a.row_idx(), a.values()};
}
template <typename T>
ell_matrix<T> to_ell(const ell_matrix<T>& a) { return a; }
template <typename O = index_t, typename T, typename OI>
jds_matrix<T, O> to_jds(const jds_matrix<T, OI>& a) {
  if constexpr (std::is_same_v<O, OI>) return a;
  else
    return {a.rows(), a.cols(), a.perm(), detail::convert_offsets<O>(a.diag_ptr(), "JDS nonzeros"), a.col_idx(),
            a.values()};
}
template <typename T>
dense_matrix<T> to_dense(const dense_matrix<T>& a) { return a; }
template <typename T>
hyb_matrix<T> to_hyb(const hyb_matrix<T>& a) { return a; }
template <typename O = index_t, typename T, typename OI>
sell_matrix<T, O> to_sell(const sell_matrix<T, OI>& a) {
  if constexpr (std::is_same_v<O, OI>) return a;
  else
    return {a.rows(), a.cols(), a.slice_height(), a.sigma(), a.perm(),
            detail::convert_offsets<O>(a.slice_ptr(), "SELL slots"), a.col_idx(), a.values()};
}

// ---- every other pair goes through CSR ---------------------------------------------------
// The hub uses 64-bit offsets so that it never limits the pair; the target's own offset
// type is checked when it is built.

template <typename M, std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::coo, int> = 0>
auto to_coo(const M& a) { return to_coo(to_csr<count_t>(a)); }

template <typename O = index_t, typename M,
          std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::csc, int> = 0>
auto to_csc(const M& a) { return to_csc<O>(to_csr<count_t>(a)); }

template <typename M, std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::ell, int> = 0>
auto to_ell(const M& a) { return to_ell(to_csr<count_t>(a)); }

template <typename O = index_t, typename M,
          std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::jds, int> = 0>
auto to_jds(const M& a) { return to_jds<O>(to_csr<count_t>(a)); }

template <typename M,
          std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::dense, int> = 0>
auto to_dense(const M& a) { return to_dense(to_csr<count_t>(a)); }

template <typename M, std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::hyb, int> = 0>
auto to_hyb(const M& a, index_t width = -1) { return to_hyb(to_csr<count_t>(a), width); }

template <typename O = index_t, typename M,
          std::enable_if_t<is_format<M>::value && M::kind != format::csr && M::kind != format::sell, int> = 0>
auto to_sell(const M& a, sell_options opt = {}) { return to_sell<O>(to_csr<count_t>(a), opt); }

/// Builds the CSR matrix of `a` with the narrowest offsets that hold its entries (32-bit
/// unless there are more than 2^31 - 1; `width` can force either) and returns f(csr).
/// f is called with csr_matrix<T, std::int32_t> or csr_matrix<T, std::int64_t>; both calls
/// must return the same type.
template <typename M, typename F, std::enable_if_t<is_format<M>::value, int> = 0>
decltype(auto) with_csr(const M& a, F&& f, offset_width width = offset_width::automatic) {
  return with_offsets(stored_entries(a), width, [&](auto o) -> decltype(auto) { return f(to_csr<decltype(o)>(a)); });
}

/// convert<csc_matrix<double>>(coo): the target named as a type, for generic code.
template <typename To, typename From>
To convert(const From& a) {
  static_assert(is_format<To>::value && is_format<From>::value, "convert: host formats only");
  if constexpr (To::kind == format::dense) return to_dense(a);
  else if constexpr (To::kind == format::coo) return to_coo(a);
  else if constexpr (To::kind == format::csr) return to_csr<typename To::offset_type>(a);
  else if constexpr (To::kind == format::csc) return to_csc<typename To::offset_type>(a);
  else if constexpr (To::kind == format::ell) return to_ell(a);
  else if constexpr (To::kind == format::hyb) return to_hyb(a);
  else if constexpr (To::kind == format::sell) return to_sell<typename To::offset_type>(a);
  else return to_jds<typename To::offset_type>(a);
}

}  // namespace la
