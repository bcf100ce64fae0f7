// The preconditioners CG takes and their options, shared by the host and GPU solvers (cg.hpp,
// host_backend.hpp, device_cg.hpp) and the preconditioner builders (precond.hpp,
// device_precond.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <la/solvers/method_kind.hpp>
#include <la/types.hpp>

namespace la {

/// M^-1 in r'M^-1 r. Each is built once per solve, before the loop (its setup time and memory
/// are reported).
enum class preconditioner {
  none,
  jacobi,        // diag(A)^-1
  block_jacobi,  // dense inverses of diagonal blocks of rows with the same pattern (supervariables)
  fsai,          // G^T G, G lower triangular on a chosen pattern with G A G^T close to I (precond/fsai.hpp)
  ic0,           // (L L^T)^-1, L the incomplete Cholesky factor on the pattern of tril(A)
  ilu0,          // (L U)^-1 on the pattern of A, no pivoting, no shift (for symmetric A, IC(0)'s M
                 // without the shift); built for the non-symmetric solvers, usable by CG
  amg,           // one cycle of smoothed-aggregation algebraic multigrid (solvers/amg/)
  inner,         // K iterations of a method as M^-1, for FGMRES (precond/inner.cu)
  automatic,     // one of the above, by select_preconditioner (precond.hpp)
  // Values past automatic: preconditioners added at run time (registry.hpp, add_preconditioner).
};

/// The sparsity pattern of the FSAI factor G.
enum class fsai_pattern {
  lower,          // tril(A): row i of G has the columns of row i of A at or left of i
  lower_squared,  // tril(|A|^2): the columns reachable in two steps, small ones dropped
};

struct fsai_options {
  fsai_pattern pattern = fsai_pattern::lower;
  /// lower_squared only: a column j of row i is dropped when (|A| |A|)_ij < drop *
  /// max_j (|A| |A|)_ij (the diagonal and the columns of tril(A) are always kept).
  double drop = 0;
  /// The fill budget: at most this many entries in a row of G, the diagonal included (0: no
  /// cap). A row's setup costs about p^3 / 3 flops for p entries, so one long row (an arrow
  /// matrix's, whose tril(|A|^2) rows fill in; a structural matrix's 599-entry row) costs
  /// more than the whole solve; past the budget the row keeps the diagonal and its largest
  /// entries (tril(A)'s first, by |a_ij| / sqrt(|a_ii a_jj|), then tril(|A|^2)'s by weight).
  int max_row = 64;
};

/// How IC(0)'s and ILU(0)'s factors are computed (precond/factored.hpp).
enum class factorization {
  automatic,  // sweeps on the GPU, exact on the host
  exact,      // row by row in dependency order (level by level on the GPU): the oracle
  sweeps,     // fixed-point sweeps over all entries at once (Chow and Patel's ParILU/ParIC)
};

/// How the triangular factors are applied: z = U^-1 L^-1 r, exactly or approximately. Each
/// is a fixed linear operator (the same M^-1 every iteration), and for IC(0) a symmetric one.
enum class trisolve {
  automatic,  // select_trisolve
  exact,      // forward and backward substitution (level by level on the GPU)
  jacobi,     // K Jacobi sweeps on each triangular system from x = D^-1 b
  isai,       // incomplete sparse approximate inverses of L and U on their own patterns
};

/// A row permutation and scaling to a heavy, zero-free diagonal before ILU(0) (matching.hpp).
enum class matching_mode {
  automatic,  // where the diagonal has a zero or missing entry
  on,
  off,
};

struct factor_options {
  factorization method = factorization::automatic;
  int sweeps = 0;        // sweeps: how many (0: default_sweeps)
  trisolve solve = trisolve::automatic;
  int jacobi_steps = 0;  // jacobi: sweeps a triangle (0: default_jacobi_steps)
  matching_mode matching = matching_mode::automatic;
};

/// The measured defaults (bench/RESULTS.md, "Incomplete factorizations").
constexpr int default_sweeps = 3;
constexpr int default_jacobi_steps = 2;

/// The largest coarsest level AMG solves by a dense factorization; a larger one (coarsening
/// stalled, or max_levels reached) is smoothed instead (two Chebyshev passes). The GPU's
/// inverse is one block's Gauss-Jordan, O(n^3) on one SM: 2,000 rows (Trefethen_2000, whose
/// strong diagonal leaves nothing to coarsen) took 6.5 s at the old limit of 2048.
inline constexpr index_t amg_dense_limit = 512;
/// amg_options::coarse_size's largest value. A coarse size above amg_dense_limit is a
/// request for that dense solve: levels up to it are factored (on the GPU by la::dense_solver,
/// on the host by its O(n^3) loops: seconds at a few thousand rows).
inline constexpr index_t amg_coarse_size_max = 8192;
/// The largest coarsest level that is solved densely under these options.
inline index_t amg_dense_rows(index_t coarse_size) { return coarse_size > amg_dense_limit ? coarse_size : amg_dense_limit; }

/// AMG's smoother: a Chebyshev polynomial in D^-1 A, or L1-Jacobi sweeps x += D_l1^-1 (b - A x)
/// with D_l1 = diag(sum_j |a_ij|) (convergent for every SPD A, no eigenvalue bound needed).
enum class amg_smoother { chebyshev, l1_jacobi };

/// The cycle's shape: one coarse visit a level (V), two (W), or an F-cycle on the coarse level
/// then a V-cycle (F). V and W are symmetric operators (CG's need); F is not, so CG refuses it.
enum class amg_cycle { v, w, f };

/// Smoothed-aggregation AMG (solvers/amg/): the setup's and the cycle's parameters.
struct amg_options {
  double strength = 0.08;  // theta of the finest level's strength graph, halved a level
  int smoother_degree = 2;  // Chebyshev polynomial degree, or L1-Jacobi sweeps (pre and post)
  /// A level this small is solved densely (its inverse, one dense product a cycle). 512:
  /// measured on the AMG set (H200, bench/history/algebraic-multigrid.md, "Coarse size"):
  /// 13-14% faster than 256 on 1138_bus and bcsstk21, the same hierarchy elsewhere; 1024 and
  /// 2048 slower where they change the hierarchy (a dense level of 843-1439 rows costs more
  /// setup than its levels saved).
  index_t coarse_size = 512;
  int max_levels = 25;
  /// Power iterations for each level's lambda_max(D^-1 A), the bound taken as 1.1 times their
  /// estimate, capped by Gershgorin's (0: Gershgorin's alone). An underestimate makes the
  /// Chebyshev smoother amplify the top modes (15 iterations from a smooth start measured 1.78
  /// on 2D Poisson, whose lambda is 2); an overestimate weakens smoothing and P.
  int power_iterations = 20;
  int aggregation_distance = 2;  // the MIS's distance: 2 (aggregates of about 3^d nodes) or 1
  amg_cycle cycle = amg_cycle::v;
  amg_smoother smoother = amg_smoother::chebyshev;
  /// Systems of PDEs (several unknowns a node): the near-null space, in this order of
  /// precedence (solvers/amg/near_null.hpp, resolve_near_null). The user's vectors B (n x k,
  /// column-major, 1 <= k <= 32: the coarse levels get k unknowns an aggregate); else
  /// rigid-body modes from node coordinates (nodes x coordinate_dim, node-major: 3 modes in
  /// 2D, 6 in 3D, nodes of coordinate_dim unknowns, node-major); else block_size constant
  /// modes. Strength and aggregation work on nodes (block_size unknowns, node-major; the
  /// coordinates' d), their strength the blocks' Frobenius norms. use_near_null = false is
  /// scalar AMG (the constant vector) whatever else is set.
  int block_size = 1;
  std::shared_ptr<const std::vector<double>> near_null;
  std::shared_ptr<const std::vector<double>> coordinates;
  int coordinate_dim = 0;
  bool use_near_null = true;
  /// The hierarchy a build partitioned over this many row blocks makes (issue 70, several
  /// GPUs): the finest level's nodes split into contiguous blocks of equal size, aggregates
  /// never crossing a block (strong couplings between blocks dropped), each coarse level's
  /// blocks its aggregates'. The host oracle only so far: the GPU refuses more than 1.
  int partitions = 1;
};

struct precond_options {
  amg_options amg;
  fsai_options fsai;
  /// IC(0) and ILU(0): how the factors are computed and applied.
  factor_options factor;
  /// IC(0): the largest diagonal shift tried, relative to the unit diagonal of the
  /// symmetrically scaled matrix D^-1/2 A D^-1/2 (shifts 0, 1e-3, 3e-3, ... up to this).
  double max_shift = 1;
  /// Block-Jacobi: the largest diagonal block (1 to 32 rows).
  int max_block = 32;
  /// A method as a preconditioner (inner): the inner method (a registered one but auto and
  /// direct; GMRES runs as GMRES(K)), its iterations an application, and its own
  /// preconditioner (none, jacobi, ilu0 or amg), built once.
  krylov_method inner_method = krylov_method::gmres;
  int inner_iterations = 10;
  preconditioner inner_precond = preconditioner::jacobi;
  /// FSAI on the GPU: bytes of scratch for the rows' dense blocks (0: a quarter of the free
  /// device memory, at most 2 GiB); rows are set up in batches that fit it.
  double fsai_scratch_bytes = 0;
  /// A GPU preconditioner already built for this matrix, which the GPU solvers apply instead
  /// of building one: set by la::device_solver (device_solver.hpp), which keeps it across
  /// solves; a device_preconditioner of value size prebuilt_value_size, type-erased here.
  std::shared_ptr<const void> prebuilt;
  std::size_t prebuilt_value_size = 0;
  /// The host's likewise: la::host_solver's host_preconditioner (host_solver.hpp), which the host
  /// solvers apply instead of building one.
  std::shared_ptr<const void> host_prebuilt;
  /// The numeric options of preconditioners added at run time (registry.hpp,
  /// add_preconditioner), by declared name: their option_spec's set stores them here.
  std::map<std::string, double, std::less<>> extra;
};

/// The preconditioner's registered name (registry.hpp's entries; "unknown" for a value none has).
const char* to_string(preconditioner p) noexcept;
inline const char* to_string(factorization f) noexcept {
  return f == factorization::exact ? "exact" : f == factorization::sweeps ? "sweeps" : "auto";
}
inline const char* to_string(trisolve t) noexcept {
  switch (t) {
    case trisolve::exact: return "exact";
    case trisolve::jacobi: return "jacobi";
    case trisolve::isai: return "isai";
    default: return "auto";
  }
}
inline const char* to_string(matching_mode m) noexcept {
  return m == matching_mode::on ? "on" : m == matching_mode::off ? "off" : "auto";
}
inline const char* to_string(fsai_pattern p) noexcept {
  return p == fsai_pattern::lower ? "tril(A)" : "tril(|A|^2)";
}

/// The preconditioner registered as `s` (to_string's names), or nothing.
std::optional<preconditioner> parse_preconditioner(const std::string& s);

/// Where a built preconditioner's setup went, for reports (solve_result::preconditioner).
struct precond_report {
  preconditioner kind = preconditioner::none;  // the one built (auto resolved)
  std::string detail;    // the pattern, shift or block sizes it used, for a person
  double setup_seconds = 0;
  double bytes = 0;      // memory it holds during the solve
  double shift = 0;      // IC(0): the diagonal shift used
  double factor_seconds = 0;  // IC(0), ILU(0) on the GPU: the factorization's part of the setup
                              // (with L^T or the split into L and U; without the trisolve's)
};

}  // namespace la
