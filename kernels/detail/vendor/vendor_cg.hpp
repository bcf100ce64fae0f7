// The vendor-library CG the GPU solver is measured against: cusparseSpMV (CSR ALG1) plus
// cuBLAS dot/axpy/scal/copy with host-side scalars, step for step the loop of NVIDIA's
// conjugateGradient CUDA sample. Each dot returns to the host, so every iteration waits for
// the device twice. Part of la::vendor (benchmarks only; not installed).
#pragma once

#include <la/formats/csr.hpp>
#include <la/vector.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {

struct vendor_cg_result {
  std::int64_t iterations = 0;
  double residual = 0;  // ||r|| / ||b|| of the recurrence
};

/// Runs at most max_iterations of unpreconditioned CG from x = 0 (x is overwritten),
/// stopping at ||r|| <= rtol ||b||. 32-bit offsets.
template <typename T>
vendor_cg_result vendor_cg(vendor_handles& h, const device_csr<T, std::int32_t>& a, const device_vector<T>& b,
                           device_vector<T>& x, std::int64_t max_iterations, double rtol);

}  // namespace la
