// Solves a 1D Laplacian through the installed headers and library; exit 0 when CG
// converges to the known solution.
#include <cmath>
#include <cstdio>

#include <la/formats/matrix_market.hpp>
#include <la/la/context.hpp>
#include <la/solvers/host_backend.hpp>

int main() {
  const char* text =
      "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 2\n2 1 -1\n2 2 2\n3 2 -1\n3 3 2\n4 3 -1\n4 4 2\n";
  const auto a = la::to_csr(la::parse_matrix_market<double>(text));
  std::vector<double> b{1, 0, 0, 1}, x;  // solution: all ones
  const auto r = la::cg_host(a, b, x);
  std::printf("consumer: %s in %d iterations, cuda_available=%d\n", la::to_string(r.status), r.iterations,
              int(la::cuda_available()));
  for (double v : x)
    if (std::abs(v - 1.0) > 1e-10) return 1;
  return r.converged() ? 0 : 1;
}
