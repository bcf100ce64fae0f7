// Smoothed-aggregation algebraic multigrid on the host: the plain oracle a GPU hierarchy is
// compared with. Setup as named phases (each timed): strength of connection and aggregation
// (aggregation.hpp, theta halved a level); the tentative prolongator T, which interpolates the
// level's near-null space B exactly (near_null.hpp: a QR of B an aggregate; for the constant
// vector alone B_i / ||B on the aggregate||, the next level's B those norms); the smoothed prolongator P = (I - omega D^-1 A) T with omega = 4 / (3 lambda),
// lambda = 1.1 times a power estimate of lambda_max(D^-1 A), capped by Gershgorin's bound; the
// Galerkin product A_c = P^T A P (reference::spgemm); levels until the coarse size, where a
// dense LU with partial pivoting solves. Applied as a V-cycle with Chebyshev smoothing on
// D^-1 A over [0.1, 1] lambda, the same polynomial before and after, so M^-1 is symmetric for
// a symmetric A (CG's need).
//
// Systems of PDEs (near_null.hpp, issue 70): where the near-null space is more than the
// constant vector (k vectors given, rigid-body modes from coordinates, or a block size's
// constants), strength and aggregation work on nodes (the blocks' Frobenius norms), T is a QR
// of B an aggregate (its columns dropped where an aggregate has too few unknowns), each coarse
// level's nodes are the aggregates (k unknowns each) and its B the QR's R. T is kept, so
// update_values redoes only the numeric phases. The constant vector alone is the same path
// with k = 1 and each unknown its own node.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <la/kernels/reference/spgemm.hpp>
#include <la/solvers/precond_options.hpp>
#include <la/solvers/amg/aggregation.hpp>
#include <la/solvers/amg/near_null.hpp>

namespace la {



namespace amg {

/// Why AMG does not exist for a matrix with a zero or missing diagonal entry (its smoother
/// and prolongator divide by the diagonal).
inline std::string amg_diagonal_message(std::size_t level, long long row) {
  return "amg: diagonal entry " + std::string(level == 0 ? "A(" : "of level " + std::to_string(level) + "'s operator, (") +
         std::to_string(row + 1) + "," + std::to_string(row + 1) +
         ") is zero or missing; the smoother and the prolongator divide by the diagonal";
}

/// One level: its operator, the prolongator to it from the next coarser level, its inverse
/// diagonal and lambda_max(D^-1 A) estimate.
struct level {
  csr_matrix<double, count_t> a, p, r;  // r = p^T
  std::vector<double> dinv;
  std::vector<double> l1inv;  // 1 / sum_j |a_ij| (the L1-Jacobi smoother's)
  double lambda = 1;
  aggregates agg;  // of this level's nodes (empty on the coarsest)
  std::vector<double> near_null;  // B (n x k, column-major): the finest level's near-null space, R of T's QR below
  int k = 1;                      // B's columns
  // Systems (B of several columns, or nodes of several unknowns): unknown -> node for the
  // strength graph (empty: each unknown its own node), the tentative prolongator (kept for
  // setup reuse) and its aggregates that dropped a column.
  std::vector<index_t> node_of;
  index_t nodes = 0;
  csr_matrix<double, count_t> t;
  index_t deficient = 0;
  std::vector<int> part;  // a partitioned build (amg_options::partitions > 1): each node's block
};

/// An upper bound of lambda_max(D^-1 A): max_i sum_j |a_ij| / |a_ii| (Gershgorin).
inline double gershgorin_lambda(const csr_matrix<double, count_t>& a, const std::vector<double>& dinv) {
  double m = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) s += std::abs(a.values()[k]);
    m = std::max(m, s * std::abs(dinv[i]));
  }
  return m;
}

