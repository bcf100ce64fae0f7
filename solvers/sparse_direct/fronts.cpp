// The sparse direct solver's symbols (detail/fronts.hpp; detail/solver_impl.hpp says what they
// hold and why): the matching, the analysis, the relaxed supernodes, the fronts' row
// structures, levels, maps, extend-add items and the places of A's entries.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/solvers/matching/matching.hpp>
#include <la/solvers/sparse_direct/detail/fronts.hpp>

namespace la::sparse_detail {
namespace {
using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

/// build_fronts' steps, each a member function over the symbols and the working arrays that
/// later steps read (M's rows, the supernodes and their tree, the symmetrized pattern by new
/// column). fs's fields are bound by name.
struct fronts_builder {
  const csr_matrix<double, count_t>& a;
  front_symbols& fs;
  const index_t n;
  const std::vector<count_t>& ap;
  const std::vector<index_t>& ai;
  const std::vector<double>& av;
  index_t& singular; double& tiny; sparse_analysis& an;
  std::vector<index_t>& in_idx; std::vector<index_t>& out_idx; std::vector<double>& in_scale; std::vector<double>& out_scale;
  std::vector<count_t>& ent_src; std::vector<double>& ent_scale; std::vector<long>& ent_pos;
  std::vector<long>& f_off; std::vector<long>& f_vec; std::vector<long>& f_map;
  std::vector<int>& f_m; std::vector<int>& f_nc; std::vector<int>& f_first; std::vector<int>& f_rows; std::vector<int>& f_rel;
  long& front_total; long& vec_total;
  std::vector<int>& level_list; std::vector<std::size_t>& level_ptr;
  std::vector<int>& item_front; std::vector<int>& item_row; std::vector<int>& con_child; std::vector<int>& con_row;
  std::vector<long>& item_ptr; std::vector<std::size_t>& level_items;
  const std::vector<index_t>& q;   // the analysis's new -> old
  const std::vector<index_t>& qi;  // old -> new
  // M = Dr P A Dc by rows, each entry's source in A.
  std::vector<index_t> rp;
  std::vector<double> dr, dc;
  std::vector<count_t> mptr, msrc;
  std::vector<index_t> midx;
  std::vector<double> mval;
  // The supernodes [sb[s], sb[s + 1]), their tree and each column's supernode.
  std::vector<index_t> sb;
  std::size_t ns = 0;
  std::vector<int> super_of, sparent, child_list;
  std::vector<std::size_t> child_ptr;
  // Mq's symmetrized pattern by min(new row, new col), each M entry's row; levels; positions.
  std::vector<count_t> cnt, by_min;
  std::vector<index_t> mrow;
  int levels = 0;
  std::vector<int> pos;

  fronts_builder(const csr_matrix<double, count_t>& m, front_symbols& f)
      : a(m), fs(f), n(m.rows()), ap(m.row_ptr()), ai(m.col_idx()), av(m.values()), singular(f.singular), tiny(f.tiny), an(f.an),
        in_idx(f.in_idx), out_idx(f.out_idx), in_scale(f.in_scale), out_scale(f.out_scale), ent_src(f.ent_src),
        ent_scale(f.ent_scale), ent_pos(f.ent_pos), f_off(f.f_off), f_vec(f.f_vec), f_map(f.f_map), f_m(f.f_m), f_nc(f.f_nc),
        f_first(f.f_first), f_rows(f.f_rows), f_rel(f.f_rel), front_total(f.front_total), vec_total(f.vec_total),
        level_list(f.level_list), level_ptr(f.level_ptr), item_front(f.item_front), item_row(f.item_row),
        con_child(f.con_child), con_row(f.con_row), item_ptr(f.item_ptr), level_items(f.level_items), q(f.an.perm),
        qi(f.an.inverse), rp(static_cast<std::size_t>(n)), dr(static_cast<std::size_t>(n), 1.0), dc(static_cast<std::size_t>(n), 1.0) {
    std::iota(rp.begin(), rp.end(), 0);
  }

