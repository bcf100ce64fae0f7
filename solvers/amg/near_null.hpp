// Smoothed aggregation for systems of PDEs on the host (issue 70): strength and aggregation on
// nodes (blocks of unknowns) rather than scalar unknowns, and the tentative prolongator from k
// near-null vectors by a QR per aggregate (Vanek, Mandel and Brezina, "Algebraic multigrid by
// smoothed aggregation for second and fourth order elliptic problems", 1996; pyamg's
// fit_candidates). The oracle the GPU's (amg.cu) is compared with; hierarchy.hpp builds its
// levels from these when the near-null space is not the constant vector alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/formats/elasticity.hpp>
#include <la/solvers/amg/aggregation.hpp>
#include <la/solvers/precond_options.hpp>

namespace la::amg {

/// The strength graph of the nodes of A, node_of[i] being unknown i's node (0 .. nodes-1):
/// node J is strong for node I (J != I) when ||A_IJ||_F >= theta sqrt(||A_II||_F ||A_JJ||_F),
/// the blocks' Frobenius norms (the strength of the condensed matrix C, c_IJ = ||A_IJ||_F,
/// which the GPU forms as sqrt(E^T (A o A) E)).
template <typename T, typename O>
strength_graph block_strength(const csr_matrix<T, O>& a, const std::vector<index_t>& node_of, index_t nodes, double theta) {
  LA_EXPECTS(a.rows() == a.cols() && node_of.size() == static_cast<std::size_t>(a.rows()),
             "block_strength: A must be square with a node for each unknown");
  std::vector<std::vector<index_t>> rows(static_cast<std::size_t>(nodes));  // each node's unknowns, in order
  for (index_t i = 0; i < a.rows(); ++i) {
    LA_EXPECTS(node_of[i] >= 0 && node_of[i] < nodes, "block_strength: unknown " + std::to_string(i) + " has no node");
    rows[node_of[i]].push_back(i);
  }
  std::vector<double> norm2(static_cast<std::size_t>(nodes), 0), diag(static_cast<std::size_t>(nodes), 0);
  std::vector<index_t> seen(static_cast<std::size_t>(nodes), -1), cols;
  std::vector<std::vector<std::pair<index_t, double>>> blocks(static_cast<std::size_t>(nodes));
  for (index_t I = 0; I < nodes; ++I) {  // node I's blocks' norms, by neighbour node
    cols.clear();
    for (index_t r : rows[I])
      for (O k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k) {
        const index_t J = node_of[a.col_idx()[k]];
        const double v = std::abs(static_cast<double>(a.values()[k]));
        if (seen[J] != I) seen[J] = I, cols.push_back(J), norm2[J] = 0;
        norm2[J] += v * v;
      }
    for (index_t J : cols) blocks[I].push_back({J, std::sqrt(norm2[J])});
    for (const auto& [J, nrm] : blocks[I])
      if (J == I) diag[I] = nrm;
  }
  strength_graph g;
  g.ptr.reserve(static_cast<std::size_t>(nodes) + 1);
  for (index_t I = 0; I < nodes; ++I) {
    std::vector<index_t> strong;
    for (const auto& [J, nrm] : blocks[I])
      if (J != I && nrm >= theta * std::sqrt(diag[I] * diag[J])) strong.push_back(J);
    std::sort(strong.begin(), strong.end());
    g.idx.insert(g.idx.end(), strong.begin(), strong.end());
    g.ptr.push_back(static_cast<count_t>(g.idx.size()));
  }
  return g;
}

/// Node-major blocks of `block` unknowns: unknown i's node is i / block.
inline std::vector<index_t> block_nodes(index_t n, int block) {
  LA_EXPECTS(block >= 1 && n % block == 0,
             "amg: " + std::to_string(n) + " unknowns are not nodes of " + std::to_string(block) + " (the block size)");
  std::vector<index_t> of(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) of[i] = i / block;
  return of;
}

template <typename T, typename O>
strength_graph block_strength(const csr_matrix<T, O>& a, int block, double theta) {
  LA_EXPECTS(block >= 1 && a.rows() % block == 0 && a.rows() == a.cols(),
             "block_strength: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + ", not square in blocks of " +
                 std::to_string(block));
  return block_strength(a, block_nodes(a.rows(), block), a.rows() / block, theta);
}

/// Node aggregates spread to their unknowns: unknown i's aggregate is its node's.
inline std::vector<index_t> unknowns_of(const aggregates& nodes, const std::vector<index_t>& node_of) {
  std::vector<index_t> of(node_of.size());
  for (std::size_t i = 0; i < of.size(); ++i) of[i] = nodes.of[node_of[i]];
  return of;
}
inline std::vector<index_t> unknowns_of(const aggregates& nodes, int block) {
  std::vector<index_t> of(nodes.of.size() * static_cast<std::size_t>(block));
  for (std::size_t i = 0; i < of.size(); ++i) of[i] = nodes.of[i / block];
  return of;
}

/// The tentative prolongator from k near-null vectors: the rows of B (n x k, column-major) of
/// each aggregate factored B_a = Q_a R_a (modified Gram-Schmidt), Q_a's columns T's columns of
/// that aggregate (T^T T = I), R_a's rows the coarse near-null space's rows; T (coarse_b) = B.
/// A column whose remainder is at most 1e-10 of its norm (an aggregate of fewer than k
/// unknowns, or dependent vectors there) is dropped, with its row of R, and its aggregate
/// counted as deficient: the coarse level has k unknowns an aggregate less those dropped,
/// numbered by aggregate, so no coarse unknown is left with a zero row. Double arithmetic in
/// the order the GPU's kernel (amg.cu, one thread an aggregate) uses.
struct tentative_prolongator {
  csr_matrix<double, count_t> t;  // n x coarse unknowns; row i holds every kept column of its aggregate
  std::vector<double> coarse_b;   // coarse unknowns x k, column-major
  std::vector<index_t> coarse_node;  // coarse unknown -> its aggregate (the next level's nodes)
  index_t deficient = 0;          // aggregates with a dropped column
};

inline tentative_prolongator tentative(const std::vector<index_t>& of, index_t count, const std::vector<double>& b, int k) {
  const std::size_t n = of.size();
  LA_EXPECTS(k >= 1 && k <= 32 && b.size() == n * static_cast<std::size_t>(k),
             "tentative: the near-null space must hold 1 to 32 columns of " + std::to_string(n) + " rows");
  std::vector<std::vector<index_t>> members(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < n; ++i) {
    LA_EXPECTS(of[i] >= 0 && of[i] < count, "tentative: unknown " + std::to_string(i) + " has no aggregate");
    members[of[i]].push_back(static_cast<index_t>(i));
  }
  const std::size_t ks = static_cast<std::size_t>(k);
  std::vector<double> q(n * ks, 0), r(static_cast<std::size_t>(count) * ks * ks, 0);  // Q by (unknown, column); R by aggregate
  std::vector<unsigned> kept(static_cast<std::size_t>(count), 0);
  tentative_prolongator out;
  for (index_t a = 0; a < count; ++a) {
    const auto& m = members[a];
    double* ra = &r[a * ks * ks];
    for (int c = 0; c < k; ++c) {
      double orig = 0;
      for (index_t i : m) {
        const double v = b[c * n + i];
        q[i * ks + c] = v, orig += v * v;
      }
      for (int p = 0; p < c; ++p) {  // modified Gram-Schmidt against the kept earlier columns
        if (!(kept[a] >> p & 1u)) continue;
        double dot = 0;
        for (index_t i : m) dot += q[i * ks + p] * q[i * ks + c];
        ra[p * ks + c] = dot;
        for (index_t i : m) q[i * ks + c] -= dot * q[i * ks + p];
      }
      double nrm = 0;
      for (index_t i : m) nrm += q[i * ks + c] * q[i * ks + c];
      nrm = std::sqrt(nrm);
      if (nrm > 1e-10 * std::sqrt(orig)) {
        kept[a] |= 1u << c;
        ra[c * ks + c] = nrm;
        for (index_t i : m) q[i * ks + c] /= nrm;
      } else {
        for (index_t i : m) q[i * ks + c] = 0;
      }
    }
    if (kept[a] != (k == 32 ? ~0u : (1u << k) - 1)) ++out.deficient;
  }
  std::vector<index_t> offset(static_cast<std::size_t>(count) + 1, 0);  // the aggregates' first coarse unknowns
  for (index_t a = 0; a < count; ++a) offset[a + 1] = offset[a] + static_cast<index_t>(__builtin_popcount(kept[a]));
  const std::size_t nc = static_cast<std::size_t>(offset[count]);
  out.coarse_b.assign(nc * ks, 0.0);
  out.coarse_node.resize(nc);
  for (index_t a = 0; a < count; ++a) {
    index_t row = offset[a];
    for (int p = 0; p < k; ++p) {
      if (!(kept[a] >> p & 1u)) continue;
      out.coarse_node[row] = a;
      for (int c = p; c < k; ++c) out.coarse_b[c * nc + row] = r[(a * ks + p) * ks + c];
      ++row;
    }
  }
  std::vector<count_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  idx.reserve(n * ks), val.reserve(n * ks);
  for (std::size_t i = 0; i < n; ++i) {
    const index_t a = of[i];
    index_t col = offset[a];
    for (int c = 0; c < k; ++c)
      if (kept[a] >> c & 1u) idx.push_back(col++), val.push_back(q[i * ks + c]);
    ptr.push_back(static_cast<count_t>(idx.size()));
  }
  out.t = csr_matrix<double, count_t>(detail::trusted, static_cast<index_t>(n), static_cast<index_t>(nc), std::move(ptr),
                                      std::move(idx), std::move(val));
  return out;
}

/// The near-null space a hierarchy is built for (amg_options resolved against A's size).
struct near_null_space {
  std::vector<double> b;        // n x k, column-major
  int k = 1;
  std::vector<index_t> node_of;  // unknown -> node for the finest strength graph (empty: scalar)
  index_t nodes = 0;
  std::string what;              // for a person: "6 rigid-body modes from the coordinates, nodes of 3 unknowns"
  bool scalar() const { return k == 1 && node_of.empty(); }
};

/// What the options ask for, checked against n unknowns: the user's vectors (with the block
/// size's nodes, else scalar strength), else rigid-body modes from the coordinates (3 a node
/// in 2D, 6 in 3D, nodes of d unknowns; coordinates of one unknown a node leave the scalar
/// constant), else `block_size` constant modes (one a component), else the constant vector;
/// `use_near_null` false is the last whatever else was given.
inline near_null_space resolve_near_null(const amg_options& opt, index_t n) {
  near_null_space s;
  const auto nodes_of = [&](int block) {
    LA_EXPECTS(n % block == 0, "amg: " + std::to_string(n) + " unknowns are not nodes of " + std::to_string(block) +
                                   " unknowns (the block size)");
    s.node_of = block_nodes(n, block);
    s.nodes = n / block;
  };
  LA_EXPECTS(opt.block_size >= 1 && opt.block_size <= 32, "amg: the block size must be 1 to 32");
  if (!opt.use_near_null) {
    s.b.assign(static_cast<std::size_t>(n), 1.0);
    s.what = "the constant vector (near-null space turned off)";
    return s;
  }
  if (opt.near_null && !opt.near_null->empty()) {
    const std::size_t size = opt.near_null->size();
    LA_EXPECTS(n > 0 && size % static_cast<std::size_t>(n) == 0 && size / n >= 1 && size / n <= 32,
               "amg: the near-null space holds " + std::to_string(size) + " values, not 1 to 32 columns of " +
                   std::to_string(n) + " rows (A's)");
    s.k = static_cast<int>(size / n);
    s.b = *opt.near_null;
    for (double v : s.b) LA_EXPECTS(std::isfinite(v), "amg: the near-null space holds a value that is not finite");
    if (opt.block_size > 1) nodes_of(opt.block_size);
    s.what = std::to_string(s.k) + " near-null vector" + (s.k == 1 ? "" : "s") + " given" +
             (opt.block_size > 1 ? ", nodes of " + std::to_string(opt.block_size) + " unknowns" : "");
    return s;
  }
  if (opt.coordinates && !opt.coordinates->empty()) {
    const int d = opt.coordinate_dim;
    LA_EXPECTS(d >= 1 && d <= 3 && opt.coordinates->size() % static_cast<std::size_t>(d) == 0,
               "amg: the coordinates must be nodes x d with d = 1, 2 or 3");
    const std::size_t nodes = opt.coordinates->size() / d;
    for (double v : *opt.coordinates) LA_EXPECTS(std::isfinite(v), "amg: a coordinate is not finite");
    if (nodes * d == static_cast<std::size_t>(n) && d > 1) {
      LA_EXPECTS(opt.block_size == 1 || opt.block_size == d,
                 "amg: coordinates in " + std::to_string(d) + "D make nodes of " + std::to_string(d) +
                     " unknowns, not the block size " + std::to_string(opt.block_size));
      s.b = rigid_body_modes(*opt.coordinates, d);
      s.k = d == 2 ? 3 : 6;
      nodes_of(d);
      s.what = std::to_string(s.k) + " rigid-body modes from the coordinates, nodes of " + std::to_string(d) + " unknowns";
      return s;
    }
    LA_EXPECTS(nodes == static_cast<std::size_t>(n),
               "amg: " + std::to_string(nodes) + " nodes of coordinates fit neither " + std::to_string(n) +
                   " unknowns (one a node) nor " + std::to_string(n) + " / " + std::to_string(d) + " nodes of " +
                   std::to_string(d) + " unknowns");
  }
  if (opt.block_size > 1) {
    const int bs = opt.block_size;
    nodes_of(bs);
    s.k = bs;
    s.b.assign(static_cast<std::size_t>(n) * bs, 0.0);
    for (index_t i = 0; i < n; ++i) s.b[(i % bs) * static_cast<std::size_t>(n) + i] = 1;
    s.what = std::to_string(bs) + " constant modes, nodes of " + std::to_string(bs) + " unknowns";
    return s;
  }
  s.b.assign(static_cast<std::size_t>(n), 1.0);
  s.what = "the constant vector";
  return s;
}

}  // namespace la::amg
