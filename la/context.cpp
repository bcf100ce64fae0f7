#include <la/context.hpp>

#include <la/error.hpp>

namespace la {


bool cuda_available() noexcept {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  return n > 0;
}

std::string cuda_status() noexcept {
  try {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return detail::no_gpu_reason(e);
    }
    if (n == 0) return detail::no_gpu_reason(cudaErrorNoDevice);
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "CUDA device 0 cannot be queried";
    return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
  } catch (...) {
    return "unknown CUDA status";
  }
}

bool start_device(int device) noexcept {
  bool ok = cudaSetDevice(device) == cudaSuccess && cudaFree(nullptr) == cudaSuccess;  // the primary context
  void* p = nullptr;  // the stream-ordered pool, which device_buffer allocates from
  ok = ok && cudaMallocAsync(&p, 1 << 20, cudaStreamPerThread) == cudaSuccess &&
       cudaFreeAsync(p, cudaStreamPerThread) == cudaSuccess && cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess;
  if (!ok) (void)cudaGetLastError();  // the context's constructor reports it
  return ok;
}

namespace {
cudaMemPool_t default_pool(int device) {
  int n = 0;
  LA_CUDA_TRY(cudaGetDeviceCount(&n));
  LA_EXPECTS(device >= 0 && device < n,
             "memory pool of CUDA device " + std::to_string(device) + " requested but " + std::to_string(n) + " present");
  cudaMemPool_t pool = nullptr;
  LA_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}
}  // namespace

void set_pool_release_threshold(int device, std::uint64_t bytes) {
  LA_CUDA_TRY(cudaMemPoolSetAttribute(default_pool(device), cudaMemPoolAttrReleaseThreshold, &bytes));
}

std::uint64_t pool_release_threshold(int device) {
  const cudaMemPool_t pool = default_pool(device);
  std::uint64_t bytes = 0;
  LA_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes));
  return bytes;
}

context::context(int device) : device_(device) {
  int n = 0;
  LA_CUDA_TRY(cudaGetDeviceCount(&n));
  LA_EXPECTS(device >= 0 && device < n,
             "CUDA device " + std::to_string(device) + " requested but " + std::to_string(n) +
                 " present");
  LA_CUDA_TRY(cudaSetDevice(device));
  LA_CUDA_TRY(cudaGetDeviceProperties(&props_, device));
  LA_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

context::context(int device, high_priority_t) : context(device) {
  int least = 0, greatest = 0;
  LA_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  LA_CUDA_TRY(cudaStreamDestroy(stream_));
  stream_ = nullptr;
  LA_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
}

context::~context() {
  scratch_ = device_buffer<unsigned char>();  // freed in stream order before the stream goes
  if (stream_) LA_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_));
}

void* context::scratch(std::size_t bytes) {
  if (bytes > scratch_.size()) {
    scratch_ = device_buffer<unsigned char>();  // free first: peak memory stays at the new size
    scratch_ = allocate<unsigned char>(bytes);
  }
  return scratch_.data();
}

void context::synchronize() const { LA_CUDA_TRY(cudaStreamSynchronize(stream_)); }

}  // namespace la
