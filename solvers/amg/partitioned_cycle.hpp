// The cycle of a partitioned AMG hierarchy as a team of P ranks runs it (issue 70, several
// GPUs): the host oracle a GPU team's cycle is compared with, the parts each rank uploads,
// and what the ranks exchange.
//
// host_amg built with amg_options::partitions = P keeps every aggregate within one of P
// contiguous blocks and numbers each block's aggregates together, so every level's unknowns
// fall in P contiguous ranges: rank q owns range q of every level. Of each distributed
// level l, rank q holds
//   its rows of A_l, with owned columns then the halo of level l's vector (partition.hpp);
//   its rows of P_l, whose columns are level l + 1's vector (owned, then halo);
//   its rows of R_l = P_l^T, the coarse rows it owns, whose columns are level l's vector;
//   its rows' inverse diagonal and L1 row sums; lambda, the same on every rank.
// Every product is then a halo exchange (each rank packs the values the others' halos list,
// the send lists of link_sends, and each writes what it receives in place behind its owned
// values) and a local SpMV. Storing R by its own rows makes the restriction a forward
// exchange like the others: no partial sums are sent to their owners.
//
// Small levels are gathered: from the first level of at most `gather_rows` rows down (the
// coarsest always; by default 64K rows a rank), every rank holds the whole level. The restricted vector onto it is
// all-gathered (the ranges are contiguous, so that is their concatenation in rank order),
// every rank runs the rest of the cycle on it (host_amg::cycle_at; on a GPU, the same levels
// as one GPU's hierarchy) with the same bits on every rank, and the prolongation back reads
// its halo from the whole vector. Those levels cost no exchange, and their latency (a few
// kernels a level) is paid once instead of once a rank-to-rank message.
//
// The ranks run here one after another. Each exchange goes through the send lists and the
// receive ranges exactly as the messages would (halo slots are poisoned with NaN first, so a
// value no one sent shows), and the values sent are counted: traffic() is what one cycle of
// the NCCL team sends. The result equals host_amg::apply to rounding: a row sums its owned
// columns first, then the halo, where the whole matrix sums in column order.
#pragma once

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <la/formats/partition.hpp>
#include <la/solvers/amg/hierarchy.hpp>

namespace la::amg {

/// One rank's share of one distributed level.
struct rank_level {
  matrix_part<double, count_t> a, p, r;  // its rows of A_l, P_l and R_l (r: its coarse rows)
  std::vector<double> dinv, l1inv;       // of its rows of A_l
};

/// One level split over the ranks.
struct partitioned_level {
  std::vector<global_index> bounds, coarse_bounds;  // rank q's unknowns of this level and of the next
  std::vector<rank_level> ranks;
  double lambda = 1;
};

/// What one cycle sent between ranks.
struct cycle_traffic {
  std::vector<long long> values;    // per distributed level: values sent rank to rank (all ranks' sends)
  std::vector<long long> messages;  // per distributed level: rank-to-rank messages that carried values
  long long gathered = 0;           // values all-gathered onto the gathered levels (each rank's own once)
};

/// Level l's unknowns' ranks (its nodes' blocks, spread to their unknowns) as P + 1 bounds.
inline std::vector<global_index> level_bounds(const host_amg& h, index_t l, int parts) {
  const level& f = h.at(l);
  const index_t n = f.a.rows();
  std::vector<global_index> b(static_cast<std::size_t>(parts) + 1, n);
  b[0] = 0;
  const std::vector<int>& part = h.parts(l);
  if (part.empty()) return b;  // one block: everything on rank 0
  int last = 0;
  for (index_t i = 0; i < n; ++i) {
    const int q = part[f.node_of.empty() ? i : f.node_of[i]];
    LA_EXPECTS(q >= last && q < parts, "amg: level " + std::to_string(l) + "'s unknown " + std::to_string(i) +
                                           " is in block " + std::to_string(q) + " after block " + std::to_string(last) +
                                           "; a partitioned hierarchy keeps each block's unknowns together");
    for (; last < q; ++last) b[last + 1] = i;
  }
  return b;
}

class partitioned_cycle {
 public:
  /// By default a level is gathered once each rank would hold at most this many of its rows:
  /// a GPU's kernels over fewer rows than that take about their launch time (64K rows of 27
  /// entries are about 20 MB, 10 us at 2 TB/s), so splitting such a level saves nothing and
  /// adds a message each product (3D Poisson 256^3 on 2 GPUs: levels of 16.8M and 1.5M rows
  /// split, from 70K on gathered).
  static constexpr index_t default_rows_per_rank = 65536;
  using slices = std::vector<std::vector<double>>;  // one vector a rank

