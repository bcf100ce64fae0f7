#include <la/error.hpp>

#include <dlfcn.h>

#include <cstdio>

namespace la {

parse_error::parse_error(const std::string& file, std::int64_t line, const std::string& what)
    : io_error(printable(file) + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what),
      line_(line) {}

std::string printable(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      r += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      r += buf;
    }
  }
  return r;
}

namespace detail {
std::string no_gpu_reason(cudaError_t e) noexcept {
  try {
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
      // The runtime reports a missing driver as an old one; tell the two apart by whether
      // the driver library is installed at all.
      void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (!driver) return "no NVIDIA driver or GPU was found on this machine";
      ::dlclose(driver);
      if (e == cudaErrorNoDevice) return "no NVIDIA GPU was found (the driver is installed)";
      return std::string("the NVIDIA driver is older than this CUDA runtime needs (") + cudaGetErrorString(e) + ")";
    }
    return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
  } catch (...) {
    return "no usable CUDA device";
  }
}

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + file + ":" + std::to_string(line);
}

namespace {

const char* cuda_advice(cudaError_t code) {
  switch (code) {
    case cudaErrorMemoryAllocation:
      return " (the GPU is out of memory: use a smaller problem or free other allocations)";
    case cudaErrorInvalidDevice:
      return " (the device index does not exist; check CUDA_VISIBLE_DEVICES)";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return " (la was not built for this GPU: rebuild with -DCMAKE_CUDA_ARCHITECTURES=<your sm>)";
    default:
      return "";
  }
}
}  // namespace

void throw_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaErrorInsufficientDriver || code == cudaErrorNoDevice)
    throw cuda_error(code, no_gpu_reason(code), where(call, file, line));
  std::string msg = "CUDA error " + std::string(cudaGetErrorName(code)) + " (" +
                    cudaGetErrorString(code) + ") in " + where(call, file, line) +
                    cuda_advice(code);
  // Out of memory is recoverable (callers catch it and go on with less): the runtime's last
  // error is cleared, so that the next launch check does not report this allocation again.
  if (code == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw out_of_memory(code, msg);
  }
  throw cuda_error(code, msg);
}

void debug_sync(cudaStream_t stream, const char* file, int line) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  LA_CUDA_TRY(cudaStreamIsCapturing(stream, &capture));
  if (capture == cudaStreamCaptureStatusNone) {
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) throw_cuda(e, "kernel launch (LA_DEBUG_SYNC)", file, line);
  }
}

void throw_expects(const char* cond, const std::string& msg, const char* file, int line) {
  throw invalid_argument(msg, std::string("failed check ") + cond + " at " + file + ":" + std::to_string(line));
}

void report_ignored(const char* library, const char* name, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "la: %s error %s in %s at %s:%d (ignored in a destructor)\n", library, name, call, file, line);
}

void report_no_throw(cudaError_t code, const char* call, const char* file, int line) noexcept {
  report_ignored("CUDA", cudaGetErrorName(code), call, file, line);
}
}  // namespace detail
}  // namespace la
