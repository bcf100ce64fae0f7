// The sparse direct solver's fronts factored and solved on the host (detail/fronts.hpp): the
// plain sequential oracle, the blocked and threaded factorization (bit for bit the oracle's)
// that the host's direct method and la::sparse_direct_solver without a context run, the
// supernodal solve and its transpose, the long double residual, and the factors in the
// up-looking oracle's layout for the tests.
#include <algorithm>
#include <cmath>
#include <vector>

#include <la/parallel.hpp>
#include <la/solvers/detail/gmres_cycle.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>

namespace la::sparse_detail {

namespace {
/// Each front's children, in increasing order, from the extend-add items (a child appears in
/// its parent's items only): linear in the items (arrow's root has 46,498 children).
std::vector<std::vector<int>> children_of(const front_symbols& f) {
  std::vector<std::vector<int>> children(f.f_m.size());
  std::vector<char> seen(f.f_m.size(), 0);
  for (std::size_t i = 0; i < f.item_front.size(); ++i)
    for (long p = f.item_ptr[i]; p < f.item_ptr[i + 1]; ++p) {
      const int c = f.con_child[static_cast<std::size_t>(p)];
      if (!seen[static_cast<std::size_t>(c)]) seen[static_cast<std::size_t>(c)] = 1, children[static_cast<std::size_t>(f.item_front[i])].push_back(c);
    }
  for (auto& ch : children) std::sort(ch.begin(), ch.end());
  return children;
}
/// sum_t row[t] * y[t] over [0, n): four running sums (a dependent chain of adds, the single
/// sum's latency, bounded the host's solve).
inline double dot4(const double* row, const double* y, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int t = 0;
  for (; t + 4 <= n; t += 4) s0 += row[t] * y[t], s1 += row[t + 1] * y[t + 1], s2 += row[t + 2] * y[t + 2], s3 += row[t + 3] * y[t + 3];
  for (; t < n; ++t) s0 += row[t] * y[t];
  return (s0 + s1) + (s2 + s3);
}

/// L D L^T: the update matrix's upper triangle (rows and columns [nc, m)) from its lower
/// one, for the parent's extend-add, which reads whole rows.
void mirror_update(double* A, int m, int nc) {
  for (int i = nc; i < m; ++i)
    for (int j = i + 1; j < m; ++j) A[static_cast<long>(i) * m + j] = A[static_cast<long>(j) * m + i];
}
}  // namespace

std::vector<double> factor_fronts_host(const front_symbols& f, const std::vector<double>& values, index_t& perturbed,
                                       index_t& bad_column) {
  std::vector<double> F(static_cast<std::size_t>(f.front_total), 0.0);
  for (std::size_t e = 0; e < f.ent_pos.size(); ++e)
    F[static_cast<std::size_t>(f.ent_pos[e])] = values[static_cast<std::size_t>(f.ent_src[e])] * f.ent_scale[e];
  perturbed = 0;
  index_t bad = 0;  // 1-based, the analysis's numbering
  const std::vector<std::vector<int>> children = children_of(f);
  for (std::size_t s = 0; s < f.f_m.size(); ++s) {  // children (lower numbers) first
    const int m = f.f_m[s], nc = f.f_nc[s];
    double* A = F.data() + f.f_off[s];
    for (int c : children[s]) {  // extend-add: U_c into F_s through c's map
      const auto cs = static_cast<std::size_t>(c);
      const int mc = f.f_m[cs], ncc = f.f_nc[cs];
      const double* U = F.data() + f.f_off[cs];
      const int* rel = f.f_rel.data() + f.f_map[cs];
      for (int q = 0; q < mc - ncc; ++q)
        for (int r = 0; r < mc - ncc; ++r)
          A[static_cast<long>(rel[q]) * m + rel[r]] += U[static_cast<long>(ncc + q) * mc + ncc + r];
    }
    for (int k = 0; k < nc; ++k) {
      double p = A[static_cast<long>(k) * m + k];
      if (f.spd) {
        if (!(p > 0)) {
          if (bad == 0 || f.f_first[s] + k + 1 < bad) bad = f.f_first[s] + k + 1;
          p = 1;
        }
      } else if (!(std::abs(p) >= f.tiny)) {
        p = p < 0 ? -f.tiny : f.tiny;
        ++perturbed;
      }
      A[static_cast<long>(k) * m + k] = p;
      // L D L^T (SPD): U's row k is column k before its division (A's symmetry), and only the
      // lower triangle is updated: half the multiply-adds.
      if (f.spd)
        for (int j = k + 1; j < m; ++j) A[static_cast<long>(k) * m + j] = A[static_cast<long>(j) * m + k];
      for (int i = k + 1; i < m; ++i) A[static_cast<long>(i) * m + k] /= p;
      for (int i = k + 1; i < m; ++i) {
        const double l = A[static_cast<long>(i) * m + k];
        const int j_end = f.spd ? i + 1 : m;
        for (int j = k + 1; j < j_end; ++j) A[static_cast<long>(i) * m + j] -= l * A[static_cast<long>(k) * m + j];
      }
    }
    if (f.spd) mirror_update(A, m, nc);
  }
  bad_column = bad ? f.an.perm[static_cast<std::size_t>(bad - 1)] + 1 : 0;
  return F;
}

std::vector<double> factor_fronts_threaded(const front_symbols& f, const std::vector<double>& values, int threads,
                                           index_t& perturbed, index_t& bad_column) {
  std::vector<double> F(static_cast<std::size_t>(f.front_total), 0.0);
  for (std::size_t e = 0; e < f.ent_pos.size(); ++e)
    F[static_cast<std::size_t>(f.ent_pos[e])] = values[static_cast<std::size_t>(f.ent_src[e])] * f.ent_scale[e];
  const std::size_t ns = f.f_m.size();
  const std::vector<std::vector<int>> children = children_of(f);
  std::vector<index_t> front_perturbed(ns, 0), front_bad(ns, 0);
  constexpr int nb = 32;
  // Front s: the extend-add, then the partial LU blocked by nb columns, the U12 rows and the
  // trailing rows shared among `inside` threads (interleaved rows: each entry's operations and
  // their order are the plain oracle's, so the factors are bit for bit the oracle's).
  auto front = [&](std::size_t s, int inside) {
    const int m = f.f_m[s], nc = f.f_nc[s];
    double* A = F.data() + f.f_off[s];
    for (int c : children[s]) {
      const auto cs = static_cast<std::size_t>(c);
      const int mc = f.f_m[cs], ncc = f.f_nc[cs];
      const double* U = F.data() + f.f_off[cs];
      const int* rel = f.f_rel.data() + f.f_map[cs];
      for (int q = 0; q < mc - ncc; ++q) {
        double* row = A + static_cast<long>(rel[q]) * m;
        const double* u = U + static_cast<long>(ncc + q) * mc + ncc;
        for (int r = 0; r < mc - ncc; ++r) row[rel[r]] += u[r];
      }
    }
    for (int k0 = 0; k0 < nc; k0 += nb) {
      const int k1 = std::min(nc, k0 + nb);
      for (int k = k0; k < k1; ++k) {  // the panel: its columns, every row below
        double p = A[static_cast<long>(k) * m + k];
        if (f.spd) {
          if (!(p > 0)) {
            if (front_bad[s] == 0) front_bad[s] = f.f_first[s] + k + 1;
            p = 1;
          }
        } else if (!(std::abs(p) >= f.tiny)) {
          p = p < 0 ? -f.tiny : f.tiny;
          ++front_perturbed[s];
        }
        A[static_cast<long>(k) * m + k] = p;
        if (f.spd)  // L D L^T: U's row k is column k before its division (the plain version's order)
          for (int j = k + 1; j < m; ++j) A[static_cast<long>(k) * m + j] = A[static_cast<long>(j) * m + k];
        for (int i = k + 1; i < m; ++i) A[static_cast<long>(i) * m + k] /= p;
        for (int i = k + 1; i < m; ++i) {
          const double l = A[static_cast<long>(i) * m + k];
          double* row = A + static_cast<long>(i) * m;
          const double* urow = A + static_cast<long>(k) * m;
          const int j_end = f.spd ? std::min(k1, i + 1) : k1;  // SPD: the lower triangle only
          for (int j = k + 1; j < j_end; ++j) row[j] -= l * urow[j];
        }
      }
      if (k1 == m) continue;
      // Threads only where the panel's trailing work pays for starting them (about 20 us each):
      // a million multiply-adds a thread.
      const double trailing = double(m - k1) * double(m - k1) * double(k1 - k0) * (f.spd ? 0.5 : 1.0);
      const int t_in = std::max(1, std::min(inside, static_cast<int>(trailing / 1e6)));
      if (!f.spd) detail::parallel_for(t_in, [&](int t) {
        // U12: the panel's rows right of it (rows in order, each needs the ones above it).
        const int per = (m - k1 + t_in - 1) / t_in, j0 = k1 + t * per, j1 = std::min(m, j0 + per);
        for (int r = k0 + 1; r < k1; ++r) {
          double* row = A + static_cast<long>(r) * m;
          for (int k = k0; k < r; ++k) {
            const double l = row[k];
            const double* urow = A + static_cast<long>(k) * m;
            for (int j = j0; j < j1; ++j) row[j] -= l * urow[j];
          }
        }
      });
      detail::parallel_for(t_in, [&](int t) {  // the trailing rows (SPD: their lower triangle)
        for (int i = k1 + t; i < m; i += t_in) {
          double* row = A + static_cast<long>(i) * m;
          const int j_end = f.spd ? i + 1 : m;
          for (int k = k0; k < k1; ++k) {
            const double l = row[k];
            const double* urow = A + static_cast<long>(k) * m;
            for (int j = k1; j < j_end; ++j) row[j] -= l * urow[j];
          }
        }
      });
    }
    if (f.spd) mirror_update(A, m, nc);
  };
  for (std::size_t l = 0; l < f.levels(); ++l) {
    const std::size_t b = f.level_ptr[l], e = f.level_ptr[l + 1], count = e - b;
    double work = 0;  // the level's multiply-adds, about: threads only where they pay (as above)
    for (std::size_t q = b; q < e; ++q) {
      const auto fs = static_cast<std::size_t>(f.level_list[q]);
      work += double(f.f_m[fs]) * double(f.f_m[fs]) * double(f.f_nc[fs]);
    }
    if (threads > 1 && count >= static_cast<std::size_t>(2 * threads) && work > 2e6) {
      detail::parallel_for(threads, [&](int t) {
        for (std::size_t q = b + static_cast<std::size_t>(t); q < e; q += static_cast<std::size_t>(threads))
          front(static_cast<std::size_t>(f.level_list[q]), 1);
      });
    } else {
      for (std::size_t q = b; q < e; ++q) front(static_cast<std::size_t>(f.level_list[q]), threads);
    }
  }
  perturbed = 0;
  index_t bad = 0;
  for (std::size_t s = 0; s < ns; ++s) {
    perturbed += front_perturbed[s];
    if (front_bad[s] && (bad == 0 || front_bad[s] < bad)) bad = front_bad[s];
  }
  bad_column = bad ? f.an.perm[static_cast<std::size_t>(bad - 1)] + 1 : 0;
  return F;
}

void solve_fronts_host(const front_symbols& f, const std::vector<double>& F, double* b, bool transposed) {
  // A = P^T Dr^-1 Q^T (L U) Q Dc^-1. A x = b: y = Q Dr P b; L U y' = y; x = Dc Q^T y'.
  // A^T x = b: y = Q Dc b; U^T L^T y' = y; x = P^T Dr Q^T y' (the two permutations' roles swap).
  const index_t n = f.n;
  const std::vector<index_t>& gi = transposed ? f.out_idx : f.in_idx;
  const std::vector<double>& gs = transposed ? f.out_scale : f.in_scale;
  const std::vector<index_t>& si = transposed ? f.in_idx : f.out_idx;
  const std::vector<double>& ss = transposed ? f.in_scale : f.out_scale;
  std::vector<double> y(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) y[static_cast<std::size_t>(k)] = gs[static_cast<std::size_t>(k)] * b[gi[static_cast<std::size_t>(k)]];
  const std::size_t ns = f.f_m.size();
  // Every pass reads the fronts along their rows (row-major, contiguous): L by rows (dot
  // products), U by rows, L^T and U^T by rows scattered. Walking L's columns, a stride of m
  // doubles a step, had the solve at 30% of a 2D Poisson 300^2 direct solve on the host.
  for (std::size_t s = 0; s < ns; ++s) {  // forward: L (unit) or U^T
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    double* yf = y.data() + first;
    if (transposed) {  // U^T: U's row t scattered once y_t is final
      for (int t = 0; t < nc; ++t) {
        const double* row = A + static_cast<long>(t) * m;
        const double yt = (yf[t] /= row[t]);
        for (int a = t + 1; a < nc; ++a) yf[a] -= row[a] * yt;
        for (int a = nc; a < m; ++a) y[static_cast<std::size_t>(rows[a])] -= row[a] * yt;
      }
      continue;
    }
    for (int a = 1; a < m; ++a) {  // L: row a's dot product with the front's solved part
      const double* row = A + static_cast<long>(a) * m;
      const double v = dot4(row, yf, std::min(a, nc));
      if (a < nc) yf[a] -= v;
      else y[static_cast<std::size_t>(rows[a])] -= v;
    }
  }
  for (std::size_t s = ns; s-- > 0;) {  // backward: U or L^T (unit)
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    double* yf = y.data() + first;
    if (transposed) {  // L^T: each row of L below and inside, scattered once its x is final
      for (int a = m - 1; a >= 1; --a) {
        const double* row = A + static_cast<long>(a) * m;
        const double xa = a < nc ? yf[a] : y[static_cast<std::size_t>(rows[a])];
        const int to = std::min(a, nc);
        for (int t = 0; t < to; ++t) yf[t] -= row[t] * xa;
      }
      continue;
    }
    for (int t = nc - 1; t >= 0; --t) {  // U: row t's dot product
      const double* row = A + static_cast<long>(t) * m;
      double g0 = 0, g1 = 0;  // the rows below gathered, two running sums
      int a = nc;
      for (; a + 2 <= m; a += 2) g0 += row[a] * y[static_cast<std::size_t>(rows[a])], g1 += row[a + 1] * y[static_cast<std::size_t>(rows[a + 1])];
      if (a < m) g0 += row[a] * y[static_cast<std::size_t>(rows[a])];
      yf[t] = (yf[t] - dot4(row + t + 1, yf + t + 1, nc - t - 1) - (g0 + g1)) / row[t];
    }
  }
  for (index_t k = 0; k < n; ++k) b[si[static_cast<std::size_t>(k)]] = ss[static_cast<std::size_t>(k)] * y[static_cast<std::size_t>(k)];
}

void solve_fronts_host_columns(const front_symbols& f, const std::vector<double>& F, double* b, index_t k) {
  // solve_fronts_host's passes with k columns at once: y holds row i's k values together, so
  // each front row is read once for all k (the solve is bound by reading the fronts: 140 MB
  // for a 2D Poisson 300^2, against 0.7 MB of one column's vectors).
  const index_t n = f.n;
  const auto kk = static_cast<std::size_t>(k);
  std::vector<double> y(static_cast<std::size_t>(n) * kk), v(kk);
  for (index_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < kk; ++c)
      y[static_cast<std::size_t>(i) * kk + c] =
          f.in_scale[static_cast<std::size_t>(i)] * b[c * static_cast<std::size_t>(n) + static_cast<std::size_t>(f.in_idx[static_cast<std::size_t>(i)])];
  const std::size_t ns = f.f_m.size();
  for (std::size_t s = 0; s < ns; ++s) {  // forward: L (unit), a row's products with the front's solved rows
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    double* yf = y.data() + static_cast<std::size_t>(first) * kk;
    for (int a = 1; a < m; ++a) {
      const double* row = A + static_cast<long>(a) * m;
      std::fill(v.begin(), v.end(), 0.0);
      const int to = std::min(a, nc);
      for (int t = 0; t < to; ++t) {
        const double l = row[t];
        const double* yt = yf + static_cast<std::size_t>(t) * kk;
        for (std::size_t c = 0; c < kk; ++c) v[c] += l * yt[c];
      }
      double* out = a < nc ? yf + static_cast<std::size_t>(a) * kk : y.data() + static_cast<std::size_t>(rows[a]) * kk;
      for (std::size_t c = 0; c < kk; ++c) out[c] -= v[c];
    }
  }
  for (std::size_t s = ns; s-- > 0;) {  // backward: U, a row's products with the rows below and its own solved part
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    double* yf = y.data() + static_cast<std::size_t>(first) * kk;
    for (int t = nc - 1; t >= 0; --t) {
      const double* row = A + static_cast<long>(t) * m;
      std::fill(v.begin(), v.end(), 0.0);
      for (int a = nc; a < m; ++a) {
        const double u = row[a];
        const double* ya = y.data() + static_cast<std::size_t>(rows[a]) * kk;
        for (std::size_t c = 0; c < kk; ++c) v[c] += u * ya[c];
      }
      for (int a = t + 1; a < nc; ++a) {
        const double u = row[a];
        const double* ya = yf + static_cast<std::size_t>(a) * kk;
        for (std::size_t c = 0; c < kk; ++c) v[c] += u * ya[c];
      }
      double* yt = yf + static_cast<std::size_t>(t) * kk;
      for (std::size_t c = 0; c < kk; ++c) yt[c] = (yt[c] - v[c]) / row[t];
    }
  }
  for (index_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < kk; ++c)
      b[c * static_cast<std::size_t>(n) + static_cast<std::size_t>(f.out_idx[static_cast<std::size_t>(i)])] =
          f.out_scale[static_cast<std::size_t>(i)] * y[static_cast<std::size_t>(i) * kk + c];
}

double residual_host(const csr_matrix<double, count_t>& a, double a_inf, const double* b, const std::vector<double>& x,
                     std::vector<double>& r, double& rel) {
  long double r2 = 0, b2 = 0;
  double rmax = 0, xmax = 0, bmax = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    long double s = b[i];
    for (count_t q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q)
      s -= static_cast<long double>(a.values()[q]) * x[static_cast<std::size_t>(a.col_idx()[q])];
    r[static_cast<std::size_t>(i)] = static_cast<double>(s);
    r2 += s * s, b2 += static_cast<long double>(b[i]) * b[i];
    rmax = std::max(rmax, std::abs(static_cast<double>(s))), bmax = std::max(bmax, std::abs(b[i]));
    xmax = std::max(xmax, std::abs(x[static_cast<std::size_t>(i)]));
  }
  rel = b2 > 0 ? static_cast<double>(std::sqrt(r2 / b2)) : (r2 > 0 ? INFINITY : 0.0);
  const double den = a_inf * xmax + bmax;
  return !std::isfinite(rmax) ? INFINITY : den > 0 ? rmax / den : (rmax > 0 ? INFINITY : 0.0);
}

