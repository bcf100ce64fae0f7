// Row partitions for several GPUs (formats/partition.hpp), on the host: balance, the halo
// and its owners, the send lists against the receive lists, interior and boundary rows, and
// a distributed SpMV simulated part by part that must equal the global one exactly
// (integer-valued matrices, so every sum is exact whatever its order).
#include <numeric>
#include <random>

#include <la/formats/generate.hpp>
#include <la/formats/matrix_market.hpp>
#include <la/formats/partition.hpp>
#include <la/kernels/reference/spmv.hpp>
#include "test_util.hpp"

namespace la {
namespace {

/// A random n x m matrix with integer values in [-3, 3] \ {0}, about `per_row` entries a
/// row (some rows empty), not symmetric.
csr_matrix<double> random_integer(index_t n, index_t m, int per_row, std::mt19937& g) {
  std::uniform_int_distribution<index_t> col(0, m - 1);
  std::uniform_int_distribution<int> val(1, 3), sign(0, 1), len(0, 2 * per_row);
  std::vector<index_t> rp{0}, ci;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    std::vector<index_t> cols;
    const int k = i % 7 == 3 ? 0 : len(g);  // every seventh row empty
    for (int j = 0; j < k; ++j) cols.push_back(col(g));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (index_t c : cols) ci.push_back(c), v.push_back((sign(g) ? 1 : -1) * val(g));
    rp.push_back(static_cast<index_t>(ci.size()));
  }
  return csr_matrix<double>(n, m, std::move(rp), std::move(ci), std::move(v));
}

TEST(Partition, BalancedRowBlocksHandChecked) {
  // Row lengths 1, 1, 1, 1, 4, 4: 12 nonzeros; 2 parts cut at 6 -> after row 4 (prefix 4 < 6,
  // prefix 8 >= 6 at row 5); 3 parts at 4 and 8.
  const std::vector<index_t> rp{0, 1, 2, 3, 4, 8, 12};
  EXPECT_EQ(balanced_row_blocks(rp.data(), 6, 1), (std::vector<global_index>{0, 6}));
  EXPECT_EQ(balanced_row_blocks(rp.data(), 6, 2), (std::vector<global_index>{0, 5, 6}));
  EXPECT_EQ(balanced_row_blocks(rp.data(), 6, 3), (std::vector<global_index>{0, 4, 5, 6}));
  // More parts than rows: some parts are empty, the boundaries never go backwards.
  const auto many = balanced_row_blocks(rp.data(), 6, 9);
  EXPECT_EQ(many.front(), 0);
  EXPECT_EQ(many.back(), 6);
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
  // No nonzeros: split by rows.
  const std::vector<index_t> none(5, 0);
  EXPECT_EQ(balanced_row_blocks(none.data(), 4, 2), (std::vector<global_index>{0, 2, 4}));
  test::expect_throw_with<invalid_argument>([&] { balanced_row_blocks(rp.data(), 6, 0); }, {"at least 1"});
}

TEST(Partition, BlocksAreBalancedWithinOneRow) {
  // Each block's nonzeros are within the longest row of the ideal share.
  std::mt19937 g(1);
  for (int parts : {2, 3, 4, 7}) {
    const auto a = random_integer(1000, 1000, 6, g);
    const auto b = balanced_row_blocks(a.row_ptr().data(), a.rows(), parts);
    index_t longest = 0;
    for (index_t i = 0; i < a.rows(); ++i) longest = std::max(longest, a.row_ptr()[i + 1] - a.row_ptr()[i]);
    const double ideal = double(a.nnz()) / parts;
    for (int p = 0; p < parts; ++p) {
      const double nnz = a.row_ptr()[b[p + 1]] - a.row_ptr()[b[p]];
      EXPECT_LE(std::abs(nnz - ideal), longest + 1) << parts << " parts, part " << p;
    }
  }
}

/// The distributed SpMV, simulated: each part gathers its halo through the other parts'
/// send lists (what NCCL will carry), then multiplies its local matrix.
std::vector<double> distributed_spmv(const std::vector<matrix_part<double>>& parts, const std::vector<double>& x) {
  const int P = static_cast<int>(parts.size());
  std::vector<std::vector<double>> local(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    const halo_plan& h = parts[p].plan;
    local[p].assign(x.begin() + h.first_row, x.begin() + h.first_row + h.rows);
    local[p].resize(static_cast<std::size_t>(h.rows + h.halo_size()), std::numeric_limits<double>::quiet_NaN());
  }
  for (int p = 0; p < P; ++p)  // p sends to q
    for (int q = 0; q < P; ++q) {
      const halo_plan& s = parts[p].plan;
      const halo_plan& r = parts[q].plan;
      const index_t count = s.send_ptr[q + 1] - s.send_ptr[q];
      EXPECT_EQ(count, r.recv_ptr[p + 1] - r.recv_ptr[p]) << p << " -> " << q;
      for (index_t k = 0; k < count; ++k)
        local[q][r.rows + r.recv_ptr[p] + k] = local[p][s.send_idx[s.send_ptr[q] + k]];
    }
  std::vector<double> y;
  for (int p = 0; p < P; ++p) {
    std::vector<double> yp(static_cast<std::size_t>(parts[p].local.rows()));
    reference::spmv(1.0, parts[p].local, local[p], 0.0, yp);
    y.insert(y.end(), yp.begin(), yp.end());
  }
  return y;
}

TEST(Partition, DistributedSpmvEqualsTheGlobalOneAndTheListsAgree) {
  std::mt19937 g(2);
  std::vector<std::pair<std::string, csr_matrix<double>>> cases;
  cases.emplace_back("random 1000", random_integer(1000, 1000, 5, g));
  cases.emplace_back("random 33", random_integer(33, 33, 3, g));
  cases.emplace_back("random 1", random_integer(1, 1, 1, g));
  cases.emplace_back("poisson2d 31", poisson_2d<double>(31));
  cases.emplace_back("poisson3d 9", poisson_3d<double>(9));
  for (const auto& [name, a] : cases)
    for (int P : {1, 2, 3, 4, 8}) {
      SCOPED_TRACE(name + ", " + std::to_string(P) + " parts");
      const auto parts = partition_rows(a, P);
      ASSERT_EQ(parts.size(), static_cast<std::size_t>(P));
      global_index covered = 0;
      count_t nnz = 0;
      for (int p = 0; p < P; ++p) {
        const auto& part = parts[p];
        const halo_plan& h = part.plan;
        EXPECT_EQ(h.first_row, covered);
        covered += h.rows;
        nnz += part.local.nnz();
        // The halo: sorted, unique, never owned, each entry in its owner's receive range.
        EXPECT_TRUE(std::is_sorted(h.halo.begin(), h.halo.end()));
        EXPECT_EQ(std::adjacent_find(h.halo.begin(), h.halo.end()), h.halo.end());
        for (int q = 0; q < P; ++q)
          for (index_t k = h.recv_ptr[q]; k < h.recv_ptr[q + 1]; ++k) {
            EXPECT_NE(q, p);
            EXPECT_GE(h.halo[k], parts[q].plan.first_row);
            EXPECT_LT(h.halo[k], parts[q].plan.first_row + parts[q].plan.rows);
          }
        EXPECT_EQ(h.recv_ptr.back(), h.halo_size());
        // Interior rows touch no halo column; boundary rows do; together every row once.
        EXPECT_EQ(part.interior.size() + part.boundary.size(), static_cast<std::size_t>(h.rows));
        for (index_t i : part.interior)
          for (index_t k = part.local.row_ptr()[i]; k < part.local.row_ptr()[i + 1]; ++k)
            EXPECT_LT(part.local.col_idx()[k], h.rows);
        for (index_t i : part.boundary) EXPECT_GE(part.local.col_idx()[part.local.row_ptr()[i + 1] - 1], h.rows);
        // Send lists: local owned rows, as many as the destination receives.
        for (index_t s : h.send_idx) {
          EXPECT_GE(s, 0);
          EXPECT_LT(s, h.rows);
        }
      }
      EXPECT_EQ(covered, a.rows());
      EXPECT_EQ(nnz, a.nnz());
      // The distributed product, exact against the global one.
      std::vector<double> x(static_cast<std::size_t>(a.cols()));
      std::uniform_int_distribution<int> v(-5, 5);
      for (double& e : x) e = v(g);
      std::vector<double> want(static_cast<std::size_t>(a.rows()));
      reference::spmv(1.0, a, x, 0.0, want);
      EXPECT_EQ(distributed_spmv(parts, x), want);
    }
}

// A rectangular matrix's parts (an AMG prolongator's: rows split one way, the vector it
// multiplies another): the plan describes the vector's split, the local matrix has the part's
// rows, and the distributed product is exact.
TEST(Partition, RectangularPartsSplitRowsAndColumnsApart) {
  std::mt19937 g(5);
  for (auto [n, m] : {std::pair<index_t, index_t>{1000, 33}, {33, 1000}, {31, 1}, {1, 31}, {200, 200}}) {
    const auto a = random_integer(n, m, 4, g);
    for (int P : {1, 2, 3, 8}) {
      SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(m) + ", " + std::to_string(P) + " parts");
      const auto rb = balanced_row_blocks(a.row_ptr().data(), n, P);
      const auto cb = even_row_blocks(m, P);
      std::vector<matrix_part<double>> parts;
      for (int p = 0; p < P; ++p) {
        std::vector<index_t> ptr{0};
        std::vector<global_index> cols;
        std::vector<double> vals;
        for (global_index i = rb[p]; i < rb[p + 1]; ++i) {
          for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) cols.push_back(a.col_idx()[k]), vals.push_back(a.values()[k]);
          ptr.push_back(static_cast<index_t>(cols.size()));
        }
        parts.push_back(make_part<double, index_t>(p, rb, cb, m, ptr, cols, vals));
        EXPECT_EQ(parts[p].local.rows(), rb[p + 1] - rb[p]);
        EXPECT_EQ(parts[p].plan.first_row, cb[p]);
        EXPECT_EQ(parts[p].plan.rows, cb[p + 1] - cb[p]);
        EXPECT_EQ(parts[p].local.cols(), parts[p].plan.rows + parts[p].plan.halo_size());
        for (global_index c : parts[p].plan.halo) EXPECT_TRUE(c < cb[p] || c >= cb[p + 1]);
      }
      link_sends(parts);
      std::vector<double> x(static_cast<std::size_t>(m));
      std::uniform_int_distribution<int> v(-5, 5);
      for (double& e : x) e = v(g);
      std::vector<double> want(static_cast<std::size_t>(n));
      reference::spmv(1.0, a, x, 0.0, want);
      EXPECT_EQ(distributed_spmv(parts, x), want);
    }
  }
  test::expect_throw_with<invalid_argument>(
      [] { make_part<double, index_t>(0, {0, 1, 2}, {0, 2}, 2, {0, 0}, {}, {}); }, {"differ in parts (2 and 1)"});
}

