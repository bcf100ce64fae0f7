// The vendor recipe for IC(0)-preconditioned CG the GPU solver is measured against:
// cusparseDcsric02 (deprecated, with no replacement in the generic API) factors tril(A)
// in place, cusparseSpSV solves with L and L^T (analysis once), and the loop is vendor_cg's
// (cusparseSpMV + cuBLAS with host scalars), step for step NVIDIA's preconditioned CG
// sample. No diagonal shift: where IC(0) breaks down, the recipe reports it. Part of
// la::vendor (benchmarks only; not installed).
#pragma once

#include <string>

#include <la/formats/csr.hpp>
#include <la/vector.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {

struct vendor_pcg_result {
  bool factored = false;     // false: csric02 met a zero or negative pivot (why says where)
  std::string why;
  double setup_seconds = 0;  // csric02 analysis and factorization, SpSV analyses
  double iterate_seconds = 0;
  std::int64_t iterations = 0;
  double residual = 0;       // ||r|| / ||b|| of the recurrence
};

/// IC(0) PCG from x = 0 (x overwritten) to ||r|| <= rtol ||b|| or max_iterations; `lower`
/// is tril(A) (the diagonal last in each row), copied before factoring. Double only.
vendor_pcg_result vendor_pcg_ic0(vendor_handles& h, const device_csr<double, std::int32_t>& a,
                                 const csr_matrix<double, std::int32_t>& lower, const device_vector<double>& b,
                                 device_vector<double>& x, std::int64_t max_iterations, double rtol);

}  // namespace la