/// GMRES-based refinement's basis on the host (solvers/detail/gmres_cycle.hpp's B).
struct host_refinement::basis {
  const csr_matrix<double, count_t>& a;
  const front_symbols& f;
  const std::vector<double>& F;
  std::vector<double> V, d;
  index_t n;
  basis(const csr_matrix<double, count_t>& aa, const front_symbols& ff, const std::vector<double>& FF, int m)
      : a(aa), f(ff), F(FF), V(static_cast<std::size_t>(m + 1) * static_cast<std::size_t>(aa.rows())),
        d(static_cast<std::size_t>(aa.rows())), n(aa.rows()) {}
  double* vec(int j) { return V.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(n); }
  double norm(int j) {
    const double* v = vec(j);
    double s = 0;
    for (index_t i = 0; i < n; ++i) s += v[i] * v[i];
    return std::sqrt(s);
  }
  void scale(int j, double f) {
    double* v = vec(j);
    for (index_t i = 0; i < n; ++i) v[i] *= f;
  }
  void apply(int j) {  // V_{j+1} = M^-1 A V_j
    const double* v = vec(j);
    double* w = vec(j + 1);
    const auto& rp = a.row_ptr();
    const auto& ci = a.col_idx();
    const auto& av = a.values();
    for (index_t i = 0; i < n; ++i) {
      double s = 0;
      for (count_t q = rp[i]; q < rp[i + 1]; ++q) s += av[q] * v[ci[q]];
      w[i] = s;
    }
    solve_fronts_host(f, F, w);
  }
  void project(int j, std::vector<double>& h) {
    double* w = vec(j + 1);
    for (int b = 0; b <= j; ++b) {
      const double* v = vec(b);
      double s = 0;
      for (index_t i = 0; i < n; ++i) s += v[i] * w[i];
      h[static_cast<std::size_t>(b)] = s;
    }
    for (int b = 0; b <= j; ++b) {
      const double* v = vec(b);
      for (index_t i = 0; i < n; ++i) w[i] -= h[static_cast<std::size_t>(b)] * v[i];
    }
  }
  void combine(int count, const std::vector<double>& y) {
    std::fill(d.begin(), d.end(), 0.0);
    for (int b = 0; b < count; ++b) {
      const double* v = vec(b);
      for (index_t i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] += y[static_cast<std::size_t>(b)] * v[i];
    }
  }
};

