// The AMG tests' shared checks: CG with one V-cycle as M^-1 (the iterations), and M^-1's
// symmetry, and M^-1 r from a GPU hierarchy. Header-only, for amg_test.cpp and amg_near_null_test.cpp.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <la/formats/elasticity.hpp>
#include <la/kernels/reference/pcg.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/device_precond.hpp>
#include "test_util.hpp"

namespace la::test {

/// CG with M^-1 r = apply(r, z), plain: the iterations to ||r|| <= 1e-8 ||b|| (b = A ones).
template <typename Apply>
long long amg_pcg_with(const csr_matrix<double>& a, const Apply& apply) {
  return reference::pcg_iterations(a, apply);
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
