// A preconditioner that only the tests register (extra_precond.cu): the proof that a family is
// one file plus one registration. No library file names it, yet the CLI's parser and help,
// the option list Python reads, and the tests' sweeps over preconditioners() take it.
#pragma once

#include <la/solvers/registry.hpp>

namespace la::test {

inline constexpr const char* extra_precond_name = "extra-rowsum";
inline constexpr const char* extra_precond_option = "extra-weight";

/// Registers "extra-rowsum" (M^-1 = w diag(sum_j |a_ij|)^-1, w = --extra-weight) once and
/// returns its kind.
preconditioner add_extra_preconditioner();
/// How many times its host and device builders ran (a solve that reached it builds it).
long long extra_host_builds();
long long extra_device_builds();

}  // namespace la::test
