// The value and offset types la's templates are built for, as X-macros, so that every file
// that instantiates explicitly lists them the same way:
//   #define LA_INSTANTIATE(T, O) template void f<T, O>(...);
//   LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
//   #undef LA_INSTANTIATE
#pragma once

#include <cstdint>

#define LA_FOR_EACH_VALUE(M) M(float) M(double)
#define LA_FOR_EACH_VALUE_AND_OFFSET(M) \
  M(float, std::int32_t) M(float, std::int64_t) M(double, std::int32_t) M(double, std::int64_t)
