// A Krylov-family method that only the tests register (extra_method.cu): preconditioned
// Richardson iteration, the proof that a method is one file plus one registration. No library
// file names it, yet the CLI's parser and help, the option list Python reads, and solve_host
// and solve_device take it.
#pragma once

#include <la/solvers/registry.hpp>

namespace la::test {

inline constexpr const char* extra_method_name = "extra-richardson";
inline constexpr const char* extra_method_option = "richardson-weight";

/// Registers "extra-richardson" (x += w M^-1 (b - A x), w = --richardson-weight) once and
/// returns its kind.
krylov_method add_extra_method();
/// How many times its host and GPU solvers ran.
long long extra_method_host_runs();
long long extra_method_device_runs();

}  // namespace la::test
