// The registry entries of no preconditioner and of Jacobi (registry.hpp). Jacobi has no
// options; its application is fused into each backend's residual update.
#include <la/solvers/registry.hpp>

namespace la::registry_detail {

preconditioner_entry none_entry() {
  return {"none", preconditioner::none, "M = I: no preconditioner",
          false, false, true, true, true, true, true, true};
}

preconditioner_entry jacobi_entry() {
  return {"jacobi", preconditioner::jacobi, "diag(A)^-1, fused into the iteration",
          false, false, true, true, true, true, true, true};
}

}  // namespace la::registry_detail
