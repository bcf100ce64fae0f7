// Sequential host vector oracles, accumulated in wider_t<T>.
#pragma once

#include <cmath>
#include <vector>

#include <la/types.hpp>

namespace la::reference {

template <typename T>
T dot(const std::vector<T>& x, const std::vector<T>& y) {
  LA_EXPECTS(x.size() == y.size(), "dot: vectors differ in length");
  wider_t<T> s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += static_cast<wider_t<T>>(x[i]) * y[i];
  return static_cast<T>(s);
}

/// Euclidean norm; plain sum of squares in the wider type (no overflow for T = float; for
/// double, long double's range covers it on x86).
template <typename T>
T nrm2(const std::vector<T>& x) {
  wider_t<T> s = 0;
  for (T v : x) s += static_cast<wider_t<T>>(v) * v;
  return static_cast<T>(std::sqrt(s));
}

/// y += alpha * x
template <typename T>
void axpy(T alpha, const std::vector<T>& x, std::vector<T>& y) {
  LA_EXPECTS(x.size() == y.size(), "axpy: vectors differ in length");
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = static_cast<T>(static_cast<wider_t<T>>(alpha) * x[i] + y[i]);
}

}  // namespace la::reference
