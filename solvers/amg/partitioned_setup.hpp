// The setup of a partitioned AMG hierarchy as a team of P ranks runs it, each from its own
// rows of A alone (issue 70, several GPUs): the host oracle of a distributed setup, with the
// distributed Galerkin product, and what each of its steps sends.
//
// Rank q holds a contiguous block of the nodes (host_amg's blocks for
// amg_options::partitions = P) and their rows of A, with global columns. A level:
//   diagonal, L1 sums    its own rows.
//   lambda               Gershgorin's bound, a maximum over the ranks; the power iteration's
//                        products exchange the iterate's halo, its dots are every rank's
//                        partials summed in rank order.
//   aggregation          on its own nodes alone: a partitioned build's strength graph has no
//                        edge between blocks, so no exchange; each node keyed by its global
//                        index (aggregate's key_base), so the aggregates are the whole graph's.
//   tentative T          a QR an aggregate of its rows of B; its coarse unknowns numbered
//                        after the lower ranks' (their counts all-gathered).
//   P = (I - w D^-1 A) T its rows, with T's rows at A's halo columns received.
//   A P                  its rows, with P's rows at A's halo columns received.
//   P^T (A P)            its fine rows' contributions to every coarse row they touch; the rows
//                        other ranks own are sent to them and summed there, in rank order.
//   R = P^T              its coarse rows, with the entries of P other ranks hold in those
//                        columns received.
// The result is partitioned_cycle's layout (partitioned_level) for every level but the
// coarsest, whose rows are kept for the caller to gather; it equals the parts partitioned_cycle
// cuts from host_amg's hierarchy: aggregates and T bit for bit, the rest to rounding (the dots
// and the Galerkin sums are added in another order). Ranks run one after another; what a
// rank receives is counted, per level and step, as the traffic of a GPU team's setup.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <la/formats/partition.hpp>
#include <la/solvers/amg/hierarchy.hpp>
#include <la/solvers/amg/partitioned_cycle.hpp>

namespace la::amg {

/// A rank's rows of a matrix, with global columns (sorted within each row).
struct rank_rows {
  global_index first = 0;
  std::vector<count_t> ptr{0};
  std::vector<global_index> col;
  std::vector<double> val;
  index_t rows() const { return static_cast<index_t>(ptr.size()) - 1; }
  void add_row(const std::map<global_index, double>& row) {
    for (const auto& [c, v] : row) col.push_back(c), val.push_back(v);
    ptr.push_back(static_cast<count_t>(col.size()));
  }
};

/// What one level's setup sent between ranks, in values (matrix entries count one each).
struct setup_traffic {
  long long power = 0;        // the power iteration's halo values
  long long t_rows = 0;       // entries of T's rows at A's halo columns
  long long p_rows = 0;       // entries of P's rows at A's halo columns
  long long coarse_rows = 0;  // entries of P^T (A P) sent to the coarse rows' owners
  long long r_entries = 0;    // entries of P sent to the owners of their columns (R's rows)
};

class partitioned_setup {
 public:
  /// Each rank takes its block of a's rows; every later step uses only what the rank holds or
  /// receives. opt as for host_amg (opt.partitions ranks).
  template <typename T, typename O>
  partitioned_setup(const csr_matrix<T, O>& a, const amg_options& opt) : opt_(opt) {
    LA_EXPECTS(a.rows() == a.cols(), "amg: the matrix must be square");
    check_options(opt);
    ranks_ = std::max(1, opt.partitions);
    near_null_space ns = resolve_near_null(opt, a.rows());
    const index_t n = a.rows(), nodes = ns.node_of.empty() ? n : ns.nodes;
    // host_amg's blocks (node_block), each from its first node (an empty block where the next
    // starts); a block's unknowns are contiguous (nodes are node-major).
    std::vector<global_index> node_bounds(static_cast<std::size_t>(ranks_) + 1, nodes), bounds(node_bounds.size(), n);
    for (index_t i = nodes; i-- > 0;) node_bounds[node_block(i, ranks_, nodes)] = i;
    for (int q = ranks_; q-- > 0;) node_bounds[q] = std::min(node_bounds[q], node_bounds[q + 1]);
    for (int q = 0, i = 0; q <= ranks_; ++q) {
      while (i < n && (ns.node_of.empty() ? i : ns.node_of[i]) < node_bounds[q]) ++i;
      bounds[q] = i;
    }
    k_ = ns.k;
    for (int q = 0; q < ranks_; ++q) {
      rank_state s;
      s.a.first = bounds[q];
      for (global_index i = bounds[q]; i < bounds[q + 1]; ++i) {
        for (O e = a.row_ptr()[i]; e < a.row_ptr()[i + 1]; ++e)
          s.a.col.push_back(a.col_idx()[e]), s.a.val.push_back(static_cast<double>(a.values()[e]));
        s.a.ptr.push_back(static_cast<count_t>(s.a.col.size()));
      }
      for (int c = 0; c < k_; ++c)
        s.b.insert(s.b.end(), ns.b.begin() + c * std::size_t(n) + bounds[q], ns.b.begin() + c * std::size_t(n) + bounds[q + 1]);
      if (!ns.node_of.empty())
        for (global_index i = bounds[q]; i < bounds[q + 1]; ++i) s.node_of.push_back(ns.node_of[i] - static_cast<index_t>(node_bounds[q]));
      s.nodes = static_cast<index_t>(node_bounds[q + 1] - node_bounds[q]);
      s.node_first = static_cast<index_t>(node_bounds[q]);
      ranks_state_.push_back(std::move(s));
    }
    bounds_ = bounds;
    build();
  }

