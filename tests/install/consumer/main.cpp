// Solves a 1D Laplacian through the installed headers and library, with the consumer's own
// formats/, kernels/ and solvers/ headers on the include path first (la includes its own as
// <la/...>, so none of them can replace one of la's; a folder named la/ would, as for any
// library included by its name); exit 0 when CG converges to
// the known solution and every header came from where it should.
#include <cmath>
#include <cstdio>

#include "formats/coo.hpp"  // the consumer's own
#include "solvers/cg.hpp"   // the consumer's own

#include <la/la.hpp>  // everything of la's

#ifdef CONSUMER_CSR_HPP
#error "la picked up the consumer's formats/csr.hpp"
#endif
#ifdef CONSUMER_SPMV_HPP
#error "la picked up the consumer's kernels/reference/spmv.hpp"
#endif
#ifdef CUBLAS_VER_MAJOR
#error "la's public headers include cuBLAS"
#endif
#ifdef CUSPARSE_VER_MAJOR
#error "la's public headers include cuSPARSE"
#endif

int main() {
  consumer::coo mine;
  const char* text =
      "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 2\n2 1 -1\n2 2 2\n3 2 -1\n3 3 2\n4 3 -1\n4 4 2\n";
  const auto a = la::to_csr(la::parse_matrix_market<double>(text));
  mine.entries = static_cast<int>(a.nnz());
  std::vector<double> b{1, 0, 0, 1}, x;  // solution: all ones
  const auto r = la::cg_host(a, b, x);
  std::printf("consumer: %s in %lld iterations, cuda_available=%d, own cg=%d, own coo=%d\n", la::to_string(r.status),
              static_cast<long long>(r.iterations), int(la::cuda_available()), consumer::cg(), mine.entries);
  for (double v : x)
    if (std::abs(v - 1.0) > 1e-10) return 1;
  return r.converged() && mine.entries == 10 ? 0 : 1;
}
