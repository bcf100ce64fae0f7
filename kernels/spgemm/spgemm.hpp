// C = A B for CSR matrices on the GPU (la's SpGEMM), with a plan/run split like SpMV's: the
// plan is the symbolic product (C's row pointers, sized row by row), run() the numeric one
// (C's columns and values), which can be rerun when A's and B's values change on the same
// patterns (AMG's setup reuse).
//
// Each row of C is a merge of the rows of B that row i of A selects, in increasing column
// order: a cursor per entry a_ik, the smallest column under the cursors taken each step and
// its products summed in A's column order (double accumulation for float and double). Rows
// whose A row has at most 32 entries are merged a thread each, up to 96 a warp each (the
// warp's smallest column by shuffles, its sum by a fixed shuffle tree). Longer ones go a warp
// each through a shared-memory hash of C's columns (the products of each a_ik in A's order,
// the lanes over row k of B, so each sum keeps that order; the columns ranked into sorted
// order), and those whose C row passes the table (384 columns) are merged a warp each. No
// atomics in any sum, so C is the same bit for bit on every run, and C's pattern is the
// symbolic product's (entries that cancel to zero are kept), as reference::spgemm's. C's
// offsets are OC: a C with more than OC can hold is la::size_overflow naming the count
// before anything is allocated for it.
#pragma once

#include <cstdint>

#include <la/context.hpp>
#include <la/formats/csr.hpp>

namespace la {

/// Built for OA = OB = OC (32 or 64 bits), OA = OB = 32 with OC = 64, and OA = 32 with OB =
/// OC = 64 (a 32-bit operator times a 64-bit prolongator, AMG's A P).
template <typename T, typename OA, typename OB = OA, typename OC = OA>
class spgemm_plan {
 public:
  /// The symbolic product of A's and B's patterns (A's columns must match B's rows).
  spgemm_plan(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b);

  /// C = A B for A's and B's current values, on the patterns the plan was made for. c is
  /// allocated when it is not already the plan's shape and size (reruns reuse it).
  void run(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b, device_csr<T, OC>& c) const;

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  count_t nnz() const noexcept { return nnz_; }
  /// Rows taken a warp each (A's row longer than 32 entries), and of those the rows merged
  /// (A's row up to 96 entries, or C's row past the warp's hash table).
  index_t long_rows() const noexcept { return long_rows_; }
  index_t merged_rows() const noexcept { return merged_rows_; }

 private:
  index_t rows_ = 0, cols_ = 0, inner_ = 0, long_rows_ = 0, merged_rows_ = 0;
  count_t a_nnz_ = 0, b_nnz_ = 0, nnz_ = 0;
  device_buffer<OC> row_ptr_;
  device_buffer<index_t> long_;    // the long rows, in increasing order (their count last)
  device_buffer<index_t> merged_;  // the long rows past the hash table (their count last)
};

/// C = A B in one call (a plan made and run once).
template <typename T, typename OA, typename OB = OA, typename OC = OA>
device_csr<T, OC> spgemm(context& ctx, const device_csr<T, OA>& a, const device_csr<T, OB>& b);

}  // namespace la
