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
//   to_hyb  a histogram of row lengths (atomics) gives the split (detail::hyb_width, the
//           host's rule) and the overflow count; a scan of the overflow per row places
//           each row's COO entries; one thread per row fills both parts.
//   to_sell one stable radix sort on (window, longest - length) gives the permutation;
//           slice widths by a max per slice, slice pointers by a scan; one thread per
//           slot row fills the slices (padding and the last slice's missing rows too).
//   to_dense rows * cols zeros (refused first when they cannot fit), then one thread per
//           row scatters its entries.
// Work is queued on ctx's stream; temporaries come from ctx. Each conversion waits where a
// size decides the allocation: the longest row (ELL, JDS, HYB, SELL), the histogram (HYB),
// the slot counts (SELL: for an automatic sigma, and for the total).
#pragma once

#include <la/formats/coo.hpp>
#include <la/formats/csc.hpp>
#include <la/formats/csr.hpp>
#include <la/formats/dense.hpp>
#include <la/formats/convert.hpp>
#include <la/formats/ell.hpp>
#include <la/formats/hyb.hpp>
#include <la/formats/jds.hpp>
#include <la/formats/sell.hpp>

namespace la {

template <typename T, typename O>
device_coo<T> to_coo(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_csc<T, O> to_csc(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_ell<T> to_ell(context& ctx, const device_csr<T, O>& a);
template <typename T, typename O>
device_jds<T, O> to_jds(context& ctx, const device_csr<T, O>& a);
/// width < 0: the split from the row-length histogram, as the host conversion chooses it.
template <typename T, typename O>
device_hyb<T> to_hyb(context& ctx, const device_csr<T, O>& a, index_t width = -1);
/// Row-major, ld = cols; refused (la::out_of_memory) when rows * cols does not fit.
template <typename T, typename O>
device_dense<T> to_dense(context& ctx, const device_csr<T, O>& a);
/// sigma = 0: chosen from the matrix, as the host conversion chooses it.
template <typename T, typename O>
device_sell<T, O> to_sell(context& ctx, const device_csr<T, O>& a, sell_options opt = {});

}  // namespace la
