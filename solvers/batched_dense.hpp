// Many independent small dense systems A_i x_i = b_i at once: LU with partial pivoting or
// Cholesky, factored once and solved for any number of right-hand sides, with a status and a
// checked backward error per system. The GPU runs one thread block per system (the system in
// shared memory where it fits, in global memory above: double up to n = 110 in shared); the
// host runs the same algorithms (the oracle, checked against a long double elimination) over its threads.
//
//   la::batched_dense_solver<double> s(ctx, count, n, a);  // a: count n x n row-major matrices, on the GPU
//   la::batched_dense_report r = s.solve(b, k);            // b: count n x k row-major blocks, x in place
//   for (i ...) if (r.info[i] != 0) ... r.message_of(i) ...
//
// Variable sizes: `sizes` gives each system's n; A's matrices and B's blocks are packed one
// after another (system i's A at sum_{j<i} n_j^2, its B at sum_{j<i} n_j k).
//
// Status per system (info): 0 solved, its backward error ||b - A x||_inf / (||A||_inf ||x||_inf
// + ||b||_inf) at most `check_tolerance`; j > 0: no nonzero pivot in column j (LU: A singular)
// or, for Cholesky asked for by name, no positive one (A not positive definite); -1: A, b or x
// holds a NaN or infinity; -2: x is finite but misses the backward-error check. A system that
// is not solved gets x = NaN, never a silent answer.
//
// Thread safety: one solver is used by one thread at a time; two solvers on two contexts share nothing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <la/context.hpp>
#include <la/solvers/dense_solver.hpp>
#include <la/types.hpp>

namespace la {

struct batched_dense_options {
  /// automatic: per system, Cholesky where A_i is symmetric with a positive diagonal (LU where
  /// a pivot is not positive), else LU; lu; cholesky (a system that is not positive definite
  /// is a status naming the column).
  dense_factorization factorization = dense_factorization::automatic;
  /// The backward error a solved system must meet (0: 1000 n eps of the value type).
  double check_tolerance = 0;
};

struct batched_dense_report {
  std::vector<int> info;               // per system (see the header comment)
  std::vector<double> backward_error;  // per system, in double (NaN where not solved)
  index_t failed = 0;                  // systems whose info is not 0
  double seconds = 0;
  /// System i's status for a person ("solved", "singular: no nonzero pivot in column 3", ...).
  std::string message_of(index_t i) const;
};

template <typename T>
class batched_dense_solver {
 public:
  /// `count` systems of n x n on ctx's device, A's matrices row-major one after another
  /// (count * n * n values at `a`, device memory); A is copied, the factors kept.
  batched_dense_solver(context& ctx, index_t count, index_t n, const T* a, batched_dense_options o = {});
  /// Variable sizes (device memory), packed one after another.
  batched_dense_solver(context& ctx, std::vector<index_t> sizes, const T* a, batched_dense_options o = {});
  /// On the host's threads (host memory): the oracle, and la.solve's device='cpu'.
  batched_dense_solver(index_t count, index_t n, const T* a, batched_dense_options o = {});
  batched_dense_solver(std::vector<index_t> sizes, const T* a, batched_dense_options o = {});
  ~batched_dense_solver();
  batched_dense_solver(batched_dense_solver&&) noexcept;
  batched_dense_solver& operator=(batched_dense_solver&&) noexcept;

  index_t count() const noexcept;
  bool on_gpu() const noexcept;
  /// The factorization's status per system: 0, j > 0 (no pivot in column j) or -1 (A non-finite).
  const std::vector<int>& factor_info() const noexcept;
  /// Per system: 1 where it was factored by Cholesky.
  const std::vector<unsigned char>& cholesky() const noexcept;
  double factor_seconds() const noexcept;

  /// X = A^-1 B in place: B holds each system's n_i x k block (row-major), packed, on the
  /// solver's side (device memory for a GPU solver). Each system checked (see the header).
  batched_dense_report solve(T* b, index_t k);

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

extern template class batched_dense_solver<float>;
extern template class batched_dense_solver<double>;

}  // namespace la
