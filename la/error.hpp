// la::error hierarchy and the check macros used at every CUDA runtime call.
//
// Every exception message names what failed, where (file:line) and, where we can tell,
// what the user can do about it. Destructors use the *_NO_THROW forms. The cuBLAS and
// cuSPARSE errors and checks live with the vendor comparisons (kernels/detail/vendor/vendor.hpp,
// target la::vendor): la itself needs only the CUDA runtime.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace la {

/// Base of everything la throws. what() is a sentence for the user; where() is the
/// source location that raised it (file:line and the failed condition or call), kept apart
/// so that user-facing messages do not carry la's internals.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& what, std::string where = {})
      : std::runtime_error(what), where_(std::move(where)) {}
  const std::string& where() const noexcept { return where_; }

 private:
  std::string where_;
};

/// A name (a file path, an environment value) for a message: control bytes and bytes
/// outside printable ASCII as \xNN, as the Matrix Market reader quotes file contents, so a
/// name cannot break a message's line or the terminal.
std::string printable(const std::string& s);

/// A precondition on the caller's arguments does not hold (sizes, ranges, options).
class invalid_argument : public error {
 public:
  using error::error;
};

/// A matrix or vector violates its format's invariants (index out of range, unsorted...).
class invalid_matrix : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A count does not fit in la's 32-bit index type.
class size_overflow : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A file could not be opened, read or written.
class io_error : public error {
 public:
  using error::error;
};

/// A Matrix Market file is malformed; line() is 1-based (0 when not tied to a line).
class parse_error : public io_error {
 public:
  parse_error(const std::string& file, std::int64_t line, const std::string& what);
  std::int64_t line() const noexcept { return line_; }

 private:
  std::int64_t line_;
};

/// A valid input that la does not handle (complex fields, vector objects...).
class not_supported : public error {
 public:
  using error::error;
};

/// A failure on the GPU side: the CUDA runtime or a vendor library (cuBLAS, cuSPARSE).
/// The CLI exits with status 3 for these.
class device_error : public error {
 public:
  using error::error;
};

/// A CUDA runtime call failed.
class cuda_error : public device_error {
 public:
  cuda_error(cudaError_t code, const std::string& what, std::string where = {})
      : device_error(what, std::move(where)), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// cudaMalloc (or the pool allocator) ran out of device memory.
class out_of_memory : public cuda_error {
 public:
  using cuda_error::cuda_error;
};

namespace detail {
/// Why no GPU can be used, in words (cudaErrorNoDevice / cudaErrorInsufficientDriver tell
/// a missing driver, a missing GPU and an old driver apart).
std::string no_gpu_reason(cudaError_t code) noexcept;
[[noreturn]] void throw_cuda(cudaError_t code, const char* call, const char* file, int line);
[[noreturn]] void throw_expects(const char* cond, const std::string& msg, const char* file, int line);
void report_no_throw(cudaError_t code, const char* call, const char* file, int line) noexcept;
/// "call at file:line", the tail of every failed-call message (here and in la::vendor).
std::string where(const char* call, const char* file, int line);
/// Logs a failure that a destructor must not throw: "la: <library> error <name> in <call>
/// at <file>:<line> (ignored in a destructor)".
void report_ignored(const char* library, const char* name, const char* call, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace la

#define LA_CUDA_TRY(call)                                                   \
  do {                                                                      \
    cudaError_t la_status_ = (call);                                        \
    if (la_status_ != cudaSuccess)                                          \
      ::la::detail::throw_cuda(la_status_, #call, __FILE__, __LINE__);     \
  } while (0)

/// For destructors: logs to stderr instead of throwing.
#define LA_CUDA_TRY_NO_THROW(call)                                          \
  do {                                                                      \
    cudaError_t la_status_ = (call);                                        \
    if (la_status_ != cudaSuccess)                                          \
      ::la::detail::report_no_throw(la_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace la::detail {
/// With LA_DEBUG_SYNC: waits for `stream` so a fault is reported at the kernel that caused
/// it, unless the stream is being captured into a CUDA graph (synchronizing would
/// invalidate the capture; the fault then shows when the graph runs).
void debug_sync(cudaStream_t stream, const char* file, int line);
}  // namespace la::detail

/// Checks the launch just made on `stream`; with LA_DEBUG_SYNC also waits for it (outside
/// graph capture) so a fault is reported at the kernel that caused it.
#ifdef LA_DEBUG_SYNC
#define LA_CHECK_LAUNCH(stream)                               \
  do {                                                        \
    LA_CUDA_TRY(cudaPeekAtLastError());                       \
    ::la::detail::debug_sync((stream), __FILE__, __LINE__);   \
  } while (0)
#else
#define LA_CHECK_LAUNCH(stream) LA_CUDA_TRY(cudaPeekAtLastError())
#endif

/// Precondition on arguments: throws la::invalid_argument with msg (any std::string expression).
#define LA_EXPECTS(cond, msg)                                           \
  do {                                                                  \
    if (!(cond)) ::la::detail::throw_expects(#cond, (msg), __FILE__, __LINE__); \
  } while (0)
