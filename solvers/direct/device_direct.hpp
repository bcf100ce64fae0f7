// The direct method on the GPU set up once and applied to any number of right-hand sides, the
// GPU's side of host_direct.hpp, with the same chain: double: la::sparse_direct_solver (L D L^T
// where A looks SPD, the matched LU else), and where it cannot start or misses after refinement
// A's dense form by la::dense_solver where it fits (kept for the later columns); float: A's
// dense form. A is downloaded once, for the screen (direct_detail::screen) and the analysis.
//
//   la::device_direct<double, int> d(ctx, a, opt);   // analysis and factors, timed
//   solve_result r = d.solve(b, x);                    // device vectors, one column
//   d.refactor(a2);                                    // new values, A's pattern: the same steps
//
// Thread safety: one object is used by one thread at a time (its solves keep buffers).
#pragma once

#include <memory>
#include <string>

#include <la/context.hpp>
#include <la/formats/csr.hpp>
#include <la/solvers/krylov_options.hpp>
#include <la/vector.hpp>

namespace la {

template <typename T, typename O>
class device_direct {
 public:
  /// The setup: what A is (singular, non-finite) is status(); memory that does not fit is
  /// la::out_of_memory before anything large is allocated. A must outlive the object.
  device_direct(context& ctx, const device_csr<T, O>& a, const cg_options& opt);
  ~device_direct();
  device_direct(device_direct&&) noexcept;
  device_direct& operator=(device_direct&&) noexcept;

  /// x = A^-1 b on ctx's device, refined and checked as host_direct's.
  solve_result solve(const device_vector<T>& b, device_vector<T>& x);
  /// New values with A's pattern: the setup's steps again, timed.
  void refactor(const device_csr<T, O>& a);

  solve_status status() const noexcept;
  const std::string& message() const noexcept;
  double setup_seconds() const noexcept;

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

}  // namespace la
