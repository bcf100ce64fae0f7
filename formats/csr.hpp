// Compressed sparse row: row_ptr (rows+1 offsets of type O), column indices sorted and
// unique within a row. csr_matrix (host) and device_csr are one template.
#pragma once

#include <string>
#include <utility>

#include <la/formats/compressed.hpp>

namespace la {

template <typename T, typename O = index_t>
using csr_matrix = detail::basic_compressed<T, O, memory::host, detail::major_order::row>;
template <typename T, typename O = index_t>
using device_csr = detail::basic_compressed<T, O, memory::device, detail::major_order::row>;

/// A CSR matrix in host arrays another owner keeps (numpy's, a mapped file), validated as
/// csr_matrix's constructor validates (on several threads when large) and copied straight to
/// ctx's device, with no host copy in between. Returns once the copies are done.
template <typename T, typename O>
device_csr<T, O> to_device(context& ctx, const csr_view<const T, O>& h) {
  const auto ptrs = static_cast<std::size_t>(h.rows < 0 ? 0 : h.rows) + 1;
  const auto n = static_cast<std::size_t>(h.nnz < 0 ? 0 : h.nnz);
  detail::validate_compressed<O>("CSR", "row", "column", h.rows, h.cols, h.row_ptr, ptrs, h.col_idx, n);
  check_device_memory(ctx, double(ptrs) * sizeof(O) + double(n) * (sizeof(index_t) + sizeof(T)),
                      "uploading a CSR matrix with " + std::to_string(n) + " nonzeros");
  device_csr<T, O> d(h.rows, h.cols, upload_async(ctx, h.row_ptr, ptrs), upload_async(ctx, h.col_idx, n),
                     upload_async(ctx, h.values, n));
  ctx.synchronize();
  return d;
}

}  // namespace la
