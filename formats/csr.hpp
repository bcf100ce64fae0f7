// Compressed sparse row: row_ptr (rows+1 offsets of type O), column indices sorted and
// unique within a row. csr_matrix (host) and device_csr are one template.
#pragma once

#include "compressed.hpp"

namespace la {

template <typename T, typename O = index_t>
using csr_matrix = detail::basic_compressed<T, O, memory::host, detail::major_order::row>;
template <typename T, typename O = index_t>
using device_csr = detail::basic_compressed<T, O, memory::device, detail::major_order::row>;

}  // namespace la