/// lambda_max(D^-1 A) by `steps` power iterations from v_i in [-1, 1) by node_hash (a fixed
/// start with every mode in it; a smooth start left the top modes out).
inline double power_lambda(const csr_matrix<double, count_t>& a, const std::vector<double>& dinv, int steps) {
  const index_t n = a.rows();
  std::vector<double> v(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) v[i] = node_hash(i) / 2147483648.0 - 1;
  double lambda = 0;
  for (int s = 0; s < steps; ++s) {
    double vv = 0, vw = 0;
    for (index_t i = 0; i < n; ++i) {
      double t = 0;
      for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t += a.values()[k] * v[a.col_idx()[k]];
      w[i] = dinv[i] * t;
      vv += v[i] * v[i], vw += v[i] * w[i];
    }
    lambda = vw / vv;  // Rayleigh quotient
    double ww = 0;
    for (index_t i = 0; i < n; ++i) ww += w[i] * w[i];
    const double s2 = ww > 0 ? 1 / std::sqrt(ww) : 0;
    for (index_t i = 0; i < n; ++i) v[i] = w[i] * s2;
  }
  return lambda;
}

/// A partitioned build's finest blocks (amg_options::partitions): node i of `nodes` is in block
/// i parts / nodes, so the blocks are contiguous and of equal size.
inline int node_block(index_t i, int parts, index_t nodes) {
  return static_cast<int>(static_cast<long long>(i) * parts / std::max<index_t>(1, nodes));
}

/// The options both hierarchies (host_amg, the GPU's) refuse, in one place.
inline void check_options(const amg_options& opt) {
  LA_EXPECTS(opt.smoother_degree >= 1 && opt.max_levels >= 1 && opt.coarse_size >= 1 && opt.strength >= 0,
             "amg: the smoother degree, levels and coarse size must be positive and the strength non-negative");
  LA_EXPECTS(opt.coarse_size <= amg_coarse_size_max, "amg: the coarse size " + std::to_string(opt.coarse_size) +
                                                        " is above " + std::to_string(amg_coarse_size_max) +
                                                        " (a dense solve that large is not the coarse level's job)");
}

}  // namespace amg

/// The hierarchy and its V-cycle (host, double).
class host_amg {
 public:
  template <typename T, typename O>
  host_amg(const csr_matrix<T, O>& a, const amg_options& opt = {}) : opt_(opt) {
    LA_EXPECTS(a.rows() == a.cols(), "amg: the matrix must be square");
    amg::check_options(opt);
    std::vector<count_t> ptr(a.row_ptr().begin(), a.row_ptr().end());
    std::vector<double> val(a.values().begin(), a.values().end());
    amg::near_null_space ns = amg::resolve_near_null(opt, a.rows());
    scalar_ = ns.scalar();
    near_null_what_ = ns.what;
    amg::level finest;
    finest.a = csr_matrix<double, count_t>(detail::trusted, a.rows(), a.cols(), std::move(ptr), a.col_idx(), std::move(val));
    finest.near_null = std::move(ns.b);
    finest.k = ns.k;
    finest.node_of = std::move(ns.node_of);
    finest.nodes = ns.nodes;
    LA_EXPECTS(opt.partitions >= 1 && opt.partitions <= 4096, "amg: the partitions must be 1 to 4096");
    if (opt.partitions > 1) {  // contiguous blocks of nodes, of equal size
      const index_t nodes = finest.node_of.empty() ? a.rows() : finest.nodes;
      finest.part.resize(static_cast<std::size_t>(nodes));
      for (index_t i = 0; i < nodes; ++i) finest.part[i] = amg::node_block(i, opt.partitions, nodes);
    }
    levels_.push_back(std::move(finest));
    for (;;) {
      const std::size_t l = levels_.size() - 1;
      prepare(l);
      const index_t n = levels_[l].a.rows();
      if (n <= opt.coarse_size || static_cast<int>(levels_.size()) >= opt.max_levels) break;
      const auto t0 = clock::now();
      // theta halves a level (Vanek, Mandel and Brezina's epsilon_l = 0.08 (1/2)^l): a coarse
      // operator's stencil widens and each coupling weakens (3D Poisson's coarse rows have
      // ~27 entries of about 1/27 the diagonal), so a fixed theta stops coarsening there.
      const double theta = opt.strength * std::pow(0.5, static_cast<double>(l));
      if (!coarsen(l, theta, t0)) break;  // coarsening stalled
      galerkin(l);
    }
    const auto t0 = clock::now();
    factor_coarse();
    seconds_.coarse += since(t0);
  }

