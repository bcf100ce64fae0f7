// Dense direct solves on the GPU: LU with partial pivoting and Cholesky, factored once and
// solved for many right-hand sides, on la's own GEMM (the fp64 Tensor Core rung for double).
//
//   la::dense_solver<double> s(ctx, a);         // a: device_dense<double> or dense_matrix<double>, n x n
//   if (!s.ok()) ... s.status().bad_column ...  // singular: the first column without a pivot
//   la::dense_solve_report r = s.solve(b);      // b: n x k device_dense (or device_vector), x in place
//   double kappa = s.condition_estimate();      // ||A||_1 ||A^-1||_1, LAPACK's gecon estimate
//
// Mixed precision (double only): dense_solver_options::factor_precision "tf32x3", "fp32",
// "tf32", "bf16" or "fp16" factors a float copy (Tensor Cores for the trailing updates where
// named; bf16/fp16 round the updates' operands to 16 bits) and refines
// the solution in double against A until the backward error meets refine_tolerance: classical
// refinement, then GMRES-based refinement preconditioned by the float factors where classical
// stalls; where that stalls too it refactors in fp64 and the report says so.
//
// The algorithms (solvers/direct/dense_device.cu): right-looking blocked factorizations on an
// n rounded up to the panel width (the padding is an identity block, so every GEMM is whole
// and aligned). LU's panel is one cooperative kernel (the column's pivot found across the
// grid, the rows swapped and updated in shared memory); a block's triangular solve is its
// inverse times the block (a GEMM); the trailing update is the GEMM registry's. Cholesky
// factors its diagonal blocks in one kernel each and updates only the lower triangle.
#pragma once

#include <la/solvers/direct_options.hpp>

#include <memory>
#include <string>

#include <la/context.hpp>
#include <la/formats/dense.hpp>
#include <la/solvers/direct/dense_host.hpp>
#include <la/vector.hpp>

