// What every format is built on: where its arrays live (host or device memory), views
// whose index pointers are const exactly when the values are, and the transfers between
// host and device written once for all formats.
//
// A format is one class template over the memory space (csr_matrix and device_csr are the
// same template): it exposes `space`, `rebind<N>` (the same format in space N), `shape()`
// (a tuple of its scalars), `arrays()` (a tuple of its arrays), and a constructor taking the
// scalars followed by the arrays. The transfers below need nothing else.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <la/memory.hpp>
#include <la/vector.hpp>

namespace la {

enum class memory { host, device };

/// The storage formats (each class names its own as `kind`).
enum class format { dense, coo, csr, csc, ell, jds, hyb, sell };
const char* to_string(format f) noexcept;
/// Every format, in the order la lists them (help text, messages).
inline constexpr format all_formats[] = {format::csr, format::coo,  format::csc,  format::ell,
                                         format::jds, format::hyb, format::sell, format::dense};
/// The format of that name (to_string's spelling), or none.
inline std::optional<format> parse_format(std::string_view name) {
  for (format f : all_formats)
    if (name == to_string(f)) return f;
  return std::nullopt;
}
/// "csr, coo, csc, ell, jds, hyb, sell, dense".
inline std::string format_names() {
  std::string s;
  for (format f : all_formats) s += (s.empty() ? "" : ", ") + std::string(to_string(f));
  return s;
}

/// The column index of a padding slot (ELL, HYB, SELL); its value is 0.
inline constexpr index_t ell_padding = -1;

/// The array type of a format in memory space M.
template <typename T, memory M>
using array_t = std::conditional_t<M == memory::host, std::vector<T>, device_buffer<T>>;

/// Pointer to index type I in a view whose values are T: const when T is const, so a
/// mutable view (for kernels that fill a matrix) is mutable throughout.
template <typename T, typename I>
using index_ptr_t = std::conditional_t<std::is_const_v<T>, const I*, I*>;

namespace detail {
template <typename M, typename = void>
struct has_space : std::false_type {};
template <typename M>
struct has_space<M, std::void_t<decltype(M::space)>> : std::true_type {};
template <typename M, memory S>
constexpr bool in_space() {
  if constexpr (has_space<M>::value) return M::space == S;
  else return false;
}
}  // namespace detail

/// Any matrix in host memory (the eight formats); the conversions take these.
template <typename M>
inline constexpr bool is_host_matrix_v = detail::in_space<M, memory::host>();
template <typename M>
inline constexpr bool is_device_matrix_v = detail::in_space<M, memory::device>();

/// The entries a matrix stores, padding included: nnz (COO, CSR, CSC, JDS); slots (ELL,
/// SELL); ELL slots plus COO entries (HYB); rows x cols (dense). What a pass over its values
/// reads, and a bound on the nonzeros of its CSR form.
template <typename M>
count_t stored_entries(const M& a) {
  if constexpr (M::kind == format::dense) return static_cast<count_t>(a.rows()) * a.cols();
  else if constexpr (M::kind == format::ell) return static_cast<count_t>(a.slots());
  else if constexpr (M::kind == format::hyb) return a.stored();
  else if constexpr (M::kind == format::sell) return a.slots();
  else return a.nnz();
}

/// Copies a host matrix to ctx's device in stream order; returns at once (the host matrix
/// must stay alive and unchanged until the stream reaches the copies).
template <typename M, std::enable_if_t<is_host_matrix_v<M>, int> = 0>
auto to_device_async(context& ctx, const M& h) {
  using D = typename M::template rebind<memory::device>;
  const double bytes =
      std::apply([](const auto&... a) { return (0.0 + ... + double(a.size() * sizeof(a[0]))); }, h.arrays());
  check_device_memory(ctx, bytes, std::string("uploading a ") + to_string(M::kind) + " matrix");
  return std::apply(
      [&](auto... s) {
        return std::apply([&](const auto&... a) { return D(s..., upload_async(ctx, a)...); }, h.arrays());
      },
      h.shape());
}

/// Copies a host matrix to ctx's device and waits for the copies.
template <typename M, std::enable_if_t<is_host_matrix_v<M>, int> = 0>
auto to_device(context& ctx, const M& h) {
  auto d = to_device_async(ctx, h);
  ctx.synchronize();
  return d;
}

/// A download in flight: the arrays are being copied in stream order; wait() synchronizes
/// the context's stream, then builds (and validates) the host matrix.
template <typename Host, typename Shape, typename Arrays>
class host_transfer {
 public:
  host_transfer(context& ctx, Shape shape, Arrays arrays)
      : ctx_(&ctx), shape_(std::move(shape)), arrays_(std::move(arrays)) {}
  Host wait() {
    ctx_->synchronize();
    return std::apply(
        [&](auto... s) { return std::apply([&](auto&... a) { return Host(s..., std::move(a)...); }, arrays_); },
        shape_);
  }

 private:
  context* ctx_;
  Shape shape_;
  Arrays arrays_;
};

/// Starts copying a device matrix to the host without waiting; call wait() on the result.
template <typename M, std::enable_if_t<is_device_matrix_v<M>, int> = 0>
auto to_host_async(context& ctx, const M& d) {
  using H = typename M::template rebind<memory::host>;
  auto arrays = std::apply([](const auto&... a) { return std::make_tuple(download_async(a)...); }, d.arrays());
  return host_transfer<H, decltype(d.shape()), decltype(arrays)>(ctx, d.shape(), std::move(arrays));
}

/// Copies a device matrix to the host, waits, and validates it as a host matrix.
template <typename M, std::enable_if_t<is_device_matrix_v<M>, int> = 0>
auto to_host(context& ctx, const M& d) {
  return to_host_async(ctx, d).wait();
}

}  // namespace la
