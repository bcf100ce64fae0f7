// Compressed sparse row: row_ptr (rows+1), column indices sorted and unique within a row.
#pragma once

#include "formats/compressed.hpp"

namespace la {

template <typename T>
struct csr_view {
  index_t rows = 0, cols = 0, nnz = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_idx = nullptr;
  T* values = nullptr;
};

template <typename T>
class csr_matrix : public detail::compressed_matrix<T, detail::major_order::row> {
  using base = detail::compressed_matrix<T, detail::major_order::row>;

 public:
  using base::base;
  csr_matrix(base b) : base(std::move(b)) {}
  const std::vector<index_t>& row_ptr() const noexcept { return this->ptr(); }
  const std::vector<index_t>& col_idx() const noexcept { return this->idx(); }
  csr_view<const T> view() const noexcept {
    return {this->rows(), this->cols(), this->nnz(), this->ptr().data(), this->idx().data(),
            this->values().data()};
  }
};

template <typename T>
class device_csr : public detail::device_compressed<T, detail::major_order::row> {
  using base = detail::device_compressed<T, detail::major_order::row>;

 public:
  using base::base;
  csr_view<const T> view() const noexcept {
    return {this->rows(), this->cols(), this->nnz(), this->ptr().data(), this->idx().data(),
            this->values().data()};
  }
};

template <typename T>
device_csr<T> to_device(context& ctx, const csr_matrix<T>& a) { return device_csr<T>(ctx, a); }
template <typename T>
csr_matrix<T> to_host(context& ctx, const device_csr<T>& d) { return d.download_to_host(ctx); }

}  // namespace la
