// Jagged diagonal storage: rows sorted by length (longest first, ties in row order);
// perm[k] is the original row of sorted row k. Jagged diagonal d holds entry d of the first
// len(d) sorted rows, contiguously (column-major over the sorted rows), starting at
// diag_ptr[d]. Lengths are non-increasing, so a thread per sorted row reads coalesced and
// stops at the first diagonal shorter than its row index. No padding is stored.
#pragma once

#include <vector>

#include "formats/validate.hpp"
#include "la/vector.hpp"

namespace la {

template <typename T>
struct jds_view {
  index_t rows = 0, cols = 0, nnz = 0, num_diagonals = 0;
  const index_t* perm = nullptr;      // rows
  const index_t* diag_ptr = nullptr;  // num_diagonals + 1
  const index_t* col_idx = nullptr;   // nnz
  T* values = nullptr;                // nnz
};

template <typename T>
class jds_matrix {
 public:
  jds_matrix() : diag_ptr_(1, 0) {}
  jds_matrix(index_t rows, index_t cols, std::vector<index_t> perm, std::vector<index_t> diag_ptr,
             std::vector<index_t> col_idx, std::vector<T> values)
      : rows_(rows), cols_(cols), perm_(std::move(perm)), diag_ptr_(std::move(diag_ptr)),
        col_idx_(std::move(col_idx)), values_(std::move(values)) {
    checked_index(static_cast<std::int64_t>(col_idx_.size()), "JDS nnz");
    detail::validate_jds(rows_, cols_, perm_, diag_ptr_, col_idx_);
    detail::check_count("JDS", "values", values_.size(), col_idx_.size());
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(col_idx_.size()); }
  index_t num_diagonals() const noexcept { return static_cast<index_t>(diag_ptr_.size()) - 1; }
  const std::vector<index_t>& perm() const noexcept { return perm_; }
  const std::vector<index_t>& diag_ptr() const noexcept { return diag_ptr_; }
  const std::vector<index_t>& col_idx() const noexcept { return col_idx_; }
  const std::vector<T>& values() const noexcept { return values_; }
  std::vector<T>& values() noexcept { return values_; }
  jds_view<const T> view() const noexcept {
    return {rows_, cols_, nnz(), num_diagonals(), perm_.data(), diag_ptr_.data(), col_idx_.data(),
            values_.data()};
  }

  friend bool operator==(const jds_matrix& a, const jds_matrix& b) {
    return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.perm_ == b.perm_ &&
           a.diag_ptr_ == b.diag_ptr_ && a.col_idx_ == b.col_idx_ && a.values_ == b.values_;
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  std::vector<index_t> perm_, diag_ptr_, col_idx_;
  std::vector<T> values_;
};

template <typename T>
class device_jds {
 public:
  device_jds() = default;
  device_jds(context& ctx, const jds_matrix<T>& h)
      : rows_(h.rows()), cols_(h.cols()), perm_(detail::upload(ctx, h.perm())),
        diag_ptr_(detail::upload(ctx, h.diag_ptr())), col_idx_(detail::upload(ctx, h.col_idx())),
        values_(detail::upload(ctx, h.values())) {
    ctx.synchronize();
  }
  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(col_idx_.size()); }
  index_t num_diagonals() const noexcept { return static_cast<index_t>(diag_ptr_.size()) - 1; }
  jds_view<const T> view() const noexcept {
    return {rows_, cols_, nnz(), num_diagonals(), perm_.data(), diag_ptr_.data(), col_idx_.data(),
            values_.data()};
  }
  jds_matrix<T> download_to_host(context& ctx) const {
    auto p = detail::download(perm_);
    auto d = detail::download(diag_ptr_);
    auto c = detail::download(col_idx_);
    auto v = detail::download(values_);
    ctx.synchronize();
    return {rows_, cols_, std::move(p), std::move(d), std::move(c), std::move(v)};
  }

 private:
  index_t rows_ = 0, cols_ = 0;
  device_buffer<index_t> perm_, diag_ptr_, col_idx_;
  device_buffer<T> values_;
};

template <typename T>
device_jds<T> to_device(context& ctx, const jds_matrix<T>& a) { return device_jds<T>(ctx, a); }
template <typename T>
jds_matrix<T> to_host(context& ctx, const device_jds<T>& d) { return d.download_to_host(ctx); }

}  // namespace la
