// SELL-C-sigma (Kreutzer et al., SIAM J. Sci. Comput. 2014): rows sorted by length,
// longest first, within windows of sigma consecutive rows (stable: ties keep row order),
// then cut into slices of C sorted rows. Each slice is stored column-major (slot d of the
// slice's row r at slice_ptr[s] + d*C + r) and padded only to its own longest row; padding
// has col = ell_padding (-1) and value 0 and always follows a row's entries. perm[k] is the
// original row of sorted row k. sigma = 1 means no sorting (perm is the identity and
// kernels need not read it); otherwise sigma is a multiple of C (sorting inside one slice
// changes nothing). The last slice is padded to C rows. Slot offsets have type O.
// With sigma = 1 the layout is cuSPARSE's sliced ELL. sell_matrix (host) and device_sell
// are one template.
#pragma once

#include <vector>

#include <la/formats/storage.hpp>
#include <la/formats/validate.hpp>

namespace la {

template <typename T, typename O = index_t>
struct sell_view {
  index_t rows = 0, cols = 0;
  index_t slice_height = 32;  // C
  index_t sigma = 1;
  index_t slices = 0;                          // ceil(rows / C)
  index_ptr_t<T, index_t> perm = nullptr;      // rows
  index_ptr_t<T, O> slice_ptr = nullptr;       // slices + 1
  index_ptr_t<T, index_t> col_idx = nullptr;   // slots
  T* values = nullptr;                         // slots
};

template <typename T, typename O, memory M>
class basic_sell {
  static_assert(is_offset_v<O>, "offsets are std::int32_t or std::int64_t");

 public:
  static constexpr memory space = M;
  static constexpr format kind = format::sell;
  template <memory N> using rebind = basic_sell<T, O, N>;
  using value_type = T;
  using offset_type = O;

  basic_sell() {
    if constexpr (M == memory::host) slice_ptr_.assign(1, O(0));
  }
  /// Host: validates the layout. Device: checks the parameters and array sizes (to_host
  /// validates the contents).
  basic_sell(index_t rows, index_t cols, index_t slice_height, index_t sigma, array_t<index_t, M> perm,
             array_t<O, M> slice_ptr, array_t<index_t, M> col_idx, array_t<T, M> values)
      : rows_(rows), cols_(cols), c_(slice_height), sigma_(sigma), perm_(std::move(perm)),
        slice_ptr_(std::move(slice_ptr)), col_idx_(std::move(col_idx)), values_(std::move(values)) {
    detail::check_sell_shape(rows_, cols_, c_, sigma_);
    if constexpr (M == memory::host) {
      detail::validate_sell<O>(rows_, cols_, c_, sigma_, perm_, slice_ptr_, col_idx_);
    } else {
      checked_offset<O>(static_cast<std::int64_t>(col_idx_.size()), "SELL slots");
      detail::check_count("SELL", "perm", perm_.size(), static_cast<std::size_t>(rows_));
      detail::check_count("SELL", "slice_ptr", slice_ptr_.size(), static_cast<std::size_t>(slices()) + 1);
    }
    detail::check_count("SELL", "values", values_.size(), col_idx_.size());
  }
  /// Device: room for `slots` slots in the slices of a rows x cols matrix on ctx's device,
  /// uninitialized (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_sell allocate(context& ctx, index_t rows, index_t cols, index_t slice_height, index_t sigma,
                             count_t slots) {
    detail::check_sell_shape(rows, cols, slice_height, sigma);
    const auto n = static_cast<std::size_t>(checked_offset<O>(slots, "SELL slots"));
    const std::size_t slices = (static_cast<std::size_t>(rows) + slice_height - 1) / slice_height;
    check_device_memory(ctx, double(rows) * sizeof(index_t) + double(slices + 1) * sizeof(O) +
                                 double(n) * (sizeof(index_t) + sizeof(T)),
                        "a SELL matrix with " + std::to_string(slots) + " slots");
    return basic_sell(rows, cols, slice_height, sigma, ctx.allocate<index_t>(static_cast<std::size_t>(rows)),
                      ctx.allocate<O>(slices + 1), ctx.allocate<index_t>(n), ctx.allocate<T>(n));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t slice_height() const noexcept { return c_; }
  index_t sigma() const noexcept { return sigma_; }
  index_t slices() const noexcept { return static_cast<index_t>((static_cast<count_t>(rows_) + c_ - 1) / c_); }
  /// Stored slots, padding included: what a kernel reads.
  count_t slots() const noexcept { return static_cast<count_t>(col_idx_.size()); }
  /// Host: stored (non-padding) entries.
  count_t nnz() const noexcept {
    count_t n = 0;
    for (index_t c : col_idx_) n += c != ell_padding;
    return n;
  }
  const array_t<index_t, M>& perm() const noexcept { return perm_; }
  const array_t<O, M>& slice_ptr() const noexcept { return slice_ptr_; }
  const array_t<index_t, M>& col_idx() const noexcept { return col_idx_; }
  const array_t<T, M>& values() const noexcept { return values_; }
  array_t<T, M>& values() noexcept { return values_; }
  sell_view<const T, O> view() const noexcept {
    return {rows_, cols_, c_, sigma_, slices(), perm_.data(), slice_ptr_.data(), col_idx_.data(), values_.data()};
  }
  sell_view<T, O> view() noexcept {
    return {rows_, cols_, c_, sigma_, slices(), perm_.data(), slice_ptr_.data(), col_idx_.data(), values_.data()};
  }
  std::tuple<index_t, index_t, index_t, index_t> shape() const { return {rows_, cols_, c_, sigma_}; }
  auto arrays() const { return std::tie(perm_, slice_ptr_, col_idx_, values_); }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_sell& a, const basic_sell& b) {
    return a.shape() == b.shape() && a.perm_ == b.perm_ && a.slice_ptr_ == b.slice_ptr_ &&
           a.col_idx_ == b.col_idx_ && a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0, c_ = 32, sigma_ = 1;
  array_t<index_t, M> perm_;
  array_t<O, M> slice_ptr_;
  array_t<index_t, M> col_idx_;
  array_t<T, M> values_;
};

template <typename T, typename O = index_t> using sell_matrix = basic_sell<T, O, memory::host>;
template <typename T, typename O = index_t> using device_sell = basic_sell<T, O, memory::device>;

}  // namespace la