host_refinement::host_refinement(const csr_matrix<double, count_t>& a, double a_inf, const front_symbols& f,
                                 const std::vector<double>& F, const sparse_direct_options& o)
    : a_(a), a_inf_(a_inf), f_(f), F_(F), o_(o), r_(static_cast<std::size_t>(a.rows())), best_(r_.size()) {}
host_refinement::~host_refinement() = default;

sparse_direct_report host_refinement::solve(const double* b, std::vector<double>& x) {
  sparse_direct_report rep;
  const index_t n = a_.rows();
  x.assign(b, b + n);
  solve_fronts_host(f_, F_, x.data());
  // r = b - A x in long double; the backward error, rel the relative residual.
  double rel = 0, be = residual_host(a_, a_inf_, b, x, r_, rel);
  best_ = x;
  const int m = static_cast<int>(std::min<index_t>(n, o_.gmres_restart));
  auto step = [&](bool gmres, double& sbe, double& srel) {
    if (gmres) {
      if (!basis_) basis_ = std::make_unique<basis>(a_, f_, F_, m);
      std::copy(r_.begin(), r_.end(), basis_->vec(0));
      solve_fronts_host(f_, F_, basis_->vec(0));
      const int its = refine_detail::gmres_cycle(*basis_, m, o_.gmres_tolerance);
      rep.gmres_iterations += its;
      if (its > 0)
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += basis_->d[i];
    } else {
      solve_fronts_host(f_, F_, r_.data());  // the correction over the residual
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += r_[i];
    }
    sbe = residual_host(a_, a_inf_, b, x, r_, srel);
  };
  rep.refinement_steps = refine(
      o_, be, rel, step, [&] { best_ = x; },
      [&] {
        x = best_;
        double ignored = 0;
        residual_host(a_, a_inf_, b, x, r_, ignored);
      });
  x = best_;
  rep.backward_error = be, rep.relative_residual = rel;
  return rep;
}

