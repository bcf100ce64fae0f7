// The linear elasticity generator (issue 70): Q1 elements in 2D and 3D. The floating
// structure's rigid-body modes are its null space; a uniform strain leaves the interior rows
// at zero (the patch test); A = A^T exactly; the clamped system is SPD (CG converges) with the
// expected sizes and stencil.
#include <cmath>

#include <la/formats/convert.hpp>
#include <la/formats/detail/gen_spec.hpp>
#include <la/formats/elasticity.hpp>
#include <la/kernels/reference/spmv.hpp>
#include <la/solvers/method.hpp>
#include "test_util.hpp"

namespace la {
namespace {

std::vector<double> times(const csr_matrix<double>& a, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(a.rows()), 0.0);
  reference::spmv(1.0, a, x, 0.0, y);
  return y;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

TEST(Elasticity, RigidBodyModesAreTheFloatingNullSpace) {
  for (int d : {2, 3}) {
    const auto s = elasticity<double>(d, d == 2 ? 6 : 4, 0.3, false);
    const index_t nodes = d == 2 ? 36 : 64;
    ASSERT_EQ(s.a.rows(), nodes * d);
    ASSERT_EQ(s.coordinates.size(), static_cast<std::size_t>(nodes * d));
    EXPECT_EQ(elasticity_coordinates(d, d == 2 ? 6 : 4, false), s.coordinates) << "the coordinates alone";
    const auto b = rigid_body_modes(s.coordinates, d);
    const int k = d == 2 ? 3 : 6;
    ASSERT_EQ(b.size(), static_cast<std::size_t>(nodes * d * k));
    double amax = 0;
    for (double v : s.a.values()) amax = std::max(amax, std::abs(v));
    for (int mode = 0; mode < k; ++mode) {
      const std::vector<double> r(b.begin() + mode * nodes * d, b.begin() + (mode + 1) * nodes * d);
      EXPECT_GT(max_abs(r), 0.5) << d << "D mode " << mode;
      EXPECT_LE(max_abs(times(s.a, r)), 1e-13 * amax) << d << "D mode " << mode;
    }
    // The patch test: u = (x, 0[, 0]) is a uniform strain; the rows of interior nodes vanish.
    std::vector<double> u(static_cast<std::size_t>(nodes * d), 0.0);
    for (index_t p = 0; p < nodes; ++p) u[p * d] = s.coordinates[p * d];
    const auto f = times(s.a, u);
    const index_t side = d == 2 ? 6 : 4;
    for (index_t p = 0; p < nodes; ++p) {
      bool interior = true;
      for (int c = 0; c < d; ++c) {
        const double x = s.coordinates[p * d + c];
        interior = interior && x > 0.5 / (side - 1) && x < 1 - 0.5 / (side - 1);
      }
      if (interior)
        for (int c = 0; c < d; ++c) EXPECT_LE(std::abs(f[p * d + c]), 1e-13 * amax) << d << "D node " << p;
    }
    // Not a mode: a stretch leaves a nonzero residual (the test can fail).
    EXPECT_GT(max_abs(f), 1e-3 * amax);
  }
}

TEST(Elasticity, ClampedIsSymmetricPositiveDefiniteWithTheExpectedStencil) {
  for (int d : {2, 3}) {
    const index_t N = d == 2 ? 9 : 5;
    const auto s = elasticity<double>(d, N, 0.3);
    EXPECT_EQ(elasticity_coordinates(d, N), s.coordinates) << "the clamped coordinates alone";
    const index_t free_nodes = d == 2 ? N * N - N : N * N * N - N * N;
    ASSERT_EQ(s.a.rows(), free_nodes * d);
    const auto t = to_csc(s.a);  // A^T by rows
    EXPECT_EQ(t.col_ptr(), s.a.row_ptr());
    EXPECT_EQ(t.row_idx(), s.a.col_idx());
    EXPECT_EQ(t.values(), s.a.values()) << "A = A^T exactly";
    index_t widest = 0;
    for (index_t i = 0; i < s.a.rows(); ++i) widest = std::max<index_t>(widest, s.a.row_ptr()[i + 1] - s.a.row_ptr()[i]);
    EXPECT_EQ(widest, d == 2 ? 18 : 81);  // an interior node's 3^d neighbours, d unknowns each
    std::vector<double> x;
    const auto b = times(s.a, std::vector<double>(static_cast<std::size_t>(s.a.rows()), 1.0));
    cg_options o;
    o.rtol = 1e-10;
    const auto r = solve_host(s.a, b, x, o);
    ASSERT_EQ(r.status, solve_status::converged) << r.message;
    for (double v : x) ASSERT_NEAR(v, 1.0, 1e-6);
  }
  EXPECT_THROW(elasticity<double>(4, 5), invalid_argument);
  EXPECT_THROW(elasticity<double>(2, 1), invalid_argument);
  EXPECT_THROW(elasticity<double>(3, 5, 0.5), invalid_argument);
}

TEST(Elasticity, GeneratedByName) {
  for (const char* spec : {"elasticity2d:7", "elasticity3d:5"}) {
    const auto g = cli::parse_gen(spec);
    const auto a = cli::generate<double, index_t>(g);
    EXPECT_EQ(a.rows(), g.rows) << spec;
    EXPECT_LE(a.nnz(), g.max_nnz) << spec;
  }
  EXPECT_THROW(cli::parse_gen("elasticity3d:257"), invalid_argument);
  EXPECT_THROW(cli::parse_gen("elasticity2d:1"), invalid_argument);
  EXPECT_THROW(cli::parse_gen("elasticity2d:5:1"), invalid_argument);
}

}  // namespace
}  // namespace la
