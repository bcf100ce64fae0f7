// The sparse direct solver on the GPU: a supernodal multifrontal LU with static pivoting (and
// no pivoting at all for a symmetric positive definite A), analyzed on the host, factored and
// solved on the GPU, refined against A in double.
//
//   la::sparse_direct_solver s(ctx, a);     // analysis: ordering, tree, supernodes, fronts
//                                            // (without ctx: the same on the host's threads)
//   std::puts(s.analysis().summary().c_str());  // predicted nnz(L), flops, bytes: before any numeric work
//   s.factor();                              // numeric, on the GPU (A's values)
//   if (!s.ok()) ... s.singular_column() ...
//   la::sparse_direct_report r = s.solve(b); // b: device_vector or host std::vector; x over b
//   s.refactor(a2);                          // new values, A's pattern: the analysis reused
//
// What it does (solvers/sparse_direct/: fronts.cpp the symbols, factor.cu and solve.cu the GPU's
// factorization and solve, fronts_host.cpp and solver.cpp the host's):
//  - A general A: a maximum-product matching with its scalings puts a heavy diagonal on
//    M = Dr P A Dc (matching/matching.hpp), as SuperLU_DIST does; a symmetric A with a positive
//    diagonal is taken as it is (tried SPD: no matching, and a non-positive pivot sends it to
//    the matched path).
//  - The analysis (sparse_analysis.hpp) orders M's symmetrized pattern (METIS or AMD), and
//    the supernodes' row structures make the fronts: supernode s's front is m x m, m its row
//    count, its first columns the supernode's.
//  - The tree is processed level by level from the leaves: a level's fronts are assembled (A's
//    entries scattered; the children's update matrices added row by row in a fixed order, so
//    reruns are bit-identical), then partially factored without pivoting (a pivot below
//    sqrt(eps) max|M| set to +-sqrt(eps) and counted): the small fronts one thread block each,
//    all of a level in one launch; the large ones blocked, their trailing updates on la's fp64
//    Tensor Core GEMM (kernels/gemm/dmma.cu).
//  - The solve walks the same levels (forward from the leaves, backward from the roots), every
//    front of a level in one launch, many right-hand sides at once; then refinement with A's
//    residual in double-double (classical, then GMRES-based where classical stalls) until the
//    backward error and the relative residual meet their targets or stop improving.
// The host oracle is sparse_lu_host (sparse_analysis.hpp): the same matching, ordering and
// static pivots, factored up-looking; the tests compare the two factors entry by entry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/sparse_analysis.hpp>
#include <la/vector.hpp>