  /// The ranks' parts of h (built with amg_options::partitions = P: P ranks; h must outlive
  /// this, whose gathered levels are h's). Levels of at most gather_rows rows (negative:
  /// default_rows_per_rank a rank) are gathered, and the coarsest always.
  explicit partitioned_cycle(const host_amg& h, index_t gather_rows = -1) : h_(h) {
    ranks_ = std::max(1, h.options().partitions);
    if (gather_rows < 0) gather_rows = static_cast<index_t>(std::min<long long>(max_index, 1LL * default_rows_per_rank * ranks_));
    bounds0_ = level_bounds(h, 0, ranks_);
    gathered_ = 0;
    while (gathered_ + 1 < h.levels() && h.rows(gathered_) > gather_rows) ++gathered_;
    for (index_t l = 0; l < gathered_; ++l) {
      partitioned_level pl;
      pl.bounds = level_bounds(h, l, ranks_);
      pl.coarse_bounds = level_bounds(h, l + 1, ranks_);
      pl.lambda = h.at(l).lambda;
      const level& f = h.at(l);
      std::vector<matrix_part<double, count_t>> a, p, r;
      for (int q = 0; q < ranks_; ++q) {
        a.push_back(rows_of(f.a, q, pl.bounds, pl.bounds));
        p.push_back(rows_of(f.p, q, pl.bounds, pl.coarse_bounds));
        r.push_back(rows_of(f.r, q, pl.coarse_bounds, pl.bounds));
      }
      link_sends(a), link_sends(p), link_sends(r);
      for (int q = 0; q < ranks_; ++q) {
        rank_level rl;
        rl.a = std::move(a[q]), rl.p = std::move(p[q]), rl.r = std::move(r[q]);
        rl.dinv.assign(f.dinv.begin() + pl.bounds[q], f.dinv.begin() + pl.bounds[q + 1]);
        rl.l1inv.assign(f.l1inv.begin() + pl.bounds[q], f.l1inv.begin() + pl.bounds[q + 1]);
        pl.ranks.push_back(std::move(rl));
      }
      levels_.push_back(std::move(pl));
    }
  }

  int ranks() const { return ranks_; }
  /// The levels split over the ranks (0 .. distributed_levels() - 1); the rest are gathered.
  index_t distributed_levels() const { return gathered_; }
  const partitioned_level& at(index_t l) const { return levels_[l]; }
  /// What the last apply sent.
  const cycle_traffic& traffic() const { return traffic_; }

  /// Each rank's slice of a whole vector of level 0, and back.
  slices split(const std::vector<double>& v) const {
    const std::vector<global_index>& b = bounds0_;
    LA_EXPECTS(v.size() == static_cast<std::size_t>(b.back()), "amg: a vector of the finest level's " + std::to_string(b.back()) + " rows");
    slices out;
    for (std::size_t q = 0; q + 1 < b.size(); ++q) out.emplace_back(v.begin() + b[q], v.begin() + b[q + 1]);
    return out;
  }
  static std::vector<double> join(const slices& s) {
    std::vector<double> out;
    for (const auto& v : s) out.insert(out.end(), v.begin(), v.end());
    return out;
  }

  /// z = M^-1 r, each rank's slice of them: one cycle from z = 0.
  void apply(const slices& r, slices& z) const {
    traffic_ = {};
    traffic_.values.assign(static_cast<std::size_t>(gathered_), 0);
    traffic_.messages.assign(static_cast<std::size_t>(gathered_), 0);
    LA_EXPECTS(r.size() == static_cast<std::size_t>(ranks_), "amg: a slice for every rank");
    z.clear();
    for (int q = 0; q < ranks_; ++q) {
      LA_EXPECTS(r[q].size() == static_cast<std::size_t>(bounds0_[q + 1] - bounds0_[q]),
                 "amg: rank " + std::to_string(q) + "'s slice has " + std::to_string(r[q].size()) + " values, not its rows'");
      z.emplace_back(r[q].size(), 0.0);
    }
    if (gathered_ == 0) {  // the finest level is small: every rank runs the whole cycle
      std::vector<double> whole;
      h_.apply(join(r), whole);
      z = split(whole);
      return;
    }
    cycle(0, r, z, h_.options().cycle);
  }
  /// The same on whole vectors (split, applied, joined).
  void apply(const std::vector<double>& r, std::vector<double>& z) const {
    slices zs;
    apply(split(r), zs);
    z = join(zs);
  }