TEST(Partition, APartBuiltFromItsOwnRowsEqualsThePartOfTheWholeMatrix) {
  // A generator can make part p's rows alone, with global columns; the part it gives equals
  // the one cut from the whole matrix.
  const auto a = poisson_2d<double>(20);
  const auto bounds = balanced_row_blocks(a.row_ptr().data(), a.rows(), 3);
  for (int p = 0; p < 3; ++p) {
    std::vector<index_t> ptr{0};
    std::vector<global_index> cols;
    std::vector<double> vals;
    for (global_index i = bounds[p]; i < bounds[p + 1]; ++i) {
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) cols.push_back(a.col_idx()[k]), vals.push_back(a.values()[k]);
      ptr.push_back(static_cast<index_t>(cols.size()));
    }
    const auto own = make_part<double, index_t>(p, bounds, a.cols(), ptr, cols, vals);
    const auto cut = make_part(a, p, bounds);
    EXPECT_TRUE(own.local == cut.local);
    EXPECT_EQ(own.plan.halo, cut.plan.halo);
    EXPECT_EQ(own.plan.recv_ptr, cut.plan.recv_ptr);
  }
  // Bad input: a column outside the matrix, a part number out of range, a short row_ptr.
  test::expect_throw_with<invalid_argument>(
      [&] { make_part<double, index_t>(0, bounds, a.cols(), {0, 1}, {a.cols()}, {1.0}); }, {"row_ptr has 2"});
  test::expect_throw_with<invalid_argument>([&] { make_part(a, 3, bounds); }, {"part 3 of 3"});
  std::vector<index_t> ptr(static_cast<std::size_t>(bounds[1] - bounds[0]) + 1, 0);
  ptr.back() = 1;
  test::expect_throw_with<invalid_argument>(
      [&] { make_part<double, index_t>(0, bounds, a.cols(), ptr, {a.cols() + 5}, {1.0}); }, {"outside [0, 400)"});
}

