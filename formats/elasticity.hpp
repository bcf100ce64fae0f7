// Linear elasticity systems to test AMG for systems of PDEs on (issue 70), with their node
// coordinates and rigid-body modes:
//   elasticity(d, N, nu, clamp)
//                   isotropic linear elasticity (plane strain in 2D) on the unit square (cube),
//                   N nodes a side (h = 1 / (N - 1)), bilinear (trilinear) Q1 elements,
//                   Young's modulus 1, Poisson's ratio nu, 2x2 (2x2x2) Gauss points; with
//                   `clamp` the nodes of the face x = 0 are fixed (their rows and columns left
//                   out: SPD), else the structure floats (singular: the rigid-body modes span
//                   the null space). d unknowns a node, node-major (u_x, u_y[, u_z] together),
//                   nodes numbered x fastest; every node couples with its 3^d neighbours'
//                   unknowns (entries that cancel to 0 are stored). Each row assembled from the elements around its
//                   node in a fixed order, so A = A^T exactly.
//   elasticity_coordinates(d, N, clamp)
//                   those coordinates alone (la solve's, for a gen:elasticity system).
//   rigid_body_modes(coordinates, d)
//                   the translations and rotations at the given nodes: 3 in 2D, 6 in 3D, as an
//                   (nodes * d) x k column-major array (the near-null space of elasticity).
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/formats/generate.hpp>
#include <la/types.hpp>

namespace la {

template <typename T, typename O = index_t>
struct elasticity_system {
  csr_matrix<T, O> a;
  int dim = 2;
  /// The unknowns' nodes' coordinates, node-major (x, y[, z] of a node together): rows / dim nodes.
  std::vector<double> coordinates;
};

namespace detail {
/// The Q1 element stiffness (2^d nodes x d unknowns each, node-major) of an element of side h.
inline std::vector<double> q1_stiffness(int d, double h, double nu) {
  const int nodes = 1 << d, m = nodes * d, voigt = d == 2 ? 3 : 6;
  const double lambda = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
  std::vector<double> D(static_cast<std::size_t>(voigt * voigt), 0.0);
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < d; ++j) D[i * voigt + j] = lambda;
    D[i * voigt + i] = lambda + 2 * mu;
  }
  for (int i = d; i < voigt; ++i) D[i * voigt + i] = mu;
  std::vector<double> K(static_cast<std::size_t>(m * m), 0.0);
  const double g = 1 / std::sqrt(3.0), weight = std::pow(h / 2, d);  // Gauss points +-1/sqrt(3), weights 1, |J| = (h/2)^d
  for (int gp = 0; gp < nodes; ++gp) {
    std::array<double, 3> xi{};
    for (int c = 0; c < d; ++c) xi[c] = (gp >> c & 1) ? g : -g;
    std::vector<double> B(static_cast<std::size_t>(voigt * m), 0.0);
    for (int a = 0; a < nodes; ++a) {
      std::array<double, 3> dn{};  // dN_a / dx_c
      for (int c = 0; c < d; ++c) {
        double v = (a >> c & 1 ? 1.0 : -1.0) / 2 * (2 / h);
        for (int e = 0; e < d; ++e)
          if (e != c) v *= (1 + (a >> e & 1 ? 1.0 : -1.0) * xi[e]) / 2;
        dn[c] = v;
      }
      const auto b = [&](int row, int comp, double v) { B[row * m + a * d + comp] = v; };
      for (int c = 0; c < d; ++c) b(c, c, dn[c]);
      if (d == 2) {
        b(2, 0, dn[1]), b(2, 1, dn[0]);
      } else {
        b(3, 1, dn[2]), b(3, 2, dn[1]);  // yz
        b(4, 0, dn[2]), b(4, 2, dn[0]);  // xz
        b(5, 0, dn[1]), b(5, 1, dn[0]);  // xy
      }
    }
    for (int i = 0; i < m; ++i)
      for (int j = i; j < m; ++j) {  // the upper triangle, mirrored: K exactly symmetric
        double s = 0;
        for (int r = 0; r < voigt; ++r)
          for (int q = 0; q < voigt; ++q) s += B[r * m + i] * D[r * voigt + q] * B[q * m + j];
        K[i * m + j] += weight * s;
      }
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < i; ++j) K[i * m + j] = K[j * m + i];
  return K;
}
}  // namespace detail

