// Index, count and offset types, and checked narrowing.
//
// Row and column indices are 32-bit (index_t): half the index traffic of 64-bit indices in
// SpMV, and what cuSPARSE's fastest paths take. Counts (nonzeros, slots, entries) are
// 64-bit (count_t). Offsets into the nonzeros (CSR/CSC pointers, JDS diagonal pointers) are
// a template parameter O of the formats, int32 (the default: half the pointer traffic) or
// int64 (more than 2^31 - 1 nonzeros); with_offsets() picks the narrowest that fits.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <la/error.hpp>

namespace la {

using index_t = std::int32_t;

/// Value types: float and double, and (issue 69) std::complex<float> and std::complex<double>.
/// value_traits<T>::real is the type of T's parts (T itself when T is real).
template <typename T>
struct value_traits {
  using real = T;
  static constexpr bool is_complex = false;
};
template <typename R>
struct value_traits<std::complex<R>> {
  using real = R;
  static constexpr bool is_complex = true;
};
template <typename T>
inline constexpr bool is_complex_v = value_traits<T>::is_complex;
template <typename T>
using real_of_t = typename value_traits<T>::real;
/// T's kind in double precision: double, or std::complex<double>.
template <typename T>
using double_of_t = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
/// |x| in double, for real and complex values.
template <typename T>
double magnitude(const T& x) {
  if constexpr (is_complex_v<T>) return std::abs(std::complex<double>(x));
  else return std::abs(static_cast<double>(x));
}
using count_t = std::int64_t;
inline constexpr std::int64_t max_index = std::numeric_limits<index_t>::max();

/// The offset types the formats accept.
template <typename O>
inline constexpr bool is_offset_v = std::is_same_v<O, std::int32_t> || std::is_same_v<O, std::int64_t>;

/// Narrows a count to index_t, or throws la::size_overflow naming what overflowed.
inline index_t checked_index(std::int64_t value, const char* what) {
  if (value < 0 || value > max_index)
    throw size_overflow(std::string(what) + " (" + std::to_string(value) +
                        ") does not fit la's 32-bit row and column indices (at most " + std::to_string(max_index) +
                        ")");
  return static_cast<index_t>(value);
}

/// A count of nonzeros does not fit 32-bit offsets (64-bit offsets would hold it).
class offset_overflow : public size_overflow {
 public:
  using size_overflow::size_overflow;
};

/// Narrows a count to the offset type O, or throws la::size_overflow (la::offset_overflow
/// when 64-bit offsets would hold it); never truncates.
template <typename O>
O checked_offset(std::int64_t value, const char* what) {
  static_assert(is_offset_v<O>, "offsets are std::int32_t or std::int64_t");
  if (sizeof(O) == 4 && value > std::numeric_limits<O>::max())
    throw offset_overflow(std::string(what) + " (" + std::to_string(value) +
                          ") do not fit 32-bit offsets (at most 2147483647); 64-bit offsets are needed");
  if (value < 0 || value > std::numeric_limits<O>::max())
    throw size_overflow(std::string(what) + " (" + std::to_string(value) + ") do not fit " +
                        (sizeof(O) == 4 ? "32-bit offsets" : "64-bit offsets"));
  return static_cast<O>(value);
}

/// Which offset width to use: the narrowest that fits (automatic), or forced.
enum class offset_width { automatic, b32, b64 };

/// True when a matrix of `count` nonzeros needs 64-bit offsets.
inline constexpr bool needs_64bit_offsets(std::int64_t count) noexcept { return count > max_index; }

/// Calls f(std::int32_t{}) or f(std::int64_t{}): the narrowest offset type that holds
/// `count`, unless `width` forces one. Forcing 32 bits on a count that needs 64 throws
/// la::size_overflow instead of truncating.
template <typename F>
decltype(auto) with_offsets(std::int64_t count, offset_width width, F&& f) {
  if (width == offset_width::b64 || (width == offset_width::automatic && needs_64bit_offsets(count)))
    return f(std::int64_t{});
  checked_offset<std::int32_t>(count, "nonzeros");
  return f(std::int32_t{});
}

/// Accumulator type for host references: one step more precise than T (complex values:
/// complex of the wider part type).
template <typename T> struct wider { using type = double; };
template <> struct wider<double> { using type = long double; };
template <typename R> struct wider<std::complex<R>> { using type = std::complex<typename wider<R>::type>; };
template <typename T> using wider_t = typename wider<T>::type;
/// x in the wider type (std::complex multiplies only like with like, so both factors of a
/// product are widened).
template <typename T>
constexpr wider_t<T> widen(const T& x) { return static_cast<wider_t<T>>(x); }

}  // namespace la
