// Dense row-major matrix with a leading dimension (ld >= cols): element (i, j) at i*ld + j.
// dense_matrix (host) and device_dense are one template over the memory space.
#pragma once

#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T>
struct dense_view {
  index_t rows = 0, cols = 0, ld = 0;
  T* values = nullptr;  // rows * ld elements; offsets are computed in 64 bits
};

template <typename T, memory M>
class basic_dense {
 public:
  static constexpr memory space = M;
  static constexpr format kind = format::dense;
  template <memory N> using rebind = basic_dense<T, N>;
  using value_type = T;

  basic_dense() = default;
  /// Takes values (rows * ld elements) and checks the shape.
  basic_dense(index_t rows, index_t cols, index_t ld, array_t<T, M> values)
      : rows_(rows), cols_(cols), ld_(ld), values_(std::move(values)) {
    detail::check_dims("dense", rows, cols);
    if (ld < cols)
      throw invalid_matrix("dense: leading dimension " + std::to_string(ld) + " < cols " + std::to_string(cols));
    detail::check_count("dense", "values", values_.size(), static_cast<std::size_t>(rows) * ld);
  }
  /// Host: rows x cols of zeros, ld = cols.
  template <memory X = M, std::enable_if_t<X == memory::host, int> = 0>
  basic_dense(index_t rows, index_t cols)
      : basic_dense(rows, cols, cols, std::vector<T>(static_cast<std::size_t>(nonneg(rows)) * nonneg(cols))) {}
  /// Device: rows x cols, ld = cols, uninitialized, on ctx's device (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  basic_dense(context& ctx, index_t rows, index_t cols)
      : basic_dense(rows, cols, cols, ctx.allocate<T>(fits_device(ctx, rows, cols))) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t ld() const noexcept { return ld_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }  // shape is fixed; values are free
  dense_view<const T> view() const noexcept { return {rows_, cols_, ld_, values_.data()}; }
  dense_view<T> view() noexcept { return {rows_, cols_, ld_, values_.data()}; }
  std::tuple<index_t, index_t, index_t> shape() const { return {rows_, cols_, ld_}; }
  auto arrays() const { return std::tie(values_); }

  template <memory X = M, std::enable_if_t<X == memory::host, int> = 0>
  T& operator()(index_t i, index_t j) { return values_[static_cast<std::size_t>(i) * ld_ + j]; }
  template <memory X = M, std::enable_if_t<X == memory::host, int> = 0>
  const T& operator()(index_t i, index_t j) const { return values_[static_cast<std::size_t>(i) * ld_ + j]; }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_dense& a, const basic_dense& b) {
    if (a.rows_ != b.rows_ || a.cols_ != b.cols_) return false;
    for (index_t i = 0; i < a.rows_; ++i)
      for (index_t j = 0; j < a.cols_; ++j)
        if (!(a(i, j) == b(i, j))) return false;
    return true;
  }

 private:
  static std::size_t fits_device(const context& ctx, index_t rows, index_t cols) {
    const std::size_t n = static_cast<std::size_t>(nonneg(rows)) * static_cast<std::size_t>(nonneg(cols));
    check_device_memory(ctx, double(n) * sizeof(T),
                        "a " + std::to_string(rows) + " x " + std::to_string(cols) + " dense matrix");
    return n;
  }
  static index_t nonneg(index_t n) {
    detail::check_dims("dense", n, 0);
    return n;
  }
  index_t rows_ = 0, cols_ = 0, ld_ = 0;
  array_t<T, M> values_;
};

template <typename T> using dense_matrix = basic_dense<T, memory::host>;
template <typename T> using device_dense = basic_dense<T, memory::device>;

}  // namespace la