TEST(Partition, RealSystemOnFourPartsWithASymmetricPattern) {
  // bcsstk09 (structural, symmetric pattern): what p receives from q is exactly q's rows that
  // have a column in p's range, which is how a part generated on its own GPU can know its
  // send lists without the others' halos.
  const auto a = read_matrix_market_csr<double>(std::string(LA_DATA_DIR) + "/bcsstk09.mtx");
  const auto parts = partition_rows(a, 4);
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) {
      if (p == q) continue;
      const halo_plan& hp = parts[p].plan;
      const halo_plan& hq = parts[q].plan;
      std::vector<global_index> want;
      for (global_index c = hq.first_row; c < hq.first_row + hq.rows; ++c)
        for (index_t k = a.row_ptr()[c]; k < a.row_ptr()[c + 1]; ++k)
          if (a.col_idx()[k] >= hp.first_row && a.col_idx()[k] < hp.first_row + hp.rows) {
            want.push_back(c);
            break;
          }
      const std::vector<global_index> got(hp.halo.begin() + hp.recv_ptr[q], hp.halo.begin() + hp.recv_ptr[q + 1]);
      EXPECT_EQ(got, want) << p << " from " << q;
    }
}

TEST(Partition, GeneratedPartsAndSymmetricSendsMatchTheWholeMatrix) {
  // poisson_rows makes part p's rows alone (64-bit columns); the part equals the one cut
  // from poisson_2d / poisson_3d, and symmetric_sends, from that part alone, gives the send
  // lists link_sends derives from every part.
  for (int dims : {2, 3})
    for (int P : {1, 2, 3, 5}) {
      SCOPED_TRACE(std::to_string(dims) + "D, " + std::to_string(P) + " parts");
      const index_t n = dims == 2 ? 17 : 7;
      const auto a = dims == 2 ? poisson_2d<double>(n) : poisson_3d<double>(n);
      const auto bounds = even_row_blocks(a.rows(), P);
      EXPECT_EQ(bounds.back(), a.rows());
      std::vector<matrix_part<double>> cut;
      for (int p = 0; p < P; ++p) cut.push_back(make_part(a, p, bounds));
      link_sends(cut);
      for (int p = 0; p < P; ++p) {
        const auto rows = poisson_rows<double>(dims, n, bounds[p], bounds[p + 1]);
        auto own = make_part<double, std::int64_t>(p, bounds, a.cols(), rows.ptr, rows.cols, rows.vals);
        symmetric_sends(own, bounds);
        EXPECT_EQ(std::vector<index_t>(own.local.col_idx().begin(), own.local.col_idx().end()),
                  std::vector<index_t>(cut[p].local.col_idx().begin(), cut[p].local.col_idx().end()));
        EXPECT_EQ(own.local.values(), cut[p].local.values());
        EXPECT_EQ(own.plan.halo, cut[p].plan.halo);
        EXPECT_EQ(own.plan.send_ptr, cut[p].plan.send_ptr);
        EXPECT_EQ(own.plan.send_idx, cut[p].plan.send_idx);
      }
    }
  // Past 2^31 rows in all: the last rows of the 1300^3 grid (2.2e9 rows), columns beyond 32
  // bits, in the last part of a 4-way split.
  const global_index n = 1300, rows = n * n * n;
  const auto bounds = even_row_blocks(rows, 4);
  const global_index first = rows - 10;
  EXPECT_GE(first, bounds[3]);
  const auto g = poisson_rows<double>(3, n, first, rows);
  EXPECT_GT(g.cols.front(), global_index(1) << 31);
  EXPECT_EQ(g.cols.front(), first - n * n);  // the row one plane down
  test::expect_throw_with<invalid_argument>([&] { poisson_rows<double>(3, n, rows - 1, rows + 1); }, {"outside"});
}

