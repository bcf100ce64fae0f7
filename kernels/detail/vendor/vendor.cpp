#include <la/kernels/detail/vendor/vendor.hpp>


namespace la {
namespace detail {

void throw_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  throw cublas_error("cuBLAS error " + std::string(cublasGetStatusName(status)) + " (" +
                     cublasGetStatusString(status) + ") in " + where(call, file, line));
}

void throw_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw cusparse_error("cuSPARSE error " + std::string(cusparseGetErrorName(status)) + " (" +
                       cusparseGetErrorString(status) + ") in " + where(call, file, line));
}

void report_cublas_no_throw(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  report_ignored("cuBLAS", cublasGetStatusName(status), call, file, line);
}

void report_cusparse_no_throw(cusparseStatus_t status, const char* call, const char* file, int line) noexcept {
  report_ignored("cuSPARSE", cusparseGetErrorName(status), call, file, line);
}
}  // namespace detail

vendor_handles::~vendor_handles() {
  if (cusparse_) LA_CUSPARSE_TRY_NO_THROW(cusparseDestroy(cusparse_));
  if (cublas_) LA_CUBLAS_TRY_NO_THROW(cublasDestroy(cublas_));
}

cublasHandle_t vendor_handles::cublas() {
  if (!cublas_) {
    detail::device_guard g(ctx_->device());
    LA_CUBLAS_TRY(cublasCreate(&cublas_));
    LA_CUBLAS_TRY(cublasSetStream(cublas_, ctx_->stream()));
  }
  return cublas_;
}

cusparseHandle_t vendor_handles::cusparse() {
  if (!cusparse_) {
    detail::device_guard g(ctx_->device());
    LA_CUSPARSE_TRY(cusparseCreate(&cusparse_));
    LA_CUSPARSE_TRY(cusparseSetStream(cusparse_, ctx_->stream()));
  }
  return cusparse_;
}

}  // namespace la
