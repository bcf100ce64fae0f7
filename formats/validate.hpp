// Structural checks shared by the sparse formats. They throw la::invalid_matrix with a
// message that names the format, the array, the position and the offending value. Host
// matrices are validated in full when built; device matrices built from device buffers are
// checked for array sizes only (their contents are validated by to_host).
#pragma once

#include <cstddef>
#include <vector>

#include <la/types.hpp>

namespace la::detail {

/// Tag for constructors that skip the structural validation: for la's own conversions and
/// reader, whose output is valid by construction (validating 50M entries again costs ~0.3 s).
struct trusted_t {
  explicit trusted_t() = default;
};
inline constexpr trusted_t trusted{};

void check_dims(const char* fmt, std::int64_t rows, std::int64_t cols);
void check_count(const char* fmt, const char* array, std::size_t got, std::size_t want);

/// COO: every (row, col) inside rows x cols.
void validate_coo(index_t rows, index_t cols, const std::vector<index_t>& row_idx,
                  const std::vector<index_t>& col_idx);

/// CSR (major = "row") or CSC (major = "column"): ptr has n_major+1 monotone entries from 0
/// to nnz; minor indices in range and strictly increasing inside each major slice; nnz fits O.
/// Over arrays another owner keeps (ptr_size entries of ptr, nnz of idx); large ones are
/// checked on several threads.
template <typename O>
void validate_compressed(const char* fmt, const char* major, const char* minor, index_t n_major,
                         index_t n_minor, const O* ptr, std::size_t ptr_size, const index_t* idx,
                         std::size_t nnz);
template <typename O>
void validate_compressed(const char* fmt, const char* major, const char* minor, index_t n_major,
                         index_t n_minor, const std::vector<O>& ptr, const std::vector<index_t>& idx) {
  validate_compressed<O>(fmt, major, minor, n_major, n_minor, ptr.data(), ptr.size(), idx.data(), idx.size());
}

/// ELL: rows x width column-major; each row's entries first, then padding (col = -1);
/// columns in range and strictly increasing along a row.
void validate_ell(index_t rows, index_t cols, index_t width, const std::vector<index_t>& col_idx);

/// JDS: perm is a permutation of the rows; diagonal d holds the first len(d) sorted rows,
/// lengths non-increasing; columns in range and strictly increasing along each row.
template <typename O>
void validate_jds(index_t rows, index_t cols, const std::vector<index_t>& perm, const std::vector<O>& diag_ptr,
                  const std::vector<index_t>& col_idx);

/// HYB: the COO part (validated as COO) is sorted by row, then column; a row with COO
/// entries fills all `width` ELL slots, and its COO columns follow its last ELL column.
void validate_hyb(index_t rows, index_t width, const std::vector<index_t>& ell_col, const std::vector<index_t>& coo_row,
                  const std::vector<index_t>& coo_col);

/// SELL parameters: 1 <= C <= 1024; sigma = 1 or a positive multiple of C.
void check_sell_shape(index_t rows, index_t cols, index_t slice_height, index_t sigma);

/// SELL-C-sigma: slice_ptr starts at 0, steps by multiples of C up to the slot count; perm
/// is a permutation that moves rows only inside their window of sigma rows (the identity
/// when sigma = 1); in each slot row, entries first, then padding (-1); columns in range and
/// strictly increasing; the last slice's rows past `rows` hold padding only.
template <typename O>
void validate_sell(index_t rows, index_t cols, index_t slice_height, index_t sigma, const std::vector<index_t>& perm,
                   const std::vector<O>& slice_ptr, const std::vector<index_t>& col_idx);

}  // namespace la::detail
