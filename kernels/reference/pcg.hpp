// A plain preconditioned CG on the host, M^-1 given as a callable: the iteration count the
// AMG tests and amg_partition_bench compare preconditioners by (the same loop for both, so a
// test and a benchmark count alike). Not la's host solver (solvers/cg.hpp): no statuses, no
// safeguards, double only.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

#include <la/kernels/reference/spmv.hpp>

namespace la::reference {

/// CG on A x = b, b = A ones, from x = 0, with z = M^-1 r by apply(r, z): the iterations to
/// ||r|| <= rtol ||b|| (the recurrence's r), -1 past max_iterations; the last x into
/// *solution where given.
template <typename Apply>
long long pcg_iterations(const csr_matrix<double>& a, const Apply& apply, double rtol = 1e-8, long long max_iterations = 500,
                         std::vector<double>* solution = nullptr) {
  const std::size_t n = a.rows();
  std::vector<double> x(n, 0), b(n, 0), r, z, p, q(n);
  spmv(1.0, a, std::vector<double>(n, 1.0), 0.0, b);
  r = b;
  apply(r, z);
  p = z;
  double rz = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) rz += r[i] * z[i], bb += b[i] * b[i];
  for (long long it = 1; it <= max_iterations; ++it) {
    spmv(1.0, a, p, 0.0, q);
    double pq = 0;
    for (std::size_t i = 0; i < n; ++i) pq += p[i] * q[i];
    const double alpha = rz / pq;
    double rr = 0;
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i], r[i] -= alpha * q[i], rr += r[i] * r[i];
    if (std::sqrt(rr) <= rtol * std::sqrt(bb)) {
      if (solution) *solution = std::move(x);
      return it;
    }
    apply(r, z);
    double rz2 = 0;
    for (std::size_t i = 0; i < n; ++i) rz2 += r[i] * z[i];
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz2 / rz * p[i];
    rz = rz2;
  }
  if (solution) *solution = std::move(x);
  return -1;
}

}  // namespace la::reference
