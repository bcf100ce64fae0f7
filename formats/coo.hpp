// Coordinate format: (row, col, value) triplets in any order; duplicates allowed (they are
// summed by every conversion out of COO). The entry count is 64-bit (count_t); coo_matrix
// (host) and device_coo are one template.
#pragma once

#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T>
struct coo_view {
  index_t rows = 0, cols = 0;
  count_t nnz = 0;
  index_ptr_t<T, index_t> row_idx = nullptr;
  index_ptr_t<T, index_t> col_idx = nullptr;
  T* values = nullptr;
};

template <typename T, memory M>
class basic_coo {
 public:
  static constexpr memory space = M;
  static constexpr format kind = format::coo;
  template <memory N> using rebind = basic_coo<T, N>;
  using value_type = T;

  basic_coo() = default;
  /// Host: validates every index. Device: checks the array sizes (to_host validates).
  basic_coo(index_t rows, index_t cols, array_t<index_t, M> row_idx, array_t<index_t, M> col_idx,
            array_t<T, M> values)
      : rows_(rows), cols_(cols), row_idx_(std::move(row_idx)), col_idx_(std::move(col_idx)),
        values_(std::move(values)) {
    if constexpr (M == memory::host) {
      detail::validate_coo(rows_, cols_, row_idx_, col_idx_);
    } else {
      detail::check_dims("COO", rows_, cols_);
      detail::check_count("COO", "col_idx", col_idx_.size(), row_idx_.size());
    }
    detail::check_count("COO", "values", values_.size(), row_idx_.size());
  }
  /// Without reading the indices (la's own reader, which checked each one; sizes are checked).
  basic_coo(detail::trusted_t, index_t rows, index_t cols, array_t<index_t, M> row_idx, array_t<index_t, M> col_idx,
            array_t<T, M> values)
      : rows_(rows), cols_(cols), row_idx_(std::move(row_idx)), col_idx_(std::move(col_idx)),
        values_(std::move(values)) {
    detail::check_dims("COO", rows_, cols_);
    detail::check_count("COO", "col_idx", col_idx_.size(), row_idx_.size());
    detail::check_count("COO", "values", values_.size(), row_idx_.size());
  }
  /// Device: room for nnz entries on ctx's device, uninitialized (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_coo allocate(context& ctx, index_t rows, index_t cols, count_t nnz) {
    LA_EXPECTS(nnz >= 0, "COO: nnz must be non-negative, got " + std::to_string(nnz));
    const auto n = static_cast<std::size_t>(nnz);
    check_device_memory(ctx, double(n) * (2 * sizeof(index_t) + sizeof(T)),
                        "a COO matrix with " + std::to_string(nnz) + " entries");
    return basic_coo(rows, cols, ctx.allocate<index_t>(n), ctx.allocate<index_t>(n), ctx.allocate<T>(n));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  count_t nnz() const noexcept { return static_cast<count_t>(values_.size()); }
  const array_t<index_t, M>& row_idx() const noexcept { return row_idx_; }
  const array_t<index_t, M>& col_idx() const noexcept { return col_idx_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }
  coo_view<const T> view() const noexcept {
    return {rows_, cols_, nnz(), row_idx_.data(), col_idx_.data(), values_.data()};
  }
  coo_view<T> view() noexcept { return {rows_, cols_, nnz(), row_idx_.data(), col_idx_.data(), values_.data()}; }
  std::tuple<index_t, index_t> shape() const { return {rows_, cols_}; }
  auto arrays() const { return std::tie(row_idx_, col_idx_, values_); }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_coo& a, const basic_coo& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.row_idx_ == b.row_idx_ && a.col_idx_ == b.col_idx_ &&
           a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  array_t<index_t, M> row_idx_, col_idx_;
  array_t<T, M> values_;
};

template <typename T> using coo_matrix = basic_coo<T, memory::host>;
template <typename T> using device_coo = basic_coo<T, memory::device>;

}  // namespace la
