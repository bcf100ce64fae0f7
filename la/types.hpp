// Index type and checked narrowing used by every format.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "la/error.hpp"

namespace la {

/// la stores indices and counts in 32 bits: half the index traffic of 64-bit indices in
/// SpMV, and what cuSPARSE's fastest paths take. Anything larger is rejected up front.
using index_t = std::int32_t;
inline constexpr std::int64_t max_index = std::numeric_limits<index_t>::max();

/// Narrows a count to index_t, or throws la::size_overflow naming what overflowed.
inline index_t checked_index(std::int64_t value, const char* what) {
  if (value < 0 || value > max_index)
    throw size_overflow(std::string(what) + " = " + std::to_string(value) +
                        " does not fit la's 32-bit index type (max " +
                        std::to_string(max_index) + "); split the problem or use a smaller matrix");
  return static_cast<index_t>(value);
}

/// Accumulator type for host references: one step more precise than T.
template <typename T> struct wider { using type = double; };
template <> struct wider<double> { using type = long double; };
template <typename T> using wider_t = typename wider<T>::type;

}  // namespace la