  /// The levels with a prolongator, in partitioned_cycle's layout.
  const std::vector<partitioned_level>& levels() const { return levels_; }
  /// Per level: what its setup sent.
  const std::vector<setup_traffic>& traffic() const { return traffic_; }
  /// The coarsest level's rows, rank by rank (what a team gathers for its coarse solve).
  std::vector<rank_rows> coarsest() const {
    std::vector<rank_rows> out;
    for (const auto& s : ranks_state_) out.push_back(s.a);
    return out;
  }

 private:
  struct rank_state {
    rank_rows a;                  // this level's rows
    std::vector<double> b;        // B's rows (rows x k, column-major)
    std::vector<index_t> node_of; // unknown -> node, local (empty: each unknown its node)
    index_t nodes = 0, node_first = 0;
  };
  std::vector<rank_state> ranks_state_;

  int owner(const std::vector<global_index>& b, global_index g) const {
    return static_cast<int>(std::upper_bound(b.begin(), b.end(), g) - b.begin()) - 1;
  }
  /// Row g of m (the ranks' rows split by b) where it lives, and whether rank q receives it.
  struct row_ref {
    const global_index* col;
    const double* val;
    count_t len;
    bool received;
  };
  row_ref row(const std::vector<rank_rows>& m, const std::vector<global_index>& b, global_index g, int q) const {
    const int o = owner(b, g);
    const rank_rows& r = m[o];
    const index_t i = static_cast<index_t>(g - r.first);
    const count_t s = r.ptr[i];
    return {r.col.data() + s, r.val.data() + s, r.ptr[i + 1] - s, o != q};
  }
  /// Rank q's rows of x times y (y's rows wherever they live; the entries of the rows it
  /// receives counted in `sent`, each row once).
  rank_rows product(const rank_rows& x, const std::vector<rank_rows>& y, const std::vector<global_index>& yb, int q,
                    long long& sent) const {
    rank_rows out;
    out.first = x.first;
    std::map<global_index, double> acc;
    std::set<global_index> received;
    for (index_t i = 0; i < x.rows(); ++i) {
      acc.clear();
      for (count_t e = x.ptr[i]; e < x.ptr[i + 1]; ++e) {
        const row_ref r = row(y, yb, x.col[e], q);
        if (r.received && received.insert(x.col[e]).second) sent += r.len;
        for (count_t f = 0; f < r.len; ++f) acc[r.col[f]] += x.val[e] * r.val[f];
      }
      out.add_row(acc);
    }
    return out;
  }

