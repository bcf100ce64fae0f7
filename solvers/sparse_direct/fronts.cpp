// The sparse direct solver's symbols and the host oracle of its numeric factorization
// (detail/fronts.hpp; supernodal.cu says what the symbols hold and why).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/parallel.hpp>
#include <la/solvers/precond/matching.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>

namespace la::sparse_detail {
namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }
}  // namespace

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
}  // namespace

front_symbols build_fronts(const csr_matrix<double, count_t>& a, bool matched, fill_ordering ordering, double flop_rate) {
  const auto t0 = clock_type::now();
  front_symbols fs;
  const index_t n = a.rows();
  fs.n = n;
  fs.spd = !matched;
  auto& [_n, _spd, singular, tiny, an, in_idx, out_idx, in_scale, out_scale, ent_src, ent_scale, ent_pos, f_off, f_vec, f_map, f_m,
         f_nc, f_first, f_rows, f_rel, front_total, vec_total, level_list, level_ptr, item_front, item_row, con_child, con_row,
         item_ptr, level_items, seconds] = fs;
  // M = Dr P A Dc, its entries by rows with their source in A.
  std::vector<index_t> rp(static_cast<std::size_t>(n));
  std::vector<double> dr(static_cast<std::size_t>(n), 1.0), dc(static_cast<std::size_t>(n), 1.0);
  std::iota(rp.begin(), rp.end(), 0);
  if (matched) {
    const diagonal_matching mt = max_product_matching(a);
    if (mt.unmatched > 0) {
      singular = mt.first_unmatched + 1;
      seconds = since(t0);
      return fs;
    }
    rp = mt.perm, dr = mt.row_scale, dc = mt.col_scale;
  }
  const auto& ap = a.row_ptr();
  const auto& ai = a.col_idx();
  const auto& av = a.values();
  std::vector<count_t> mptr(static_cast<std::size_t>(n) + 1, 0);
  std::vector<index_t> midx;
  std::vector<double> mval;
  std::vector<count_t> msrc;
  midx.reserve(ai.size()), mval.reserve(ai.size()), msrc.reserve(ai.size());
  double mmax = 0;
  for (index_t j = 0; j < n; ++j) {
    const index_t r = rp[static_cast<std::size_t>(j)];
    for (count_t p = ap[r]; p < ap[r + 1]; ++p) {
      const index_t c = ai[p];
      const double v = dr[static_cast<std::size_t>(r)] * av[p] * dc[static_cast<std::size_t>(c)];
      midx.push_back(c), mval.push_back(v), msrc.push_back(p);
      mmax = std::max(mmax, std::abs(v));
    }
    mptr[static_cast<std::size_t>(j) + 1] = static_cast<count_t>(midx.size());
  }
  tiny = std::sqrt(std::numeric_limits<double>::epsilon()) * (mmax > 0 ? mmax : 1.0);
  const csr_matrix<double, count_t> m(n, n, std::vector<count_t>(mptr), std::vector<index_t>(midx), std::vector<double>(mval));
  an = analyze_pattern(m, ordering, flop_rate);
  const std::vector<index_t>& q = an.perm;
  const std::vector<index_t>& qi = an.inverse;
  // The solve's permutations: y[k] = Dr[rp[Q[k]]] b[rp[Q[k]]]; x[Q[k]] = Dc[Q[k]] y[k].
  in_idx.resize(static_cast<std::size_t>(n)), out_idx.resize(in_idx.size());
  in_scale.resize(in_idx.size()), out_scale.resize(in_idx.size());
  for (index_t k = 0; k < n; ++k) {
    const index_t old = q[static_cast<std::size_t>(k)];
    in_idx[static_cast<std::size_t>(k)] = rp[static_cast<std::size_t>(old)];
    in_scale[static_cast<std::size_t>(k)] = dr[static_cast<std::size_t>(rp[static_cast<std::size_t>(old)])];
    out_idx[static_cast<std::size_t>(k)] = old;
    out_scale[static_cast<std::size_t>(k)] = dc[static_cast<std::size_t>(old)];
  }
  // Supernodes, their tree and row structures.
  // Relaxed amalgamation (CHOLMOD's rule): a supernode joins its parent where the parent's
  // columns follow its own (it is the parent's last child) and the explicit zeros the merged
  // front holds stay few: always up to 4 columns, below 80% zeros up to 16, 10% up to 48, 5%
  // beyond. The fundamental supernodes of a grid are mostly one or two columns; fronts that
  // small waste a thread block each, and the tree's levels stay as many.
  std::vector<index_t> sb{0};
  {
    const std::vector<index_t>& fb = an.super_begin;
    const std::size_t nf = fb.empty() ? 0 : fb.size() - 1;
    double nz = 0;  // the current group's true nonzeros
    for (std::size_t s = 0; s < nf; ++s) {
      const index_t f = fb[s], l = fb[s + 1];
      double nzs = 0;
      for (index_t j = f; j < l; ++j) nzs += static_cast<double>(an.col_count[static_cast<std::size_t>(j)]);
      const index_t gf = sb.back();  // the open group [gf, f) (empty when s starts one)
      bool merge = false;
      if (gf < f && an.parent[static_cast<std::size_t>(f - 1)] >= f && an.parent[static_cast<std::size_t>(f - 1)] < l) {
        const double nc = static_cast<double>(l - gf);
        const double nbelow = static_cast<double>(an.col_count[static_cast<std::size_t>(l - 1)] - 1);
        const double entries = nc * (nc + 1) / 2 + nc * nbelow;
        const double z = 1 - (nz + nzs) / entries;
        merge = nc <= 4 || (nc <= 16 && z < 0.8) || (nc <= 48 && z < 0.1) || z < 0.05;
      }
      if (merge) {
        nz += nzs;
      } else {
        if (gf < f) sb.push_back(f);
        nz = nzs;
      }
    }
    if (nf > 0) sb.push_back(fb[nf]);
  }
  const std::size_t ns = sb.size() - 1;
  std::vector<int> super_of(static_cast<std::size_t>(n));
  for (std::size_t s = 0; s < ns; ++s)
    for (index_t j = sb[s]; j < sb[s + 1]; ++j) super_of[static_cast<std::size_t>(j)] = static_cast<int>(s);
  std::vector<int> sparent(ns, -1);
  std::vector<std::vector<int>> children(ns);
  for (std::size_t s = 0; s < ns; ++s) {
    const index_t last = sb[s + 1] - 1;
    const index_t pj = an.parent[static_cast<std::size_t>(last)];
    if (pj >= 0) {
      sparent[s] = super_of[static_cast<std::size_t>(pj)];
      children[static_cast<std::size_t>(sparent[s])].push_back(static_cast<int>(s));
    }
  }
  // Mq's symmetrized pattern, by new column: the neighbours of each column with their entries.
  std::vector<count_t> cnt(static_cast<std::size_t>(n) + 1, 0);
  for (index_t j = 0; j < n; ++j)
    for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) {
      const index_t i2 = qi[static_cast<std::size_t>(j)], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
      ++cnt[static_cast<std::size_t>(std::min(i2, j2)) + 1];
    }
  for (index_t j = 0; j < n; ++j) cnt[static_cast<std::size_t>(j) + 1] += cnt[static_cast<std::size_t>(j)];
  std::vector<count_t> by_min(static_cast<std::size_t>(cnt[static_cast<std::size_t>(n)]));  // M entries by min(new row, new col)
  {
    std::vector<count_t> next(cnt.begin(), cnt.end() - 1);
    for (index_t j = 0; j < n; ++j)
      for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) {
        const index_t i2 = qi[static_cast<std::size_t>(j)], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
        by_min[static_cast<std::size_t>(next[static_cast<std::size_t>(std::min(i2, j2))]++)] = p;
      }
  }
  std::vector<index_t> mrow(midx.size());  // each M entry's row
  for (index_t j = 0; j < n; ++j)
    for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) mrow[static_cast<std::size_t>(p)] = j;
  auto new_row = [&](count_t p, index_t& i2, index_t& j2) {
    i2 = qi[static_cast<std::size_t>(mrow[static_cast<std::size_t>(p)])], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
  };
  std::vector<std::vector<int>> R(ns);
  std::vector<index_t> mark(static_cast<std::size_t>(n), -1);
  for (std::size_t s = 0; s < ns; ++s) {
    const index_t f = sb[s], l = sb[s + 1];
    std::vector<int>& rs = R[s];
    for (index_t j = f; j < l; ++j) rs.push_back(static_cast<int>(j)), mark[static_cast<std::size_t>(j)] = static_cast<index_t>(s);
    auto add = [&](index_t i) {
      if (i >= l && mark[static_cast<std::size_t>(i)] != static_cast<index_t>(s)) {
        mark[static_cast<std::size_t>(i)] = static_cast<index_t>(s);
        rs.push_back(static_cast<int>(i));
      }
    };
    for (index_t j = f; j < l; ++j)
      for (count_t e = cnt[static_cast<std::size_t>(j)]; e < cnt[static_cast<std::size_t>(j) + 1]; ++e) {
        index_t i2, j2;
        new_row(by_min[static_cast<std::size_t>(e)], i2, j2);
        add(std::max(i2, j2));
      }
    for (int c : children[s]) {
      const std::vector<int>& rc = R[static_cast<std::size_t>(c)];
      for (std::size_t t = static_cast<std::size_t>(sb[c + 1] - sb[c]); t < rc.size(); ++t) add(rc[t]);
    }
    std::sort(rs.begin() + (l - f), rs.end());
    // Its columns and its last column's rows below them (a merged supernode's structure).
    const count_t want = (l - f) + an.col_count[static_cast<std::size_t>(l - 1)] - 1;
    if (static_cast<count_t>(rs.size()) != want)
      throw error("sparse direct solver: supernode " + std::to_string(s) + " has " + std::to_string(rs.size()) +
                  " rows where the analysis counts " + std::to_string(want) + " (an internal error)");
  }
  // Levels: leaves 0, a parent one above its highest child; the fronts laid out level by level.
  std::vector<int> level(ns, 0);
  int levels = ns ? 1 : 0;
  for (std::size_t s = 0; s < ns; ++s)  // children before parents (postorder)
    if (sparent[s] >= 0) {
      level[static_cast<std::size_t>(sparent[s])] = std::max(level[static_cast<std::size_t>(sparent[s])], level[s] + 1);
      levels = std::max(levels, level[static_cast<std::size_t>(sparent[s])] + 1);
    }
  level_ptr.assign(static_cast<std::size_t>(levels) + 1, 0);
  for (std::size_t s = 0; s < ns; ++s) ++level_ptr[static_cast<std::size_t>(level[s]) + 1];
  for (int l = 0; l < levels; ++l) level_ptr[static_cast<std::size_t>(l) + 1] += level_ptr[static_cast<std::size_t>(l)];
  level_list.assign(ns, 0);
  {
    std::vector<std::size_t> next(level_ptr.begin(), level_ptr.end() - 1);
    for (std::size_t s = 0; s < ns; ++s) level_list[next[static_cast<std::size_t>(level[s])]++] = static_cast<int>(s);
  }
  f_m.assign(ns, 0), f_nc.assign(ns, 0), f_first.assign(ns, 0);
  f_off.assign(ns, 0), f_vec.assign(ns, 0), f_map.assign(ns, 0);
  front_total = 0, vec_total = 0;
  for (int l = 0; l < levels; ++l)
    for (std::size_t e = level_ptr[static_cast<std::size_t>(l)]; e < level_ptr[static_cast<std::size_t>(l) + 1]; ++e) {
      const auto s = static_cast<std::size_t>(level_list[e]);
      f_first[s] = static_cast<int>(sb[s]);
      f_nc[s] = static_cast<int>(sb[s + 1] - sb[s]);
      f_m[s] = static_cast<int>(R[s].size());
      f_off[s] = front_total;
      front_total += static_cast<long>(f_m[s]) * f_m[s];
    }
  f_rows.clear();
  for (std::size_t s = 0; s < ns; ++s) {
    f_vec[s] = vec_total;
    vec_total += f_m[s];
    f_rows.insert(f_rows.end(), R[s].begin(), R[s].end());
  }
  // Each child's map into its parent's front (rows below its own columns), and the
  // contribution items: per (parent, parent row), the (child, child row) pairs in child order.
  f_rel.clear();
  std::vector<int> pos(static_cast<std::size_t>(n), -1);
  std::vector<std::size_t> rcount, rnext;  // per parent row: its (child, row) pairs' range
  std::vector<std::pair<int, int>> pairs;
  item_front.clear(), item_row.clear(), con_child.clear(), con_row.clear();
  item_ptr.assign(1, 0);
  level_items.assign(static_cast<std::size_t>(levels) + 1, 0);
  for (int l = 0; l < levels; ++l) {
    for (std::size_t e = level_ptr[static_cast<std::size_t>(l)]; e < level_ptr[static_cast<std::size_t>(l) + 1]; ++e) {
      const auto s = static_cast<std::size_t>(level_list[e]);
      for (std::size_t t = 0; t < R[s].size(); ++t) pos[static_cast<std::size_t>(R[s][t])] = static_cast<int>(t);
      // The (child, row) pairs by the parent row they land on, in child order: a counting sort.
      const std::size_t m = R[s].size();
      rcount.assign(m + 1, 0);
      const std::size_t rel0 = f_rel.size();
      for (int c : children[s]) {
        const auto cs = static_cast<std::size_t>(c);
        f_map[cs] = static_cast<long>(f_rel.size());
        for (std::size_t t = static_cast<std::size_t>(f_nc[cs]); t < R[cs].size(); ++t) {
          const int at = pos[static_cast<std::size_t>(R[cs][t])];
          f_rel.push_back(at);
          ++rcount[static_cast<std::size_t>(at) + 1];
        }
      }
      for (std::size_t a = 0; a < m; ++a) rcount[a + 1] += rcount[a];
      pairs.resize(f_rel.size() - rel0);
      rnext.assign(rcount.begin(), rcount.end() - 1);
      for (int c : children[s]) {
        const auto cs = static_cast<std::size_t>(c);
        for (std::size_t t = static_cast<std::size_t>(f_nc[cs]); t < R[cs].size(); ++t) {
          const auto at = static_cast<std::size_t>(f_rel[static_cast<std::size_t>(f_map[cs]) + t - static_cast<std::size_t>(f_nc[cs])]);
          pairs[rnext[at]++] = {c, static_cast<int>(t) - f_nc[cs]};
        }
      }
      for (std::size_t a = 0; a < m; ++a) {
        if (rcount[a] == rcount[a + 1]) continue;
        item_front.push_back(static_cast<int>(s)), item_row.push_back(static_cast<int>(a));
        for (std::size_t q = rcount[a]; q < rcount[a + 1]; ++q) con_child.push_back(pairs[q].first), con_row.push_back(pairs[q].second);
        item_ptr.push_back(static_cast<long>(con_child.size()));
      }
    }
    level_items[static_cast<std::size_t>(l) + 1] = item_front.size();
  }
  // A's entries in the fronts: entry (i2, j2) of Mq goes to the front of min(i2, j2).
  ent_src.clear(), ent_scale.clear(), ent_pos.clear();
  ent_src.reserve(midx.size()), ent_scale.reserve(midx.size()), ent_pos.reserve(midx.size());
  for (std::size_t s = 0; s < ns; ++s) {
    for (std::size_t t = 0; t < R[s].size(); ++t) pos[static_cast<std::size_t>(R[s][t])] = static_cast<int>(t);
    for (index_t j = sb[s]; j < sb[s + 1]; ++j)
      for (count_t e = cnt[static_cast<std::size_t>(j)]; e < cnt[static_cast<std::size_t>(j) + 1]; ++e) {
        const count_t p = by_min[static_cast<std::size_t>(e)];
        index_t i2, j2;
        new_row(p, i2, j2);
        const index_t r = mrow[static_cast<std::size_t>(p)];
        const count_t src = msrc[static_cast<std::size_t>(p)];
        ent_src.push_back(src);
        ent_scale.push_back(dr[static_cast<std::size_t>(rp[static_cast<std::size_t>(r)])] *
                            dc[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])]);
        ent_pos.push_back(f_off[s] + static_cast<long>(pos[static_cast<std::size_t>(i2)]) * f_m[s] + pos[static_cast<std::size_t>(j2)]);
      }
  }
  seconds = since(t0);
  return fs;
}


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
    std::vector<int> ch = children[s];
    std::sort(ch.begin(), ch.end());
    for (int c : ch) {  // extend-add: U_c into F_s through c's map
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
      for (int i = k + 1; i < m; ++i) A[static_cast<long>(i) * m + k] /= p;
      for (int i = k + 1; i < m; ++i) {
        const double l = A[static_cast<long>(i) * m + k];
        for (int j = k + 1; j < m; ++j) A[static_cast<long>(i) * m + j] -= l * A[static_cast<long>(k) * m + j];
      }
    }
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
        for (int i = k + 1; i < m; ++i) A[static_cast<long>(i) * m + k] /= p;
        for (int i = k + 1; i < m; ++i) {
          const double l = A[static_cast<long>(i) * m + k];
          double* row = A + static_cast<long>(i) * m;
          const double* urow = A + static_cast<long>(k) * m;
          for (int j = k + 1; j < k1; ++j) row[j] -= l * urow[j];
        }
      }
      if (k1 == m) continue;
      // Threads only where the panel's trailing work pays for starting them (about 20 us each):
      // a million multiply-adds a thread.
      const double trailing = double(m - k1) * double(m - k1) * double(k1 - k0);
      const int t_in = std::max(1, std::min(inside, static_cast<int>(trailing / 1e6)));
      detail::parallel_for(t_in, [&](int t) {
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
      detail::parallel_for(t_in, [&](int t) {  // the trailing rows
        for (int i = k1 + t; i < m; i += t_in) {
          double* row = A + static_cast<long>(i) * m;
          for (int k = k0; k < k1; ++k) {
            const double l = row[k];
            const double* urow = A + static_cast<long>(k) * m;
            for (int j = k1; j < m; ++j) row[j] -= l * urow[j];
          }
        }
      });
    }
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
  for (std::size_t s = 0; s < ns; ++s) {  // forward: L (unit, by columns) or U^T (by U's rows)
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    for (int t = 0; t < nc; ++t) {
      double& yt = y[static_cast<std::size_t>(first + t)];
      if (transposed) yt /= A[static_cast<long>(t) * m + t];
      for (int a = t + 1; a < m; ++a)
        y[static_cast<std::size_t>(rows[a])] -= (transposed ? A[static_cast<long>(t) * m + a] : A[static_cast<long>(a) * m + t]) * yt;
    }
  }
  for (std::size_t s = ns; s-- > 0;) {  // backward: U (by rows) or L^T (unit, by L's columns)
    const int m = f.f_m[s], nc = f.f_nc[s], first = f.f_first[s];
    const double* A = F.data() + f.f_off[s];
    const int* rows = f.f_rows.data() + f.f_vec[s];
    for (int t = nc - 1; t >= 0; --t) {
      double v = y[static_cast<std::size_t>(first + t)];
      for (int a = t + 1; a < m; ++a)
        v -= (transposed ? A[static_cast<long>(a) * m + t] : A[static_cast<long>(t) * m + a]) * y[static_cast<std::size_t>(rows[a])];
      y[static_cast<std::size_t>(first + t)] = transposed ? v : v / A[static_cast<long>(t) * m + t];
    }
  }
  for (index_t k = 0; k < n; ++k) b[si[static_cast<std::size_t>(k)]] = ss[static_cast<std::size_t>(k)] * y[static_cast<std::size_t>(k)];
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