template <typename T, typename O = index_t>
elasticity_system<T, O> elasticity(int d, index_t N, double nu = 0.3, bool clamp = true) {
  LA_EXPECTS(d == 2 || d == 3, "elasticity: the dimension must be 2 or 3");
  LA_EXPECTS(N >= 2 && N <= (d == 2 ? 4096 : 256), "elasticity" + std::to_string(d) + "d(" + std::to_string(N) +
                                                        "): the nodes a side must be in [2, " + (d == 2 ? "4096" : "256") + "]");
  LA_EXPECTS(nu >= 0 && nu < 0.5, "elasticity: Poisson's ratio must be in [0, 0.5)");
  const double h = 1.0 / (N - 1);
  const int nodes_e = 1 << d, m = nodes_e * d;
  const std::vector<double> K = detail::q1_stiffness(d, h, nu);
  const std::int64_t nz = d == 3 ? N : 1, total = std::int64_t(N) * N * nz;
  // Free nodes renumbered (x = 0 clamped away), in the grid's order.
  std::vector<std::int64_t> free_of(static_cast<std::size_t>(total), -1);
  std::int64_t nfree = 0;
  for (std::int64_t p = 0; p < total; ++p)
    if (!clamp || p % N != 0) free_of[p] = nfree++;
  // The exact count (each free node's free neighbours, d x d entries each), checked before anything is built.
  std::int64_t nnz = 0;
  for (std::int64_t p = 0; p < total; ++p) {
    if (free_of[p] < 0) continue;
    const std::int64_t pi = p % N, pj = p / N % N, pk = p / (std::int64_t(N) * N);
    for (std::int64_t dk = (d == 3 ? -1 : 0); dk <= (d == 3 ? 1 : 0); ++dk)
      for (std::int64_t dj = -1; dj <= 1; ++dj)
        for (std::int64_t di = -1; di <= 1; ++di) {
          const std::int64_t qi = pi + di, qj = pj + dj, qk = pk + dk;
          if (qi >= 0 && qj >= 0 && qk >= 0 && qi < N && qj < N && qk < nz && free_of[qi + N * (qj + std::int64_t(N) * qk)] >= 0)
            nnz += std::int64_t(d) * d;
        }
  }
  detail::check_generated<T, O>(nfree * d, nnz, "a " + std::to_string(d) + "D elasticity matrix on " + std::to_string(N) + "^" +
                                                     std::to_string(d) + " nodes");
  elasticity_system<T, O> s;
  s.dim = d;
  s.coordinates.reserve(static_cast<std::size_t>(nfree * d));
  std::vector<O> rp{0};
  std::vector<index_t> ci;
  std::vector<T> v;
  rp.reserve(static_cast<std::size_t>(nfree * d) + 1), ci.reserve(static_cast<std::size_t>(nnz)), v.reserve(static_cast<std::size_t>(nnz));
  const int offsets = d == 2 ? 9 : 27;
  std::vector<double> block(static_cast<std::size_t>(offsets * d * d));
  for (std::int64_t p = 0; p < total; ++p) {
    if (free_of[p] < 0) continue;
    const std::int64_t pi = p % N, pj = p / N % N, pk = p / (std::int64_t(N) * N);
    s.coordinates.push_back(pi * h), s.coordinates.push_back(pj * h);
    if (d == 3) s.coordinates.push_back(pk * h);
    std::fill(block.begin(), block.end(), 0.0);
    // The elements around p (lower corners p - c, c in {0,1}^d), in a fixed order; each adds
    // K_e[local p][local q] to the block of neighbour q = p + delta.
    for (int c = 0; c < nodes_e; ++c) {
      const std::int64_t li = pi - (c & 1), lj = pj - (c >> 1 & 1), lk = d == 3 ? pk - (c >> 2 & 1) : 0;
      if (li < 0 || lj < 0 || lk < 0 || li + 1 >= N || lj + 1 >= N || (d == 3 && lk + 1 >= N)) continue;
      const int a = c;  // p's local index in that element
      for (int b = 0; b < nodes_e; ++b) {
        const int di = (b & 1) - (c & 1), dj = (b >> 1 & 1) - (c >> 1 & 1), dk = d == 3 ? (b >> 2 & 1) - (c >> 2 & 1) : 0;
        const int off = (di + 1) + 3 * (dj + 1) + (d == 3 ? 9 * (dk + 1) : 0);
        for (int r = 0; r < d; ++r)
          for (int q = 0; q < d; ++q) block[(off * d + r) * d + q] += K[(a * d + r) * m + b * d + q];
      }
    }
    // Rows p*d + r: the neighbours in ascending node order (offsets by z, then y, then x).
    for (int r = 0; r < d; ++r) {
      for (int off = 0; off < offsets; ++off) {
        const int di = off % 3 - 1, dj = off / 3 % 3 - 1, dk = d == 3 ? off / 9 - 1 : 0;
        const std::int64_t qi = pi + di, qj = pj + dj, qk = pk + dk;
        if (qi < 0 || qj < 0 || qk < 0 || qi >= N || qj >= N || qk >= nz) continue;
        const std::int64_t q = qi + N * (qj + std::int64_t(N) * qk);
        if (free_of[q] < 0) continue;
        for (int c = 0; c < d; ++c) {
          const double x = block[(off * d + r) * d + c];  // kept where it cancels to 0: the full node stencil
          ci.push_back(static_cast<index_t>(free_of[q] * d + c));
          v.push_back(static_cast<T>(x));
        }
      }
      rp.push_back(static_cast<O>(ci.size()));
    }
  }
  const index_t n = static_cast<index_t>(nfree * d);
  s.a = csr_matrix<T, O>(n, n, std::move(rp), std::move(ci), std::move(v));
  return s;
}