namespace la {

enum class dense_factorization {
  automatic,  // Cholesky when A is symmetric with a positive diagonal (LU where a pivot is not positive)
  lu,         // LU with partial pivoting (getrf)
  cholesky,   // A = L L^T (potrf); A not positive definite is a status naming the column
};

struct dense_solver_options {
  dense_factorization factorization = dense_factorization::automatic;
  /// The factorization's arithmetic. "working": T's own (double on the fp64 Tensor Cores,
  /// float on float's GEMM). For double, mixed precision: "tf32x3" (float factors, trailing
  /// updates on TF32 Tensor Cores at float's accuracy; compute capability 9.0), "tf32" (TF32
  /// Tensor Cores, 10-bit products: fastest, more refinement steps), "fp32" (float GEMM),
  /// "bf16" / "fp16" (HPL-MxP's split: panels and block solves in float, the trailing
  /// updates' operands rounded to bfloat16 or half, summed in float on the Tensor Cores; A is
  /// scaled by a power of two so its largest entry is near 1, and half saturates at 65504).
  /// A low-precision factorization that breaks down (a pivot lost to rounding) is redone in
  /// fp64 at once, and the report says so (refactored).
  /// "auto": the plan picks: fp64 below n = auto_mixed_from (32768); from there 3xTF32 factors, whose condition
  /// estimate then picks classical refinement (below 1e6), GMRES-based (to 1e10) or an fp64
  /// refactorization (above); the report's precision says what it chose and why.
  std::string factor_precision = "working";
  /// "auto" factors in 3xTF32 from this n: where mixed precision was measured to beat la's own
  /// fp64 factors (H200, n = 32768: 853 against 1412 ms; on the H100 at n = 8192 and 16384 it
  /// lost, bench/RESULTS.md); tests set it small to reach the mixed branch.
  index_t auto_mixed_from = 32768;
  /// Panel width (0: chosen from n and the device: 32 up to n = 2048, 64 above, smaller where
  /// a panel would not fit in shared memory). Left at 0 with outer_block, small systems
  /// (double n <= 160, float n <= 224) are measured, factored and solved in one kernel each.
  index_t block = 0;
  /// Outer panel width, a multiple of block (0: 512): the trailing update's K. Tests set it
  /// small to reach every phase on small matrices.
  index_t outer_block = 0;
  /// Look-ahead: the next outer panel factored on a second stream while the rest of the
  /// trailing update runs (the panels leave the critical path at large n). Off: one stream.
  bool lookahead = true;
  /// Mixed precision: the backward error ||b - Ax||_inf / (||A||_inf ||x||_inf + ||b||_inf)
  /// the refinement stops at, and its step limit.
  double refine_tolerance = 2e-16;
  int max_refinement = 20;
  /// Mixed precision's refinement: automatic (classical, then GMRES-based where classical
  /// stalls), classical (x += M^-1 r, M the float factors) or gmres (each step one GMRES
  /// cycle in double on M^-1 A d = M^-1 r: converges where the condition number times the
  /// factors' unit roundoff is above one, as with TF32 factors of a matrix of condition 1e6).
  refinement_kind refinement = refinement_kind::automatic;
  /// GMRES-based refinement's Krylov dimension per step: about the number of directions the
  /// float factors resolve poorly (singular values below float's unit roundoff times ||A||)
  /// must fit, or restarted GMRES stagnates (condition 1e9, fp32 factors, n = 300: 60 such
  /// directions, 30 stalled, 100 converged).
  int gmres_restart = 50;
  double gmres_tolerance = 1e-10;  // its preconditioned residual reduction per step
  /// The GEMM variant for double's updates ("auto": the fastest fp64 rung; a dgemm_variants() name).
  std::string gemm = "auto";
};

/// What a solve did: the precision the factors were in, the refinement steps, the worst
/// backward error over the right-hand sides, and whether it fell back to fp64.
struct dense_solve_report {
  std::string precision;
  int refinement_steps = 0;
  int gmres_iterations = 0;  // GMRES-based refinement's inner iterations, all steps together
  double backward_error = 0;
  double relative_residual = 0;  // the worst column's ||b - Ax||_2 / ||b||_2, in double
  bool refactored = false;  // mixed precision stalled; factored again in fp64
  std::string message;      // one line for a person
  double seconds = 0;
};

/// Thread safety: one solver is used by one thread at a time (its solves share its context's
/// stream and workspace); two solvers on two contexts share nothing.
template <typename T>
class dense_solver {
 public:
  /// Factors A (n x n, on ctx's device; kept for refinement and residuals). A non-square A
  /// or one with NaN/inf is la::invalid_argument; memory that does not fit is la::out_of_memory
  /// before anything is allocated.
  dense_solver(context& ctx, const device_dense<T>& a, dense_solver_options o = {});
  /// The same from a host matrix (copied to the device).
  dense_solver(context& ctx, const dense_matrix<T>& a, dense_solver_options o = {});
  ~dense_solver();
  dense_solver(dense_solver&&) noexcept;
  dense_solver& operator=(dense_solver&&) noexcept;

  index_t size() const noexcept;
  /// 0, or the first column (1-based) without a nonzero pivot (LU) or a positive one (Cholesky asked by name).
  dense_factor_status status() const noexcept;
  bool ok() const noexcept { return status().ok(); }
  bool cholesky() const noexcept;
  /// "Cholesky" or "LU with partial pivoting", with the precision: for reports.
  std::string description() const;
  double factor_seconds() const noexcept;
  /// The panel width used.
  index_t block() const noexcept;

  /// X = A^-1 B in place, B n x k (packed) on ctx's device. Throws la::invalid_argument on a
  /// wrong shape, and when A is singular (status(); check ok() first).
  dense_solve_report solve(device_dense<T>& b);
  dense_solve_report solve(device_vector<T>& b);
  /// ||A||_1 times an estimate of ||A^-1||_1 (Hager and Higham, as LAPACK's gecon): a lower
  /// bound on the 1-norm condition number, usually within a factor 3. Infinity when singular.
  double condition_estimate();

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

extern template class dense_solver<float>;
extern template class dense_solver<double>;

}  // namespace la