 private:
  /// Rank q's rows of m (rows split by row_bounds, columns by col_bounds).
  static matrix_part<double, count_t> rows_of(const csr_matrix<double, count_t>& m, int q, const std::vector<global_index>& row_bounds,
                                              const std::vector<global_index>& col_bounds) {
    const count_t b = m.row_ptr()[row_bounds[q]];
    std::vector<count_t> ptr;
    for (global_index i = row_bounds[q]; i <= row_bounds[q + 1]; ++i) ptr.push_back(m.row_ptr()[i] - b);
    const count_t e = m.row_ptr()[row_bounds[q + 1]];
    std::vector<global_index> cols(m.col_idx().begin() + b, m.col_idx().begin() + e);
    std::vector<double> vals(m.values().begin() + b, m.values().begin() + e);
    return make_part<double, count_t>(q, row_bounds, col_bounds, m.cols(), ptr, cols, vals);
  }

  using part_of = const matrix_part<double, count_t>& (*)(const rank_level&);
  static const matrix_part<double, count_t>& part_a(const rank_level& r) { return r.a; }
  static const matrix_part<double, count_t>& part_p(const rank_level& r) { return r.p; }
  static const matrix_part<double, count_t>& part_r(const rank_level& r) { return r.r; }

  /// Every rank's owned values with its halo behind them, the halo filled as the messages
  /// would fill it: rank q packs owned[q] at its send list to p, p writes them at its
  /// receive range from q. Counted in level l's traffic.
  slices exchange(index_t l, part_of which, const slices& owned) const {
    const auto& ranks = levels_[l].ranks;
    slices ext(static_cast<std::size_t>(ranks_));
    for (int p = 0; p < ranks_; ++p) {
      const halo_plan& h = which(ranks[p]).plan;
      LA_EXPECTS(owned[p].size() == static_cast<std::size_t>(h.rows), "amg: rank " + std::to_string(p) + "'s vector has " +
                                                                          std::to_string(owned[p].size()) + " values, not " +
                                                                          std::to_string(h.rows));
      ext[p] = owned[p];
      ext[p].resize(static_cast<std::size_t>(h.rows + h.halo_size()), std::numeric_limits<double>::quiet_NaN());
    }
    for (int q = 0; q < ranks_; ++q) {
      const halo_plan& s = which(ranks[q]).plan;
      for (int p = 0; p < ranks_; ++p) {
        if (p == q || s.send_ptr[p] == s.send_ptr[p + 1]) continue;
        const halo_plan& d = which(ranks[p]).plan;
        LA_EXPECTS(d.recv_ptr[q + 1] - d.recv_ptr[q] == s.send_ptr[p + 1] - s.send_ptr[p],
                   "amg: rank " + std::to_string(q) + " sends rank " + std::to_string(p) + " other than it receives");
        for (index_t k = s.send_ptr[p]; k < s.send_ptr[p + 1]; ++k)
          ext[p][static_cast<std::size_t>(d.rows + d.recv_ptr[q] + (k - s.send_ptr[p]))] = owned[q][s.send_idx[k]];
        traffic_.values[l] += s.send_ptr[p + 1] - s.send_ptr[p];
        ++traffic_.messages[l];
      }
    }
    return ext;
  }
  /// Each rank's halo read from the whole vector (a gathered level's, on every rank).
  slices from_whole(index_t l, part_of which, const std::vector<double>& whole) const {
    slices ext(static_cast<std::size_t>(ranks_));
    for (int p = 0; p < ranks_; ++p) {
      const halo_plan& h = which(levels_[l].ranks[p]).plan;
      ext[p].assign(whole.begin() + h.first_row, whole.begin() + h.first_row + h.rows);
      for (global_index c : h.halo) ext[p].push_back(whole[c]);
    }
    return ext;
  }
  /// y = M x on every rank, x with its halo (ext).
  static slices multiply(const std::vector<rank_level>& ranks, part_of which, const slices& ext) {
    slices y(ranks.size());
    for (std::size_t p = 0; p < ranks.size(); ++p) {
      const auto& m = which(ranks[p]).local;
      y[p].resize(static_cast<std::size_t>(m.rows()));
      for (index_t i = 0; i < m.rows(); ++i) {
        double t = 0;
        for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) t += m.values()[k] * ext[p][m.col_idx()[k]];
        y[p][i] = t;
      }
    }
    return y;
  }
  /// r = b - A x on level l (x's halo exchanged first).
  slices residual(index_t l, const slices& b, const slices& x) const {
    const slices ext = exchange(l, part_a, x);
    slices r(b);
    for (int p = 0; p < ranks_; ++p) {
      const auto& m = levels_[l].ranks[p].a.local;
      for (index_t i = 0; i < m.rows(); ++i) {
        double t = b[p][i];
        for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) t -= m.values()[k] * ext[p][m.col_idx()[k]];
        r[p][i] = t;
      }
    }
    return r;
  }
  /// host_amg's smoother, rank by rank.
  void smooth(index_t l, const slices& b, slices& x) const {
    const partitioned_level& pl = levels_[l];
    const amg_options& opt = h_.options();
    if (opt.smoother == amg_smoother::l1_jacobi) {
      for (int k = 0; k < opt.smoother_degree; ++k) {
        const slices r = residual(l, b, x);
        for (int p = 0; p < ranks_; ++p)
          for (std::size_t i = 0; i < x[p].size(); ++i) x[p][i] += pl.ranks[p].l1inv[i] * r[p][i];
      }
      return;
    }
    const double hi = pl.lambda, lo = 0.1 * pl.lambda;
    const double theta = (hi + lo) / 2, delta = (hi - lo) / 2, sigma = theta / delta;
    slices r = residual(l, b, x), d(r);
    for (int p = 0; p < ranks_; ++p)
      for (std::size_t i = 0; i < d[p].size(); ++i) d[p][i] = pl.ranks[p].dinv[i] * r[p][i] / theta;
    double rho = 1 / sigma;
    for (int k = 0; k < opt.smoother_degree; ++k) {
      for (int p = 0; p < ranks_; ++p)
        for (std::size_t i = 0; i < x[p].size(); ++i) x[p][i] += d[p][i];
      if (k + 1 == opt.smoother_degree) break;
      const slices ad = multiply(pl.ranks, part_a, exchange(l, part_a, d));
      const double rho_new = 1 / (2 * sigma - rho);
      for (int p = 0; p < ranks_; ++p)
        for (std::size_t i = 0; i < d[p].size(); ++i) {
          r[p][i] -= ad[p][i];
          d[p][i] = rho_new * rho * d[p][i] + 2 * rho_new / delta * pl.ranks[p].dinv[i] * r[p][i];
        }
      rho = rho_new;
    }
  }

  /// host_amg's cycle on the distributed levels; the gathered ones are host_amg's own.
  void cycle(index_t l, const slices& b, slices& x, amg_cycle kind) const {
    const partitioned_level& pl = levels_[l];
    smooth(l, b, x);
    const slices bc = multiply(pl.ranks, part_r, exchange(l, part_r, residual(l, b, x)));
    const int visits = kind != amg_cycle::v && l + 2 < h_.levels() ? 2 : 1;
    auto next = [&](int v) { return kind == amg_cycle::f && v == 1 ? amg_cycle::v : kind; };
    slices e;
    if (l + 1 < gathered_) {
      slices xc;
      for (const auto& s : bc) xc.emplace_back(s.size(), 0.0);
      for (int v = 0; v < visits; ++v) cycle(l + 1, bc, xc, next(v));
      e = multiply(pl.ranks, part_p, exchange(l, part_p, xc));
    } else {  // the next level is gathered: all-gather its right-hand side, run it whole on every rank
      const std::vector<double> whole_b = join(bc);
      traffic_.gathered += static_cast<long long>(whole_b.size());
      std::vector<double> whole_x(whole_b.size(), 0.0);
      for (int v = 0; v < visits; ++v) h_.cycle_at(l + 1, whole_b, whole_x, next(v));
      e = multiply(pl.ranks, part_p, from_whole(l, part_p, whole_x));
    }
    for (int p = 0; p < ranks_; ++p)
      for (std::size_t i = 0; i < x[p].size(); ++i) x[p][i] += e[p][i];
    smooth(l, b, x);
  }

  const host_amg& h_;
  int ranks_ = 1;
  std::vector<global_index> bounds0_;  // the finest level's ranges
  index_t gathered_ = 0;
  std::vector<partitioned_level> levels_;
  mutable cycle_traffic traffic_;
};

}  // namespace la::amg
