// Compressed sparse column: col_ptr (cols+1 offsets of type O), row indices sorted and
// unique within a column. csc_matrix (host) and device_csc are one template.
#pragma once

#include <la/formats/compressed.hpp>

namespace la {

template <typename T, typename O = index_t>
using csc_matrix = detail::basic_compressed<T, O, memory::host, detail::major_order::col>;
template <typename T, typename O = index_t>
using device_csc = detail::basic_compressed<T, O, memory::device, detail::major_order::col>;

}  // namespace la