TEST(PlaneSweep, EveryRowOnceAndAPlaneApartWithinATile) {
  // plane_sweep's order is a permutation of the range's rows (slots past its end are -1,
  // fewer than a plane); rows a plane apart come at most a tile apart, and a tile's rows in
  // one plane come in order, one after another (what keeps a warp's loads together). Plane
  // 0, a plane as large as the range, or tile 0 give the natural order.
  for (long long count : {0LL, 1LL, 31LL, 33LL, 1000LL, 1369LL * 5 + 7})
    for (long long plane : {0LL, 1LL, 40LL, 1369LL})
      for (long long tile : {0LL, 1LL, 32LL, 96LL, 1369LL, 5000LL}) {
        SCOPED_TRACE(std::to_string(count) + " rows, plane " + std::to_string(plane) + ", tile " + std::to_string(tile));
        const plane_sweep s = plane_sweep::of(count, plane, tile);
        const bool natural = plane == 0 || tile == 0 || plane >= count;
        EXPECT_EQ(s.plane == 0, natural);
        std::vector<long long> at(static_cast<std::size_t>(count), -1);
        long long holes = 0;
        for (long long k = 0; k < s.slots(); ++k) {
          const long long r = s.row(k);
          if (natural) ASSERT_EQ(r, k);
          if (r < 0) {
            ++holes;
            continue;
          }
          ASSERT_LT(r, count);
          ASSERT_EQ(at[static_cast<std::size_t>(r)], -1) << "row " << r << " twice";
          at[static_cast<std::size_t>(r)] = k;
        }
        EXPECT_EQ(s.slots() - holes, count);
        if (natural) continue;
        EXPECT_LT(holes, plane);
        for (long long r = 0; r < count; ++r) {
          ASSERT_GE(at[static_cast<std::size_t>(r)], 0) << "row " << r << " never comes";
          if (r + plane < count) EXPECT_LE(at[static_cast<std::size_t>(r + plane)] - at[static_cast<std::size_t>(r)], s.tile);
          if (r + 1 < count && (r + 1) % plane % s.tile != 0)
            EXPECT_EQ(at[static_cast<std::size_t>(r + 1)], at[static_cast<std::size_t>(r)] + 1) << "row " << r;
        }
      }
  test::expect_throw_with<invalid_argument>([] { plane_sweep::of(-1, 4, 2); }, {"negative"});
}

