// Two SpMV variants that la does not ship, added to the registry in one place
// (add_extra_spmv_variants) the way an embedder adds its own. Tests that link this register
// them at start-up, so every test that iterates the registry (the every-kernel SpMV tests,
// the solver's every-format test, the selector's candidates, the CLI's kernel list) meets
// them without naming them.
#pragma once

#include <atomic>
#include <string_view>

namespace la::test {

/// CSR, a thread per row, with a fused form (row_walk::thread): the solver fuses it.
inline constexpr std::string_view extra_fused = "test_csr_thread";
/// CSR, a thread per row, no fused form (row_walk::none): the solver runs it, then a dot.
/// A tune candidate. Its can_implement refuses more than 100000 rows.
inline constexpr std::string_view extra_plain = "test_csr_plain";
inline constexpr long long extra_plain_row_limit = 100000;

/// Adds both (once; later calls do nothing). Returns true.
bool add_extra_spmv_variants();
/// How many times the variants' run() has been called (either variant, any type).
long long extra_spmv_runs();

}  // namespace la::test
