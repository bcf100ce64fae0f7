// GMRES-based refinement's inner cycle (Carson and Higham), shared by the dense and the sparse
// direct solvers on the GPU and on the host: one restarted-GMRES cycle in double on the
// left-preconditioned correction equation M^-1 A d = M^-1 r, M the solver's factors, with
// classical Gram-Schmidt twice and Givens rotations. Where classical refinement's contraction
// (the condition number times the factors' error) is near or above one, this still converges.
//
// The basis lives wherever the caller keeps it (device or host memory); B provides:
//   double norm(int j)                        ||V_j||_2
//   void scale(int j, double f)               V_j *= f
//   void apply(int j)                         V_{j+1} = M^-1 A V_j
//   void project(int j, std::vector<double>& h)
//       h[0..j] = V_i . V_{j+1} (i <= j), then V_{j+1} -= sum_i h_i V_i
//   void combine(int count, const std::vector<double>& y)   d = sum_{i < count} y_i V_i
// The caller puts M^-1 r in V_0 first, and adds d to x after.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace la::refine_detail {

/// Runs the cycle (at most m iterations, until the preconditioned residual falls by tol) and
/// leaves d through B::combine. Returns the iterations taken (0 where M^-1 r is zero or not finite).
template <class B>
int gmres_cycle(B& basis, int m, double tol) {
  const double beta = basis.norm(0);
  if (!(beta > 0) || !std::isfinite(beta)) return 0;
  basis.scale(0, 1 / beta);
  const auto M = static_cast<std::size_t>(m);
  std::vector<double> H((M + 1) * M, 0.0), g(M + 1, 0.0), cs(M), sn(M), h(M + 1);
  g[0] = beta;
  int done = 0;
  for (int j = 0; j < m; ++j) {
    const auto J = static_cast<std::size_t>(j);
    basis.apply(j);
    for (int pass = 0; pass < 2; ++pass) {  // classical Gram-Schmidt, twice
      basis.project(j, h);
      for (std::size_t i = 0; i <= J; ++i) H[i * M + J] = (pass ? H[i * M + J] : 0.0) + h[i];
    }
    const double hn = basis.norm(j + 1);
    // Givens rotations keep H upper triangular; |g[j+1]| is the preconditioned residual.
    for (std::size_t i = 0; i < J; ++i) {
      double& a0 = H[i * M + J];
      double& a1 = H[(i + 1) * M + J];
      const double t0 = cs[i] * a0 + sn[i] * a1;
      a1 = -sn[i] * a0 + cs[i] * a1;
      a0 = t0;
    }
    double& hjj = H[J * M + J];
    const double rr = std::hypot(hjj, hn);
    cs[J] = rr > 0 ? hjj / rr : 1.0;
    sn[J] = rr > 0 ? hn / rr : 0.0;
    hjj = rr;
    g[J + 1] = -sn[J] * g[J];
    g[J] *= cs[J];
    done = j + 1;
    if (!(hn > 1e-300) || !std::isfinite(hn) || std::fabs(g[J + 1]) <= tol * beta) break;
    basis.scale(j + 1, 1 / hn);
  }
  // y = R^-1 g; d = V y.
  std::vector<double> y(static_cast<std::size_t>(done));
  for (int i = done - 1; i >= 0; --i) {
    const auto I = static_cast<std::size_t>(i);
    double v = g[I];
    for (std::size_t q = I + 1; q < static_cast<std::size_t>(done); ++q) v -= H[I * M + q] * y[q];
    y[I] = H[I * M + I] != 0 ? v / H[I * M + I] : 0.0;
  }
  basis.combine(done, y);
  return done;
}

}  // namespace la::refine_detail
