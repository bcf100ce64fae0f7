// Jagged diagonal storage: rows sorted by length (longest first, ties in row order);
// perm[k] is the original row of sorted row k. Jagged diagonal d holds entry d of the first
// len(d) sorted rows, contiguously (column-major over the sorted rows), starting at
// diag_ptr[d] (offsets of type O). Lengths are non-increasing, so a thread per sorted row
// reads coalesced and stops at the first diagonal shorter than its row index. No padding is
// stored. jds_matrix (host) and device_jds are one template.
#pragma once

#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T, typename O = index_t>
struct jds_view {
  index_t rows = 0, cols = 0;
  O nnz = 0;
  index_t num_diagonals = 0;
  index_ptr_t<T, index_t> perm = nullptr;  // rows
  index_ptr_t<T, O> diag_ptr = nullptr;     // num_diagonals + 1
  index_ptr_t<T, index_t> col_idx = nullptr;  // nnz
  T* values = nullptr;                      // nnz
};

template <typename T, typename O, memory M>
class basic_jds {
  static_assert(is_offset_v<O>, "offsets are std::int32_t or std::int64_t");

 public:
  static constexpr memory space = M;
  static constexpr format kind = format::jds;
  template <memory N> using rebind = basic_jds<T, O, N>;
  using value_type = T;
  using offset_type = O;

  basic_jds() {
    if constexpr (M == memory::host) diag_ptr_.assign(1, O(0));
  }
  /// Host: validates the layout. Device: checks the array sizes (to_host validates).
  basic_jds(index_t rows, index_t cols, array_t<index_t, M> perm, array_t<O, M> diag_ptr, array_t<index_t, M> col_idx,
            array_t<T, M> values)
      : rows_(rows), cols_(cols), perm_(std::move(perm)), diag_ptr_(std::move(diag_ptr)), col_idx_(std::move(col_idx)),
        values_(std::move(values)) {
    if constexpr (M == memory::host) {
      detail::validate_jds<O>(rows_, cols_, perm_, diag_ptr_, col_idx_);
    } else {
      detail::check_dims("JDS", rows_, cols_);
      checked_offset<O>(static_cast<std::int64_t>(col_idx_.size()), "JDS nonzeros");
      detail::check_count("JDS", "perm", perm_.size(), static_cast<std::size_t>(rows_));
      LA_EXPECTS(!diag_ptr_.empty(), "JDS: diag_ptr must hold at least one element");
    }
    detail::check_count("JDS", "values", values_.size(), col_idx_.size());
  }
  /// Device: room for nnz entries in num_diagonals diagonals on ctx's device,
  /// uninitialized (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_jds allocate(context& ctx, index_t rows, index_t cols, count_t nnz, index_t num_diagonals) {
    detail::check_dims("JDS", rows, cols);
    LA_EXPECTS(num_diagonals >= 0, "JDS: the number of diagonals must be non-negative");
    const auto n = static_cast<std::size_t>(checked_offset<O>(nnz, "JDS nonzeros"));
    check_device_memory(ctx, double(rows) * sizeof(index_t) + (double(num_diagonals) + 1) * sizeof(O) +
                                 double(n) * (sizeof(index_t) + sizeof(T)),
                        "a JDS matrix with " + std::to_string(nnz) + " nonzeros");
    return basic_jds(rows, cols, ctx.allocate<index_t>(static_cast<std::size_t>(rows)),
                     ctx.allocate<O>(static_cast<std::size_t>(num_diagonals) + 1), ctx.allocate<index_t>(n),
                     ctx.allocate<T>(n));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  count_t nnz() const noexcept { return static_cast<count_t>(col_idx_.size()); }
  index_t num_diagonals() const noexcept { return diag_ptr_.empty() ? 0 : static_cast<index_t>(diag_ptr_.size() - 1); }
  const array_t<index_t, M>& perm() const noexcept { return perm_; }
  const array_t<O, M>& diag_ptr() const noexcept { return diag_ptr_; }
  const array_t<index_t, M>& col_idx() const noexcept { return col_idx_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }
  jds_view<const T, O> view() const noexcept {
    return {rows_, cols_, static_cast<O>(nnz()), num_diagonals(), perm_.data(), diag_ptr_.data(), col_idx_.data(),
            values_.data()};
  }
  jds_view<T, O> view() noexcept {
    return {rows_, cols_, static_cast<O>(nnz()), num_diagonals(), perm_.data(), diag_ptr_.data(), col_idx_.data(),
            values_.data()};
  }
  std::tuple<index_t, index_t> shape() const { return {rows_, cols_}; }
  auto arrays() const { return std::tie(perm_, diag_ptr_, col_idx_, values_); }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_jds& a, const basic_jds& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.perm_ == b.perm_ && a.diag_ptr_ == b.diag_ptr_ &&
           a.col_idx_ == b.col_idx_ && a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  array_t<index_t, M> perm_;
  array_t<O, M> diag_ptr_;
  array_t<index_t, M> col_idx_;
  array_t<T, M> values_;
};

template <typename T, typename O = index_t> using jds_matrix = basic_jds<T, O, memory::host>;
template <typename T, typename O = index_t> using device_jds = basic_jds<T, O, memory::device>;

}  // namespace la
