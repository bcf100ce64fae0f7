// The partitioned AMG (issue 70, several GPUs), on the host. The partitioned build: no
// aggregate crosses a block, P = 1 is the unpartitioned hierarchy bit for bit, CG's
// iterations stay near the unpartitioned ones. The Galerkin product block by block sums to
// the coarse operator. The cycle as a team of ranks runs it (partitioned_cycle.hpp): equal to
// the hierarchy's cycle to rounding for 1 to 8 ranks, V, W and F cycles, both smoothers and
// every gather level; CG takes the same iterations with it; reruns are bit-identical; the
// values it exchanges are exactly what the halo plans predict. The setup as the ranks run it,
// each from its own rows (partitioned_setup.hpp), builds those same parts.
#include <cmath>
#include <memory>
#include <random>

#include <la/formats/elasticity.hpp>
#include <la/formats/generate.hpp>
#include <la/solvers/amg/partitioned.hpp>
#include <la/solvers/amg/partitioned_cycle.hpp>
#include <la/solvers/amg/partitioned_setup.hpp>
#include "amg_util.hpp"
#include "test_util.hpp"

namespace la {
namespace {

using test::with_coordinates;

// The partitioned build's oracle (issue 70, several GPUs): with the nodes in P contiguous
// blocks no aggregate crosses a block on any level, P = 1 is the unpartitioned hierarchy bit
// for bit, and CG's iterations stay within 10% (or 1) of the unpartitioned ones on 3D Poisson
// and 3D elasticity for P = 2, 4 and 8 (measured: bench/history/amg-systems.md).
TEST(AmgPartitions, AggregatesStayInTheirBlocks) {
  const auto p3 = poisson_3d<double>(24);
  const auto el = elasticity<double>(3, 12);
  for (int sys = 0; sys < 2; ++sys) {
    const csr_matrix<double>& a = sys ? el.a : p3;
    amg_options o = sys ? with_coordinates(el) : amg_options{};
    const host_amg whole(a, o);
    const long long base = test::amg_pcg(a, whole);
    o.partitions = 1;
    std::mt19937 g(4);
    const auto r = test::random_vector<double>(a.rows(), g);
    std::vector<double> z1, z2;
    host_amg(a, o).apply(r, z1), whole.apply(r, z2);
    EXPECT_EQ(z1, z2);
    for (int parts : {2, 4, 8}) {
      o.partitions = parts;
      const host_amg h(a, o);
      EXPECT_EQ(h.aggregates_across_parts(), 0) << parts << " blocks";
      ASSERT_FALSE(h.parts(0).empty());
      EXPECT_EQ(h.parts(0).back(), parts - 1);
      const long long its = test::amg_pcg(a, h);
      std::printf("%s, %d blocks: %lld iterations (one block: %lld); %s\n", sys ? "elasticity3d:12" : "poisson3d:24", parts,
                  its, base, h.describe().c_str());
      ASSERT_GT(its, 0);
      EXPECT_LE(its, std::max(base + 1, base * 11 / 10)) << parts << " blocks";
    }
  }
  amg_options bad;
  bad.partitions = 0;
  EXPECT_THROW(host_amg(p3, bad), invalid_argument);
}

}  // namespace
}  // namespace la


namespace la {
namespace {

/// Level l's rows' blocks: its nodes' blocks spread to their unknowns.
std::vector<int> row_blocks(const host_amg& h, index_t l) {
  const amg::level& f = h.at(l);
  std::vector<int> out(static_cast<std::size_t>(f.a.rows()));
  for (index_t i = 0; i < f.a.rows(); ++i) out[i] = h.parts(l)[f.node_of.empty() ? i : f.node_of[i]];
  return out;
}

// The Galerkin product block by block (what a distributed build computes: each block's
// P_q^T (A_q P), halo rows of P received, other blocks' coarse rows sent) sums to the
// hierarchy's coarse operator, on 3D Poisson and 3D elasticity in 4 blocks; every block
// receives halo rows and only blocks that border another send.
TEST(AmgPartitions, GalerkinByBlocksIsTheCoarseOperator) {
  const auto el = elasticity<double>(3, 10);
  const auto p3 = poisson_3d<double>(20);
  for (int sys = 0; sys < 2; ++sys) {
    amg_options o = sys ? with_coordinates(el) : amg_options{};
    o.partitions = 4;
    const host_amg h(sys ? el.a : p3, o);
    ASSERT_GE(h.levels(), 2);
    const amg::level& f = h.at(0);
    const auto g = amg::galerkin_by_blocks(f.a, f.p, row_blocks(h, 0), row_blocks(h, 1), 4);
    const auto& want = h.at(1).a;
    ASSERT_EQ(g.ac.rows(), want.rows());
    ASSERT_EQ(g.ac.row_ptr(), want.row_ptr());
    ASSERT_EQ(g.ac.col_idx(), want.col_idx());
    double err = 0, mag = 0;
    for (std::size_t k = 0; k < want.values().size(); ++k)
      err = std::max(err, std::abs(g.ac.values()[k] - want.values()[k])), mag = std::max(mag, std::abs(want.values()[k]));
    EXPECT_LE(err, 1e-13 * mag);
    for (int q = 0; q < 4; ++q) {
      EXPECT_GT(g.halo_rows[q], 0) << "block " << q;
      std::printf("%s block %d: %lld halo rows of P received, %lld coarse rows (%lld entries) sent\n", sys ? "elasticity3d:10" : "poisson3d:20",
                  q, g.halo_rows[q], g.sent_rows[q], g.sent_entries[q]);
    }
  }
}

}  // namespace
}  // namespace la

