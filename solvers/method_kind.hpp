// The methods' kinds (la::krylov_method): each is a registry entry (registry.hpp), and the
// options name them (krylov_options.hpp; precond_options.hpp's inner method).
#pragma once

#include <optional>
#include <string>

namespace la {

/// The Krylov methods. CG for symmetric positive definite matrices; the others for any
/// square non-singular matrix, right-preconditioned (the residual they monitor is the true
/// one, not M^-1 r).
enum class krylov_method {
  automatic,  // CG when A looks SPD (symmetric values, positive diagonal), else select_method's (method.hpp)
  cg,
  bicgstab,   // van der Vorst's BiCGSTAB: two products with A an iteration, short recurrences
  gmres,      // restarted GMRES(m): classical Gram-Schmidt with one reorthogonalization, Givens rotations
  fgmres,     // flexible GMRES(m): M^-1 may change between applications (keeps the m vectors M^-1 v)
  direct,     // a sparse (or dense) factorization of A, on the host or the GPU (solvers/direct/)
  // Values past direct: methods added at run time (registry.hpp, add_method).
};
/// The method's registered name (registry.hpp's entries; "unknown" for a value none has).
const char* to_string(krylov_method m) noexcept;
/// The method registered as `s`, or nothing.
std::optional<krylov_method> parse_method(const std::string& s);

}  // namespace la