  void build() {
    for (std::size_t l = 0;; ++l) {
      const global_index n = bounds_.back();
      setup_traffic tr;
      // Diagonals and L1 sums of each rank's rows.
      std::vector<std::vector<double>> dinv(ranks_state_.size()), l1inv(ranks_state_.size());
      double gersh = 0;
      for (int q = 0; q < ranks_; ++q) {
        const rank_rows& a = ranks_state_[q].a;
        for (index_t i = 0; i < a.rows(); ++i) {
          double d = 0, s = 0;
          for (count_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e) {
            if (a.col[e] == a.first + i && a.val[e] != 0) d = 1 / a.val[e];
            s += std::abs(a.val[e]);
          }
          LA_EXPECTS(d != 0 && std::isfinite(d), amg_diagonal_message(l, a.first + i));
          dinv[q].push_back(d), l1inv[q].push_back(1 / s);
          gersh = std::max(gersh, s * std::abs(d));
        }
      }
      double lambda = gersh;
      if (opt_.power_iterations > 0) lambda = std::min(lambda, 1.1 * power(dinv, tr.power));
      if (n <= opt_.coarse_size || static_cast<int>(levels_.size()) + 1 >= opt_.max_levels) break;
      const double theta = opt_.strength * std::pow(0.5, static_cast<double>(l));
      // Aggregates and T, each rank on its own nodes.
      std::vector<tentative_prolongator> tp(ranks_state_.size());
      std::vector<index_t> counts(ranks_state_.size());
      index_t total_count = 0, total_cols = 0;
      for (int q = 0; q < ranks_; ++q) {
        const rank_state& s = ranks_state_[q];
        const rank_rows& a = s.a;
        std::vector<count_t> ptr{0};
        std::vector<index_t> idx;
        std::vector<double> val;
        for (index_t i = 0; i < a.rows(); ++i) {  // the block's own columns: the within-block strength graph
          for (count_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e)
            if (a.col[e] >= a.first && a.col[e] < a.first + a.rows())
              idx.push_back(static_cast<index_t>(a.col[e] - a.first)), val.push_back(a.val[e]);
          ptr.push_back(static_cast<count_t>(idx.size()));
        }
        const csr_matrix<double, count_t> own(detail::trusted, a.rows(), a.rows(), std::move(ptr), std::move(idx), std::move(val));
        const aggregates ag = aggregate(s.node_of.empty() ? strength_of(own, theta) : block_strength(own, s.node_of, s.nodes, theta),
                                        opt_.aggregation_distance, s.node_first);
        counts[q] = ag.count;
        total_count += ag.count;
        tp[q] = tentative(s.node_of.empty() ? ag.of : unknowns_of(ag, s.node_of), ag.count, s.b, k_);
        total_cols += tp[q].t.cols();
      }
      if (total_count == 0 || total_cols == 0 || total_cols > static_cast<index_t>(n) * 9 / 10) break;  // stalled
      std::vector<global_index> cb(static_cast<std::size_t>(ranks_) + 1, 0), nb(cb);
      for (int q = 0; q < ranks_; ++q) cb[q + 1] = cb[q] + tp[q].t.cols(), nb[q + 1] = nb[q] + counts[q];
      // T's rows with global coarse columns.
      std::vector<rank_rows> t(ranks_state_.size());
      for (int q = 0; q < ranks_; ++q) {
        t[q].first = bounds_[q];
        const auto& tq = tp[q].t;
        for (index_t i = 0; i < tq.rows(); ++i) {
          for (count_t e = tq.row_ptr()[i]; e < tq.row_ptr()[i + 1]; ++e) t[q].col.push_back(cb[q] + tq.col_idx()[e]), t[q].val.push_back(tq.values()[e]);
          t[q].ptr.push_back(static_cast<count_t>(t[q].col.size()));
        }
      }
      // P = (I - omega D^-1 A) T, then A P, rank by rank.
      const double omega = 4.0 / (3.0 * lambda);
      std::vector<rank_rows> p(ranks_state_.size()), ap(ranks_state_.size());
      for (int q = 0; q < ranks_; ++q) {
        rank_rows s = ranks_state_[q].a;
        for (index_t i = 0; i < s.rows(); ++i)
          for (count_t e = s.ptr[i]; e < s.ptr[i + 1]; ++e)
            s.val[e] = (s.col[e] == s.first + i ? 1.0 : 0.0) - omega * dinv[q][i] * s.val[e];
        p[q] = product(s, t, bounds_, q, tr.t_rows);
      }
      std::vector<rank_rows> a_now;
      for (const auto& s : ranks_state_) a_now.push_back(s.a);
      for (int q = 0; q < ranks_; ++q) ap[q] = product(a_now[q], p, bounds_, q, tr.p_rows);
      // P^T (A P): each rank's contributions to the coarse rows its P touches, summed at their
      // owners in rank order; and R's rows, P's entries sent to their columns' owners.
      std::vector<std::map<global_index, std::map<global_index, double>>> coarse(ranks_state_.size());
      std::vector<std::map<global_index, std::map<global_index, double>>> r(ranks_state_.size());
      for (int q = 0; q < ranks_; ++q) {
        std::map<global_index, std::map<global_index, double>> mine;
        for (index_t i = 0; i < p[q].rows(); ++i)
          for (count_t e = p[q].ptr[i]; e < p[q].ptr[i + 1]; ++e) {
            const global_index c = p[q].col[e];
            auto& row = mine[c];
            for (count_t f = ap[q].ptr[i]; f < ap[q].ptr[i + 1]; ++f) row[ap[q].col[f]] += p[q].val[e] * ap[q].val[f];
            const int o = owner(cb, c);
            r[o][c][bounds_[q] + i] = p[q].val[e];
            if (o != q) ++tr.r_entries;
          }
        for (auto& [c, row] : mine) {
          const int o = owner(cb, c);
          if (o != q) tr.coarse_rows += static_cast<long long>(row.size());
          auto& dst = coarse[o][c];
          for (const auto& [c2, v] : row) dst[c2] += v;
        }
      }
      // The level's parts, in partitioned_cycle's layout.
      partitioned_level pl;
      pl.bounds = bounds_, pl.coarse_bounds = cb, pl.lambda = lambda;
      std::vector<matrix_part<double, count_t>> pa, pp, pr;
      for (int q = 0; q < ranks_; ++q) {
        pa.push_back(make_part<double, count_t>(q, bounds_, bounds_, n, ranks_state_[q].a.ptr, ranks_state_[q].a.col, ranks_state_[q].a.val));
        pp.push_back(make_part<double, count_t>(q, bounds_, cb, cb.back(), p[q].ptr, p[q].col, p[q].val));
        rank_rows rq;
        rq.first = cb[q];
        for (global_index c = cb[q]; c < cb[q + 1]; ++c) rq.add_row(r[q][c]);
        pr.push_back(make_part<double, count_t>(q, cb, bounds_, n, rq.ptr, rq.col, rq.val));
      }
      link_sends(pa), link_sends(pp), link_sends(pr);
      for (int q = 0; q < ranks_; ++q) {
        rank_level rl;
        rl.a = std::move(pa[q]), rl.p = std::move(pp[q]), rl.r = std::move(pr[q]);
        rl.dinv = std::move(dinv[q]), rl.l1inv = std::move(l1inv[q]);
        pl.ranks.push_back(std::move(rl));
      }
      levels_.push_back(std::move(pl));
      traffic_.push_back(tr);
      // The next level: each rank's coarse rows, B and nodes (host_amg keeps a node map where
      // an aggregate has more than one coarse unknown anywhere).
      const bool systems = total_cols != total_count;
      for (int q = 0; q < ranks_; ++q) {
        rank_state c;
        c.a.first = cb[q];
        for (global_index row = cb[q]; row < cb[q + 1]; ++row) c.a.add_row(coarse[q][row]);
        c.b = std::move(tp[q].coarse_b);
        if (systems) c.node_of = std::move(tp[q].coarse_node);
        c.nodes = counts[q], c.node_first = static_cast<index_t>(nb[q]);
        ranks_state_[q] = std::move(c);
      }
      bounds_ = cb;
    }
  }

