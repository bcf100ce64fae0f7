// The host's fastest factorizations where this build found them: SuiteSparse's CHOLMOD
// (supernodal Cholesky, its dense blocks on the BLAS) for an A that looks SPD, and UMFPACK
// (multifrontal LU with threshold partial pivoting) for the rest. host_direct takes them on the
// host by default (direct_options::host_factor); la's own host fronts stay the GPU's oracle and
// the fallback. Measured on the 2-core host with OpenBLAS (bench/RESULTS.md, "Sparse direct
// solver on the host"): CHOLMOD factored 2D Poisson 500^2 2.7x and 3D 40^3 2.2x faster than
// la's host fronts.
#pragma once

#include <memory>
#include <string>

#include <la/formats/csr.hpp>
#include <la/solvers/direct_options.hpp>

namespace la::direct_detail {

/// Whether this build has CHOLMOD (spd) or UMFPACK (!spd).
bool suitesparse_available(bool spd) noexcept;
/// "OpenBLAS 0.3.21, 2 threads" or "an unknown BLAS": what the factorization's dense blocks ran on.
std::string blas_description();

class suitesparse_factors {
 public:
  /// Factors A (CHOLMOD where spd, else UMFPACK), in the given ordering. ok() false: CHOLMOD met
  /// a pivot that is not positive (bad_column() says where), or UMFPACK found A singular.
  suitesparse_factors(const csr_matrix<double, count_t>& a, bool spd, fill_ordering ordering);
  ~suitesparse_factors();
  suitesparse_factors(const suitesparse_factors&) = delete;
  suitesparse_factors& operator=(const suitesparse_factors&) = delete;

  bool ok() const noexcept;
  index_t bad_column() const noexcept;  // 1-based; 0 when ok or unknown
  /// x = A^-1 x (transposed: A^-T x), n entries; columns: k of them, one after another.
  void solve(double* x, bool transposed = false) const;
  void solve_columns(double* x, index_t k) const;
  std::string description() const;  // "CHOLMOD supernodal Cholesky (amd ordering, nnz(L) 9.2e6, ...)"

  struct impl;

 private:
  std::unique_ptr<impl> p_;
};

}  // namespace la::direct_detail
