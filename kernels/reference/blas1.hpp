// Sequential host vector oracles, accumulated in wider_t<T>.
#pragma once

#include <cmath>
#include <vector>

#include <la/types.hpp>

namespace la::reference {

/// sum x_i y_i. Complex values: the bilinear form (no conjugate), which complex symmetric
/// methods (COCG) use; dotc is the Hermitian inner product.
template <typename T>
T dot(const std::vector<T>& x, const std::vector<T>& y) {
  LA_EXPECTS(x.size() == y.size(), "dot: vectors differ in length");
  wider_t<T> s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += widen(x[i]) * widen(y[i]);
  return static_cast<T>(s);
}
/// The same, named for what it is where both kinds are used.
template <typename T>
T dotu(const std::vector<T>& x, const std::vector<T>& y) {
  return dot(x, y);
}
/// sum conj(x_i) y_i: the Hermitian inner product (for real values the same as dot).
template <typename T>
T dotc(const std::vector<T>& x, const std::vector<T>& y) {
  LA_EXPECTS(x.size() == y.size(), "dotc: vectors differ in length");
  wider_t<T> s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (is_complex_v<T>) s += std::conj(widen(x[i])) * widen(y[i]);
    else s += widen(x[i]) * widen(y[i]);
  }
  return static_cast<T>(s);
}

/// Euclidean norm (complex values: sqrt(sum |x_i|^2), a real number); plain sum of squares
/// in the wider type (no overflow for float; for double, long double's range covers it on x86).
template <typename T>
real_of_t<T> nrm2(const std::vector<T>& x) {
  wider_t<real_of_t<T>> s = 0;
  for (const T& v : x) {
    if constexpr (is_complex_v<T>) s += widen(v.real()) * widen(v.real()) + widen(v.imag()) * widen(v.imag());
    else s += widen(v) * widen(v);
  }
  return static_cast<real_of_t<T>>(std::sqrt(s));
}

/// y += alpha * x
template <typename T>
void axpy(T alpha, const std::vector<T>& x, std::vector<T>& y) {
  LA_EXPECTS(x.size() == y.size(), "axpy: vectors differ in length");
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = static_cast<T>(widen(alpha) * widen(x[i]) + widen(y[i]));
}

}  // namespace la::reference
