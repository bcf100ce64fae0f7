// la's Krylov methods as their registry entries run them (registry.hpp's method_solvers): on
// the host over A in whichever format it is held (host_matrix_ref::visit), on the GPU over
// CSR. One file each defines and instantiates a method's pair (cg.cpp, bicgstab.cpp,
// gmres.cpp); krylov/entries.cpp lists them.
#pragma once

#include <cstdint>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/krylov_options.hpp>
#include <la/vector.hpp>

namespace la {
template <typename T>
class host_matrix_ref;
struct device_cg_options;
}  // namespace la

namespace la::krylov_detail {

#define LA_KRYLOV_SOLVERS(name)                                                                                         \
  template <typename T>                                                                                                 \
  solve_result name##_on_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x,                  \
                              const cg_options& o);                                                                     \
  template <typename T, typename O>                                                                                     \
  solve_result name##_on_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x, \
                                const cg_options& o, const device_cg_options& d);
LA_KRYLOV_SOLVERS(cg)
LA_KRYLOV_SOLVERS(bicgstab)
LA_KRYLOV_SOLVERS(gmres)
LA_KRYLOV_SOLVERS(fgmres)
#undef LA_KRYLOV_SOLVERS

/// The explicit instantiations of a pair, in its file.
#define LA_INSTANTIATE_KRYLOV_SOLVERS(name)                                                                          \
  template solve_result name##_on_host<float>(const host_matrix_ref<float>&, const std::vector<float>&,              \
                                              std::vector<float>&, const cg_options&);                               \
  template solve_result name##_on_host<double>(const host_matrix_ref<double>&, const std::vector<double>&,           \
                                               std::vector<double>&, const cg_options&);                             \
  template solve_result name##_on_device<float, std::int32_t>(context&, const device_csr<float, std::int32_t>&,       \
                                                              const device_vector<float>&, device_vector<float>&,    \
                                                              const cg_options&, const device_cg_options&);          \
  template solve_result name##_on_device<float, std::int64_t>(context&, const device_csr<float, std::int64_t>&,       \
                                                              const device_vector<float>&, device_vector<float>&,    \
                                                              const cg_options&, const device_cg_options&);          \
  template solve_result name##_on_device<double, std::int32_t>(context&, const device_csr<double, std::int32_t>&,     \
                                                               const device_vector<double>&, device_vector<double>&, \
                                                               const cg_options&, const device_cg_options&);         \
  template solve_result name##_on_device<double, std::int64_t>(context&, const device_csr<double, std::int64_t>&,     \
                                                               const device_vector<double>&, device_vector<double>&, \
                                                               const cg_options&, const device_cg_options&);

}  // namespace la::krylov_detail
