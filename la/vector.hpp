// Host and device vectors, the trivially copyable views kernels take, and the array
// transfers every format is built on (stream-ordered *_async forms and synchronous ones).
#pragma once

#include <vector>

#include <la/context.hpp>
#include <la/device_buffer.hpp>
#include <la/types.hpp>

namespace la {

/// Non-owning, trivially copyable view of n contiguous elements (host or device memory).
template <typename T>
struct vector_view {
  T* data = nullptr;
  index_t size = 0;
};

/// Host vectors are plain std::vector; this is the view of one.
template <typename T>
vector_view<T> view(std::vector<T>& v) {
  return {v.data(), checked_index(static_cast<std::int64_t>(v.size()), "vector length")};
}
template <typename T>
vector_view<const T> view(const std::vector<T>& v) {
  return {v.data(), checked_index(static_cast<std::int64_t>(v.size()), "vector length")};
}

/// Owning device vector (move-only), allocated on a context's device and stream.
template <typename T>
class device_vector {
 public:
  device_vector() = default;
  device_vector(context& ctx, index_t n) : buf_(ctx.allocate<T>(static_cast<std::size_t>(checked_size(n)))) {}
  explicit device_vector(device_buffer<T> buf) : buf_(std::move(buf)) {
    checked_index(static_cast<std::int64_t>(buf_.size()), "vector length");
  }
  index_t size() const noexcept { return static_cast<index_t>(buf_.size()); }
  T* data() noexcept { return buf_.data(); }
  const T* data() const noexcept { return buf_.data(); }
  vector_view<T> view() noexcept { return {buf_.data(), size()}; }
  vector_view<const T> view() const noexcept { return {buf_.data(), size()}; }
  device_buffer<T>& buffer() noexcept { return buf_; }
  const device_buffer<T>& buffer() const noexcept { return buf_; }

 private:
  static index_t checked_size(index_t n) {
    LA_EXPECTS(n >= 0, "vector length must be non-negative, got " + std::to_string(n));
    return n;
  }
  device_buffer<T> buf_;
};

/// A host array (n elements at h, or a vector) copied into a new device buffer on ctx's
/// device, in stream order (no wait: `h` must stay alive and unchanged until the stream
/// reaches the copy).
template <typename T>
device_buffer<T> upload_async(context& ctx, const T* h, std::size_t n) {
  device_buffer<T> d = ctx.allocate<T>(n);
  d.copy_from_host_async(h, n);
  return d;
}
template <typename T>
device_buffer<T> upload_async(context& ctx, const std::vector<T>& h) {
  return upload_async(ctx, h.data(), h.size());
}
/// A device buffer copied into a new host array, in stream order (no wait: synchronize the
/// context before reading the result).
template <typename T>
std::vector<T> download_async(const device_buffer<T>& d) {
  std::vector<T> h(d.size());
  d.copy_to_host_async(h.data(), h.size());
  return h;
}

/// Copies a host vector to the device; to_device waits for the copy, to_device_async does not.
template <typename T>
device_vector<T> to_device_async(context& ctx, const std::vector<T>& h) {
  checked_index(static_cast<std::int64_t>(h.size()), "vector length");
  return device_vector<T>(upload_async(ctx, h));
}
template <typename T>
device_vector<T> to_device(context& ctx, const std::vector<T>& h) {
  device_vector<T> d = to_device_async(ctx, h);
  ctx.synchronize();
  return d;
}

/// Copies a device vector to the host (waits for the copy).
template <typename T>
std::vector<T> to_host(context& ctx, const device_vector<T>& d) {
  std::vector<T> h = download_async(d.buffer());
  ctx.synchronize();
  return h;
}

}  // namespace la
