// The direct method on the host set up once and applied to any number of right-hand sides:
// la::host_direct makes the analysis and the factors in its constructor (timed) and solves
// each column with them, refined and checked. The chain is written once, here:
//   1. where A looks SPD, the sparse L D L^T without pivoting (double: la::sparse_direct_solver
//      on the host's threads; float: the up-looking sparse Cholesky);
//   2. else, or where a pivot is not positive, the sparse LU with static pivoting after a
//      max-product matching (the rows as they are where the matching gives up and the diagonal
//      is zero-free);
//   3. where the sparse LU cannot start (the matching gives up on a diagonal with zeros), or
//      misses after refinement (backward error above 1e-13, or the tolerance), A's dense form
//      by LU with partial pivoting where it fits (kept for the later columns);
//   4. else a status that says what failed (singular, naming the column; does not fit).
// A whose largest entry is far from 1 (subnormal, or near overflow) is factored as 2^e A,
// which is exact, and x scaled back. b = 0 gives x = 0 at once.
//
//   la::host_direct<double> d(a, opt);        // analysis and factors, timed
//   solve_result r = d.solve(b, x);            // one column, refined and checked
//   d.refactor(a2);                            // new values, A's pattern: the same steps
//
// Thread safety: one object is used by one thread at a time; solve_columns() shares columns
// out over the host's threads itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/krylov_options.hpp>

namespace la {

template <typename T>
class host_direct {
 public:
  /// The setup: never throws for what A is (singular, non-finite, not square: status()); a
  /// factor that does not fit is la::insufficient_memory. A must outlive the object.
  host_direct(const csr_matrix<T, count_t>& a, const cg_options& opt);
  ~host_direct();
  host_direct(host_direct&&) noexcept;
  host_direct& operator=(host_direct&&) noexcept;

  /// x = A^-1 b, refined; the result's status is converged only where ||b - A x|| met
  /// max(rtol ||b||, atol), recomputed in wider precision. setup_seconds is the setup's.
  solve_result solve(const std::vector<T>& b, std::vector<T>& x);
  /// k columns (B n x k, column after column): X likewise. Columns run side by side on the
  /// host's threads; each has its own result.
  std::vector<solve_result> solve_columns(const std::vector<T>& b, std::vector<T>& x, index_t k);
  /// New values with A's pattern: the setup's steps again (fallbacks, threshold, scalings), timed.
  void refactor(const csr_matrix<T, count_t>& a);

  /// Where the setup stopped (converged: factors ready) and why.
  solve_status status() const noexcept;
  const std::string& message() const noexcept;
  double setup_seconds() const noexcept;
  /// What factored A, for a person.
  std::string description() const;

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

extern template class host_direct<float>;
extern template class host_direct<double>;

}  // namespace la