sparse_direct_solver::host_factors fronts_to_factors(const front_symbols& p, const std::vector<double>& f) {
  sparse_direct_solver::host_factors h;
  const index_t n = p.n;
  h.l_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  h.u_diag.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t s = 0; s < p.f_m.size(); ++s)
    for (int t = 0; t < p.f_nc[s]; ++t) h.l_ptr[static_cast<std::size_t>(p.f_first[s] + t) + 1] = p.f_m[s] - t - 1;
  for (index_t j = 0; j < n; ++j) h.l_ptr[static_cast<std::size_t>(j) + 1] += h.l_ptr[static_cast<std::size_t>(j)];
  h.u_ptr = h.l_ptr;
  h.l_idx.resize(static_cast<std::size_t>(h.l_ptr.back())), h.u_idx = h.l_idx;
  h.l_val.resize(h.l_idx.size()), h.u_val = h.l_val;
  for (std::size_t s = 0; s < p.f_m.size(); ++s) {
    const int m = p.f_m[s];
    const double* A = f.data() + p.f_off[s];
    const int* rows = p.f_rows.data() + p.f_vec[s];
    for (int t = 0; t < p.f_nc[s]; ++t) {
      const auto j = static_cast<std::size_t>(p.f_first[s] + t);
      h.u_diag[j] = A[static_cast<long>(t) * m + t];
      count_t q = h.l_ptr[j];
      for (int a = t + 1; a < m; ++a, ++q) {
        h.l_idx[static_cast<std::size_t>(q)] = rows[a], h.l_val[static_cast<std::size_t>(q)] = A[static_cast<long>(a) * m + t];
        h.u_idx[static_cast<std::size_t>(q)] = rows[a], h.u_val[static_cast<std::size_t>(q)] = A[static_cast<long>(t) * m + a];
      }
    }
  }
  return h;
}

}  // namespace la::sparse_detail
