// ELLPACK: every row padded to `width` slots, stored column-major (slot k of row i at
// k*rows + i, computed in 64 bits) so that consecutive threads (rows) read consecutive
// addresses. Padding slots hold col = ell_padding and value 0; they always follow a row's
// real entries. ell_matrix (host) and device_ell are one template.
#pragma once

#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T>
struct ell_view {
  index_t rows = 0, cols = 0, width = 0;
  index_ptr_t<T, index_t> col_idx = nullptr;  // rows * width, column-major; ell_padding marks padding
  T* values = nullptr;
};

template <typename T, memory M>
class basic_ell {
 public:
  static constexpr memory space = M;
  static constexpr format kind = format::ell;
  template <memory N> using rebind = basic_ell<T, N>;
  using value_type = T;

  basic_ell() = default;
  /// Host: validates the layout. Device: checks the array sizes (to_host validates).
  basic_ell(index_t rows, index_t cols, index_t width, array_t<index_t, M> col_idx, array_t<T, M> values)
      : rows_(rows), cols_(cols), width_(width), col_idx_(std::move(col_idx)), values_(std::move(values)) {
    if constexpr (M == memory::host) {
      detail::validate_ell(rows_, cols_, width_, col_idx_);
    } else {
      detail::check_dims("ELL", rows_, cols_);
      LA_EXPECTS(width_ >= 0, "ELL: width must be non-negative, got " + std::to_string(width_));
      detail::check_count("ELL", "col_idx", col_idx_.size(), slots());
    }
    detail::check_count("ELL", "values", values_.size(), col_idx_.size());
  }
  /// Device: rows x width slots on ctx's device, uninitialized (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_ell allocate(context& ctx, index_t rows, index_t cols, index_t width) {
    detail::check_dims("ELL", rows, cols);
    LA_EXPECTS(width >= 0, "ELL: width must be non-negative, got " + std::to_string(width));
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
    check_device_memory(ctx, double(n) * (sizeof(index_t) + sizeof(T)),
                        "an ELL matrix of " + std::to_string(rows) + " x " + std::to_string(width) + " slots");
    return basic_ell(rows, cols, width, ctx.allocate<index_t>(n), ctx.allocate<T>(n));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t width() const noexcept { return width_; }
  std::size_t slots() const noexcept { return static_cast<std::size_t>(rows_) * static_cast<std::size_t>(width_); }
  /// Host: stored (non-padding) entries.
  count_t nnz() const noexcept {
    count_t n = 0;
    for (index_t c : col_idx_) n += c != ell_padding;
    return n;
  }
  const array_t<index_t, M>& col_idx() const noexcept { return col_idx_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }
  ell_view<const T> view() const noexcept { return {rows_, cols_, width_, col_idx_.data(), values_.data()}; }
  ell_view<T> view() noexcept { return {rows_, cols_, width_, col_idx_.data(), values_.data()}; }
  std::tuple<index_t, index_t, index_t> shape() const { return {rows_, cols_, width_}; }
  auto arrays() const { return std::tie(col_idx_, values_); }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_ell& a, const basic_ell& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.width_ == b.width_ && a.col_idx_ == b.col_idx_ &&
           a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0, width_ = 0;
  array_t<index_t, M> col_idx_;
  array_t<T, M> values_;
};

template <typename T> using ell_matrix = basic_ell<T, memory::host>;
template <typename T> using device_ell = basic_ell<T, memory::device>;

}  // namespace la
