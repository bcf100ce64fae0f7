// Shared storage of CSR and CSC: a pointer array over the major dimension and sorted,
// duplicate-free minor indices. csr.hpp and csc.hpp give it its public names.
#pragma once

#include <vector>

#include "formats/validate.hpp"
#include "la/vector.hpp"

namespace la::detail {

enum class major_order { row, col };

template <typename T, major_order M>
class compressed_matrix {
 public:
  static constexpr const char* format_name = M == major_order::row ? "CSR" : "CSC";

  compressed_matrix() : ptr_(1, 0) {}
  compressed_matrix(index_t rows, index_t cols, std::vector<index_t> ptr, std::vector<index_t> idx,
                    std::vector<T> values)
      : rows_(rows), cols_(cols), ptr_(std::move(ptr)), idx_(std::move(idx)), values_(std::move(values)) {
    checked_index(static_cast<std::int64_t>(idx_.size()), format_name);
    if (M == major_order::row)
      validate_compressed("CSR", "row", "column", rows_, cols_, ptr_, idx_);
    else
      validate_compressed("CSC", "column", "row", cols_, rows_, ptr_, idx_);
    check_count(format_name, "values", values_.size(), idx_.size());
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(idx_.size()); }
  const std::vector<index_t>& ptr() const noexcept { return ptr_; }
  const std::vector<index_t>& idx() const noexcept { return idx_; }
  const std::vector<T>& values() const noexcept { return values_; }
  std::vector<T>& values() noexcept { return values_; }

  friend bool operator==(const compressed_matrix& a, const compressed_matrix& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.ptr_ == b.ptr_ && a.idx_ == b.idx_ &&
           a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  std::vector<index_t> ptr_, idx_;
  std::vector<T> values_;
};

template <typename T, major_order M>
class device_compressed {
 public:
  device_compressed() = default;
  device_compressed(context& ctx, const compressed_matrix<T, M>& h)
      : rows_(h.rows()), cols_(h.cols()), ptr_(upload(ctx, h.ptr())), idx_(upload(ctx, h.idx())),
        values_(upload(ctx, h.values())) {
    ctx.synchronize();
  }
  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(idx_.size()); }
  const device_buffer<index_t>& ptr() const noexcept { return ptr_; }
  const device_buffer<index_t>& idx() const noexcept { return idx_; }
  const device_buffer<T>& values() const noexcept { return values_; }

  compressed_matrix<T, M> download_to_host(context& ctx) const {
    auto p = download(ptr_);
    auto i = download(idx_);
    auto v = download(values_);
    ctx.synchronize();
    return {rows_, cols_, std::move(p), std::move(i), std::move(v)};
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  device_buffer<index_t> ptr_, idx_;
  device_buffer<T> values_;
};

}  // namespace la::detail
