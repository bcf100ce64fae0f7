#include <la/formats/validate.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <la/formats/storage.hpp>
#include <la/parallel.hpp>

namespace la::detail {
namespace {
[[noreturn]] void fail(const char* fmt, const std::string& what) {
  throw invalid_matrix(std::string(fmt) + ": " + what);
}
std::string at(const char* array, std::int64_t k, std::int64_t v) {
  return std::string(array) + "[" + std::to_string(k) + "] = " + std::to_string(v);
}
}  // namespace

void check_dims(const char* fmt, std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0)
    fail(fmt, "dimensions must be non-negative, got " + std::to_string(rows) + " x " +
                  std::to_string(cols));
}

void check_count(const char* fmt, const char* array, std::size_t got, std::size_t want) {
  if (got != want)
    fail(fmt, std::string(array) + " has " + std::to_string(got) + " elements, expected " +
                  std::to_string(want));
}

void validate_coo(index_t rows, index_t cols, const std::vector<index_t>& row_idx,
                  const std::vector<index_t>& col_idx) {
  check_dims("COO", rows, cols);
  check_count("COO", "col_idx", col_idx.size(), row_idx.size());
  for (std::size_t k = 0; k < row_idx.size(); ++k) {
    if (row_idx[k] < 0 || row_idx[k] >= rows)
      fail("COO", at("row_idx", k, row_idx[k]) + " is outside [0, " + std::to_string(rows) + ")");
    if (col_idx[k] < 0 || col_idx[k] >= cols)
      fail("COO", at("col_idx", k, col_idx[k]) + " is outside [0, " + std::to_string(cols) + ")");
  }
}

template <typename O>
void validate_compressed(const char* fmt, const char* major, const char* minor, index_t n_major,
                         index_t n_minor, const O* ptr, std::size_t ptr_size, const index_t* idx,
                         std::size_t nnz) {
  check_dims(fmt, n_major, n_minor);
  checked_offset<O>(static_cast<std::int64_t>(nnz), (std::string(fmt) + " nonzeros").c_str());
  const char* ptr_name = major[0] == 'r' ? "row_ptr" : "col_ptr";
  const char* idx_name = major[0] == 'r' ? "col_idx" : "row_idx";
  check_count(fmt, ptr_name, ptr_size, static_cast<std::size_t>(n_major) + 1);
  if (ptr[0] != 0) fail(fmt, at(ptr_name, 0, ptr[0]) + ", must be 0");
  if (static_cast<std::size_t>(ptr[n_major]) != nnz)
    fail(fmt, at(ptr_name, n_major, ptr[n_major]) + " but there are " + std::to_string(nnz) +
                  " stored entries");
  // Large matrices are checked in slices of the major dimension on several threads (one per
  // million entries at most). parallel_for rethrows the lowest slice's error, so the message
  // names the first offending entry whatever the thread count.
  const int threads = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(thread_count()), 1 + (nnz + n_major) / (std::size_t(1) << 20)));
  auto slice = [&](int t) {
    return std::pair<index_t, index_t>(static_cast<index_t>(std::int64_t(n_major) * t / threads),
                                       static_cast<index_t>(std::int64_t(n_major) * (t + 1) / threads));
  };
  // Monotone first: with ptr[0] = 0 and ptr[n] = nnz that keeps every slice in bounds.
  parallel_for(threads, [&](int t) {
    const auto [lo, hi] = slice(t);
    for (index_t i = lo; i < hi; ++i)
      if (ptr[i + 1] < ptr[i])
        fail(fmt, std::string(ptr_name) + " is not monotone: " + at(ptr_name, i, ptr[i]) + " > " +
                      at(ptr_name, i + 1, ptr[i + 1]));
  });
  parallel_for(threads, [&](int t) {
    const auto [lo, hi] = slice(t);
    for (index_t i = lo; i < hi; ++i) {
      for (O k = ptr[i]; k < ptr[i + 1]; ++k) {
        if (idx[k] < 0 || idx[k] >= n_minor)
          fail(fmt, at(idx_name, k, idx[k]) + " (" + major + " " + std::to_string(i) +
                        ") is outside [0, " + std::to_string(n_minor) + ")");
        if (k > ptr[i] && idx[k] <= idx[k - 1])
          fail(fmt, std::string(minor) + " indices of " + major + " " + std::to_string(i) +
                        " must be strictly increasing (sorted, no duplicates): " +
                        at(idx_name, k - 1, idx[k - 1]) + ", " + at(idx_name, k, idx[k]));
      }
    }
  });
}

