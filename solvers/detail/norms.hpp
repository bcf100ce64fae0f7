// Host norms that neither overflow nor underflow (LAPACK's dnrm2 scaling): ||v||_2 of entries
// anywhere in double's range, 1e-300 and 1e300 alike. A sum of squares in double overflows past
// about 1e154 (and underflows below 1e-154), which turned a tolerance infinite or a norm zero.
#pragma once

#include <cmath>
#include <cstddef>

#include <la/types.hpp>

namespace la::detail {

/// sqrt(sum |v_i|^2) as scale * sqrt(ssq), scale the largest |v_i| seen; NaN where an entry is
/// NaN. Real or complex values (|v_i| the modulus).
template <typename T>
double safe_norm2(const T* v, std::size_t n) {
  double scale = 0, ssq = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = magnitude(v[i]);
    if (std::isnan(a)) return a;
    if (a == 0) continue;
    if (scale < a) {
      const double q = scale / a;
      ssq = 1 + ssq * q * q;
      scale = a;
    } else {
      const double q = a / scale;
      ssq += q * q;
    }
  }
  return scale * std::sqrt(ssq);
}

}  // namespace la::detail
