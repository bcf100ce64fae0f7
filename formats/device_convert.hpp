// Conversions from CSR on the GPU, producing exactly what the host conversions
// (convert.hpp) produce, so that a large matrix read once is converted on the device
// rather than on the host's cores:
//   to_coo  a row index per entry (one thread per row);
//   to_csc  a stable radix sort of the entries by column (CUB), so the rows within each
//           column stay in increasing order; column pointers by binary search;
//   to_ell  the longest row sizes the result (one host synchronization), then one thread
//           per row writes its column of slots, padding marked -1 with value 0;
//   to_jds  rows ordered by a stable radix sort on (longest - length), so ties keep row
//           order; diagonal pointers from the sorted lengths; one thread per sorted row.
// Work is queued on ctx's stream; temporaries come from ctx. to_ell and to_jds wait once
// for the longest row length, which sizes their result.
#pragma once

#include "coo.hpp"
#include "csc.hpp"
#include "csr.hpp"
#include "ell.hpp"
#include "jds.hpp"

namespace la {

template <typename T, typename O>
device_coo<T> to_coo(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_csc<T, O> to_csc(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_ell<T> to_ell(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_jds<T, O> to_jds(context& ctx, const device_csr<T, O>& a);

}  // namespace la
