// GMRES's and FGMRES's registry solvers (krylov/solvers.hpp): gmres_host over A's own format
// (gmres.hpp), gmres_device on the GPU (gmres_device.cu); one backend, flexible or not.
#include <la/solvers/device_solve.hpp>
#include <la/solvers/gmres.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/krylov/solvers.hpp>

namespace la::krylov_detail {

template <typename T>
solve_result gmres_on_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  return a.visit([&](const auto& m) { return gmres_host(m, b, x, o, false); });
}
template <typename T>
solve_result fgmres_on_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  return a.visit([&](const auto& m) { return gmres_host(m, b, x, o, true); });
}

template <typename T, typename O>
solve_result gmres_on_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                             const cg_options& o, const device_cg_options& d) {
  return gmres_device(ctx, a, b, x, o, d, false);
}
template <typename T, typename O>
solve_result fgmres_on_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                              const cg_options& o, const device_cg_options& d) {
  return gmres_device(ctx, a, b, x, o, d, true);
}

LA_INSTANTIATE_KRYLOV_SOLVERS(gmres)
LA_INSTANTIATE_KRYLOV_SOLVERS(fgmres)

}  // namespace la::krylov_detail
