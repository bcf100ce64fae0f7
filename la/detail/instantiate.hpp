// The value and offset types la's templates are built for, as X-macros, so that every file
// that instantiates explicitly lists them the same way:
//   #define LA_INSTANTIATE(T, O) template void f<T, O>(...);
//   LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
//   #undef LA_INSTANTIATE
#pragma once

#include <complex>
#include <cstdint>

#define LA_FOR_EACH_VALUE(M) M(float) M(double)
// The complex value types (issue 69), for the templates that take them so far.
#define LA_FOR_EACH_COMPLEX(M) M(std::complex<float>) M(std::complex<double>)
#define LA_FOR_EACH_VALUE_AND_OFFSET(M) \
  M(float, std::int32_t) M(float, std::int64_t) M(double, std::int32_t) M(double, std::int64_t)
#define LA_FOR_EACH_COMPLEX_AND_OFFSET(M)                                                \
  M(std::complex<float>, std::int32_t) M(std::complex<float>, std::int64_t) M(std::complex<double>, std::int32_t) \
  M(std::complex<double>, std::int64_t)