void validate_ell(index_t rows, index_t cols, index_t width, const std::vector<index_t>& col_idx) {
  check_dims("ELL", rows, cols);
  if (width < 0) fail("ELL", "width must be non-negative, got " + std::to_string(width));
  const std::int64_t slots = static_cast<std::int64_t>(rows) * width;
  check_count("ELL", "col_idx", col_idx.size(), static_cast<std::size_t>(slots));
  for (index_t i = 0; i < rows; ++i) {
    bool in_padding = false;
    for (index_t k = 0; k < width; ++k) {
      const std::int64_t s = static_cast<std::int64_t>(k) * rows + i;  // column-major slot
      const index_t c = col_idx[s];
      if (c == -1) {
        in_padding = true;
        continue;
      }
      if (in_padding)
        fail("ELL", "row " + std::to_string(i) + " has an entry (" + at("col_idx", s, c) +
                        ") after padding; padding (-1) must come last in a row");
      if (c < 0 || c >= cols)
        fail("ELL", at("col_idx", s, c) + " (row " + std::to_string(i) + ") is outside [0, " +
                        std::to_string(cols) + ") and is not the padding marker -1");
      if (k > 0 && c <= col_idx[s - rows])
        fail("ELL", "column indices of row " + std::to_string(i) +
                        " must be strictly increasing: " + at("col_idx", s - rows, col_idx[s - rows]) +
                        ", " + at("col_idx", s, c));
    }
  }
}

template <typename O>
void validate_jds(index_t rows, index_t cols, const std::vector<index_t>& perm, const std::vector<O>& diag_ptr,
                  const std::vector<index_t>& col_idx) {
  check_dims("JDS", rows, cols);
  checked_offset<O>(static_cast<std::int64_t>(col_idx.size()), "JDS nonzeros");
  check_count("JDS", "perm", perm.size(), static_cast<std::size_t>(rows));
  std::vector<char> seen(static_cast<std::size_t>(rows), 0);
  for (index_t k = 0; k < rows; ++k) {
    if (perm[k] < 0 || perm[k] >= rows)
      fail("JDS", at("perm", k, perm[k]) + " is outside [0, " + std::to_string(rows) + ")");
    if (seen[perm[k]]) fail("JDS", at("perm", k, perm[k]) + " repeats a row: perm must be a permutation");
    seen[perm[k]] = 1;
  }
  if (diag_ptr.empty()) fail("JDS", "diag_ptr must hold at least one element (0)");
  if (diag_ptr[0] != 0) fail("JDS", at("diag_ptr", 0, diag_ptr[0]) + ", must be 0");
  const std::size_t nd = diag_ptr.size() - 1;
  if (static_cast<std::size_t>(diag_ptr[nd]) != col_idx.size())
    fail("JDS", at("diag_ptr", nd, diag_ptr[nd]) + " but there are " +
                    std::to_string(col_idx.size()) + " stored entries");
  index_t prev_len = rows;
  for (std::size_t d = 0; d < nd; ++d) {
    const std::int64_t len = static_cast<std::int64_t>(diag_ptr[d + 1]) - diag_ptr[d];
    if (len <= 0 || len > prev_len)
      fail("JDS", "diagonal " + std::to_string(d) + " has length " + std::to_string(len) +
                      "; lengths must be positive and non-increasing (previous " +
                      std::to_string(prev_len) + ")");
    for (index_t i = 0; i < len; ++i) {
      const O s = diag_ptr[d] + i;
      if (col_idx[s] < 0 || col_idx[s] >= cols)
        fail("JDS", at("col_idx", s, col_idx[s]) + " is outside [0, " + std::to_string(cols) + ")");
      if (d > 0 && col_idx[s] <= col_idx[diag_ptr[d - 1] + i])
        fail("JDS", "column indices of sorted row " + std::to_string(i) + " (row " +
                        std::to_string(perm[i]) + ") must be strictly increasing across diagonals");
    }
    prev_len = static_cast<index_t>(len);
  }
}

void validate_hyb(index_t rows, index_t width, const std::vector<index_t>& ell_col, const std::vector<index_t>& coo_row,
                  const std::vector<index_t>& coo_col) {
  for (std::size_t k = 0; k < coo_row.size(); ++k) {
    const index_t i = coo_row[k];
    if (k > 0 && (i < coo_row[k - 1] || (i == coo_row[k - 1] && coo_col[k] <= coo_col[k - 1])))
      fail("HYB", "the COO part must be sorted by row, then column, without duplicates: " +
                      at("row_idx", k - 1, coo_row[k - 1]) + ", " + at("row_idx", k, i) + " (columns " +
                      std::to_string(coo_col[k - 1]) + ", " + std::to_string(coo_col[k]) + ")");
    if (k > 0 && i == coo_row[k - 1]) continue;
    const index_t last = width > 0 ? ell_col[static_cast<std::size_t>(width - 1) * rows + i] : -1;
    if (width > 0 && last == ell_padding)
      fail("HYB", "row " + std::to_string(i) + " has COO entries but does not fill its " + std::to_string(width) +
                      " ELL slots");
    if (coo_col[k] <= last)
      fail("HYB", "row " + std::to_string(i) + ": COO column " + std::to_string(coo_col[k]) +
                      " does not follow the row's last ELL column " + std::to_string(last));
  }
}

