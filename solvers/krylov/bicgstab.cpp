// BiCGSTAB's registry solvers (krylov/solvers.hpp): bicgstab_host over A's own format
// (bicgstab.hpp), bicgstab_device on the GPU (bicgstab_device.cu).
#include <la/solvers/bicgstab.hpp>
#include <la/solvers/device_solve.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/krylov/solvers.hpp>

namespace la::krylov_detail {

template <typename T>
solve_result bicgstab_on_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  return a.visit([&](const auto& m) { return bicgstab_host(m, b, x, o); });
}

template <typename T, typename O>
solve_result bicgstab_on_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                                const cg_options& o, const device_cg_options& d) {
  return bicgstab_device(ctx, a, b, x, o, d);
}

LA_INSTANTIATE_KRYLOV_SOLVERS(bicgstab)

}  // namespace la::krylov_detail
