// Hybrid ELL + COO (Bell & Garland, 2009): the first `width` entries of each row in an ELL
// part (column-major, padded), the rest of the longer rows in a COO part sorted by row
// and column. A row's COO entries follow its full ELL slots, so its columns increase
// across both parts. The split comes from the row-length histogram (hyb_width in
// convert.hpp): an ELL slot is kept while at least a third of the rows fill it.
// hyb_matrix (host) and device_hyb are one template.
#pragma once

#include <la/formats/coo.hpp>
#include <la/formats/ell.hpp>

namespace la {

template <typename T>
struct hyb_view {
  ell_view<T> ell;  // rows x width
  coo_view<T> coo;  // the overflow, row-sorted
};

template <typename T, memory M>
class basic_hyb {
 public:
  static constexpr memory space = M;
  static constexpr format kind = format::hyb;
  template <memory N> using rebind = basic_hyb<T, N>;
  using value_type = T;

  basic_hyb() = default;
  /// Host: validates both parts and how they join. Device: checks the array sizes.
  basic_hyb(index_t rows, index_t cols, index_t width, array_t<index_t, M> ell_col, array_t<T, M> ell_val,
            array_t<index_t, M> coo_row, array_t<index_t, M> coo_col, array_t<T, M> coo_val)
      : ell_(rows, cols, width, std::move(ell_col), std::move(ell_val)),
        coo_(rows, cols, std::move(coo_row), std::move(coo_col), std::move(coo_val)) {
    if constexpr (M == memory::host) detail::validate_hyb(rows, width, ell_.col_idx(), coo_.row_idx(), coo_.col_idx());
  }
  /// Device: the two parts, uninitialized (for kernels to fill).
  template <memory X = M, std::enable_if_t<X == memory::device, int> = 0>
  static basic_hyb allocate(context& ctx, index_t rows, index_t cols, index_t width, count_t overflow) {
    basic_hyb h;
    h.ell_ = basic_ell<T, M>::allocate(ctx, rows, cols, width);
    h.coo_ = basic_coo<T, M>::allocate(ctx, rows, cols, overflow);
    return h;
  }

  index_t rows() const noexcept { return ell_.rows(); }
  index_t cols() const noexcept { return ell_.cols(); }
  index_t width() const noexcept { return ell_.width(); }
  const basic_ell<T, M>& ell() const noexcept { return ell_; }
  const basic_coo<T, M>& coo() const noexcept { return coo_; }
  /// Host: stored entries (ELL non-padding + COO).
  count_t nnz() const noexcept { return ell_.nnz() + coo_.nnz(); }
  /// ELL slots + COO entries: what the kernel reads.
  count_t stored() const noexcept { return static_cast<count_t>(ell_.slots()) + coo_.nnz(); }
  hyb_view<const T> view() const noexcept { return {ell_.view(), coo_.view()}; }
  hyb_view<T> view() noexcept { return {ell_.view(), coo_.view()}; }
  std::tuple<index_t, index_t, index_t> shape() const { return {rows(), cols(), width()}; }
  auto arrays() const {
    return std::tie(ell_.col_idx(), ell_.values(), coo_.row_idx(), coo_.col_idx(), coo_.values());
  }

  /// Host only (instantiated when used).
  friend bool operator==(const basic_hyb& a, const basic_hyb& b) { return a.ell_ == b.ell_ && a.coo_ == b.coo_; }

 private:
  basic_ell<T, M> ell_;
  basic_coo<T, M> coo_;
};

template <typename T> using hyb_matrix = basic_hyb<T, memory::host>;
template <typename T> using device_hyb = basic_hyb<T, memory::device>;

}  // namespace la
