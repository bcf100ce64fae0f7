// The direct solvers' typed options, shared by la::sparse_direct_solver, la::dense_solver and the
// direct method's registry entry (solvers/direct/method.cpp declares them for the CLI, Python and
// docs/options.md): the fill-reducing ordering, the sparse factorization's kind, and iterative
// refinement's kind.
#pragma once

#include <optional>
#include <string>

namespace la {

enum class fill_ordering {
  automatic,  // AMD, and METIS too where AMD's factor would take longer (at the caller's
              // flop rate) than METIS's run, the smaller factor kept; natural where neither
              // library was built (the analysis then says so)
  natural,    // no reordering
  amd,        // SuiteSparse AMD (approximate minimum degree)
  metis,      // METIS_NodeND (nested dissection)
};
const char* to_string(fill_ordering o) noexcept;
std::optional<fill_ordering> parse_fill_ordering(const std::string& s);

/// Iterative refinement after a direct solve.
enum class refinement_kind {
  automatic,  // classical, then GMRES-based from the best x where classical stalls
  classical,  // x += M^-1 r, M the factors
  gmres,      // each step one GMRES cycle on M^-1 A d = M^-1 r
};
const char* to_string(refinement_kind k) noexcept;
std::optional<refinement_kind> parse_refinement(const std::string& s);

/// The sparse factorization's kind.
enum class sparse_factorization {
  automatic,  // no pivoting where A is symmetric with a positive diagonal (the matched LU where a pivot is not positive)
  lu,         // the LU with static pivoting after a max-product matching, always
  spd,        // no matching, no pivoting; a pivot that is not positive is a status naming the column
};
const char* to_string(sparse_factorization f) noexcept;

/// What factors A on the host (double).
enum class host_factorization {
  automatic,    // SuiteSparse where this build found it (CHOLMOD for an A that looks SPD, UMFPACK else), else la's
  la,           // la's own multifrontal fronts on the host's threads (the GPU's oracle)
  suitesparse,  // CHOLMOD / UMFPACK; refused where this build lacks them
};

/// Whether the direct method estimates the condition number (Hager and Higham: up to 11 solves).
enum class condition_estimate {
  automatic,  // where those solves take at most a tenth of the setup's time
  yes,
  no,
};

/// The direct method's options (cg_options::direct).
struct direct_options {
  fill_ordering ordering = fill_ordering::automatic;
  host_factorization host_factor = host_factorization::automatic;
  refinement_kind refinement = refinement_kind::automatic;
  int max_refinement = 10;  // steps per refinement kind
  condition_estimate condition = condition_estimate::automatic;
};

}  // namespace la
