// The coarsest AMG level's dense inverse on the GPU (coarse.cu; amg.cu's factor_coarse calls
// it). Private.
#pragma once

#include <la/formats/csr.hpp>

namespace la::precond_detail::amg_detail {

/// A^-1 (n x n, row-major, in A's value type) of the coarsest operator, computed in double:
/// [A | I] densely, la::dense_solver's LU with partial pivoting, solved for the identity.
/// Throws where A is singular (the column without a pivot named).
template <typename T>
device_buffer<T> coarse_inverse(context& ctx, const device_csr<T, count_t>& a);

}  // namespace la::precond_detail::amg_detail
