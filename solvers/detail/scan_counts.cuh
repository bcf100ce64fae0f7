// Row pointers from row counts on the device, shared by the builders that cut a matrix on the
// GPU (precond/device_precond.cu: tril(A), FSAI's offsets; distributed/matrix.cu: the generated Laplacian's
// parts, a part's diagonal block). Private.
#pragma once

#include <cub/device/device_scan.cuh>

#include <la/context.hpp>
#include <la/error.hpp>

namespace la::detail {

/// In-place inclusive scan of the n counts in ptr[1..n] (ptr[0] set to 0), on ctx's stream;
/// returns ptr[n], the total (the stream waits for it).
template <typename O>
O scan_counts(context& ctx, O* ptr, index_t n) {
  cudaStream_t s = ctx.stream();
  LA_CUDA_TRY(cudaMemsetAsync(ptr, 0, sizeof(O), s));
  if (n > 0) {
    std::size_t bytes = 0;
    LA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, ptr + 1, ptr + 1, n, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    LA_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.data(), bytes, ptr + 1, ptr + 1, n, s));
  }
  O total = 0;
  LA_CUDA_TRY(cudaMemcpyAsync(&total, ptr + n, sizeof(O), cudaMemcpyDeviceToHost, s));
  ctx.synchronize();
  return total;
}

}  // namespace la::detail
