// Compressed sparse column: col_ptr (cols+1), row indices sorted and unique within a column.
#pragma once

#include "formats/compressed.hpp"

namespace la {

template <typename T>
struct csc_view {
  index_t rows = 0, cols = 0, nnz = 0;
  const index_t* col_ptr = nullptr;
  const index_t* row_idx = nullptr;
  T* values = nullptr;
};

template <typename T>
class csc_matrix : public detail::compressed_matrix<T, detail::major_order::col> {
  using base = detail::compressed_matrix<T, detail::major_order::col>;

 public:
  using base::base;
  csc_matrix(base b) : base(std::move(b)) {}
  const std::vector<index_t>& col_ptr() const noexcept { return this->ptr(); }
  const std::vector<index_t>& row_idx() const noexcept { return this->idx(); }
  csc_view<const T> view() const noexcept {
    return {this->rows(), this->cols(), this->nnz(), this->ptr().data(), this->idx().data(),
            this->values().data()};
  }
};

template <typename T>
class device_csc : public detail::device_compressed<T, detail::major_order::col> {
  using base = detail::device_compressed<T, detail::major_order::col>;

 public:
  using base::base;
  csc_view<const T> view() const noexcept {
    return {this->rows(), this->cols(), this->nnz(), this->ptr().data(), this->idx().data(),
            this->values().data()};
  }
};

template <typename T>
device_csc<T> to_device(context& ctx, const csc_matrix<T>& a) { return device_csc<T>(ctx, a); }
template <typename T>
csc_matrix<T> to_host(context& ctx, const device_csc<T>& d) { return d.download_to_host(ctx); }

}  // namespace la