void check_sell_shape(index_t rows, index_t cols, index_t slice_height, index_t sigma) {
  check_dims("SELL", rows, cols);
  if (slice_height < 1 || slice_height > 1024)
    fail("SELL", "slice height C must be in [1, 1024], got " + std::to_string(slice_height));
  if (sigma != 1 && (sigma < slice_height || sigma % slice_height != 0))
    fail("SELL", "sorting window sigma must be 1 or a positive multiple of C = " + std::to_string(slice_height) +
                     ", got " + std::to_string(sigma));
}

template <typename O>
void validate_sell(index_t rows, index_t cols, index_t slice_height, index_t sigma, const std::vector<index_t>& perm,
                   const std::vector<O>& slice_ptr, const std::vector<index_t>& col_idx) {
  check_sell_shape(rows, cols, slice_height, sigma);
  checked_offset<O>(static_cast<std::int64_t>(col_idx.size()), "SELL slots");
  const std::int64_t C = slice_height;
  const std::int64_t slices = (static_cast<std::int64_t>(rows) + C - 1) / C;
  check_count("SELL", "perm", perm.size(), static_cast<std::size_t>(rows));
  check_count("SELL", "slice_ptr", slice_ptr.size(), static_cast<std::size_t>(slices) + 1);
  std::vector<char> seen(static_cast<std::size_t>(rows), 0);
  for (index_t k = 0; k < rows; ++k) {
    const index_t i = perm[k];
    if (i < 0 || i >= rows) fail("SELL", at("perm", k, i) + " is outside [0, " + std::to_string(rows) + ")");
    if (seen[i]) fail("SELL", at("perm", k, i) + " repeats a row: perm must be a permutation");
    seen[i] = 1;
    if (sigma == 1 ? i != k : i / sigma != k / sigma)
      fail("SELL", at("perm", k, i) + " moves a row out of its sorting window of sigma = " + std::to_string(sigma) +
                       " rows" + (sigma == 1 ? " (sigma = 1: perm must be the identity)" : ""));
  }
  if (slice_ptr[0] != 0) fail("SELL", at("slice_ptr", 0, slice_ptr[0]) + ", must be 0");
  if (static_cast<std::size_t>(slice_ptr[slices]) != col_idx.size())
    fail("SELL", at("slice_ptr", slices, slice_ptr[slices]) + " but there are " + std::to_string(col_idx.size()) +
                     " slots");
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t len = static_cast<std::int64_t>(slice_ptr[s + 1]) - slice_ptr[s];
    if (len < 0 || len % C != 0)
      fail("SELL", "slice " + std::to_string(s) + " holds " + std::to_string(len) +
                       " slots; it must be a non-negative multiple of C = " + std::to_string(C));
  }
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t width = (static_cast<std::int64_t>(slice_ptr[s + 1]) - slice_ptr[s]) / C;
    for (std::int64_t r = 0; r < C; ++r) {
      const std::int64_t k = s * C + r;  // sorted row
      bool in_padding = k >= rows;
      for (std::int64_t d = 0; d < width; ++d) {
        const std::int64_t q = static_cast<std::int64_t>(slice_ptr[s]) + d * C + r;
        const index_t c = col_idx[q];
        if (c == ell_padding) {
          in_padding = true;
          continue;
        }
        if (in_padding)
          fail("SELL", at("col_idx", q, c) + (k >= rows ? " is in a slot row past the last row"
                                                          : " follows padding; padding (-1) must come last in a row"));
        if (c < 0 || c >= cols)
          fail("SELL", at("col_idx", q, c) + " is outside [0, " + std::to_string(cols) +
                           ") and is not the padding marker -1");
        if (d > 0 && c <= col_idx[q - C])
          fail("SELL", "column indices of sorted row " + std::to_string(k) + " must be strictly increasing: " +
                           at("col_idx", q - C, col_idx[q - C]) + ", " + at("col_idx", q, c));
      }
    }
  }
}

template void validate_sell<std::int32_t>(index_t, index_t, index_t, index_t, const std::vector<index_t>&,
                                          const std::vector<std::int32_t>&, const std::vector<index_t>&);
template void validate_sell<std::int64_t>(index_t, index_t, index_t, index_t, const std::vector<index_t>&,
                                          const std::vector<std::int64_t>&, const std::vector<index_t>&);
template void validate_compressed<std::int32_t>(const char*, const char*, const char*, index_t, index_t,
                                                const std::int32_t*, std::size_t, const index_t*, std::size_t);
template void validate_compressed<std::int64_t>(const char*, const char*, const char*, index_t, index_t,
                                                const std::int64_t*, std::size_t, const index_t*, std::size_t);
template void validate_jds<std::int32_t>(index_t, index_t, const std::vector<index_t>&,
                                         const std::vector<std::int32_t>&, const std::vector<index_t>&);
template void validate_jds<std::int64_t>(index_t, index_t, const std::vector<index_t>&,
                                         const std::vector<std::int64_t>&, const std::vector<index_t>&);

}  // namespace la::detail
