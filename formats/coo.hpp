// Coordinate format: (row, col, value) triplets in any order; duplicates allowed (they are
// summed by every conversion out of COO).
#pragma once

#include <vector>

#include "formats/validate.hpp"
#include "la/vector.hpp"

namespace la {

template <typename T>
struct coo_view {
  index_t rows = 0, cols = 0, nnz = 0;
  const index_t* row_idx = nullptr;
  const index_t* col_idx = nullptr;
  T* values = nullptr;
};

template <typename T>
class coo_matrix {
 public:
  coo_matrix() = default;
  coo_matrix(index_t rows, index_t cols, std::vector<index_t> row_idx, std::vector<index_t> col_idx,
             std::vector<T> values)
      : rows_(rows), cols_(cols), row_idx_(std::move(row_idx)), col_idx_(std::move(col_idx)),
        values_(std::move(values)) {
    detail::validate_coo(rows_, cols_, row_idx_, col_idx_);
    detail::check_count("COO", "values", values_.size(), row_idx_.size());
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(values_.size()); }
  const std::vector<index_t>& row_idx() const noexcept { return row_idx_; }
  const std::vector<index_t>& col_idx() const noexcept { return col_idx_; }
  const std::vector<T>& values() const noexcept { return values_; }
  std::vector<T>& values() noexcept { return values_; }
  coo_view<const T> view() const noexcept {
    return {rows_, cols_, nnz(), row_idx_.data(), col_idx_.data(), values_.data()};
  }

  friend bool operator==(const coo_matrix& a, const coo_matrix& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.row_idx_ == b.row_idx_ &&
           a.col_idx_ == b.col_idx_ && a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  std::vector<index_t> row_idx_, col_idx_;
  std::vector<T> values_;
};

template <typename T>
class device_coo {
 public:
  device_coo() = default;
  device_coo(index_t rows, index_t cols, device_buffer<index_t> r, device_buffer<index_t> c,
             device_buffer<T> v)
      : rows_(rows), cols_(cols), row_idx_(std::move(r)), col_idx_(std::move(c)), values_(std::move(v)) {}
  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(values_.size()); }
  coo_view<const T> view() const noexcept {
    return {rows_, cols_, nnz(), row_idx_.data(), col_idx_.data(), values_.data()};
  }
  const device_buffer<index_t>& row_idx() const noexcept { return row_idx_; }
  const device_buffer<index_t>& col_idx() const noexcept { return col_idx_; }
  const device_buffer<T>& values() const noexcept { return values_; }

 private:
  index_t rows_ = 0, cols_ = 0;
  device_buffer<index_t> row_idx_, col_idx_;
  device_buffer<T> values_;
};

template <typename T>
device_coo<T> to_device(context& ctx, const coo_matrix<T>& a) {
  device_coo<T> d(a.rows(), a.cols(), detail::upload(ctx, a.row_idx()),
                  detail::upload(ctx, a.col_idx()), detail::upload(ctx, a.values()));
  ctx.synchronize();
  return d;
}

template <typename T>
coo_matrix<T> to_host(context& ctx, const device_coo<T>& d) {
  auto r = detail::download(d.row_idx());
  auto c = detail::download(d.col_idx());
  auto v = detail::download(d.values());
  ctx.synchronize();
  return coo_matrix<T>(d.rows(), d.cols(), std::move(r), std::move(c), std::move(v));
}

}  // namespace la
