// The cuSPARSE SpGEMM peer la's SpGEMM (kernels/spgemm/spgemm.hpp) is measured against:
// cusparseSpGEMM with CUSPARSE_SPGEMM_DEFAULT, the documented sequence (work estimation and
// compute, each sized then run, C's size, its arrays, the copy), 32-bit offsets.
#pragma once

#include <la/formats/csr.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {

/// C = A B by cuSPARSE on the handles' stream (everything allocated inside, as a caller
/// would); returns C.
template <typename T>
device_csr<T, std::int32_t> cusparse_spgemm(vendor_handles& h, const device_csr<T, std::int32_t>& a,
                                            const device_csr<T, std::int32_t>& b);

}  // namespace la
