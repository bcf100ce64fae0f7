// ELLPACK: every row padded to `width` slots, stored column-major (slot k of row i at
// k*rows + i) so that consecutive threads (rows) read consecutive addresses. Padding slots
// hold col = ell_padding and value 0; they always follow a row's real entries.
#pragma once

#include <vector>

#include "formats/validate.hpp"
#include "la/vector.hpp"

namespace la {

inline constexpr index_t ell_padding = -1;

template <typename T>
struct ell_view {
  index_t rows = 0, cols = 0, width = 0;
  const index_t* col_idx = nullptr;  // rows * width, column-major; ell_padding marks padding
  T* values = nullptr;
};

template <typename T>
class ell_matrix {
 public:
  ell_matrix() = default;
  ell_matrix(index_t rows, index_t cols, index_t width, std::vector<index_t> col_idx,
             std::vector<T> values)
      : rows_(rows), cols_(cols), width_(width), col_idx_(std::move(col_idx)), values_(std::move(values)) {
    detail::validate_ell(rows_, cols_, width_, col_idx_);
    detail::check_count("ELL", "values", values_.size(), col_idx_.size());
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t width() const noexcept { return width_; }
  /// Stored (non-padding) entries.
  index_t nnz() const noexcept {
    index_t n = 0;
    for (index_t c : col_idx_) n += c != ell_padding;
    return n;
  }
  const std::vector<index_t>& col_idx() const noexcept { return col_idx_; }
  const std::vector<T>& values() const noexcept { return values_; }
  std::vector<T>& values() noexcept { return values_; }
  ell_view<const T> view() const noexcept {
    return {rows_, cols_, width_, col_idx_.data(), values_.data()};
  }

  friend bool operator==(const ell_matrix& a, const ell_matrix& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.width_ == b.width_ &&
           a.col_idx_ == b.col_idx_ && a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0, width_ = 0;
  std::vector<index_t> col_idx_;
  std::vector<T> values_;
};

template <typename T>
class device_ell {
 public:
  device_ell() = default;
  device_ell(context& ctx, const ell_matrix<T>& h)
      : rows_(h.rows()), cols_(h.cols()), width_(h.width()), col_idx_(detail::upload(ctx, h.col_idx())),
        values_(detail::upload(ctx, h.values())) {
    ctx.synchronize();
  }
  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t width() const noexcept { return width_; }
  ell_view<const T> view() const noexcept {
    return {rows_, cols_, width_, col_idx_.data(), values_.data()};
  }
  ell_matrix<T> download_to_host(context& ctx) const {
    auto c = detail::download(col_idx_);
    auto v = detail::download(values_);
    ctx.synchronize();
    return {rows_, cols_, width_, std::move(c), std::move(v)};
  }

 private:
  index_t rows_ = 0, cols_ = 0, width_ = 0;
  device_buffer<index_t> col_idx_;
  device_buffer<T> values_;
};

template <typename T>
device_ell<T> to_device(context& ctx, const ell_matrix<T>& a) { return device_ell<T>(ctx, a); }
template <typename T>
ell_matrix<T> to_host(context& ctx, const device_ell<T>& d) { return d.download_to_host(ctx); }

}  // namespace la