  /// New values on the same pattern (setup reuse): the aggregates are kept, the numeric phases
  /// (diagonals, lambda bounds, prolongators, Galerkin products, the coarse factorization)
  /// rerun; where the new values leave the strength graph as it was, that is what a fresh
  /// setup builds, bit for bit.
  template <typename T, typename O>
  void update_values(const csr_matrix<T, O>& a) {
    csr_matrix<double, count_t>& f = levels_[0].a;
    bool same = a.rows() == f.rows() && a.cols() == f.cols() && a.nnz() == f.nnz();
    for (index_t i = 0; same && i <= a.rows(); ++i) same = static_cast<count_t>(a.row_ptr()[i]) == f.row_ptr()[i];
    same = same && a.col_idx() == f.col_idx();
    LA_EXPECTS(same, "amg: update_values needs the pattern the hierarchy was built on; build a new one for a new pattern");
    for (std::size_t k = 0; k < a.values().size(); ++k) f.values()[k] = static_cast<double>(a.values()[k]);
    seconds_ = {};
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      prepare(l);
      if (l + 1 < levels_.size()) galerkin(l);
    }
    const auto t0 = clock::now();
    factor_coarse();
    seconds_.coarse += since(t0);
  }

  /// z = M^-1 r: one V-cycle from z = 0.
  void apply(const std::vector<double>& r, std::vector<double>& z) const {
    z.assign(r.size(), 0.0);
    cycle(0, r, z);
  }
  /// x updated by one cycle of `kind` on level l's system A_l x = b, the cycle's own step
  /// there (partitioned_cycle.hpp runs the levels it gathers with it).
  void cycle_at(index_t l, const std::vector<double>& b, std::vector<double>& x, amg_cycle kind) const {
    LA_EXPECTS(l >= 0 && l < levels() && b.size() == static_cast<std::size_t>(rows(l)) && x.size() == b.size(),
               "amg: cycle_at needs a level of the hierarchy and vectors of its rows");
    cycle(static_cast<std::size_t>(l), b, x, kind);
  }
  const amg_options& options() const { return opt_; }

  index_t levels() const { return static_cast<index_t>(levels_.size()); }
  index_t rows(index_t l) const { return levels_[l].a.rows(); }
  /// Sum of the levels' nonzeros over the finest's; the same for rows.
  double operator_complexity() const {
    double s = 0;
    for (const auto& l : levels_) s += static_cast<double>(l.a.nnz());
    return s / static_cast<double>(levels_[0].a.nnz());
  }
  double grid_complexity() const {
    double s = 0;
    for (const auto& l : levels_) s += l.a.rows();
    return s / levels_[0].a.rows();
  }
  struct phase_seconds {
    double aggregation = 0, prolongator = 0, galerkin = 0, smoother = 0, coarse = 0;
  };
  const phase_seconds& seconds() const { return seconds_; }
  const amg::level& at(index_t l) const { return levels_[l]; }
  /// Bytes held: the coarse operators, P and R, the diagonals, the coarse factorization.
  double bytes() const {
    double b = double(lu_.size()) * sizeof(double);
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const amg::level& f = levels_[l];
      if (l > 0) b += double(f.a.nnz()) * (sizeof(double) + sizeof(index_t));
      b += double(f.p.nnz() + f.r.nnz()) * (sizeof(double) + sizeof(index_t)) + double(f.dinv.size()) * sizeof(double);
    }
    return b;
  }
  /// The near-null space the hierarchy was built for, for a person.
  const std::string& near_null_space() const { return near_null_what_; }
  /// Aggregates, over all levels, that dropped a near-null column (too few unknowns for k).
  index_t deficient_aggregates() const {
    index_t d = 0;
    for (const auto& l : levels_) d += l.deficient;
    return d;
  }
  /// The levels and complexities, for a person (the GPU's report says the same first).
  std::string describe() const {
    std::string sizes;
    for (const auto& l : levels_) {
      if (!sizes.empty()) sizes += ' ';
      sizes += std::to_string(l.a.rows());
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "%zu levels (%s rows), operator complexity %.2f, grid complexity %.2f, %s-cycle, "
                  "%s %d%s", levels_.size(), sizes.c_str(), operator_complexity(), grid_complexity(),
                  opt_.cycle == amg_cycle::w ? "W" : opt_.cycle == amg_cycle::f ? "F" : "V",
                  opt_.smoother == amg_smoother::l1_jacobi ? "L1-Jacobi sweeps" : "Chebyshev degree", opt_.smoother_degree,
                  dense_ ? "" : "; the coarsest level is smoothed (too large for a dense solve)");
    std::string out = buf;
    if (!scalar_) out += "; near-null space: " + near_null_what_;
    return out;
  }

 private:
  using clock = std::chrono::steady_clock;
  static double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

  /// Level l's inverse diagonal and lambda_max(D^-1 A) bound.
  void prepare(std::size_t l) {
    amg::level& f = levels_[l];
    const index_t n = f.a.rows();
    f.dinv.assign(static_cast<std::size_t>(n), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (count_t k = f.a.row_ptr()[i]; k < f.a.row_ptr()[i + 1]; ++k)
        if (f.a.col_idx()[k] == i && f.a.values()[k] != 0) f.dinv[i] = 1 / f.a.values()[k];
    for (index_t i = 0; i < n; ++i)
      LA_EXPECTS(f.dinv[i] != 0 && std::isfinite(f.dinv[i]), amg::amg_diagonal_message(l, i));
    f.l1inv.assign(static_cast<std::size_t>(n), 0.0);
    for (index_t i = 0; i < n; ++i) {
      double s = 0;
      for (count_t k = f.a.row_ptr()[i]; k < f.a.row_ptr()[i + 1]; ++k) s += std::abs(f.a.values()[k]);
      f.l1inv[i] = 1 / s;
    }
    const auto t0 = clock::now();
    f.lambda = amg::gershgorin_lambda(f.a, f.dinv);
    if (opt_.power_iterations > 0) f.lambda = std::min(f.lambda, 1.1 * amg::power_lambda(f.a, f.dinv, opt_.power_iterations));
    seconds_.smoother += since(t0);
  }
  /// Level l's aggregates (of its nodes, on the blocks' strength; of its unknowns where each is
  /// its own node), the tentative prolongator by a QR of B an aggregate (kept: setup reuse
  /// keeps it; for the constant vector alone the QR is the scalar normalization B_i / ||B||,
  /// bit for bit), and level l + 1's nodes (the aggregates), B and k. False where coarsening
  /// stalled.
  bool coarsen(std::size_t l, double theta, clock::time_point t0) {
    amg::level& f = levels_[l];
    const index_t n = f.a.rows();
    amg::aggregates ag = amg::aggregate(partitioned(f.node_of.empty() ? amg::strength_of(f.a, theta)
                                                                      : amg::block_strength(f.a, f.node_of, f.nodes, theta),
                                                    f.part),
                                        opt_.aggregation_distance);
    seconds_.aggregation += since(t0);
    if (ag.count == 0) return false;
    const auto t1 = clock::now();
    amg::tentative_prolongator tp =
        amg::tentative(f.node_of.empty() ? ag.of : amg::unknowns_of(ag, f.node_of), ag.count, f.near_null, f.k);
    seconds_.prolongator += since(t1);
    if (tp.t.cols() == 0 || tp.t.cols() > n * 9 / 10) return false;  // coarsening stalled
    f.agg = std::move(ag);
    f.t = std::move(tp.t);
    f.deficient = tp.deficient;
    amg::level c;
    c.part = parts_of(f.agg, f.part);
    c.near_null = std::move(tp.coarse_b);
    c.k = f.k;
    if (tp.t.cols() != f.agg.count) c.node_of = std::move(tp.coarse_node);  // else one unknown an aggregate: its own node
    c.nodes = f.agg.count;
    levels_.push_back(std::move(c));
    return true;
  }

  /// A partitioned build's strength graph: g without the edges between blocks (part empty: g).
  static amg::strength_graph partitioned(amg::strength_graph g, const std::vector<int>& part) {
    return part.empty() ? g : amg::within_parts(g, part);
  }
  /// Each aggregate's block: its nodes' (all in one block), empty where the build is not partitioned.
  static std::vector<int> parts_of(const amg::aggregates& ag, const std::vector<int>& part) {
    if (part.empty()) return {};
    std::vector<int> out(static_cast<std::size_t>(ag.count), 0);
    for (std::size_t i = 0; i < ag.of.size(); ++i) out[ag.of[i]] = part[i];
    return out;
  }
  /// The nodes whose aggregate's nodes are not all in one block (0 for every partitioned build).
 public:
  index_t aggregates_across_parts() const {
    index_t bad = 0;
    for (const auto& l : levels_) {
      if (l.part.empty() || l.agg.of.empty()) continue;
      std::vector<int> first(static_cast<std::size_t>(l.agg.count), -1);
      for (std::size_t i = 0; i < l.agg.of.size(); ++i) {
        int& p = first[l.agg.of[i]];
        if (p < 0) p = l.part[i];
        else if (p != l.part[i]) ++bad;
      }
    }
    return bad;
  }
  /// The blocks of level l's nodes (empty where the build is not partitioned).
  const std::vector<int>& parts(index_t l) const { return levels_[l].part; }

 private:
  /// Level l's prolongator from its aggregates, and level l + 1's operator P^T A P.
  void galerkin(std::size_t l) {
    amg::level& f = levels_[l];
    auto t0 = clock::now();
    f.p = smoothed_prolongator(f, f.t);
    f.r = reference::transpose(f.p);
    seconds_.prolongator += since(t0);
    t0 = clock::now();
    csr_matrix<double, count_t> ac = reference::spgemm(f.r, reference::spgemm(f.a, f.p));
    seconds_.galerkin += since(t0);
    levels_[l + 1].a = std::move(ac);
  }

  /// P = S T with S = I - omega D^-1 A (A's pattern). The GPU forms the same product.
  csr_matrix<double, count_t> smoothed_prolongator(const amg::level& f, const csr_matrix<double, count_t>& t) const {
    const index_t n = f.a.rows();
    const double omega = 4.0 / (3.0 * f.lambda);
    std::vector<double> sv(f.a.values().size());
    for (index_t i = 0; i < n; ++i)
      for (count_t k = f.a.row_ptr()[i]; k < f.a.row_ptr()[i + 1]; ++k)
        sv[k] = (f.a.col_idx()[k] == i ? 1.0 : 0.0) - omega * f.dinv[i] * f.a.values()[k];
    const csr_matrix<double, count_t> sm(detail::trusted, n, n, f.a.row_ptr(), f.a.col_idx(), std::move(sv));
    return reference::spgemm(sm, t);
  }

  void factor_coarse() {
    const auto& a = levels_.back().a;
    const index_t n = a.rows();
    dense_ = n <= amg_dense_rows(opt_.coarse_size);
    if (!dense_) return;
    lu_.assign(static_cast<std::size_t>(n) * n, 0.0);
    piv_.resize(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i)
      for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) lu_[static_cast<std::size_t>(i) * n + a.col_idx()[k]] = a.values()[k];
    for (index_t c = 0; c < n; ++c) {
      index_t p = c;
      for (index_t r = c + 1; r < n; ++r)
        if (std::abs(lu_[r * n + c]) > std::abs(lu_[p * n + c])) p = r;
      piv_[c] = p;
      if (p != c)
        for (index_t k = 0; k < n; ++k) std::swap(lu_[c * n + k], lu_[p * n + k]);
      const double d = lu_[c * n + c];
      LA_EXPECTS(d != 0 && std::isfinite(d), "amg: the coarsest operator (" + std::to_string(n) +
                                                 " rows) is singular, so the V-cycle has no coarse solve");
      for (index_t r = c + 1; r < n; ++r) {
        const double l = lu_[r * n + c] / d;
        lu_[r * n + c] = l;
        for (index_t k = c + 1; k < n; ++k) lu_[r * n + k] -= l * lu_[c * n + k];
      }
    }
  }
  void coarse_solve(const std::vector<double>& b, std::vector<double>& x) const {
    if (!dense_) {
      x.assign(b.size(), 0.0);
      smooth(levels_.back(), b, x);
      smooth(levels_.back(), b, x);
      return;
    }
    const index_t n = static_cast<index_t>(b.size());
    x = b;
    for (index_t c = 0; c < n; ++c) std::swap(x[c], x[piv_[c]]);
    for (index_t i = 0; i < n; ++i)
      for (index_t k = 0; k < i; ++k) x[i] -= lu_[i * n + k] * x[k];
    for (index_t i = n; i-- > 0;) {
      for (index_t k = i + 1; k < n; ++k) x[i] -= lu_[i * n + k] * x[k];
      x[i] /= lu_[i * n + i];
    }
  }

  static void residual(const csr_matrix<double, count_t>& a, const std::vector<double>& b, const std::vector<double>& x,
                       std::vector<double>& r) {
    r.resize(b.size());
    for (index_t i = 0; i < a.rows(); ++i) {
      double t = b[i];
      for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t -= a.values()[k] * x[a.col_idx()[k]];
      r[i] = t;
    }
  }
  static void multiply(const csr_matrix<double, count_t>& a, const std::vector<double>& x, std::vector<double>& y) {
    y.assign(static_cast<std::size_t>(a.rows()), 0.0);
    for (index_t i = 0; i < a.rows(); ++i) {
      double t = 0;
      for (count_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) t += a.values()[k] * x[a.col_idx()[k]];
      y[i] = t;
    }
  }

  /// x += the Chebyshev polynomial of degree d in D^-1 A applied to D^-1 (b - A x), over
  /// [0.1, 1] lambda (Saad, "Iterative methods", algorithm 12.1).
  void smooth(const amg::level& l, const std::vector<double>& b, std::vector<double>& x) const {
    if (opt_.smoother == amg_smoother::l1_jacobi) {
      std::vector<double> r;
      for (int k = 0; k < opt_.smoother_degree; ++k) {
        residual(l.a, b, x, r);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += l.l1inv[i] * r[i];
      }
      return;
    }
    const double hi = l.lambda, lo = 0.1 * l.lambda;
    const double theta = (hi + lo) / 2, delta = (hi - lo) / 2, sigma = theta / delta;
    const std::size_t n = b.size();
    std::vector<double> r, d(n), ad;
    residual(l.a, b, x, r);
    for (std::size_t i = 0; i < n; ++i) d[i] = l.dinv[i] * r[i] / theta;
    double rho = 1 / sigma;
    for (int k = 0; k < opt_.smoother_degree; ++k) {
      for (std::size_t i = 0; i < n; ++i) x[i] += d[i];
      if (k + 1 == opt_.smoother_degree) break;
      multiply(l.a, d, ad);
      const double rho_new = 1 / (2 * sigma - rho);
      for (std::size_t i = 0; i < n; ++i) {
        r[i] -= ad[i];
        d[i] = rho_new * rho * d[i] + 2 * rho_new / delta * l.dinv[i] * r[i];
      }
      rho = rho_new;
    }
  }

  void cycle(std::size_t l, const std::vector<double>& b, std::vector<double>& x) const { cycle(l, b, x, opt_.cycle); }
  void cycle(std::size_t l, const std::vector<double>& b, std::vector<double>& x, amg_cycle kind) const {
    if (l + 1 == levels_.size()) return coarse_solve(b, x);
    const amg::level& f = levels_[l];
    smooth(f, b, x);
    std::vector<double> r, bc, xc, e;
    residual(f.a, b, x, r);
    multiply(f.r, r, bc);
    xc.assign(bc.size(), 0.0);
    // W: the coarse level visited twice (the second from the first's result); F: an F-cycle
    // there, then a V-cycle; except where it is the coarsest, whose direct solve a second
    // visit would repeat.
    const int visits = kind != amg_cycle::v && l + 2 < levels_.size() ? 2 : 1;
    for (int v = 0; v < visits; ++v) cycle(l + 1, bc, xc, kind == amg_cycle::f && v == 1 ? amg_cycle::v : kind);
    multiply(f.p, xc, e);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += e[i];
    smooth(f, b, x);
  }

  amg_options opt_;
  std::vector<amg::level> levels_;
  std::vector<double> lu_;
  std::vector<index_t> piv_;
  bool dense_ = true;
  bool scalar_ = true;
  std::string near_null_what_;
  phase_seconds seconds_;
};

}  // namespace la
