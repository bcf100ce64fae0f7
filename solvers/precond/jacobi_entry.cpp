// The registry entries of no preconditioner and of Jacobi (registry.hpp). Both are applied in
// the methods' own kernels, so neither has a builder: M = I is no work (precond_form
// identity), and Jacobi (form diagonal) is D^-1 from A's diagonal, which each backend reads
// (host_base.hpp; on the GPU the csr_inverse_diagonal kernel) and fuses into its residual
// update. Jacobi has no options.
#include <la/solvers/registry.hpp>

namespace la::registry_detail {

preconditioner_entry none_entry() {
  constexpr preconditioner_entry e{"none", preconditioner::none, "M = I: no preconditioner",
                                   false, false, true, true, true, true, true, true,
                                   precond_form::identity, false, "no preconditioner"};
  static_assert(entry_is_valid(e));
  return e;
}

preconditioner_entry jacobi_entry() {
  constexpr preconditioner_entry e{"jacobi", preconditioner::jacobi, "diag(A)^-1, fused into the iteration",
                                   false, false, true, true, true, true, true, true,
                                   precond_form::diagonal, false, "Jacobi"};
  static_assert(entry_is_valid(e));
  return e;
}

}  // namespace la::registry_detail