/// The free nodes' coordinates of elasticity(d, N, nu, clamp) without building the matrix
/// (node-major, in its numbering): what la solve attaches to a gen:elasticity system.
inline std::vector<double> elasticity_coordinates(int d, index_t N, bool clamp = true) {
  LA_EXPECTS((d == 2 || d == 3) && N >= 2, "elasticity_coordinates: the dimension must be 2 or 3 and N at least 2");
  const double h = 1.0 / (N - 1);
  const std::int64_t nz = d == 3 ? N : 1, total = std::int64_t(N) * N * nz;
  std::vector<double> c;
  c.reserve(static_cast<std::size_t>(total * d));
  for (std::int64_t p = 0; p < total; ++p) {
    const std::int64_t pi = p % N, pj = p / N % N, pk = p / (std::int64_t(N) * N);
    if (clamp && pi == 0) continue;
    c.push_back(pi * h), c.push_back(pj * h);
    if (d == 3) c.push_back(pk * h);
  }
  return c;
}

/// The rigid-body modes at the nodes (coordinates node-major, d = 2 or 3): translations, then
/// rotations (2D: (-y, x); 3D: about z (-y, x, 0), about x (0, -z, y), about y (z, 0, -x)),
/// column-major (nodes * d) x (3 or 6).
inline std::vector<double> rigid_body_modes(const std::vector<double>& coordinates, int d) {
  LA_EXPECTS(d == 2 || d == 3, "rigid_body_modes: the dimension must be 2 or 3");
  LA_EXPECTS(coordinates.size() % static_cast<std::size_t>(d) == 0, "rigid_body_modes: the coordinates are not nodes x d");
  const std::size_t nodes = coordinates.size() / d, n = nodes * d;
  const int k = d == 2 ? 3 : 6;
  std::vector<double> b(n * k, 0.0);
  for (std::size_t p = 0; p < nodes; ++p) {
    const double x = coordinates[p * d], y = coordinates[p * d + 1], z = d == 3 ? coordinates[p * d + 2] : 0;
    for (int c = 0; c < d; ++c) b[c * n + p * d + c] = 1;  // translations
    const auto set = [&](int mode, double ux, double uy, double uz) {
      b[mode * n + p * d] = ux, b[mode * n + p * d + 1] = uy;
      if (d == 3) b[mode * n + p * d + 2] = uz;
    };
    set(d, -y, x, 0);
    if (d == 3) set(4, 0, -z, y), set(5, z, 0, -x);
  }
  return b;
}

}  // namespace la
