// Smoothed aggregation's coarsening on the host, written as the rounds a GPU runs (every
// round reads the previous round's values only), so a device version can reproduce it bit for
// bit: the strength graph, a distance-2 maximal independent set (Bell, Dalton and Olson,
// "Exposing fine-grained parallelism in algebraic multigrid methods", 2012) whose nodes are
// the aggregates' roots, and each node's aggregate.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <la/formats/csr.hpp>

// The node keys are computed alike on the host and the device (amg.cu).
#ifdef __CUDACC__
#define LA_AMG_HD __host__ __device__
#else
#define LA_AMG_HD
#endif

namespace la::amg {

/// The strength graph: j is a strong neighbour of i (j != i) when |a_ij| >= theta
/// sqrt(|a_ii a_jj|) (symmetric strength, Vanek et al.). CSR pattern only.
struct strength_graph {
  std::vector<count_t> ptr{0};
  std::vector<index_t> idx;
  index_t rows() const { return static_cast<index_t>(ptr.size()) - 1; }
};

template <typename T, typename O>
strength_graph strength_of(const csr_matrix<T, O>& a, double theta) {
  const index_t n = a.rows();
  std::vector<double> d(static_cast<std::size_t>(n), 0);
  for (index_t i = 0; i < n; ++i)
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[k] == i) d[i] = std::abs(static_cast<double>(a.values()[k]));
  strength_graph g;
  g.ptr.reserve(static_cast<std::size_t>(n) + 1);
  for (index_t i = 0; i < n; ++i) {
    for (O k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t j = a.col_idx()[k];
      if (j != i && std::abs(static_cast<double>(a.values()[k])) >= theta * std::sqrt(d[i] * d[j])) g.idx.push_back(j);
    }
    g.ptr.push_back(static_cast<count_t>(g.idx.size()));
  }
  return g;
}

/// g without its edges between blocks (part[i]: node i's block): the strength graph of a
/// partitioned build, whose aggregates stay within one block.
inline strength_graph within_parts(const strength_graph& g, const std::vector<int>& part) {
  strength_graph out;
  out.ptr.reserve(g.ptr.size());
  for (index_t i = 0; i < g.rows(); ++i) {
    for (count_t k = g.ptr[i]; k < g.ptr[i + 1]; ++k)
      if (part[g.idx[k]] == part[i]) out.idx.push_back(g.idx[k]);
    out.ptr.push_back(static_cast<count_t>(out.idx.size()));
  }
  return out;
}

/// A node's priority among its distance-2 neighbours: a fixed hash of its index, the index
/// breaking ties (so the order is total and the same on every device).
LA_AMG_HD inline std::uint32_t node_hash(index_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B1u;
  x ^= x >> 16, x *= 0x85EBCA6Bu, x ^= x >> 13, x *= 0xC2B2AE35u, x ^= x >> 16;
  return x;
}

/// (state, hash, index) packed so that a larger key wins: state 2 (root) > 1 (undecided) >
/// 0 (out).
LA_AMG_HD inline std::uint64_t node_key(int state, index_t i) {
  return (static_cast<std::uint64_t>(state) << 62) | (static_cast<std::uint64_t>(node_hash(i) >> 1) << 31) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(i) & 0x7fffffffu);
}

struct aggregates {
  std::vector<index_t> of;  // of[i]: node i's aggregate, 0 .. count-1, numbered by root in index order
  index_t count = 0;
  int rounds = 0;           // MIS rounds taken
};

/// The aggregates of g: roots by a distance-2 MIS (each round: every node's key, the largest
/// key within distance 1, then within distance 2; an undecided node whose largest is its own
/// becomes a root, one that sees a root becomes out), then each node joins the root of largest
/// key within distance 1, else the aggregate of its distance-1 neighbour of largest key that
/// joined one (in a symmetric strength graph every node has a root within distance 2, a node
/// without strong neighbours being its own root; a node left without one is its own root).
/// key_base: node i's key is that of node key_base + i (a rank aggregating its own block of
/// a partitioned graph, whose first node is key_base, decides as the whole graph would).
inline aggregates aggregate(const strength_graph& g, int distance = 2, index_t key_base = 0) {
  const index_t n = g.rows();
  auto node_key = [key_base](int state, index_t i) { return amg::node_key(state, key_base + i); };
  std::vector<int> state(static_cast<std::size_t>(n), 1);
  std::vector<std::uint64_t> k1(static_cast<std::size_t>(n)), k2(static_cast<std::size_t>(n));
  aggregates out;
  for (bool undecided = n > 0; undecided; ++out.rounds) {
    for (index_t i = 0; i < n; ++i) {
      std::uint64_t m = node_key(state[i], i);
      for (count_t k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = std::max(m, node_key(state[g.idx[k]], g.idx[k]));
      k1[i] = m;
    }
    for (index_t i = 0; i < n; ++i) {
      std::uint64_t m = k1[i];
      if (distance > 1)
        for (count_t k = g.ptr[i]; k < g.ptr[i + 1]; ++k) m = std::max(m, k1[g.idx[k]]);
      k2[i] = m;
    }
    undecided = false;
    for (index_t i = 0; i < n; ++i) {
      if (state[i] != 1) continue;
      if (k2[i] == node_key(1, i)) state[i] = 2;
      else if ((k2[i] >> 62) == 2) state[i] = 0;
      else undecided = true;
    }
  }
  // Each node's root (a node index) first, numbered at the end: roots in index order, and a
  // node left without one (no root within distance 2 along its own row's strong entries,
  // which a non-symmetric strength graph allows) its own root.
  std::vector<index_t> first(static_cast<std::size_t>(n), -1);  // roots and the nodes next to one
  for (index_t i = 0; i < n; ++i) {
    if (state[i] == 2) {
      first[i] = i;
      continue;
    }
    std::uint64_t best = 0;
    for (count_t k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
      const index_t j = g.idx[k];
      if (state[j] == 2 && node_key(2, j) > best) best = node_key(2, j), first[i] = j;
    }
  }
  std::vector<index_t> root(first);
  for (index_t i = 0; i < n; ++i) {
    if (first[i] >= 0) continue;
    std::uint64_t best = 0;
    for (count_t k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
      const index_t j = g.idx[k];
      if (first[j] >= 0 && node_key(1, j) > best) best = node_key(1, j), root[i] = first[j];
    }
    if (root[i] < 0) root[i] = i;
  }
  std::vector<index_t> id(static_cast<std::size_t>(n), -1);
  for (index_t i = 0; i < n; ++i)
    if (root[i] == i) id[i] = out.count++;
  out.of.resize(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) out.of[i] = id[root[i]];
  return out;
}

}  // namespace la::amg