namespace la {
namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// The ranks' cycle against the whole hierarchy's, on 3D Poisson and 3D elasticity (rigid-body
// modes), for 1, 2, 3, 4 and 8 ranks, the V-cycle with Chebyshev smoothing, the W-cycle, the
// F-cycle with L1-Jacobi, and three gather levels (every level but the coarsest split, from
// level 1 gathered, everything gathered). Each halo slot is poisoned before its exchange, so
// a slot no rank sent to would make z NaN.
TEST(PartitionedCycle, EqualsTheHierarchysCycle) {
  const auto p3 = poisson_3d<double>(20);
  const auto el = elasticity<double>(3, 10);
  for (int sys = 0; sys < 2; ++sys) {
    const csr_matrix<double>& a = sys ? el.a : p3;
    std::mt19937 g(7 + sys);
    const auto r = test::random_vector<double>(a.rows(), g);
    for (int variant = 0; variant < 3; ++variant) {
      amg_options o = sys ? with_coordinates(el) : amg_options{};
      o.coarse_size = 50;  // a few levels even on these small systems
      if (variant == 1) o.cycle = amg_cycle::w;
      if (variant == 2) o.cycle = amg_cycle::f, o.smoother = amg_smoother::l1_jacobi, o.smoother_degree = 2;
      for (int ranks : {1, 2, 3, 4, 8}) {
        o.partitions = ranks;
        const host_amg h(a, o);
        ASSERT_GE(h.levels(), 3) << h.describe();
        std::vector<double> want;
        h.apply(r, want);
        for (index_t gather : {index_t(0), h.rows(1), a.rows()}) {
          const amg::partitioned_cycle pc(h, gather);
          EXPECT_EQ(pc.distributed_levels(), gather == 0 ? h.levels() - 1 : gather == h.rows(1) ? 1 : 0);
          std::vector<double> z, again;
          pc.apply(r, z);
          pc.apply(r, again);
          ASSERT_EQ(z.size(), want.size());
          double err = 0;
          for (std::size_t i = 0; i < z.size(); ++i) err = std::max(err, std::abs(z[i] - want[i]));
          EXPECT_LE(err, 1e-12 * max_abs(want)) << (sys ? "elasticity" : "poisson") << ", variant " << variant << ", "
                                                << ranks << " ranks, gather " << gather;
          EXPECT_EQ(z, again) << "a rerun differs";
          if (pc.distributed_levels() == 0) EXPECT_EQ(z, want) << "everything gathered is the hierarchy's own cycle";
          const auto& t = pc.traffic();
          for (index_t l = 0; l < pc.distributed_levels(); ++l) {
            if (ranks == 1) EXPECT_EQ(t.values[l], 0);
            else EXPECT_GT(t.values[l], 0) << "level " << l;
          }
          if (pc.distributed_levels() > 0 && variant == 0) EXPECT_EQ(t.gathered, h.rows(pc.distributed_levels()));
          if (pc.distributed_levels() > 0) EXPECT_GE(t.gathered, h.rows(pc.distributed_levels()));
        }
      }
    }
  }
}

// What one V-cycle sends, level by level, is what the halo plans say: 2d + 1 exchanges of A's
// halo (d Chebyshev products before and after, and the residual), one of R's and, where the
// next level is split too, one of P's. Printed for 3D Poisson 24^3 in 4 ranks.
TEST(PartitionedCycle, TrafficIsWhatThePlansSay) {
  const auto a = poisson_3d<double>(24);
  amg_options o;
  o.coarse_size = 50;
  o.partitions = 4;
  const host_amg h(a, o);
  const amg::partitioned_cycle pc(h, 0);
  ASSERT_GE(pc.distributed_levels(), 2);
  std::vector<double> z;
  pc.apply(std::vector<double>(a.rows(), 1.0), z);
  for (index_t l = 0; l < pc.distributed_levels(); ++l) {
    long long ha = 0, hr = 0, hp = 0, msgs = 0;
    for (const auto& rk : pc.at(l).ranks) {
      ha += rk.a.plan.halo_size(), hr += rk.r.plan.halo_size(), hp += rk.p.plan.halo_size();
      for (int q = 0; q < pc.ranks(); ++q) msgs += rk.a.plan.recv_ptr[q + 1] > rk.a.plan.recv_ptr[q];
    }
    const bool next_split = l + 1 < pc.distributed_levels();
    EXPECT_EQ(pc.traffic().values[l], (2 * o.smoother_degree + 1) * ha + hr + (next_split ? hp : 0)) << "level " << l;
    std::printf("poisson3d:24, 4 ranks, level %d (%d rows): A's halo %lld values (%lld messages), R's %lld, P's %lld; "
                "a cycle sends %lld values in %lld messages\n", int(l), int(h.rows(l)), ha, msgs, hr, hp,
                pc.traffic().values[l], pc.traffic().messages[l]);
  }
  std::printf("gathered onto every rank: %lld values (level %d, %d rows)\n", pc.traffic().gathered,
              int(pc.distributed_levels()), int(h.rows(pc.distributed_levels())));
}

// CG with the ranks' cycle takes the iterations it takes with the hierarchy's (the two differ
// by rounding alone), on 3D Poisson and 3D elasticity in 4 ranks.
TEST(PartitionedCycle, CgTakesTheSameIterations) {
  const auto p3 = poisson_3d<double>(24);
  const auto el = elasticity<double>(3, 12);
  for (int sys = 0; sys < 2; ++sys) {
    const csr_matrix<double>& a = sys ? el.a : p3;
    amg_options o = sys ? with_coordinates(el) : amg_options{};
    o.partitions = 4;
    const host_amg h(a, o);
    const amg::partitioned_cycle pc(h, 200);
    ASSERT_GE(pc.distributed_levels(), 1);
    const long long whole = test::amg_pcg(a, h);
    const long long split =
        test::amg_pcg_with(a, [&](const std::vector<double>& r, std::vector<double>& z) { pc.apply(r, z); });
    ASSERT_GT(whole, 0);
    EXPECT_EQ(split, whole) << (sys ? "elasticity3d:12" : "poisson3d:24");
  }
}

// Slices of the wrong count or size are refused with the rank named.
TEST(PartitionedCycle, RefusesWrongSlices) {
  const auto a = poisson_3d<double>(12);
  amg_options o;
  o.coarse_size = 50;
  o.partitions = 3;
  const host_amg h(a, o);
  const amg::partitioned_cycle pc(h, 0);
  amg::partitioned_cycle::slices r = pc.split(std::vector<double>(a.rows(), 1.0)), z;
  ASSERT_EQ(r.size(), 3u);
  r[1].pop_back();
  test::expect_throw_with<invalid_argument>([&] { pc.apply(r, z); }, {"rank 1's slice"});
  r.pop_back();
  test::expect_throw_with<invalid_argument>([&] { pc.apply(r, z); }, {"a slice for every rank"});
  test::expect_throw_with<invalid_argument>([&] { pc.split(std::vector<double>(5, 1.0)); }, {"1728 rows"});
}

// max |x - y| over max |y|, and the patterns equal.
double part_difference(const matrix_part<double, count_t>& x, const matrix_part<double, count_t>& y) {
  EXPECT_EQ(x.local.rows(), y.local.rows());
  EXPECT_EQ(x.local.cols(), y.local.cols());
  EXPECT_EQ(x.local.row_ptr(), y.local.row_ptr());
  EXPECT_EQ(x.local.col_idx(), y.local.col_idx());
  EXPECT_EQ(x.plan.halo, y.plan.halo);
  EXPECT_EQ(x.plan.recv_ptr, y.plan.recv_ptr);
  EXPECT_EQ(x.plan.send_idx, y.plan.send_idx);
  EXPECT_EQ(x.plan.send_ptr, y.plan.send_ptr);
  if (x.local.values().size() != y.local.values().size()) return 1;
  double err = 0, mag = 0;
  for (std::size_t k = 0; k < y.local.values().size(); ++k)
    err = std::max(err, std::abs(x.local.values()[k] - y.local.values()[k])), mag = std::max(mag, std::abs(y.local.values()[k]));
  return mag > 0 ? err / mag : err;
}

// The setup the ranks run from their own rows (aggregation on their own nodes, T's and P's
// halo rows received, the Galerkin rows summed at their owners, R's entries sent to theirs)
// builds the parts partitioned_cycle cuts from the whole hierarchy: the same levels, bounds,
// patterns and plans, values to rounding; on 3D Poisson and 3D elasticity, 1 to 5 ranks.
// Nothing is sent with one rank; with more, every level sends T's, P's and the coarse rows.
TEST(PartitionedSetup, BuildsThePartsOfTheWholeHierarchy) {
  const auto p3 = poisson_3d<double>(16);
  const auto el = elasticity<double>(3, 9);
  for (int sys = 0; sys < 2; ++sys) {
    const csr_matrix<double>& a = sys ? el.a : p3;
    for (int ranks : {1, 2, 3, 5}) {
      SCOPED_TRACE(std::string(sys ? "elasticity3d:9" : "poisson3d:16") + ", " + std::to_string(ranks) + " ranks");
      amg_options o = sys ? with_coordinates(el) : amg_options{};
      o.coarse_size = 40;
      o.partitions = ranks;
      const host_amg h(a, o);
      const amg::partitioned_cycle pc(h, 0);
      const amg::partitioned_setup ps(a, o);
      ASSERT_EQ(static_cast<index_t>(ps.levels().size()), pc.distributed_levels()) << h.describe();
      ASSERT_GE(ps.levels().size(), 2u);
      for (std::size_t l = 0; l < ps.levels().size(); ++l) {
        const auto& got = ps.levels()[l];
        const auto& want = pc.at(static_cast<index_t>(l));
        ASSERT_EQ(got.bounds, want.bounds) << "level " << l;
        ASSERT_EQ(got.coarse_bounds, want.coarse_bounds) << "level " << l;
        EXPECT_NEAR(got.lambda, want.lambda, 1e-12 * want.lambda);
        for (int q = 0; q < ranks; ++q) {
          const auto& g = got.ranks[q];
          const auto& w = want.ranks[q];
          if (l == 0) EXPECT_EQ(part_difference(g.a, w.a), 0.0) << "the finest A is the input";
          else EXPECT_LE(part_difference(g.a, w.a), 1e-12) << "level " << l << " rank " << q << ": A";
          EXPECT_LE(part_difference(g.p, w.p), 1e-12) << "level " << l << " rank " << q << ": P";
          EXPECT_LE(part_difference(g.r, w.r), 1e-12) << "level " << l << " rank " << q << ": R";
          ASSERT_EQ(g.dinv.size(), w.dinv.size());
          for (std::size_t i = 0; i < g.dinv.size(); ++i) ASSERT_NEAR(g.dinv[i], w.dinv[i], 1e-12 * std::abs(w.dinv[i]));
        }
        const auto& t = ps.traffic()[l];
        if (ranks == 1) EXPECT_EQ(t.t_rows + t.p_rows + t.coarse_rows + t.r_entries + t.power, 0);
        else EXPECT_TRUE(t.t_rows > 0 && t.p_rows > 0 && t.coarse_rows > 0 && t.r_entries > 0 && t.power > 0) << "level " << l;
      }
      // The coarsest rows, gathered, are the hierarchy's coarsest operator.
      const auto& want = h.at(h.levels() - 1).a;
      index_t row = 0;
      for (const auto& rr : ps.coarsest())
        for (index_t i = 0; i < rr.rows(); ++i, ++row) {
          ASSERT_EQ(rr.ptr[i + 1] - rr.ptr[i], want.row_ptr()[row + 1] - want.row_ptr()[row]) << "coarsest row " << row;
          for (count_t e = rr.ptr[i], f = want.row_ptr()[row]; e < rr.ptr[i + 1]; ++e, ++f) {
            ASSERT_EQ(rr.col[e], want.col_idx()[f]);
            ASSERT_NEAR(rr.val[e], want.values()[f], 1e-12 * std::abs(want.values()[f]) + 1e-14);
          }
        }
      EXPECT_EQ(row, want.rows());
      if (ranks == 3)
        for (std::size_t l = 0; l < ps.traffic().size(); ++l) {
          const auto& t = ps.traffic()[l];
          std::printf("level %zu (%lld rows): the setup sends %lld power-iteration values, %lld entries of T's rows, %lld of P's, "
                      "%lld of coarse rows, %lld of R's\n", l, static_cast<long long>(ps.levels()[l].bounds.back()), t.power,
                      t.t_rows, t.p_rows, t.coarse_rows, t.r_entries);
        }
    }
  }
}

}  // namespace
}  // namespace la
