// CG's registry solvers (krylov/solvers.hpp): cg_host over A's own format (host_backend.hpp),
// cg_device on the GPU (device_cg.hpp); the report's method says "cg, " first.
#include <la/solvers/device_cg.hpp>
#include <la/solvers/host_backend.hpp>
#include <la/solvers/host_matrix.hpp>
#include <la/solvers/krylov/solvers.hpp>

namespace la::krylov_detail {

template <typename T>
solve_result cg_on_host(const host_matrix_ref<T>& a, const std::vector<T>& b, std::vector<T>& x, const cg_options& o) {
  solve_result r = a.visit([&](const auto& m) { return cg_host(m, b, x, o); });
  r.method = "cg, " + r.method;
  return r;
}

template <typename T, typename O>
solve_result cg_on_device(context& ctx, const device_csr<T, O>& a, const device_vector<T>& b, device_vector<T>& x,
                          const cg_options& o, const device_cg_options& d) {
  solve_result r = cg_device(ctx, a, b, x, o, d);
  r.method = "cg, " + r.method;
  return r;
}

LA_INSTANTIATE_KRYLOV_SOLVERS(cg)

}  // namespace la::krylov_detail