  struct range {
    const int *b, *e;
    const int* begin() const { return b; }
    const int* end() const { return e; }
  };
  range children(std::size_t s) const { return range{child_list.data() + child_ptr[s], child_list.data() + child_ptr[s + 1]}; }
  struct span {
    int* p;
    std::size_t n;
    std::size_t size() const { return n; }
    int* begin() const { return p; }
    int* end() const { return p + n; }
    int operator[](std::size_t i) const { return p[i]; }
  };
  span rows_of(std::size_t s) {
    const long end = s + 1 < ns ? f_vec[s + 1] : vec_total;
    return span{f_rows.data() + f_vec[s], static_cast<std::size_t>(end - f_vec[s])};
  }
  void new_row(count_t p, index_t& i2, index_t& j2) const {
    i2 = qi[static_cast<std::size_t>(mrow[static_cast<std::size_t>(p)])], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
  }

  /// The max-product matching's permutation and scalings; false where A is structurally singular.
  bool matching(bool matched) {
    if (matched) {
      const diagonal_matching mt = max_product_matching(a);
      if (mt.unmatched > 0) {
        singular = mt.first_unmatched + 1;
        return false;
      }
      rp = mt.perm, dr = mt.row_scale, dc = mt.col_scale;
    }
    return true;
  }
  /// M's rows and the analysis of its pattern (or the given one, for the unmatched path).
  void matrix_and_analysis(fill_ordering ordering, double flop_rate, const sparse_analysis* given) {
    mptr.assign(static_cast<std::size_t>(n) + 1, 0);
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
    if (given && fs.spd && given->n == n && given->perm.size() == static_cast<std::size_t>(n)) an = *given;  // M = A
    else an = analyze_pattern(m, ordering, flop_rate);

  }
  void permutations() {
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
  }
  void supernodes() {
    // Supernodes, their tree and row structures.
    // Relaxed amalgamation (CHOLMOD's rule): a supernode joins its parent where the parent's
    // columns follow its own (it is the parent's last child) and the explicit zeros the merged
    // front holds stay few: always up to 4 columns, below 80% zeros up to 16, 10% up to 48, 5%
    // beyond. The fundamental supernodes of a grid are mostly one or two columns; fronts that
    // small waste a thread block each, and the tree's levels stay as many.
    sb.assign(1, 0);
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
    ns = sb.size() - 1;
    super_of.assign(static_cast<std::size_t>(n), 0);
    for (std::size_t s = 0; s < ns; ++s)
      for (index_t j = sb[s]; j < sb[s + 1]; ++j) super_of[static_cast<std::size_t>(j)] = static_cast<int>(s);
  }
  void tree() {
    // The supernodal tree, its children lists flat (child_ptr, child_list: increasing order);
    // flat arrays throughout, sized before they are filled: on a 1M-row grid (506k fronts)
    // vectors of vectors and growing push_backs spent a third of the analysis in the kernel's
    // page zeroing and the allocator.
    sparent.assign(ns, -1);
    child_ptr.assign(ns + 1, 0);
    for (std::size_t s = 0; s < ns; ++s) {
      const index_t last = sb[s + 1] - 1;
      const index_t pj = an.parent[static_cast<std::size_t>(last)];
      if (pj >= 0) {
        sparent[s] = super_of[static_cast<std::size_t>(pj)];
        ++child_ptr[static_cast<std::size_t>(sparent[s]) + 1];
      }
    }
    for (std::size_t s = 0; s < ns; ++s) child_ptr[s + 1] += child_ptr[s];
    child_list.assign(child_ptr[ns], 0);
    {
      std::vector<std::size_t> next(child_ptr.begin(), child_ptr.end() - 1);
      for (std::size_t s = 0; s < ns; ++s)
        if (sparent[s] >= 0) child_list[next[static_cast<std::size_t>(sparent[s])]++] = static_cast<int>(s);
    }
  }
  void row_sizes() {
    // Each front's rows: its columns and its last column's rows below them (a merged
    // supernode's structure), so the analysis's counts size them.
    f_vec.assign(ns, 0);
    vec_total = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      f_vec[s] = vec_total;
      vec_total += (sb[s + 1] - sb[s]) + static_cast<long>(an.col_count[static_cast<std::size_t>(sb[s + 1] - 1)]) - 1;
    }
    f_rows.assign(static_cast<std::size_t>(vec_total), 0);
  }
  void row_structures() {
    // Mq's symmetrized pattern, by new column: the neighbours of each column with their entries.
    cnt.assign(static_cast<std::size_t>(n) + 1, 0);
    for (index_t j = 0; j < n; ++j)
      for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) {
        const index_t i2 = qi[static_cast<std::size_t>(j)], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
        ++cnt[static_cast<std::size_t>(std::min(i2, j2)) + 1];
      }
    for (index_t j = 0; j < n; ++j) cnt[static_cast<std::size_t>(j) + 1] += cnt[static_cast<std::size_t>(j)];
    by_min.assign(static_cast<std::size_t>(cnt[static_cast<std::size_t>(n)]), 0);  // M entries by min(new row, new col)
    {
      std::vector<count_t> next(cnt.begin(), cnt.end() - 1);
      for (index_t j = 0; j < n; ++j)
        for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) {
          const index_t i2 = qi[static_cast<std::size_t>(j)], j2 = qi[static_cast<std::size_t>(midx[static_cast<std::size_t>(p)])];
          by_min[static_cast<std::size_t>(next[static_cast<std::size_t>(std::min(i2, j2))]++)] = p;
        }
    }
    mrow.assign(midx.size(), 0);  // each M entry's row
    for (index_t j = 0; j < n; ++j)
      for (count_t p = mptr[static_cast<std::size_t>(j)]; p < mptr[static_cast<std::size_t>(j) + 1]; ++p) mrow[static_cast<std::size_t>(p)] = j;
    std::vector<index_t> mark(static_cast<std::size_t>(n), -1);
    for (std::size_t s = 0; s < ns; ++s) {
      const index_t f = sb[s], l = sb[s + 1];
      const auto rs = rows_of(s);
      std::size_t got = 0;
      bool over = false;
      auto add = [&](index_t i) {
        if (mark[static_cast<std::size_t>(i)] == static_cast<index_t>(s)) return;
        mark[static_cast<std::size_t>(i)] = static_cast<index_t>(s);
        if (got < rs.size()) rs.p[got] = static_cast<int>(i);
        else over = true;
        ++got;
      };
      for (index_t j = f; j < l; ++j) add(j);
      for (index_t j = f; j < l; ++j)
        for (count_t e = cnt[static_cast<std::size_t>(j)]; e < cnt[static_cast<std::size_t>(j) + 1]; ++e) {
          index_t i2, j2;
          new_row(by_min[static_cast<std::size_t>(e)], i2, j2);
          if (std::max(i2, j2) >= l) add(std::max(i2, j2));
        }
      for (int c : children(static_cast<std::size_t>(s))) {
        const auto rc = rows_of(static_cast<std::size_t>(c));
        for (std::size_t t = static_cast<std::size_t>(sb[c + 1] - sb[c]); t < rc.size(); ++t)
          if (rc[t] >= l) add(rc[t]);
      }
      if (over || got != rs.size())
        throw error("sparse direct solver: supernode " + std::to_string(s) + " has " + std::to_string(got) +
                    " rows where the analysis counts " + std::to_string(rs.size()) + " (an internal error)");
      std::sort(rs.begin() + (l - f), rs.end());
    }
  }
  void levels_and_layout() {
    // Levels: leaves 0, a parent one above its highest child; the fronts laid out level by level.
    std::vector<int> level(ns, 0);
    levels = ns ? 1 : 0;
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
    f_off.assign(ns, 0), f_map.assign(ns, 0);
    front_total = 0;
    for (int l = 0; l < levels; ++l)
      for (std::size_t e = level_ptr[static_cast<std::size_t>(l)]; e < level_ptr[static_cast<std::size_t>(l) + 1]; ++e) {
        const auto s = static_cast<std::size_t>(level_list[e]);
        f_first[s] = static_cast<int>(sb[s]);
        f_nc[s] = static_cast<int>(sb[s + 1] - sb[s]);
        f_m[s] = static_cast<int>(rows_of(s).size());
        f_off[s] = front_total;
        front_total += static_cast<long>(f_m[s]) * f_m[s];
      }
  }
  void maps_and_items() {
    // The maps and contribution pairs: one per child row below its columns.
    std::size_t below = 0, parent_rows = 0;
    for (std::size_t s = 0; s < ns; ++s)
      if (sparent[s] >= 0) below += static_cast<std::size_t>(f_m[s] - f_nc[s]);
    for (std::size_t s = 0; s < ns; ++s)
      if (child_ptr[s + 1] > child_ptr[s]) parent_rows += static_cast<std::size_t>(f_m[s]);
    // Each child's map into its parent's front (rows below its own columns), and the
    // contribution items: per (parent, parent row), the (child, child row) pairs in child order.
    f_rel.clear();
    f_rel.reserve(below);
    pos.assign(static_cast<std::size_t>(n), -1);
    std::vector<std::size_t> rcount, rnext;  // per parent row: its (child, row) pairs' range
    std::vector<std::pair<int, int>> pairs;
    item_front.clear(), item_row.clear(), con_child.clear(), con_row.clear();
    con_child.reserve(below), con_row.reserve(below);
    item_front.reserve(parent_rows), item_row.reserve(parent_rows), item_ptr.reserve(parent_rows + 1);
    item_ptr.assign(1, 0);
    level_items.assign(static_cast<std::size_t>(levels) + 1, 0);
    for (int l = 0; l < levels; ++l) {
      for (std::size_t e = level_ptr[static_cast<std::size_t>(l)]; e < level_ptr[static_cast<std::size_t>(l) + 1]; ++e) {
        const auto s = static_cast<std::size_t>(level_list[e]);
        const auto rs = rows_of(s);
        for (std::size_t t = 0; t < rs.size(); ++t) pos[static_cast<std::size_t>(rs[t])] = static_cast<int>(t);
        // The (child, row) pairs by the parent row they land on, in child order: a counting sort.
        const std::size_t m = rs.size();
        rcount.assign(m + 1, 0);
        const std::size_t rel0 = f_rel.size();
        for (int c : children(s)) {
          const auto cs = static_cast<std::size_t>(c);
          const auto rc = rows_of(cs);
          f_map[cs] = static_cast<long>(f_rel.size());
          for (std::size_t t = static_cast<std::size_t>(f_nc[cs]); t < rc.size(); ++t) {
            const int at = pos[static_cast<std::size_t>(rc[t])];
            f_rel.push_back(at);
            ++rcount[static_cast<std::size_t>(at) + 1];
          }
        }
        for (std::size_t a = 0; a < m; ++a) rcount[a + 1] += rcount[a];
        pairs.resize(f_rel.size() - rel0);
        rnext.assign(rcount.begin(), rcount.end() - 1);
        for (int c : children(s)) {
          const auto cs = static_cast<std::size_t>(c);
          for (std::size_t t = static_cast<std::size_t>(f_nc[cs]); t < static_cast<std::size_t>(f_m[cs]); ++t) {
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
  }
  void entries() {
    // A's entries in the fronts: entry (i2, j2) of Mq goes to the front of min(i2, j2).
    ent_src.clear(), ent_scale.clear(), ent_pos.clear();
    ent_src.reserve(midx.size()), ent_scale.reserve(midx.size()), ent_pos.reserve(midx.size());
    for (std::size_t s = 0; s < ns; ++s) {
      const auto rs = rows_of(s);
      for (std::size_t t = 0; t < rs.size(); ++t) pos[static_cast<std::size_t>(rs[t])] = static_cast<int>(t);
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
  }
};
}  // namespace

front_symbols build_fronts(const csr_matrix<double, count_t>& a, bool matched, fill_ordering ordering, double flop_rate,
                           const sparse_analysis* given) {
  const auto t0 = clock_type::now();
  front_symbols fs;
  fs.n = a.rows();
  fs.spd = !matched;
  fronts_builder b(a, fs);
  if (b.matching(matched)) {
    b.matrix_and_analysis(ordering, flop_rate, given);
    b.permutations();
    b.supernodes();
    b.tree();
    b.row_sizes();
    b.row_structures();
    b.levels_and_layout();
    b.maps_and_items();
    b.entries();
  }
  fs.seconds = since(t0);
  return fs;
}

}  // namespace la::sparse_detail
