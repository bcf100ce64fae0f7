// The complex value type la's kernels compute with (issue 69). std::complex has no device
// arithmetic, and cuda::std::complex multiplies with C99's Inf/NaN recovery (a branch per
// product); la's kernels want the plain (ac - bd, ad + bc) that cuBLAS and cuSPARSE use.
// dcomplex<R> has std::complex<R>'s layout (two R, real first), aligned to its size so a
// value is one 8- or 16-byte load; device_value_t maps la's value types to what kernels
// compute with (float and double unchanged), and device_ptr / device_views reinterpret
// pointers and views of std::complex<R> as dcomplex<R> (cudaMalloc's alignment holds the
// wider alignment). Overloads of the shuffles, __ldg and atomicAdd (two atomics, one per
// part: such kernels are not deterministic anyway) let the templated kernels take it
// unchanged. Private to la's sources.
#pragma once

#include <complex>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

namespace la::detail {

template <typename R>
struct alignas(2 * sizeof(R)) dcomplex {
  R re, im;
  dcomplex() = default;
  __host__ __device__ constexpr dcomplex(R r, R i = R(0)) : re(r), im(i) {}
  __host__ dcomplex(const std::complex<R>& z) : re(z.real()), im(z.imag()) {}
  __host__ operator std::complex<R>() const { return {re, im}; }

  __host__ __device__ dcomplex& operator+=(const dcomplex& b) { return re += b.re, im += b.im, *this; }
  __host__ __device__ dcomplex& operator-=(const dcomplex& b) { return re -= b.re, im -= b.im, *this; }
  __host__ __device__ dcomplex& operator*=(const dcomplex& b) { return *this = *this * b; }
  __host__ __device__ friend dcomplex operator+(dcomplex a, const dcomplex& b) { return a += b; }
  __host__ __device__ friend dcomplex operator-(dcomplex a, const dcomplex& b) { return a -= b; }
  __host__ __device__ friend dcomplex operator-(const dcomplex& a) { return {-a.re, -a.im}; }
  __host__ __device__ friend dcomplex operator*(const dcomplex& a, const dcomplex& b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  __host__ __device__ friend dcomplex operator*(R a, const dcomplex& b) { return {a * b.re, a * b.im}; }
  __host__ __device__ friend bool operator==(const dcomplex& a, const dcomplex& b) { return a.re == b.re && a.im == b.im; }
  __host__ __device__ friend bool operator!=(const dcomplex& a, const dcomplex& b) { return !(a == b); }
};

// The warp shuffles and loads, part by part (found by argument-dependent lookup from the
// templated kernels' unqualified calls).
template <typename R>
__device__ __forceinline__ dcomplex<R> __shfl_down_sync(unsigned mask, dcomplex<R> v, unsigned off, int width = 32) {
  return {::__shfl_down_sync(mask, v.re, off, width), ::__shfl_down_sync(mask, v.im, off, width)};
}
template <typename R>
__device__ __forceinline__ dcomplex<R> __shfl_up_sync(unsigned mask, dcomplex<R> v, unsigned off, int width = 32) {
  return {::__shfl_up_sync(mask, v.re, off, width), ::__shfl_up_sync(mask, v.im, off, width)};
}
__device__ __forceinline__ dcomplex<double> __ldg(const dcomplex<double>* p) {
  const double2 v = ::__ldg(reinterpret_cast<const double2*>(p));
  return {v.x, v.y};
}
__device__ __forceinline__ dcomplex<float> __ldg(const dcomplex<float>* p) {
  const float2 v = ::__ldg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
}
template <typename R>
__device__ __forceinline__ void atomicAdd(dcomplex<R>* p, dcomplex<R> v) {
  ::atomicAdd(&p->re, v.re);
  ::atomicAdd(&p->im, v.im);
}

/// What a kernel computes with for la value type T.
template <typename T>
struct device_value {
  using type = T;
};
template <typename R>
struct device_value<std::complex<R>> {
  using type = dcomplex<R>;
};
template <typename T>
using device_value_t = typename device_value<T>::type;

static_assert(sizeof(dcomplex<double>) == sizeof(std::complex<double>) && sizeof(dcomplex<float>) == sizeof(std::complex<float>),
              "dcomplex has std::complex's layout");
static_assert(std::is_trivially_copyable_v<dcomplex<double>>, "dcomplex is passed to kernels by value");

template <typename T>
device_value_t<T>* device_ptr(T* p) {
  return reinterpret_cast<device_value_t<T>*>(p);
}
template <typename T>
const device_value_t<T>* device_ptr(const T* p) {
  return reinterpret_cast<const device_value_t<T>*>(p);
}

/// A view template V<T, ...> of std::complex<R> as the same view of dcomplex<R>: the views
/// hold pointers and sizes only, the same layout for either value type.
template <typename To, typename From>
To rebind_view(const From& v) {
  static_assert(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<From> && std::is_trivially_copyable_v<To>,
                "rebind_view: the views differ in layout");
  To t;
  std::memcpy(static_cast<void*>(&t), &v, sizeof(To));
  return t;
}

}  // namespace la::detail