TEST(Partition, PoissonPlanFromTheStencilEqualsThePlanOfTheRows) {
  // poisson_plan finds the halo, receive ranges, send lists and boundary rows from the
  // stencil alone (what the GPU generator uses); they equal what make_part and
  // symmetric_sends find in the part's rows, also for parts thinner than one grid plane
  // (P = 11 on 7^3 rows: 31 rows a part, a plane is 49) and for uneven bounds.
  for (int dims : {2, 3})
    for (int P : {1, 2, 3, 11}) {
      const global_index n = dims == 2 ? 13 : 7;
      const global_index rows = dims == 2 ? n * n : n * n * n;
      for (bool uneven : {false, true}) {
        SCOPED_TRACE(std::to_string(dims) + "D, " + std::to_string(P) + " parts" + (uneven ? ", uneven" : ""));
        auto bounds = even_row_blocks(rows, P);
        if (uneven && P > 1) bounds[1] = 1;  // a one-row part first
        for (int p = 0; p < P; ++p) {
          const auto g = poisson_rows<double>(dims, n, bounds[p], bounds[p + 1]);
          auto part = make_part<double, std::int64_t>(p, bounds, rows, g.ptr, g.cols, g.vals);
          symmetric_sends(part, bounds);
          std::vector<index_t> boundary;
          const halo_plan h = poisson_plan(dims, n, bounds, p, &boundary);
          EXPECT_EQ(h.first_row, part.plan.first_row);
          EXPECT_EQ(h.rows, part.plan.rows);
          EXPECT_EQ(h.halo, part.plan.halo);
          EXPECT_EQ(h.recv_ptr, part.plan.recv_ptr);
          EXPECT_EQ(h.send_ptr, part.plan.send_ptr);
          EXPECT_EQ(h.send_idx, part.plan.send_idx);
          EXPECT_EQ(boundary, part.boundary);
        }
      }
    }
  test::expect_throw_with<invalid_argument>([] { poisson_plan(3, 4, {0, 30, 64}, 2); }, {"part 2 of 2"});
  test::expect_throw_with<invalid_argument>([] { poisson_plan(3, 4, {0, 30, 63}, 0); }, {"bounds"});
}

}  // namespace
}  // namespace la