namespace la {

struct sparse_direct_options {
  fill_ordering ordering = fill_ordering::automatic;
  /// automatic: no pivoting for a symmetric A with a positive diagonal (the matched LU where a
  /// pivot is not positive after all), else the matched LU; lu: always the matched LU; spd: no
  /// matching, and a non-positive pivot is a status naming the column.
  sparse_factorization factorization = sparse_factorization::automatic;
  /// Fronts of more rows than this are factored blocked (the trailing update on the GEMM) where
  /// their level holds fewer than 64 fronts, and above 4 times this always; the rest one thread
  /// block each, a level's in one launch. In the GPU's solve, a front whose off-diagonal block
  /// (L21, U12) holds big_front^2 entries or more has its products spread over many thread blocks.
  index_t big_front = 192;
  /// The GPU's blocked fronts of one level go round-robin onto this many side streams (each
  /// front's steps in order on its own), so their small launches overlap; 0: one stream.
  int front_streams = 4;
  /// Refinement: steps at most, and the backward error ||b - Ax||_inf / (||A||_inf ||x||_inf +
  /// ||b||_inf) it stops at.
  int max_refinement = 10;
  double refine_tolerance = 2e-16;
  /// ... and the relative residual ||b - Ax||_2 / ||b||_2 (the residual in double-double).
  double refine_residual = 1e-15;
  /// automatic: classical refinement (x += M^-1 r, M the factors), then GMRES-based refinement
  /// from the best x where classical stalls or runs out of steps above the targets (each step
  /// one GMRES cycle in double on M^-1 A d = M^-1 r: it converges where the static pivots
  /// left the factors too far from A for classical refinement); classical; gmres (from the
  /// first step). Each kind takes at most max_refinement steps.
  refinement_kind refinement = refinement_kind::automatic;
  /// GMRES-based refinement's Krylov dimension per step ((restart + 1) n doubles of workspace,
  /// allocated only when it runs) and the preconditioned residual's reduction it stops at.
  int gmres_restart = 30;
  double gmres_tolerance = 1e-10;
  /// An analysis of A's own pattern made already (auto's direct-first rule makes one): used
  /// for the unmatched (SPD) path instead of making it again. Null: made here.
  std::shared_ptr<const sparse_analysis> pattern_analysis;
};

struct sparse_direct_report {
  int refinement_steps = 0;
  int gmres_iterations = 0;  // GMRES-based refinement's inner iterations, all steps and columns
  double backward_error = 0;
  double relative_residual = 0;  // the worst column's ||b - Ax||_2 / ||b||_2, in double
  double seconds = 0;
  std::string message;  // one line for a person
};

/// Thread safety: one solver is used by one thread at a time (its solve keeps buffers); two
/// solvers share nothing.
class sparse_direct_solver {
 public:
  /// The analysis (host): a not square A is la::invalid_argument; an ordering this build lacks
  /// is la::not_supported naming the package; a structurally singular A gives ok() false with
  /// singular_column(). A is kept (its values are refactor()'s and the residual's).
  sparse_direct_solver(context& ctx, const csr_matrix<double, count_t>& a, sparse_direct_options o = {});
  /// The same on the host: the fronts factored by `threads` host threads (0: la::thread_count(),
  /// $LA_THREADS or every core) and solved there (solve(std::vector) only). The factors are bit
  /// for bit the sequential oracle's; a machine without a GPU uses the same calls.
  explicit sparse_direct_solver(const csr_matrix<double, count_t>& a, sparse_direct_options o = {}, int threads = 0);
  ~sparse_direct_solver();
  sparse_direct_solver(sparse_direct_solver&&) noexcept;
  sparse_direct_solver& operator=(sparse_direct_solver&&) noexcept;

  /// The numeric factorization on the GPU. Memory that does not fit is la::out_of_memory,
  /// before anything is allocated, in the analysis's own terms.
  void factor();
  /// New values with A's pattern (the same row pointers and column indices; checked), by the
  /// same steps as the first factorization: the SPD path reuses its ordering and fronts (and
  /// turns to the matched LU where a pivot is not positive, as factor() does); the matched LU
  /// makes its matching, scalings and pivot threshold again from the new values.
  void refactor(const csr_matrix<double, count_t>& a);

  bool ok() const noexcept;
  /// 1-based column of A: structurally singular (no matching) or, factorization "spd", the
  /// first column whose pivot is not positive. 0 when ok().
  index_t singular_column() const noexcept;
  /// Pivots perturbed by static pivoting (refinement makes up for them).
  index_t perturbed() const noexcept;
  bool matched() const noexcept;  // the matched LU (false: no pivoting, A taken as SPD)
  const sparse_analysis& analysis() const noexcept;
  std::size_t fronts() const noexcept;
  std::size_t levels() const noexcept;
  double front_bytes() const noexcept;  // the fronts' device memory
  double analyze_seconds() const noexcept;
  double factor_seconds() const noexcept;
  std::string description() const;  // for reports

  /// X = A^-1 B in place, then refined; b n entries (or n x k, column after column) on ctx's device.
  /// On the GPU the solver keeps the solve's buffers (about 5 n k doubles and the fronts' vectors,
  /// sum(m) k) and its level loop as a CUDA graph for later solves of at most k columns.
  sparse_direct_report solve(device_vector<double>& b, index_t k = 1);
  sparse_direct_report solve(std::vector<double>& b, index_t k = 1);
  /// An estimate of the 1-norm condition number ||A||_1 ||A^-1||_1 from the factors (Hager and
  /// Higham's estimator, five pairs of solves at most): on the host's factors; NaN on the GPU's
  /// (no transposed solve there).
  double condition_estimate() const;

  /// The factors in the oracle's layout, copied to the host (tests): L unit lower by columns
  /// and U's strict upper part by rows, in the analysis's numbering, and U's diagonal.
  struct host_factors {
    std::vector<count_t> l_ptr, u_ptr;
    std::vector<index_t> l_idx, u_idx;
    std::vector<double> l_val, u_val, u_diag;
  };
  host_factors download_factors() const;

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

}  // namespace la
