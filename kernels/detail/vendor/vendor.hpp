// The vendor libraries la is measured against (cuBLAS, cuSPARSE): their error types, check
// macros and handles. Target la::vendor; the CLI, the tests and the benchmarks link it, la
// itself does not (an embedder who only solves needs the CUDA runtime alone). Not installed.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cusparse.h>

#include <la/context.hpp>
#include <la/error.hpp>

namespace la {

/// A cuBLAS call failed (the CLI exits with 3, as for every device_error).
class cublas_error : public device_error {
 public:
  using device_error::device_error;
};

/// A cuSPARSE call failed.
class cusparse_error : public device_error {
 public:
  using device_error::device_error;
};

namespace detail {
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse(cusparseStatus_t status, const char* call, const char* file, int line);
void report_cublas_no_throw(cublasStatus_t status, const char* call, const char* file, int line) noexcept;
void report_cusparse_no_throw(cusparseStatus_t status, const char* call, const char* file, int line) noexcept;
}  // namespace detail

/// cuBLAS and cuSPARSE handles bound to a context's stream and device, created on first use.
class vendor_handles {
 public:
  explicit vendor_handles(context& ctx) : ctx_(&ctx) {}
  ~vendor_handles();
  vendor_handles(const vendor_handles&) = delete;
  vendor_handles& operator=(const vendor_handles&) = delete;

  context& ctx() const noexcept { return *ctx_; }
  cublasHandle_t cublas();
  cusparseHandle_t cusparse();

 private:
  context* ctx_;
  cublasHandle_t cublas_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
};

}  // namespace la

#define LA_CUBLAS_TRY(call)                                                 \
  do {                                                                      \
    cublasStatus_t la_status_ = (call);                                     \
    if (la_status_ != CUBLAS_STATUS_SUCCESS)                                \
      ::la::detail::throw_cublas(la_status_, #call, __FILE__, __LINE__);   \
  } while (0)

#define LA_CUSPARSE_TRY(call)                                               \
  do {                                                                      \
    cusparseStatus_t la_status_ = (call);                                   \
    if (la_status_ != CUSPARSE_STATUS_SUCCESS)                              \
      ::la::detail::throw_cusparse(la_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// For destructors: log to stderr instead of throwing.
#define LA_CUBLAS_TRY_NO_THROW(call)                                                  \
  do {                                                                                \
    cublasStatus_t la_status_ = (call);                                               \
    if (la_status_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::la::detail::report_cublas_no_throw(la_status_, #call, __FILE__, __LINE__);   \
  } while (0)

#define LA_CUSPARSE_TRY_NO_THROW(call)                                                \
  do {                                                                                \
    cusparseStatus_t la_status_ = (call);                                             \
    if (la_status_ != CUSPARSE_STATUS_SUCCESS)                                        \
      ::la::detail::report_cusparse_no_throw(la_status_, #call, __FILE__, __LINE__); \
  } while (0)
