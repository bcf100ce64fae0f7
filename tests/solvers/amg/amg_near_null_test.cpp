// Smoothed aggregation's pieces for systems of PDEs on the host (issue 70): strength and
// aggregation on nodes, and the tentative prolongator from the rigid-body modes by a QR per
// aggregate. T^T T = I where every aggregate has full rank, T (coarse B) = B exactly, a
// deficient aggregate counted; on 3D elasticity every node's unknowns share an aggregate.
#include <cmath>

#include <la/formats/elasticity.hpp>
#include <la/solvers/amg/near_null.hpp>
#include "test_util.hpp"

namespace la {
namespace {

TEST(AmgNearNull, NodeAggregatesAndTheTentativeProlongatorOfRigidBodyModes) {
  for (int d : {2, 3}) {
    const auto s = elasticity<double>(d, d == 2 ? 12 : 6);
    const index_t n = s.a.rows(), nodes = n / d;
    const auto g = amg::block_strength(s.a, d, 0.08);
    ASSERT_EQ(g.rows(), nodes);
    for (index_t I = 0; I < nodes; ++I)
      for (count_t p = g.ptr[I]; p < g.ptr[I + 1]; ++p) ASSERT_NE(g.idx[p], I);
    const amg::aggregates ag = amg::aggregate(g);
    ASSERT_GT(ag.count, 1);
    ASSERT_LT(ag.count, nodes);
    const auto of = amg::unknowns_of(ag, d);
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(of[i], of[i - i % d]) << "a node's unknowns share its aggregate";
    const int k = d == 2 ? 3 : 6;
    const auto b = rigid_body_modes(s.coordinates, d);
    const auto t = amg::tentative(of, ag.count, b, k);
    ASSERT_EQ(t.t.rows(), n);
    ASSERT_EQ(t.t.cols(), ag.count * k);
    EXPECT_EQ(t.deficient, 0) << d << "D";
    // T coarse_B = B.
    const std::size_t nc = static_cast<std::size_t>(ag.count) * k;
    double err = 0;
    for (int c = 0; c < k; ++c)
      for (index_t i = 0; i < n; ++i) {
        double v = 0;
        for (count_t p = t.t.row_ptr()[i]; p < t.t.row_ptr()[i + 1]; ++p) v += t.t.values()[p] * t.coarse_b[c * nc + t.t.col_idx()[p]];
        err = std::max(err, std::abs(v - b[c * std::size_t(n) + i]));
      }
    EXPECT_LE(err, 1e-13) << d << "D";
    // T^T T = I: columns orthonormal (each row's entries lie in its own aggregate's columns).
    std::vector<double> gram(nc * k, 0.0);  // (column, column of the same aggregate)
    for (index_t i = 0; i < n; ++i)
      for (count_t p = t.t.row_ptr()[i]; p < t.t.row_ptr()[i + 1]; ++p)
        for (count_t q = t.t.row_ptr()[i]; q < t.t.row_ptr()[i + 1]; ++q)
          gram[t.t.col_idx()[p] * std::size_t(k) + t.t.col_idx()[q] % k] += t.t.values()[p] * t.t.values()[q];
    for (std::size_t c = 0; c < nc; ++c)
      for (int e = 0; e < k; ++e) EXPECT_NEAR(gram[c * k + e], c % k == std::size_t(e) ? 1.0 : 0.0, 1e-13) << c << " " << e;
  }
  // An aggregate of one 2D node (2 unknowns) cannot hold 3 modes: one zero column, counted.
  const std::vector<index_t> of = {0, 0, 1, 1, 1, 1};
  const std::vector<double> coords = {0, 0, 1, 0, 1, 1};
  const auto t = amg::tentative(of, 2, rigid_body_modes(coords, 2), 3);
  EXPECT_EQ(t.deficient, 1);
  EXPECT_THROW(amg::tentative(of, 2, std::vector<double>(5), 3), invalid_argument);
}

}  // namespace
}  // namespace la
