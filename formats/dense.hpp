// Dense row-major matrix with a leading dimension (ld >= cols): element (i, j) at i*ld + j.
#pragma once

#include <vector>

#include "formats/validate.hpp"
#include "la/vector.hpp"

namespace la {

template <typename T>
struct dense_view {
  index_t rows = 0, cols = 0, ld = 0;
  T* values = nullptr;  // rows * ld elements; offsets are computed in 64 bits
};

template <typename T>
class dense_matrix {
 public:
  dense_matrix() = default;
  /// rows x cols of zeros, ld = cols.
  dense_matrix(index_t rows, index_t cols)
      : dense_matrix(rows, cols, cols, std::vector<T>(static_cast<std::size_t>(rows) * cols)) {}
  /// Takes values (rows * ld elements) and validates the shape.
  dense_matrix(index_t rows, index_t cols, index_t ld, std::vector<T> values)
      : rows_(rows), cols_(cols), ld_(ld), values_(std::move(values)) {
    detail::check_dims("dense", rows, cols);
    if (ld < cols)
      throw invalid_matrix("dense: leading dimension " + std::to_string(ld) + " < cols " +
                           std::to_string(cols));
    detail::check_count("dense", "values", values_.size(), static_cast<std::size_t>(rows) * ld);
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t ld() const noexcept { return ld_; }
  const std::vector<T>& values() const noexcept { return values_; }
  std::vector<T>& values() noexcept { return values_; }  // shape is fixed; values are free
  T& operator()(index_t i, index_t j) { return values_[static_cast<std::size_t>(i) * ld_ + j]; }
  const T& operator()(index_t i, index_t j) const {
    return values_[static_cast<std::size_t>(i) * ld_ + j];
  }
  dense_view<const T> view() const noexcept { return {rows_, cols_, ld_, values_.data()}; }
  dense_view<T> view() noexcept { return {rows_, cols_, ld_, values_.data()}; }

  friend bool operator==(const dense_matrix& a, const dense_matrix& b) {
    if (a.rows_ != b.rows_ || a.cols_ != b.cols_) return false;
    for (index_t i = 0; i < a.rows_; ++i)
      for (index_t j = 0; j < a.cols_; ++j)
        if (!(a(i, j) == b(i, j))) return false;
    return true;
  }

 private:
  index_t rows_ = 0, cols_ = 0, ld_ = 0;
  std::vector<T> values_;
};

template <typename T>
class device_dense {
 public:
  device_dense() = default;
  device_dense(context& ctx, index_t rows, index_t cols)
      : rows_(rows), cols_(cols), ld_(cols),
        values_(static_cast<std::size_t>(rows) * cols, ctx.stream()) {
    detail::check_dims("dense", rows, cols);
  }
  device_dense(index_t rows, index_t cols, index_t ld, device_buffer<T> values)
      : rows_(rows), cols_(cols), ld_(ld), values_(std::move(values)) {}
  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t ld() const noexcept { return ld_; }
  dense_view<const T> view() const noexcept { return {rows_, cols_, ld_, values_.data()}; }
  dense_view<T> view() noexcept { return {rows_, cols_, ld_, values_.data()}; }
  const device_buffer<T>& values() const noexcept { return values_; }

 private:
  index_t rows_ = 0, cols_ = 0, ld_ = 0;
  device_buffer<T> values_;
};

template <typename T>
device_dense<T> to_device(context& ctx, const dense_matrix<T>& a) {
  device_dense<T> d(a.rows(), a.cols(), a.ld(), detail::upload(ctx, a.values()));
  ctx.synchronize();
  return d;
}

template <typename T>
dense_matrix<T> to_host(context& ctx, const device_dense<T>& d) {
  auto v = detail::download(d.values());
  ctx.synchronize();
  return dense_matrix<T>(d.rows(), d.cols(), d.ld(), std::move(v));
}

}  // namespace la
