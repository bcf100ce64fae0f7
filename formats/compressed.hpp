// Shared storage of CSR and CSC, host and device: a pointer array (offset type O) over the
// major dimension and sorted, duplicate-free minor indices. csr.hpp and csc.hpp give it its
// public names and views.
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T, typename O = index_t>
struct csr_view {
  index_t rows = 0, cols = 0;
  O nnz = 0;
  index_ptr_t<T, O> row_ptr = nullptr;        // rows + 1
  index_ptr_t<T, index_t> col_idx = nullptr;  // nnz
  T* values = nullptr;                        // nnz
};

template <typename T, typename O = index_t>
struct csc_view {
  index_t rows = 0, cols = 0;
  O nnz = 0;
  index_ptr_t<T, O> col_ptr = nullptr;        // cols + 1
  index_ptr_t<T, index_t> row_idx = nullptr;  // nnz
  T* values = nullptr;                        // nnz
};

namespace detail {

enum class major_order { row, col };

template <typename T, typename O, memory M, major_order Ord>
class basic_compressed {
  static_assert(is_offset_v<O>, "offsets are std::int32_t or std::int64_t");
  static constexpr bool by_row = Ord == major_order::row;

 public:
  static constexpr memory space = M;
  static constexpr format kind = by_row ? format::csr : format::csc;
  template <memory N> using rebind = basic_compressed<T, O, N, Ord>;
  using value_type = T;
  using offset_type = O;
  static constexpr const char* format_name = by_row ? "CSR" : "CSC";

  basic_compressed() : ptr_(empty_ptr()) {}
  /// Host: validates the whole structure. Device: checks the array sizes (to_host validates
  /// the contents); ptr must end at idx.size().
  basic_compressed(index_t rows, index_t cols, array_t<O, M> ptr, array_t<index_t, M> idx, array_t<T, M> values)
      : rows_(rows), cols_(cols), ptr_(std::move(ptr)), idx_(std::move(idx)), values_(std::move(values)) {
    if constexpr (M == memory::host) {
      if (by_row) validate_compressed<O>("CSR", "row", "column", rows_, cols_, ptr_, idx_);
      else validate_compressed<O>("CSC", "column", "row", cols_, rows_, ptr_, idx_);
    } else {
      check_dims(format_name, rows_, cols_);
      checked_offset<O>(static_cast<std::int64_t>(idx_.size()), by_row ? "CSR nonzeros" : "CSC nonzeros");
      check_count(format_name, by_row ? "row_ptr" : "col_ptr", ptr_.size(),
                  static_cast<std::size_t>(by_row ? rows_ : cols_) + 1);
    }
    check_count(format_name, "values", values_.size(), idx_.size());
  }
  /// Host or device, without reading the structure (la's own conversions; sizes are checked).
  basic_compressed(trusted_t, index_t rows, index_t cols, array_t<O, M> ptr, array_t<index_t, M> idx,
                   array_t<T, M> values)
      : rows_(rows), cols_(cols), ptr_(std::move(ptr)), idx_(std::move(idx)), values_(std::move(values)) {
    check_dims(format_name, rows_, cols_);
    check_count(format_name, by_row ? "row_ptr" : "col_ptr", ptr_.size(), static_cast<std::size_t>(by_row ? rows_ : cols_) + 1);
    check_count(format_name, "values", values_.size(), idx_.size());
  }
  /// Device: rows x cols with room for nnz entries on ctx's device, uninitialized (for
  /// kernels that build a matrix; they fill it through view()).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_compressed allocate(context& ctx, index_t rows, index_t cols, count_t nnz) {
    check_dims(format_name, rows, cols);
    const auto n = static_cast<std::size_t>(checked_offset<O>(nnz, by_row ? "CSR nonzeros" : "CSC nonzeros"));
    check_device_memory(ctx, (double(by_row ? rows : cols) + 1) * sizeof(O) + double(n) * (sizeof(index_t) + sizeof(T)),
                        std::string("a ") + format_name + " matrix with " + std::to_string(nnz) + " nonzeros");
    return basic_compressed(rows, cols, ctx.allocate<O>(static_cast<std::size_t>(by_row ? rows : cols) + 1),
                            ctx.allocate<index_t>(n), ctx.allocate<T>(n));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  count_t nnz() const noexcept { return static_cast<count_t>(idx_.size()); }
  const array_t<O, M>& ptr() const noexcept { return ptr_; }
  const array_t<index_t, M>& idx() const noexcept { return idx_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }

  template <major_order X = Ord, std::enable_if_t<X == major_order::row, int> = 0>
  const array_t<O, M>& row_ptr() const noexcept { return ptr_; }
  template <major_order X = Ord, std::enable_if_t<X == major_order::row, int> = 0>
  const array_t<index_t, M>& col_idx() const noexcept { return idx_; }
  template <major_order X = Ord, std::enable_if_t<X == major_order::col, int> = 0>
  const array_t<O, M>& col_ptr() const noexcept { return ptr_; }
  template <major_order X = Ord, std::enable_if_t<X == major_order::col, int> = 0>
  const array_t<index_t, M>& row_idx() const noexcept { return idx_; }

  using view_type = std::conditional_t<by_row, csr_view<T, O>, csc_view<T, O>>;
  using const_view_type = std::conditional_t<by_row, csr_view<const T, O>, csc_view<const T, O>>;
  const_view_type view() const noexcept {
    return {rows_, cols_, static_cast<O>(idx_.size()), ptr_.data(), idx_.data(), values_.data()};
  }
  /// Mutable view: a kernel that fills the matrix must leave it valid.
  view_type view() noexcept {
    return {rows_, cols_, static_cast<O>(idx_.size()), ptr_.data(), idx_.data(), values_.data()};
  }
  std::tuple<index_t, index_t> shape() const { return {rows_, cols_}; }
  auto arrays() const { return std::tie(ptr_, idx_, values_); }
  /// The arrays moved out (the matrix is left empty): CSC read as the CSR of the transpose.
  auto release() && { return std::make_tuple(std::move(ptr_), std::move(idx_), std::move(values_)); }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_compressed& a, const basic_compressed& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.ptr_ == b.ptr_ && a.idx_ == b.idx_ &&
           a.values_ == b.values_;
  }

 private:
  static array_t<O, M> empty_ptr() {
    if constexpr (M == memory::host) return array_t<O, M>(1, O(0));
    else return array_t<O, M>();
  }
  index_t rows_ = 0, cols_ = 0;
  array_t<O, M> ptr_;
  array_t<index_t, M> idx_;
  array_t<T, M> values_;
};

}  // namespace detail
}  // namespace la
