// The AMG tests' shared checks: CG with one V-cycle as M^-1 (the iterations), and M^-1's
// symmetry, and M^-1 r from a GPU hierarchy. Header-only, for amg_test.cpp and amg_near_null_test.cpp.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <la/formats/elasticity.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/device_precond.hpp>
#include "test_util.hpp"

namespace la::test {

/// CG with M^-1 r = apply(r, z), plain: the iterations to ||r|| <= 1e-8 ||b|| (b = A ones).
template <typename Apply>
long long amg_pcg_with(const csr_matrix<double>& a, const Apply& apply) {
  const std::size_t n = a.rows();
  std::vector<double> x(n, 0), b(n, 0), r, z, p, q(n);
  reference::spmv(1.0, a, std::vector<double>(n, 1.0), 0.0, b);
  r = b;
  apply(r, z);
  p = z;
  double rz = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) rz += r[i] * z[i], bb += b[i] * b[i];
  for (long long it = 1; it <= 500; ++it) {
    reference::spmv(1.0, a, p, 0.0, q);
    double pq = 0;
    for (std::size_t i = 0; i < n; ++i) pq += p[i] * q[i];
    const double alpha = rz / pq;
    double rr = 0;
    for (std::size_t i = 0; i < n; ++i) x[i] += alpha * p[i], r[i] -= alpha * q[i], rr += r[i] * r[i];
    if (std::sqrt(rr) <= 1e-8 * std::sqrt(bb)) return it;
    apply(r, z);
    double rz2 = 0;
    for (std::size_t i = 0; i < n; ++i) rz2 += r[i] * z[i];
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz2 / rz * p[i];
    rz = rz2;
  }
  return -1;
}
/// CG with M^-1 = one cycle of m.
inline long long amg_pcg(const csr_matrix<double>& a, const host_amg& m) {
  return amg_pcg_with(a, [&](const std::vector<double>& r, std::vector<double>& z) { m.apply(r, z); });
}

/// AMG options with an elasticity system's node coordinates (its rigid-body modes).
inline amg_options with_coordinates(const elasticity_system<double>& s) {
  amg_options o;
  o.coordinates = std::make_shared<const std::vector<double>>(s.coordinates);
  o.coordinate_dim = s.dim;
  return o;
}

/// M^-1 symmetric: z1'r2 = z2'r1 for two random vectors, to 1e-12 of the products' magnitude.
inline void expect_symmetric(const csr_matrix<double>& a, const host_amg& m, unsigned seed) {
  std::mt19937 g(seed);
  const auto r1 = test::random_vector<double>(a.rows(), g), r2 = test::random_vector<double>(a.rows(), g);
  std::vector<double> z1, z2;
  m.apply(r1, z1), m.apply(r2, z2);
  double s1 = 0, s2 = 0, mag = 0;
  for (index_t i = 0; i < a.rows(); ++i) s1 += z1[i] * r2[i], s2 += z2[i] * r1[i], mag += std::abs(z1[i] * r2[i]);
  EXPECT_NEAR(s1, s2, 1e-12 * mag);
}

/// z = M^-1 r with the GPU hierarchy, z poisoned with NaN first.
template <typename T>
inline std::vector<T> gpu_apply(context& ctx, const device_preconditioner<T>& m, const std::vector<T>& r) {
  const auto dr = to_device(ctx, r);
  device_vector<T> dz = to_device(ctx, std::vector<T>(r.size(), std::numeric_limits<T>::quiet_NaN()));
  m.apply(dr.data(), dz.data(), ctx.stream());
  return to_host(ctx, dz);
}

}  // namespace la::test