  /// lambda_max(D^-1 A) by opt.power_iterations steps, as host_amg's power_lambda: the
  /// iterate's halo exchanged for each product, the dots summed rank by rank.
  double power(const std::vector<std::vector<double>>& dinv, long long& sent) const {
    std::vector<std::vector<double>> v(ranks_state_.size()), w(ranks_state_.size());
    for (int q = 0; q < ranks_; ++q)
      for (index_t i = 0; i < ranks_state_[q].a.rows(); ++i) v[q].push_back(node_hash(static_cast<index_t>(bounds_[q] + i)) / 2147483648.0 - 1);
    std::vector<std::set<global_index>> halo(ranks_state_.size());
    for (int q = 0; q < ranks_; ++q)  // each rank's halo, received once a product
      for (global_index c : ranks_state_[q].a.col)
        if (owner(bounds_, c) != q) halo[q].insert(c);
    double lambda = 0;
    for (int step = 0; step < opt_.power_iterations; ++step) {
      double vv = 0, vw = 0;
      for (int q = 0; q < ranks_; ++q) {
        const rank_rows& a = ranks_state_[q].a;
        sent += static_cast<long long>(halo[q].size());
        w[q].assign(static_cast<std::size_t>(a.rows()), 0.0);
        double pvv = 0, pvw = 0;
        for (index_t i = 0; i < a.rows(); ++i) {
          double t = 0;
          for (count_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e) {
            const int o = owner(bounds_, a.col[e]);
            t += a.val[e] * v[o][static_cast<std::size_t>(a.col[e] - bounds_[o])];
          }
          w[q][i] = dinv[q][i] * t;
          pvv += v[q][i] * v[q][i], pvw += v[q][i] * w[q][i];
        }
        vv += pvv, vw += pvw;
      }
      lambda = vw / vv;
      double ww = 0;
      for (int q = 0; q < ranks_; ++q) {
        double p = 0;
        for (double x : w[q]) p += x * x;
        ww += p;
      }
      const double s2 = ww > 0 ? 1 / std::sqrt(ww) : 0;
      for (int q = 0; q < ranks_; ++q)
        for (std::size_t i = 0; i < w[q].size(); ++i) v[q][i] = w[q][i] * s2;
    }
    return lambda;
  }

  amg_options opt_;
  int ranks_ = 1, k_ = 1;
  std::vector<global_index> bounds_;
  std::vector<partitioned_level> levels_;
  std::vector<setup_traffic> traffic_;
};

}  // namespace la::amg
