// The cuSPARSE SpMV peers la's kernels are measured against (benchmarks, `la bench spmv`),
// through the generic API on the same device arrays: CSR with CUSPARSE_SPMV_CSR_ALG1 and
// ALG2, COO (COO_ALG1), CSC (ALG_DEFAULT) and sliced ELL (SELL_ALG1; la's SELL-C-sigma with
// sigma = 1 has cuSPARSE's layout). 32-bit offsets only.
#pragma once

#include <string>

#include <la/kernels/spmv/spmv.hpp>
#include <la/kernels/detail/vendor/vendor.hpp>

namespace la {

enum class cusparse_spmv_alg { csr_alg1, csr_alg2, coo, csc, sell };
const char* to_string(cusparse_spmv_alg a) noexcept;
/// The format a peer runs on.
format format_of(cusparse_spmv_alg a) noexcept;

/// One prepared cuSPARSE SpMV (descriptors, workspace, preprocessing done): y = alpha*A*x
/// + beta*y on the handles' stream. The matrix and both vectors must outlive it. `entries`:
/// the matrix's nonzero count, needed for sliced ELL (its view counts slots). A matrix with
/// 64-bit offsets throws la::not_supported.
template <typename T>
class cusparse_spmv {
 public:
  cusparse_spmv(vendor_handles& h, const matrix_view<T>& a, cusparse_spmv_alg alg, const T* x, T* y,
                count_t entries = -1);
  ~cusparse_spmv() { release(); }
  cusparse_spmv(const cusparse_spmv&) = delete;
  cusparse_spmv& operator=(const cusparse_spmv&) = delete;
  void run(T alpha, T beta);

 private:
  void release() noexcept;
  vendor_handles* h_;
  cusparseSpMVAlg_t alg_;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  device_buffer<unsigned char> work_;
};

}  // namespace la
