// Host and device vectors and the trivially copyable views kernels take.
#pragma once

#include <vector>

#include "la/context.hpp"
#include "la/device_buffer.hpp"
#include "la/types.hpp"

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

/// Owning device vector (move-only), allocated on a context's stream.
template <typename T>
class device_vector {
 public:
  device_vector() = default;
  device_vector(context& ctx, index_t n) : buf_(static_cast<std::size_t>(n), ctx.stream()) {
    LA_EXPECTS(n >= 0, "vector length must be non-negative");
  }
  index_t size() const noexcept { return static_cast<index_t>(buf_.size()); }
  T* data() noexcept { return buf_.data(); }
  const T* data() const noexcept { return buf_.data(); }
  vector_view<T> view() noexcept { return {buf_.data(), size()}; }
  vector_view<const T> view() const noexcept { return {buf_.data(), size()}; }
  device_buffer<T>& buffer() noexcept { return buf_; }
  const device_buffer<T>& buffer() const noexcept { return buf_; }

 private:
  device_buffer<T> buf_;
};

/// Copies a host vector to the device (returns once the copy is done).
template <typename T>
device_vector<T> to_device(context& ctx, const std::vector<T>& h) {
  device_vector<T> d(ctx, checked_index(static_cast<std::int64_t>(h.size()), "vector length"));
  d.buffer().copy_from_host(h.data(), h.size());
  ctx.synchronize();
  return d;
}

template <typename T>
std::vector<T> to_host(context& ctx, const device_vector<T>& d) {
  std::vector<T> h(static_cast<std::size_t>(d.size()));
  d.buffer().copy_to_host(h.data(), h.size());
  ctx.synchronize();
  return h;
}

}  // namespace la

namespace la::detail {
/// Uploads a host array into a new device buffer on ctx's stream (no synchronization).
template <typename T>
device_buffer<T> upload(context& ctx, const std::vector<T>& h) {
  device_buffer<T> d(h.size(), ctx.stream());
  d.copy_from_host(h.data(), h.size());
  return d;
}
/// Downloads a device buffer (no synchronization: call ctx.synchronize() before use).
template <typename T>
std::vector<T> download(const device_buffer<T>& d) {
  std::vector<T> h(d.size());
  d.copy_to_host(h.data(), h.size());
  return h;
}
}  // namespace la::detail
