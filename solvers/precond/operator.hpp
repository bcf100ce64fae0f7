// What a preconditioner family builds, on the host and on the GPU, and the builders a registry
// entry holds (registry.hpp's preconditioner_entry): a family that is applied apart from the
// Krylov method's own kernels (precond_form::apart) gives a host builder, the oracle, and a
// device builder, each from A and the options to a ready M^-1. The solvers reach a family
// only through its entry (entry_of), so a preconditioner added with add_preconditioner is
// built and applied exactly as the ones la ships.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/precond_options.hpp>

namespace la {

class context;

/// M^-1 on the host, built once; apply() is z = M^-1 r (r and z distinct, n entries each).
template <typename T>
struct host_precond_operator {
  virtual ~host_precond_operator() = default;
  virtual void apply(const std::vector<T>& r, std::vector<T>& z) const = 0;
  precond_report rep;  // the builder fills it (setup_seconds is the caller's)
};

/// M^-1 on the GPU (device_preconditioner's implementation), defined in
/// solvers/detail/precond_device.cuh: apply() queues kernels on a stream only.
template <typename T>
struct device_precond_operator;

template <typename T>
using host_builder = std::unique_ptr<host_precond_operator<T>> (*)(const csr_matrix<T, count_t>&,
                                                                   const precond_options&);
template <typename T, typename O>
using device_builder = std::unique_ptr<device_precond_operator<T>> (*)(context&, const device_csr<T, O>&,
                                                                       const precond_options&);

/// Of four things made for (float, int32), (float, int64), (double, int32), (double, int64),
/// the one for T and O.
template <typename T, typename O, typename F32, typename F64, typename D32, typename D64>
constexpr auto for_types(F32 f32, F64 f64, D32 d32, D64 d64) {
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (sizeof(O) == 4) return f32;
    else return f64;
  } else {
    if constexpr (sizeof(O) == 4) return d32;
    else return d64;
  }
}

/// An entry's host builders, one for each value type (null: the family has none).
struct host_builders {
  host_builder<float> f = nullptr;
  host_builder<double> d = nullptr;
  template <typename T>
  host_builder<T> get() const {
    if constexpr (std::is_same_v<T, float>) return f;
    else return d;
  }
};

/// An entry's device builders, one for each value and offset type.
struct device_builders {
  device_builder<float, std::int32_t> f32 = nullptr;
  device_builder<float, std::int64_t> f64 = nullptr;
  device_builder<double, std::int32_t> d32 = nullptr;
  device_builder<double, std::int64_t> d64 = nullptr;
  template <typename T, typename O>
  device_builder<T, O> get() const {
    return for_types<T, O>(f32, f64, d32, d64);
  }
};

/// The device builders of a family's function template build<T, O>, for its entry.
#define LA_DEVICE_BUILDERS(build) \
  ::la::device_builders { &build<float, std::int32_t>, &build<float, std::int64_t>, &build<double, std::int32_t>, &build<double, std::int64_t> }
/// The host builders of a family's function template build<T>.
#define LA_HOST_BUILDERS(build) \
  ::la::host_builders { &build<float>, &build<double> }

}  // namespace la
