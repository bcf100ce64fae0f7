// Smoothed aggregation for systems of PDEs on the host (issue 70): strength and aggregation on
// nodes (blocks of unknowns) rather than scalar unknowns, and the tentative prolongator from k
// near-null vectors by a QR per aggregate (Vanek, Mandel and Brezina, "Algebraic multigrid by
// smoothed aggregation for second and fourth order elliptic problems", 1996; pyamg's
// fit_candidates). The oracle a GPU form will be compared with; not yet wired into the
// hierarchy (hierarchy.hpp keeps one near-null vector).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/solvers/amg/aggregation.hpp>

namespace la::amg {

/// The strength graph of the nodes of A with `block` unknowns a node (node-major: unknowns
/// [I block, (I + 1) block) are node I): node J is strong for node I (J != I) when
/// ||A_IJ||_F >= theta sqrt(||A_II||_F ||A_JJ||_F), the blocks' Frobenius norms.
template <typename T, typename O>
strength_graph block_strength(const csr_matrix<T, O>& a, int block, double theta) {
  LA_EXPECTS(block >= 1 && a.rows() % block == 0 && a.rows() == a.cols(),
             "block_strength: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + ", not square in blocks of " +
                 std::to_string(block));
  const index_t nodes = a.rows() / block;
  std::vector<double> row_norm2(static_cast<std::size_t>(nodes), 0), diag(static_cast<std::size_t>(nodes), 0);
  std::vector<index_t> seen(static_cast<std::size_t>(nodes), -1), cols;
  strength_graph g;
  std::vector<std::vector<std::pair<index_t, double>>> blocks(static_cast<std::size_t>(nodes));
  for (index_t I = 0; I < nodes; ++I) {  // node I's blocks' squared norms, by neighbour node
    cols.clear();
    for (index_t r = I * block; r < (I + 1) * block; ++r)
      for (O k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k) {
        const index_t J = a.col_idx()[k] / block;
        const double v = std::abs(static_cast<double>(a.values()[k]));
        if (seen[J] != I) seen[J] = I, cols.push_back(J), row_norm2[J] = 0;
        row_norm2[J] += v * v;
      }
    for (index_t J : cols) blocks[I].push_back({J, std::sqrt(row_norm2[J])});
    for (const auto& [J, nrm] : blocks[I])
      if (J == I) diag[I] = nrm;
  }
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

/// Node aggregates spread to their unknowns: unknown i's aggregate is its node's.
inline std::vector<index_t> unknowns_of(const aggregates& nodes, int block) {
  std::vector<index_t> of(nodes.of.size() * static_cast<std::size_t>(block));
  for (std::size_t i = 0; i < of.size(); ++i) of[i] = nodes.of[i / block];
  return of;
}

/// The tentative prolongator from k near-null vectors: the rows of B (n x k, column-major) of
/// each aggregate factored B_a = Q_a R_a (modified Gram-Schmidt, in long double), Q_a in the
/// aggregate's k columns of T (so T^T T = I where every aggregate has rank k), R_a the
/// aggregate's k x k block of the coarse near-null space; T (coarse_b) = B exactly. A
/// column whose remainder is below 1e-10 of its norm (an aggregate of fewer than k unknowns,
/// or dependent vectors there) is left zero and counted.
struct tentative_prolongator {
  csr_matrix<double, count_t> t;  // n x (aggregates k), the aggregate's columns [a k, (a + 1) k)
  std::vector<double> coarse_b;   // (aggregates k) x k, column-major
  index_t deficient = 0;          // aggregates with a zero column
};

inline tentative_prolongator tentative(const std::vector<index_t>& of, index_t count, const std::vector<double>& b, int k) {
  const std::size_t n = of.size();
  LA_EXPECTS(k >= 1 && b.size() == n * static_cast<std::size_t>(k),
             "tentative: the near-null space must hold k >= 1 columns of " + std::to_string(n) + " rows");
  std::vector<std::vector<index_t>> members(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < n; ++i) {
    LA_EXPECTS(of[i] >= 0 && of[i] < count, "tentative: unknown " + std::to_string(i) + " has no aggregate");
    members[of[i]].push_back(static_cast<index_t>(i));
  }
  const std::size_t nc = static_cast<std::size_t>(count) * k;
  tentative_prolongator r;
  r.coarse_b.assign(nc * k, 0.0);
  std::vector<long double> q(n * static_cast<std::size_t>(k), 0);  // Q's entries by (unknown, column)
  for (index_t a = 0; a < count; ++a) {
    const auto& m = members[a];
    bool zero_column = false;
    for (int c = 0; c < k; ++c) {
      std::vector<long double> v(m.size());
      long double orig = 0;
      for (std::size_t t = 0; t < m.size(); ++t) v[t] = b[c * n + m[t]], orig += v[t] * v[t];
      for (int p = 0; p < c; ++p) {  // modified Gram-Schmidt against the earlier columns
        long double dot = 0;
        for (std::size_t t = 0; t < m.size(); ++t) dot += q[m[t] * std::size_t(k) + p] * v[t];
        r.coarse_b[c * nc + a * std::size_t(k) + p] = static_cast<double>(dot);  // R[p][c]: row a k + p, column c
        for (std::size_t t = 0; t < m.size(); ++t) v[t] -= dot * q[m[t] * std::size_t(k) + p];
      }
      long double nrm = 0;
      for (long double x : v) nrm += x * x;
      nrm = std::sqrt(nrm);
      if (!(nrm > 1e-10L * std::sqrt(orig)) || nrm == 0) {
        zero_column = true;
        continue;  // R[c][c] = 0, Q's column zero
      }
      r.coarse_b[c * nc + a * std::size_t(k) + c] = static_cast<double>(nrm);
      for (std::size_t t = 0; t < m.size(); ++t) q[m[t] * std::size_t(k) + c] = v[t] / nrm;
    }
    if (zero_column) ++r.deficient;
  }
  std::vector<count_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  for (std::size_t i = 0; i < n; ++i) {
    for (int c = 0; c < k; ++c)
      if (q[i * k + c] != 0) idx.push_back(of[i] * k + c), val.push_back(static_cast<double>(q[i * k + c]));
    ptr.push_back(static_cast<count_t>(idx.size()));
  }
  r.t = csr_matrix<double, count_t>(static_cast<index_t>(n), static_cast<index_t>(nc), std::move(ptr), std::move(idx),
                                    std::move(val));
  return r;
}

}  // namespace la::amg
