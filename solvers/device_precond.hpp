// Preconditioners built and applied on the GPU, the device side of precond.hpp (whose host
// builders are the oracles they are tested against).
//
//   block-Jacobi  rows with the same pattern as the row above found by one kernel, blocks
//                 cut at max_block rows on the host (one read of n flags), each block
//                 inverted by Cholesky in double by its own thread; applied as one kernel,
//                 a thread per row.
//   FSAI          G's pattern: tril(A) on the device (a count, a scan, a copy), tril(|A|^2)
//                 from the host builder (fsai_pattern_of, after one copy of A). G's rows
//                 are solved a thread each: the dense block A[P, P] is gathered into global
//                 scratch (so a long pattern needs no shared memory or registers; rows are
//                 batched when the scratch would pass a budget), factored by Cholesky in
//                 double, solved for e_last. G^T by the device CSR->CSC conversion. Applied
//                 as two registry SpMVs, z = G^T (G r).
//   IC(0)         L's pattern tril(A) on the device; its rows' dependency levels on the
//                 host (one copy of the pattern); the factorization runs level by level on
//                 the device (a thread per row), retried with the shifts of ic0_shifts until
//                 the pivots are positive. L^T by the CSR->CSC conversion. Applied as two
//                 level-scheduled triangular solves: runs of narrow levels in one block
//                 with a barrier between levels, each wide level a kernel of its own.
//   AMG           smoothed aggregation with the whole setup on the device (amg/amg.cu,
//                 the host oracle amg/hierarchy.hpp); applied as one V- or W-cycle.
//   ILU(0)        the same machinery on A's whole pattern: the diagonal's positions by a
//                 kernel, levels of the lower and the upper part on the host, the factor
//                 level by level, then a unit-lower and an upper solve.
// apply() queues kernels only (no host work, no allocation), so it can be captured into a
// CUDA graph, and it is deterministic: no atomics, sums in a fixed order.
#pragma once

#include <memory>

#include <la/formats/csr.hpp>
#include <la/context.hpp>
#include <la/kernels/spmv/spmv.hpp>
#include <la/solvers/precond_options.hpp>
#include <la/solvers/precond/operator.hpp>

namespace la {

template <typename T>
class device_preconditioner {
 public:
  /// Builds M^-1 for A on ctx's device (block_jacobi, fsai, ic0, ilu0, or automatic). A
  /// preconditioner that does not exist for A is la::invalid_argument naming the row, with
  /// the same words as the host builders.
  template <typename O>
  device_preconditioner(context& ctx, const device_csr<T, O>& a, preconditioner kind, const precond_options& opt);
  ~device_preconditioner();
  /// Copies share the built preconditioner (la::device_solver hands its one to each solve).
  device_preconditioner(const device_preconditioner&);
  device_preconditioner& operator=(const device_preconditioner&);
  device_preconditioner(device_preconditioner&&) noexcept;
  device_preconditioner& operator=(device_preconditioner&&) noexcept;

  /// New values of A on the pattern it was built for, keeping what depends on the pattern
  /// alone: AMG keeps its aggregates and SpGEMM plans and reruns its numeric phases (the
  /// others throw la::not_supported: build them again). A must outlive the preconditioner
  /// (AMG's finest level is A itself).
  template <typename O>
  void update_values(const device_csr<T, O>& a);

  /// z = M^-1 r on stream s (r and z distinct, n entries each).
  void apply(const T* r, T* z, cudaStream_t s) const;
  const precond_report& report() const;
  /// For M^-1 = G^T G (FSAI): G and G^T as CSR views, so a solver can fuse the two products
  /// into its own kernels; false for the others.
  bool factors(matrix_view<T>& g, matrix_view<T>& gt) const;

  /// What a family's device builder makes (the registry entry's, precond/operator.hpp).
  using impl = device_precond_operator<T>;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace la
