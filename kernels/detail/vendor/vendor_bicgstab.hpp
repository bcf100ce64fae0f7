// The vendor recipe for BiCGSTAB the GPU solvers are measured against: cusparseSpMV and
// cuBLAS with host scalars (a read-back per dot), right-preconditioned step for step as
// NVIDIA's cuSPARSE BiCGSTAB sample; M^-1 none, Jacobi (cublasDdgmm by the inverse diagonal,
// zero entries taken as 1) or ILU(0) (cusparseDcsrilu02 in place, then cusparseSpSV with the
// unit lower and the upper triangle, analysis once). Part of la::vendor (benchmarks only).
#pragma once

#include <string>

#include <la/formats/csr.hpp>
#include <la/vector.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {

struct vendor_bicgstab_result {
  bool factored = true;      // false: csrilu02 met a zero pivot or a missing diagonal (why says where)
  std::string why;
  double setup_seconds = 0;  // the preconditioner (csrilu02 analysis and factorization, SpSV analyses)
  double iterate_seconds = 0;
  std::int64_t iterations = 0;
  double residual = 0;       // ||r|| / ||b|| of the recurrence
  bool converged = false;
};

/// BiCGSTAB from x = 0 to ||r|| <= rtol ||b|| or max_iterations; precond "none", "jacobi" or
/// "ilu0". Double, 32-bit offsets.
vendor_bicgstab_result vendor_bicgstab(vendor_handles& h, const csr_matrix<double, std::int32_t>& a,
                                       const device_vector<double>& b, device_vector<double>& x,
                                       const std::string& precond, std::int64_t max_iterations, double rtol);

}  // namespace la
